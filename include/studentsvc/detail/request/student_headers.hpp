#pragma once
/// @file detail/request/student_headers.hpp
/// @brief The headers of the student endpoints that come from the client
/// alone (credentials, version, Accept, User-Agent): built and checked once
/// per Client (StudentHeaders), copied into each request.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/auth.hpp>
#include <studentsvc/detail/request/header_validation.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/secret.hpp>
#include <studentsvc/version.hpp>

namespace studentsvc::detail {

/// The headers of a student endpoint that come from the client alone.
inline void add_student_fixed_headers(Headers& headers, const std::string& version) {
  headers.set("svc-api-version", version);
  headers.set("Accept", "application/json, text/json");
  headers.set("User-Agent", std::string(user_agent));
}

/// @brief What every student-endpoint call of one Client sends but its JWT and
/// trace context: the credential headers (Secret: wiped with the Client), then
/// version, Accept and User-Agent, built and checked once.
struct StudentHeaders {
  std::vector<std::pair<std::string, Secret>> credentials;
  Headers fixed;
};

/// The Client's StudentHeaders; none when they can change between calls (a
/// CredentialProvider) or cannot be built (each call then fails as it would).
[[nodiscard]] inline std::optional<StudentHeaders> prebuild_student_headers(const ClientOptions& client) {
  if (client.auth.provider || client.api_version.empty()) return std::nullopt;
  Headers credentials;
  if (!client.auth.apply(Endpoint::get_student, {}, credentials) || !validate_headers(credentials)) return std::nullopt;
  StudentHeaders out;
  for (const auto& [name, value] : credentials) out.credentials.emplace_back(name, Secret(std::string_view(value)));
  add_student_fixed_headers(out.fixed, client.api_version);
  if (!validate_headers(out.fixed)) return std::nullopt;
  return out;
}

/// The same headers and errors as `auth.apply` + add_student_fixed_headers, from
/// the prebuilt ones: only the JWT is new, so only it is checked here (as
/// validate_headers checks every value).
[[nodiscard]] inline Result<void> copy_student_headers(const StudentHeaders& prebuilt, Endpoint endpoint,
                                                       std::string_view user_jwt, Headers& headers) {
  if (endpoint == Endpoint::current_student && user_jwt.empty()) {
    return make_error(ErrorKind::invalid_argument, "user JWT is required for current_student and is empty");
  }
  if (!user_jwt.empty()) {
    if (auto r = validate_header_value("svc-user-jwt", user_jwt); !r) return r;
  }
  headers.reserve(prebuilt.credentials.size() + prebuilt.fixed.size() + 2);
  for (const auto& [name, value] : prebuilt.credentials) headers.add(name, std::string(value.reveal()));
  if (!user_jwt.empty()) headers.add("svc-user-jwt", std::string(user_jwt));
  for (const auto& [name, value] : prebuilt.fixed) headers.add(name, value);
  return {};
}

}  // namespace studentsvc::detail

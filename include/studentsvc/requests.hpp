#pragma once
/// @file requests.hpp
/// @brief Builds the HttpRequest of each call: validate the input, build URL and
/// headers, let the AuthPolicy add its credentials, then check every header.
/// Nothing is sent by these functions; a test can call each alone.

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/auth.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/auth/readable_file.hpp>
#include <studentsvc/detail/request/header_validation.hpp>
#include <studentsvc/detail/request/tls_options.hpp>
#include <studentsvc/detail/request/trace_context.hpp>
#include <studentsvc/detail/request/url.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/retry.hpp>
#include <studentsvc/secret.hpp>
#include <studentsvc/version.hpp>

namespace studentsvc {

/// @brief `GET /students/v2/students/{perm}`, appended to the base URL.
inline constexpr std::string_view student_path = "/students/v2/students/";
/// @brief `GET /students/v2/students/current`.
inline constexpr std::string_view current_student_path = "/students/v2/students/current";
/// @brief `/conversation`.
inline constexpr std::string_view conversation_path = "/conversation";

namespace detail {

/// Whether the ClientOptions' own limits still need checking: a Client checks
/// them once, when it is built; a direct caller of a build_* function has not.
enum class ClientLimits { check, checked };

/// The client-level settings a Client checks once, when built: a zero or
/// negative timeout is refused rather than sent (libcurl reads 0 as "no
/// timeout", so a bad value would silently remove the bound), and a CA bundle
/// that cannot be read is named now rather than as a TLS error on the first
/// call, and so are the other TLS settings' mistakes (detail/request/tls_options.hpp).
[[nodiscard]] inline Result<void> validate_limits(const ClientOptions& client) {
  constexpr std::chrono::milliseconds zero{0};
  if (!client.ca_bundle.empty()) {
    if (auto why = unreadable_file_reason(client.ca_bundle)) {
      return make_error(ErrorKind::invalid_argument, "ca_bundle: the file " + *why);
    }
  }
  if (auto tls = validate_tls(client.client_certificate, client.ca_pem, client.ca_bundle, client.pinned_public_key,
                              client.base_url, tls_option_names);
      !tls) {
    return tls;
  }
  if (client.connect_timeout <= zero) return make_error(ErrorKind::invalid_argument, "connect_timeout must be positive");
  if (client.timeout <= zero) return make_error(ErrorKind::invalid_argument, "timeout must be positive");
  if (client.max_response_header_bytes == 0) {
    return make_error(ErrorKind::invalid_argument, "max_response_header_bytes must be positive");
  }
  const auto& rate = client.rate_limit;
  if (!std::isfinite(rate.requests_per_second) || rate.requests_per_second < 0) {
    return make_error(ErrorKind::invalid_argument, "rate_limit.requests_per_second must be finite and not negative");
  }
  if (rate.burst < 1) return make_error(ErrorKind::invalid_argument, "rate_limit.burst must be at least 1");
  if (const auto& budget = client.retry_budget) {
    if (!std::isfinite(budget->ratio) || budget->ratio < 0) {
      return make_error(ErrorKind::invalid_argument, "retry_budget.ratio must be finite and not negative");
    }
    if (budget->min_retries < 0) return make_error(ErrorKind::invalid_argument, "retry_budget.min_retries must not be negative");
    if (budget->window < std::chrono::milliseconds{10}) {
      return make_error(ErrorKind::invalid_argument, "retry_budget.window must be at least 10 ms");
    }
  }
  return validate_policy(client.retry);
}

/// Timeouts and the body and header caps: the call's value when set, else the
/// client's. A value from CallOptions is checked here, on every call; one from
/// ClientOptions only when `limits` says it was not checked before.
[[nodiscard]] inline Result<void> apply_limits(HttpRequest& request, const ClientOptions& client,
                                               const CallOptions& call, ClientLimits limits) {
  constexpr std::chrono::milliseconds zero{0};
  const bool client_unchecked = limits == ClientLimits::check;
  request.connect_timeout = call.connect_timeout.value_or(client.connect_timeout);
  if ((call.connect_timeout || client_unchecked) && request.connect_timeout <= zero) {
    return make_error(ErrorKind::invalid_argument, "connect_timeout must be positive");
  }
  request.timeout = call.timeout.value_or(client.timeout);
  if ((call.timeout || client_unchecked) && request.timeout <= zero) {
    return make_error(ErrorKind::invalid_argument, "timeout must be positive");
  }
  request.max_response_bytes = call.max_response_bytes.value_or(client.max_response_bytes);
  request.max_response_header_bytes = call.max_response_header_bytes.value_or(client.max_response_header_bytes);
  if ((call.max_response_header_bytes || client_unchecked) && request.max_response_header_bytes == 0) {
    return make_error(ErrorKind::invalid_argument, "max_response_header_bytes must be positive");
  }
  if (call.retry) return validate_policy(*call.retry);
  return client_unchecked ? validate_policy(client.retry) : Result<void>{};
}

/// `traceparent`: the call's own (checked), else a fresh one when the client
/// sends trace context, else none.
[[nodiscard]] inline Result<void> apply_trace_context(Headers& headers, const ClientOptions& client,
                                                      const CallOptions& call) {
  if (call.traceparent) {
    if (!is_valid_traceparent(*call.traceparent)) {
      return make_error(ErrorKind::invalid_argument,
                        "traceparent must be W3C version 00: 00-<32 hex>-<16 hex>-<2 hex>, lower-case, ids not zero");
    }
    headers.set("traceparent", *call.traceparent);
  } else if (client.send_traceparent) {
    headers.set("traceparent", make_traceparent());
  }
  return {};
}

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
/// the prebuilt ones: only the JWT is new, so only it is checked here.
[[nodiscard]] inline Result<void> copy_student_headers(const StudentHeaders& prebuilt, Endpoint endpoint,
                                                       std::string_view user_jwt, Headers& headers) {
  if (endpoint == Endpoint::current_student && user_jwt.empty()) {
    return make_error(ErrorKind::invalid_argument, "user JWT is required for current_student and is empty");
  }
  if (!is_safe_header_value(user_jwt)) {
    return make_error(ErrorKind::invalid_argument,
                      "header 'svc-user-jwt' value contains a control character (only tab is allowed)");
  }
  headers.reserve(prebuilt.credentials.size() + prebuilt.fixed.size() + 2);
  for (const auto& [name, value] : prebuilt.credentials) headers.add(name, std::string(value.reveal()));
  if (!user_jwt.empty()) headers.add("svc-user-jwt", std::string(user_jwt));
  for (const auto& [name, value] : prebuilt.fixed) headers.add(name, value);
  return {};
}

/// `prebuilt`: the Client's StudentHeaders, used unless the call sets its own version.
[[nodiscard]] inline Result<HttpRequest> build_student_request(const BaseUrl& base, const ClientOptions& client,
                                                              Endpoint endpoint, std::string url_path,
                                                              std::string_view user_jwt, const CallOptions& call,
                                                              ClientLimits limits,
                                                              const StudentHeaders* prebuilt = nullptr) {
  HttpRequest request;
  request.url = base.join(url_path);
  if (prebuilt != nullptr && !call.api_version) {
    if (auto r = copy_student_headers(*prebuilt, endpoint, user_jwt, request.headers); !r) {
      return std::unexpected(std::move(r.error()));
    }
    if (auto r = apply_trace_context(request.headers, client, call); !r) return std::unexpected(std::move(r.error()));
    if (auto r = apply_limits(request, client, call, limits); !r) return std::unexpected(std::move(r.error()));
    return request;
  }
  request.headers.reserve(8);
  if (auto r = client.auth.apply(endpoint, user_jwt, request.headers); !r) return std::unexpected(std::move(r.error()));
  const std::string& version = call.api_version ? *call.api_version : client.api_version;
  if (version.empty()) return make_error(ErrorKind::invalid_argument, "svc-api-version must not be empty");
  add_student_fixed_headers(request.headers, version);
  if (auto r = apply_trace_context(request.headers, client, call); !r) return std::unexpected(std::move(r.error()));
  if (auto r = apply_limits(request, client, call, limits); !r) return std::unexpected(std::move(r.error()));
  if (auto r = validate_headers(request.headers); !r) return std::unexpected(std::move(r.error()));
  return request;
}

[[nodiscard]] inline Result<HttpRequest> build_get_student(const BaseUrl& base, const ClientOptions& client,
                                                           std::string_view perm, const CallOptions& call,
                                                           ClientLimits limits,
                                                           const StudentHeaders* prebuilt = nullptr) {
  if (!is_valid_perm(perm)) {
    return make_error(ErrorKind::invalid_argument,
                      "perm must be exactly 7 ASCII digits (got " + std::to_string(perm.size()) + " characters)");
  }
  if (call.user_jwt && call.user_jwt->empty()) {
    // Dropping it would silently widen the request to any student.
    return make_error(ErrorKind::invalid_argument, "user JWT is set but empty");
  }
  std::string path;
  path.reserve(student_path.size() + perm.size());
  path.append(student_path).append(perm);
  const std::string_view jwt = call.user_jwt ? std::string_view(*call.user_jwt) : std::string_view{};
  return detail::build_student_request(base, client, Endpoint::get_student, std::move(path), jwt, call, limits,
                                       prebuilt);
}

[[nodiscard]] inline Result<HttpRequest> build_conversation(const BaseUrl& base, const ClientOptions& client,
                                                            const ConversationRequest& conversation,
                                                            ClientLimits limits) {
  if (!is_valid_header_name(conversation.method)) {
    return make_error(ErrorKind::invalid_argument, "conversation method must be an HTTP token such as GET or POST");
  }
  auto sub = encode_sub_path(conversation.sub_path);
  if (!sub) return std::unexpected(std::move(sub.error()));
  HttpRequest request;
  request.method = conversation.method;
  request.url = base.join(std::string(conversation_path) + *sub + encode_query(conversation.query));
  if (auto r = client.auth.apply(Endpoint::conversation, {}, request.headers); !r) {
    return std::unexpected(std::move(r.error()));
  }
  request.headers.set("Accept", "application/json");
  request.headers.set("User-Agent", std::string(user_agent));
  if (!conversation.body.empty() || !conversation.content_type.empty()) {
    request.headers.set("Content-Type",
                        conversation.content_type.empty() ? std::string("application/json") : conversation.content_type);
  }
  if (auto r = apply_trace_context(request.headers, client, conversation.call); !r) {
    return std::unexpected(std::move(r.error()));
  }
  request.body = conversation.body;
  // The transport must never send a request twice unless the caller said it is safe.
  request.idempotent = conversation.idempotent;
  if (auto r = apply_limits(request, client, conversation.call, limits); !r) {
    return std::unexpected(std::move(r.error()));
  }
  if (auto r = validate_headers(request.headers); !r) return std::unexpected(std::move(r.error()));
  return request;
}

}  // namespace detail

/// @brief The request of Client::get_student. Fails with invalid_argument when
/// `perm` is not 7 ASCII digits or a header value is unsafe.
[[nodiscard]] inline Result<HttpRequest> build_get_student_request(const detail::BaseUrl& base,
                                                                  const ClientOptions& client, std::string_view perm,
                                                                  const CallOptions& call = {}) {
  return detail::build_get_student(base, client, perm, call, detail::ClientLimits::check);
}

/// @brief The request of Client::current_student; the JWT is required and opaque.
[[nodiscard]] inline Result<HttpRequest> build_current_student_request(const detail::BaseUrl& base,
                                                                      const ClientOptions& client,
                                                                      std::string_view user_jwt,
                                                                      const CallOptions& call = {}) {
  return detail::build_student_request(base, client, Endpoint::current_student, std::string(current_student_path),
                                       user_jwt, call, detail::ClientLimits::check);
}

/// @brief The request of Client::conversation: method, sub-path, query and body as given.
[[nodiscard]] inline Result<HttpRequest> build_conversation_request(const detail::BaseUrl& base,
                                                                   const ClientOptions& client,
                                                                   const ConversationRequest& conversation) {
  return detail::build_conversation(base, client, conversation, detail::ClientLimits::check);
}

}  // namespace studentsvc

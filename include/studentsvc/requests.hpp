#pragma once
/// @file requests.hpp
/// @brief Builds the HttpRequest of each call: validate the input, build URL and
/// headers, let the AuthPolicy add its credentials, then check every header.
/// Nothing is sent by these functions; a test can call each alone.

#include <string>
#include <string_view>

#include <studentsvc/auth.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/request/build.hpp>
#include <studentsvc/detail/request/url.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/secret.hpp>
#include <studentsvc/version.hpp>

namespace studentsvc {

/// @brief `GET /students/v2/students/{perm}`, appended to the base URL.
inline constexpr std::string_view student_path = detail::student_endpoint_path;
/// @brief `GET /students/v2/students/current`.
inline constexpr std::string_view current_student_path = detail::current_student_endpoint_path;
/// @brief `/conversation`.
inline constexpr std::string_view conversation_path = detail::conversation_endpoint_path;

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

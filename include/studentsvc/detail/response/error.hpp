#pragma once
/// @file detail/response/error.hpp
/// @brief The ApiError of a non-2xx answer: its error body decoded, the
/// server's request id, `Retry-After`, and the student endpoints' 404 that did
/// not come from the service.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/detail/call/attempt_events.hpp>
#include <studentsvc/detail/json/error_body.hpp>
#include <studentsvc/detail/retry/retry_run.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>

namespace studentsvc::detail {

/// error_from_response on a body already read (`read`: read_error_body(response.body)).
[[nodiscard]] inline ApiError error_from_response(const HttpResponse& response, std::optional<ErrorBodySax> read) {
  ApiError e = error_from_body(response.status, response.body, std::move(read));
  e.request_id = std::string(detail::find_request_id(response.headers, default_request_id_headers));
  if (const auto header = response.headers.find("Retry-After")) {
    if (const auto wait = parse_retry_after(*header, std::chrono::system_clock::now())) {
      e.retry_after_ms = wait->count();
    }
  }
  return e;
}

/// The hint of a 404 that did not come from the service (see student_error_from_response).
inline constexpr std::string_view endpoint_not_found_message =
    "endpoint not found: this 404 is not the service's answer (its body is not the SimpleMessageModel the "
    "student endpoints send); check the base URL and its path prefix";

/// The ApiError of a student endpoint's non-2xx. The interface answers "no such
/// student" with 404 and a SimpleMessageModel; a 404 without one (an HTML page,
/// an empty body) comes from a web server or proxy in front of the service, so
/// it is ErrorKind::http_status with a hint about the base URL, not not_found:
/// a roster job with a wrong path prefix then fails as one configuration error
/// instead of reporting every student as missing.
[[nodiscard]] inline ApiError student_error_from_response(const HttpResponse& response) {
  auto read = read_error_body(response.body);  // once: the ApiError and the check below both need it
  // The interface's SimpleMessageModel: a JSON object with a string `message`.
  const bool simple_message = read && read->message_is_string;
  ApiError e = error_from_response(response, std::move(read));
  if (e.status == 404 && !simple_message) {
    e.kind = ErrorKind::http_status;
    e.message = std::string(endpoint_not_found_message);
    if (e.body_excerpt.empty() && !response.body.empty()) e.body_excerpt = excerpt(response.body);
  }
  return e;
}

}  // namespace studentsvc::detail

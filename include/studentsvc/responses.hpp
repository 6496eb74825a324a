#pragma once
/// @file responses.hpp
/// @brief Maps what the transport returned to each call's Result: a transport
/// error passes through, a non-2xx decodes the error body, a 2xx decodes the model.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/call/attempt_events.hpp>
#include <studentsvc/detail/json/error_body.hpp>
#include <studentsvc/detail/json/student_decoder.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
// The decoders need nlohmann already: with json.hpp, RawResponse::json() and
// to_json work wherever a Client does, as before json.hpp existed.
#include <studentsvc/json.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/retry.hpp>

namespace studentsvc {

namespace detail {

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

}  // namespace detail

/// @brief The ApiError of a non-2xx response, with `Retry-After` when the server
/// sent one, and the server's request id (from default_request_id_headers; a
/// Client looks in its ClientOptions::request_id_headers).
[[nodiscard]] inline ApiError error_from_response(const HttpResponse& response) {
  return detail::error_from_response(response, detail::read_error_body(response.body));
}

namespace detail {

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

/// A 2xx student answer; `/current` answers a StudentMinimal. One variable is
/// returned on every path (GCC moves the record once more otherwise: no NRVO).
[[nodiscard]] inline Result<StudentExtended> decode_student_answer(const HttpResponse& response, Endpoint endpoint) {
  Result<StudentExtended> student = decode_student_record(response.body, endpoint != Endpoint::current_student);
  if (!student) student.error().status = response.status;
  return student;
}

}  // namespace detail

/// @brief Maps a student endpoint's outcome. `/current` answers a StudentMinimal,
/// so for Endpoint::current_student only the basic fields are kept.
[[nodiscard]] inline Result<StudentExtended> map_student_response(const Result<HttpResponse>& outcome,
                                                                  Endpoint endpoint) {
  if (!outcome) return std::unexpected(outcome.error());
  if (!outcome->ok()) return std::unexpected(detail::student_error_from_response(*outcome));
  return detail::decode_student_answer(*outcome, endpoint);
}

/// @brief Maps a get_student outcome, and checks that the answer is the student
/// asked for: a 2xx whose `perm` differs from `requested_perm`, or has none, is
/// ErrorKind::decode and no record is returned (a cache or proxy that mixed up
/// answers must not hand over another student's data). The message names the
/// field, never either perm: student identifiers stay out of errors.
[[nodiscard]] inline Result<StudentExtended> map_get_student_response(const Result<HttpResponse>& outcome,
                                                                      std::string_view requested_perm) {
  auto student = map_student_response(outcome, Endpoint::get_student);
  if (student && student->perm != requested_perm) {  // assigned, not returned: `student` is returned without a move
    student = make_error(ErrorKind::decode,
                         student->perm.empty() ? "field 'perm' is missing from the answer"
                                               : "field 'perm' does not match the perm requested",
                         outcome->status);
  }
  return student;
}

/// @brief Maps a `/conversation` outcome: 2xx as it came, anything else an ApiError.
[[nodiscard]] inline Result<RawResponse> map_conversation_response(Result<HttpResponse>&& outcome) {
  if (!outcome) return std::unexpected(std::move(outcome.error()));
  if (!outcome->ok()) return std::unexpected(error_from_response(*outcome));
  return RawResponse{outcome->status, std::move(outcome->headers), std::move(outcome->body)};
}

}  // namespace studentsvc

#pragma once
/// @file responses.hpp
/// @brief Maps what the transport returned to each call's Result: a transport
/// error passes through, a non-2xx decodes the error body, a 2xx decodes the model.
/// The bodies are in detail/response/ (map.hpp, error.hpp).

#include <string_view>
#include <utility>

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/json/error_body.hpp>
#include <studentsvc/detail/response/error.hpp>
#include <studentsvc/detail/response/map.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
// The decoders need nlohmann already: with json.hpp, RawResponse::json() and
// to_json work wherever a Client does, as before json.hpp existed.
#include <studentsvc/json.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/retry.hpp>

namespace studentsvc {

/// @brief The ApiError of a non-2xx response, with `Retry-After` when the server
/// sent one, and the server's request id (from default_request_id_headers; a
/// Client looks in its ClientOptions::request_id_headers).
[[nodiscard]] inline ApiError error_from_response(const HttpResponse& response) {
  return detail::error_from_response(response, detail::read_error_body(response.body));
}

/// @brief Maps a student endpoint's outcome. `/current` answers a StudentMinimal,
/// so for Endpoint::current_student only the basic fields are kept.
[[nodiscard]] inline Result<StudentExtended> map_student_response(const Result<HttpResponse>& outcome,
                                                                  Endpoint endpoint) {
  return detail::map_student_outcome(outcome, endpoint);
}

/// @brief Maps a get_student outcome, and checks that the answer is the student
/// asked for: a 2xx whose `perm` differs from `requested_perm`, or has none, is
/// ErrorKind::decode and no record is returned (a cache or proxy that mixed up
/// answers must not hand over another student's data). The message names the
/// field, never either perm: student identifiers stay out of errors.
[[nodiscard]] inline Result<StudentExtended> map_get_student_response(const Result<HttpResponse>& outcome,
                                                                      std::string_view requested_perm) {
  return detail::map_get_student_outcome(outcome, requested_perm);
}

/// @brief Maps a `/conversation` outcome: 2xx as it came, anything else an ApiError.
[[nodiscard]] inline Result<RawResponse> map_conversation_response(Result<HttpResponse>&& outcome) {
  return detail::map_conversation_outcome(std::move(outcome));
}

}  // namespace studentsvc

#pragma once
/// @file detail/response/map.hpp
/// @brief Maps what the transport returned to each call's Result: a transport
/// error passes through, a non-2xx decodes the error body (detail/response/error.hpp),
/// a 2xx decodes the model. The public map_*_response (responses.hpp) and the
/// Client's calls (detail/call/client-inl.hpp) both call these.

#include <string_view>
#include <utility>

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/json/error_body.hpp>
#include <studentsvc/detail/json/student_decoder.hpp>
#include <studentsvc/detail/response/error.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/models.hpp>

namespace studentsvc::detail {

/// A 2xx student answer; `/current` answers a StudentMinimal. One variable is
/// returned on every path (GCC moves the record once more otherwise: no NRVO).
[[nodiscard]] inline Result<StudentExtended> decode_student_answer(const HttpResponse& response, Endpoint endpoint) {
  Result<StudentExtended> student = decode_student_record(response.body, endpoint != Endpoint::current_student);
  if (!student) student.error().status = response.status;
  return student;
}

/// A student endpoint's outcome (map_student_response).
[[nodiscard]] inline Result<StudentExtended> map_student_outcome(const Result<HttpResponse>& outcome,
                                                                 Endpoint endpoint) {
  if (!outcome) return std::unexpected(outcome.error());
  if (!outcome->ok()) return std::unexpected(student_error_from_response(*outcome));
  return decode_student_answer(*outcome, endpoint);
}

/// A get_student outcome, checked to be the student asked for (map_get_student_response).
[[nodiscard]] inline Result<StudentExtended> map_get_student_outcome(const Result<HttpResponse>& outcome,
                                                                     std::string_view requested_perm) {
  auto student = map_student_outcome(outcome, Endpoint::get_student);
  if (student && student->perm != requested_perm) {  // assigned, not returned: `student` is returned without a move
    student = make_error(ErrorKind::decode,
                         student->perm.empty() ? "field 'perm' is missing from the answer"
                                               : "field 'perm' does not match the perm requested",
                         outcome->status);
  }
  return student;
}

/// A `/conversation` outcome: 2xx as it came, anything else an ApiError (map_conversation_response).
[[nodiscard]] inline Result<RawResponse> map_conversation_outcome(Result<HttpResponse>&& outcome) {
  if (!outcome) return std::unexpected(std::move(outcome.error()));
  if (!outcome->ok()) return std::unexpected(error_from_response(*outcome, read_error_body(outcome->body)));
  return RawResponse{outcome->status, std::move(outcome->headers), std::move(outcome->body)};
}

}  // namespace studentsvc::detail

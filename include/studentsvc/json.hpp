#pragma once
/// @file json.hpp
/// @brief Opt-in nlohmann::json mapping: to_json/from_json for both models with
/// the interface's own keys, decode_student_json for a parsed object, and
/// json_body() (RawResponse::json()) for `/conversation` answers. The only
/// public header that includes <nlohmann/json.hpp>.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/json/depth.hpp>
#include <studentsvc/detail/json/sax.hpp>
#include <studentsvc/detail/json/student_decoder.hpp>
#include <studentsvc/detail/model/student_fields.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/models.hpp>

namespace studentsvc {
namespace detail {

/// One member as JSON: a string, or a string / boolean / null for an optional.
template <class Member>
[[nodiscard]] nlohmann::json member_json(const Member& member) {
  if constexpr (std::is_same_v<Member, std::string>) {
    return member;
  } else {
    return member ? nlohmann::json(*member) : nlohmann::json(nullptr);
  }
}

/// Writes the rows of `fields` from `s` into a new object.
template <class Student>
[[nodiscard]] nlohmann::json write_student(const Student& s, std::span<const StudentField> fields) {
  auto j = nlohmann::json::object();
  for (const StudentField& f : fields) {
    with_field(f, s, [&](const auto& member) { j[std::string(f.key)] = member_json(member); });
  }
  return j;
}

/// Reads `s`'s fields from a parsed object, row by row; the first wrong type stops it.
template <class Student>
[[nodiscard]] Result<Student> read_student(const nlohmann::json& object) {
  if (!object.is_object()) {
    return make_error(ErrorKind::decode, "student must be a JSON object, got " + std::string(object.type_name()));
  }
  Student s;
  for (const StudentField& f : student_fields_of(std::is_same_v<Student, StudentExtended>)) {
    const auto it = object.find(f.key);
    if (it == object.end() || it->is_null()) continue;
    const bool right_type = f.type == FieldType::flag ? it->is_boolean() : it->is_string();
    if (!right_type) return field_type_error(f, it->type_name());
    with_field(f, s, [&](auto& member) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(member)>, std::optional<bool>>) {
        member = it->template get<bool>();
      } else {
        member = it->template get_ref<const std::string&>();
      }
    });
  }
  return s;
}

}  // namespace detail

/// @brief Decodes a parsed StudentExtended object. Unknown keys are ignored; a wrong
/// JSON type gives ErrorKind::decode with a message naming the field (as decode_student).
[[nodiscard]] inline Result<StudentExtended> decode_student_json(const nlohmann::json& object) {
  return detail::read_student<StudentExtended>(object);
}

/// @brief Decodes a parsed StudentMinimal object (the `/current` answer); other keys are ignored.
[[nodiscard]] inline Result<StudentMinimal> decode_student_minimal_json(const nlohmann::json& object) {
  return detail::read_student<StudentMinimal>(object);
}

/// @brief Writes the five basic fields with the interface's keys.
inline void to_json(nlohmann::json& j, const StudentMinimal& s) {
  j = detail::write_student(s, detail::student_fields_of(false));
}

/// @brief Writes every field; an empty optional is written as null.
inline void to_json(nlohmann::json& j, const StudentExtended& s) {
  j = detail::write_student(s, detail::student_fields_of(true));
}

/// @brief For `json.get<StudentMinimal>()`. Follows nlohmann's convention and
/// throws `nlohmann::json::type_error` on a wrong type; the SDK's own calls use
/// the non-throwing decode_student_minimal_json().
inline void from_json(const nlohmann::json& j, StudentMinimal& s) {
  auto r = decode_student_minimal_json(j);
  if (!r) throw nlohmann::json::type_error::create(302, r.error().message, &j);
  s = std::move(*r);
}

/// @brief For `json.get<StudentExtended>()`; throws like from_json(const nlohmann::json&, StudentMinimal&).
inline void from_json(const nlohmann::json& j, StudentExtended& s) {
  auto r = decode_student_json(j);
  if (!r) throw nlohmann::json::type_error::create(302, r.error().message, &j);
  s = std::move(*r);
}

/// @brief A `/conversation` body parsed as JSON; ErrorKind::decode when it is
/// not JSON or nests deeper than 64 levels (such a DOM takes hundreds of MB,
/// and nlohmann's dump() recurses per level).
[[nodiscard]] inline Result<nlohmann::json> json_body(const RawResponse& response) {
  if (detail::json_nests_deeper_than(response.body, detail::max_json_depth)) {
    return make_error(ErrorKind::decode,
                      "conversation body nests deeper than " + std::to_string(detail::max_json_depth) + " levels",
                      response.status);
  }
  auto j = detail::parse_json(response.body);
  if (!j) return make_error(ErrorKind::decode, "conversation body is not valid JSON", response.status);
  return std::move(*j);
}

/// @brief Whether `text`'s arrays and objects nest deeper than `limit` levels
/// (text that is not JSON is not "too deep"): check before building a DOM or
/// pretty-printing a body from a server. Reads no further than the first level
/// too many. @sa json_body
[[nodiscard]] inline bool json_nests_deeper_than(std::string_view text, std::size_t limit) {
  return detail::json_nests_deeper_than(text, limit);
}

/// The overload RawResponse::json() finds (by argument-dependent lookup, once this header is included).
[[nodiscard]] inline Result<nlohmann::json> json_body(const RawResponse& response, std::type_identity<nlohmann::json>) {
  return json_body(response);
}

}  // namespace studentsvc

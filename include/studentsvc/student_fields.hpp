#pragma once
/// @file student_fields.hpp
/// @brief The student record's fields, in the interface's order, with the
/// JSON key, the type and the member of each: a program that writes records
/// as rows (CSV columns, a table) walks this table instead of spelling keys.
/// @sa StudentExtended, to_json

#include <span>
#include <utility>

#include <studentsvc/detail/model/student_fields.hpp>

namespace studentsvc {

/// @brief The shape of a field: `basic` (std::string), `text`
/// (std::optional<std::string>) or `flag` (std::optional<bool>).
using FieldType = detail::FieldType;
/// @brief One row: key, type and member pointer. @sa student_fields
using StudentField = detail::StudentField;

/// @brief Every field of StudentExtended in the interface's order; the first
/// five are StudentMinimal's. @sa student_fields_of
inline constexpr const auto& student_fields = detail::student_fields;

/// @brief The rows of StudentMinimal (`extended` false) or of StudentExtended.
[[nodiscard]] constexpr std::span<const StudentField> student_fields_of(bool extended) noexcept {
  return detail::student_fields_of(extended);
}

/// @brief Calls `fn` with `s`'s member for row `f` (`std::string&`,
/// `std::optional<std::string>&` or `std::optional<bool>&`); not called for an
/// extended row of a StudentMinimal.
template <class Student, class Fn>
constexpr void with_student_field(const StudentField& f, Student& s, Fn&& fn) {
  detail::with_field(f, s, std::forward<Fn>(fn));
}

}  // namespace studentsvc

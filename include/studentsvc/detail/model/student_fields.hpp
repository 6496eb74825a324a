#pragma once
/// @file detail/model/student_fields.hpp
/// @brief The one table of the student record's fields: JSON key, member and
/// type, in the interface's order. The decoder, to_json and the tool's table
/// output all walk it, so a key is spelled once.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <studentsvc/models.hpp>

namespace studentsvc::detail {

/// The three shapes a student field takes in the structs (and in JSON).
enum class FieldType {
  basic,     ///< StudentMinimal `std::string`: a JSON string; null or absent is "".
  text,      ///< StudentExtended `std::optional<std::string>`: a JSON string; null or absent is nullopt.
  flag,      ///< StudentExtended `std::optional<bool>`: a JSON boolean; null or absent is nullopt.
};

/// One row of the table: exactly one of the member pointers is set, per `type`.
struct StudentField {
  std::string_view key;
  FieldType type;
  std::string StudentMinimal::*basic = nullptr;
  std::optional<std::string> StudentExtended::*text = nullptr;
  std::optional<bool> StudentExtended::*flag = nullptr;
};

/// Every field in the interface's order; the five basic ones (StudentMinimal) first.
inline constexpr std::array<StudentField, 17> student_fields = {{
    {"perm", FieldType::basic, &StudentMinimal::perm},
    {"firstName", FieldType::basic, &StudentMinimal::first_name},
    {"lastName", FieldType::basic, &StudentMinimal::last_name},
    {"suffix", FieldType::basic, &StudentMinimal::suffix},
    {"email", FieldType::basic, &StudentMinimal::email},
    {"firstNameLegal", FieldType::text, nullptr, &StudentExtended::first_name_legal},
    {"middleName", FieldType::text, nullptr, &StudentExtended::middle_name},
    {"gender", FieldType::text, nullptr, &StudentExtended::gender},
    {"birthDate", FieldType::text, nullptr, &StudentExtended::birth_date},
    {"nfr", FieldType::flag, nullptr, nullptr, &StudentExtended::nfr},
    {"internationalStudentCode", FieldType::text, nullptr, &StudentExtended::international_student_code},
    {"firstCensusQuarter", FieldType::text, nullptr, &StudentExtended::first_census_quarter},
    {"lastCensusQuarter", FieldType::text, nullptr, &StudentExtended::last_census_quarter},
    {"lastRegisteredQuarter", FieldType::text, nullptr, &StudentExtended::last_registered_quarter},
    {"admitLevel", FieldType::text, nullptr, &StudentExtended::admit_level},
    {"admitQuarter", FieldType::text, nullptr, &StudentExtended::admit_quarter},
    {"pronounCode", FieldType::text, nullptr, &StudentExtended::pronoun_code},
}};

/// How many leading rows are StudentMinimal's.
inline constexpr std::size_t basic_field_count = 5;

/// The rows of StudentMinimal (`extended` false) or of StudentExtended.
[[nodiscard]] constexpr std::span<const StudentField> student_fields_of(bool extended) noexcept {
  return std::span<const StudentField>(student_fields).first(extended ? student_fields.size() : basic_field_count);
}

/// Calls `fn` with `s`'s member for row `f`: `std::string&`, `std::optional<std::string>&`
/// or `std::optional<bool>&` (const when `s` is). A StudentMinimal has only basic rows:
/// `fn` is not called for the others.
template <class Student, class Fn>
constexpr void with_field(const StudentField& f, Student& s, Fn&& fn) {
  constexpr bool extended = std::is_base_of_v<StudentExtended, std::remove_const_t<Student>>;
  switch (f.type) {
    case FieldType::basic: fn(s.*f.basic); return;
    case FieldType::text:
      if constexpr (extended) fn(s.*f.text);
      return;
    case FieldType::flag:
      if constexpr (extended) fn(s.*f.flag);
      return;
  }
}

}  // namespace studentsvc::detail

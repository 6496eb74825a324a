#pragma once
/// @file models.hpp
/// @brief StudentMinimal and StudentExtended (interface section 2) and their
/// typed code views. No JSON here: decoding is in detail/json/student_decoder.hpp
/// (through responses.hpp), the opt-in to_json/from_json in <studentsvc/json.hpp>.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <studentsvc/fwd.hpp>

namespace studentsvc {

/// @brief Which perms a Client accepts (ClientOptions::perm_syntax). The
/// interface says "7-digit perm number"; deployments of it have issued
/// alphanumeric perms since 2022, so the SDK can be told to accept those too.
enum class PermSyntax {
  digits,        ///< Exactly 7 ASCII digits, as the interface says (the default).
  alphanumeric,  ///< Exactly 7 ASCII letters or digits, case kept as given.
};

/// @brief True when `perm` is a perm of `syntax`: 7 ASCII characters, each a
/// digit (or, for alphanumeric, a letter), so it is safe verbatim in a URL path.
[[nodiscard]] constexpr bool is_valid_perm(std::string_view perm, PermSyntax syntax) noexcept {
  if (perm.size() != 7) return false;
  for (const char c : perm) {
    const bool digit = c >= '0' && c <= '9';
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (!digit && !(letter && syntax == PermSyntax::alphanumeric)) return false;
  }
  return true;
}

/// @brief True when `perm` is exactly 7 ASCII digits, the interface's perm format.
[[nodiscard]] constexpr bool is_valid_perm(std::string_view perm) noexcept {
  return is_valid_perm(perm, PermSyntax::digits);
}

/// @brief The stable name of a PermSyntax: "digits" or "alphanumeric".
[[nodiscard]] constexpr std::string_view to_string(PermSyntax syntax) noexcept {
  return syntax == PermSyntax::alphanumeric ? "alphanumeric" : "digits";
}

/// @brief The PermSyntax spelled `name` as to_string spells it; nullopt otherwise.
[[nodiscard]] constexpr std::optional<PermSyntax> parse_perm_syntax(std::string_view name) noexcept {
  if (name == "digits") return PermSyntax::digits;
  if (name == "alphanumeric") return PermSyntax::alphanumeric;
  return std::nullopt;
}

/// @brief What a refused perm's error says: the rule, and the option that sets it.
[[nodiscard]] inline std::string perm_syntax_rule(PermSyntax syntax) {
  return syntax == PermSyntax::alphanumeric
             ? "perm must be exactly 7 ASCII letters or digits (ClientOptions::perm_syntax is alphanumeric)"
             : "perm must be exactly 7 ASCII digits (ClientOptions::perm_syntax is digits; set it to alphanumeric, "
               "or STUDENTSVC_PERM_SYNTAX=alphanumeric, for a deployment that issues letters too)";
}

/// @brief `gender`: `M` = male, `F` = female, null = no value provided.
enum class Gender { male, female, not_provided, unrecognized };
/// @brief `internationalStudentCode`: `F` = foreign, `R` = resident alien, null = domestic.
enum class InternationalStatus { foreign, resident_alien, domestic, unrecognized };
/// @brief `admitLevel`: `FR` = freshman, `TR` = transfer, empty = no data or not an undergraduate admit.
enum class AdmitLevel { freshman, transfer, none, unrecognized };
/// @brief `nfr` (Not-For-Release): when set, the registrar's office must be
/// consulted before releasing the student's information to anyone but the student.
enum class ReleaseStatus { releasable, not_for_release, unknown };

/// @brief The basic fields, always returned. A null or absent field decodes as "".
struct StudentMinimal {
  std::string perm;        ///< `perm`: 7-character perm (see PermSyntax).
  std::string first_name;  ///< `firstName`: preferred first name.
  std::string last_name;   ///< `lastName`.
  std::string suffix;      ///< `suffix`: name suffix (JR, SR, ...).
  std::string email;       ///< `email`: address in the campus mail domain.

  friend bool operator==(const StudentMinimal&, const StudentMinimal&) = default;
};

/// @brief StudentMinimal plus the extended fields; each is std::nullopt when
/// null or absent (extended-only fields need approval on the service side).
///
/// Raw codes are kept as the server sent them; the typed views never fail on
/// an unknown code, they answer `unrecognized` and the raw string stays here.
struct StudentExtended : StudentMinimal {
  // `nfr` comes first, not last: a last member smaller than its alignment
  // would leave tail padding, where libc++ 16/17 keeps std::expected's flag
  // (LLVM issue 68552); the static_assert below keeps it that way.
  std::optional<bool> nfr;                                ///< `nfr`: Not-For-Release flag.
  std::optional<std::string> first_name_legal;            ///< `firstNameLegal` (extended only).
  std::optional<std::string> middle_name;                 ///< `middleName` (extended only).
  std::optional<std::string> gender;                      ///< `gender` (extended only).
  std::optional<std::string> birth_date;                  ///< `birthDate`: YYYYMMDD.
  std::optional<std::string> international_student_code;  ///< `internationalStudentCode`.
  std::optional<std::string> first_census_quarter;        ///< `firstCensusQuarter` (format not stated).
  std::optional<std::string> last_census_quarter;         ///< `lastCensusQuarter`.
  std::optional<std::string> last_registered_quarter;     ///< `lastRegisteredQuarter`.
  std::optional<std::string> admit_level;                 ///< `admitLevel`.
  std::optional<std::string> admit_quarter;               ///< `admitQuarter`.
  std::optional<std::string> pronoun_code;                ///< `pronounCode`.

  /// @brief The typed `gender` code.
  [[nodiscard]] Gender gender_kind() const noexcept {
    if (!gender || gender->empty()) return Gender::not_provided;
    if (*gender == "M") return Gender::male;
    if (*gender == "F") return Gender::female;
    return Gender::unrecognized;
  }
  /// @brief The typed `internationalStudentCode`; null, absent or "" is domestic.
  [[nodiscard]] InternationalStatus international_status() const noexcept {
    if (!international_student_code || international_student_code->empty()) return InternationalStatus::domestic;
    if (*international_student_code == "F") return InternationalStatus::foreign;
    if (*international_student_code == "R") return InternationalStatus::resident_alien;
    return InternationalStatus::unrecognized;
  }
  /// @brief The typed `admitLevel`; null, absent or "" is none.
  [[nodiscard]] AdmitLevel admit_level_kind() const noexcept {
    if (!admit_level || admit_level->empty()) return AdmitLevel::none;
    if (*admit_level == "FR") return AdmitLevel::freshman;
    if (*admit_level == "TR") return AdmitLevel::transfer;
    return AdmitLevel::unrecognized;
  }
  /// @brief `birthDate` as a calendar date; std::nullopt when absent or not a valid YYYYMMDD date.
  [[nodiscard]] std::optional<std::chrono::year_month_day> birth_date_ymd() const noexcept {
    if (!birth_date || birth_date->size() != 8) return std::nullopt;
    int v[3] = {0, 0, 0};
    const int widths[3] = {4, 2, 2};
    std::size_t pos = 0;
    for (int part = 0; part < 3; ++part) {
      for (int i = 0; i < widths[part]; ++i, ++pos) {
        const char c = (*birth_date)[pos];
        if (c < '0' || c > '9') return std::nullopt;
        v[part] = v[part] * 10 + (c - '0');
      }
    }
    const std::chrono::year_month_day ymd{std::chrono::year{v[0]}, std::chrono::month{static_cast<unsigned>(v[1])},
                                          std::chrono::day{static_cast<unsigned>(v[2])}};
    if (!ymd.ok()) return std::nullopt;
    return ymd;
  }
  /// @brief The `nfr` flag as a release decision; absent or null is unknown.
  [[nodiscard]] ReleaseStatus release_status() const noexcept {
    if (!nfr) return ReleaseStatus::unknown;
    return *nfr ? ReleaseStatus::not_for_release : ReleaseStatus::releasable;
  }

  friend bool operator==(const StudentExtended&, const StudentExtended&) = default;
};

namespace detail {
// A member placed after StudentExtended lands in its tail padding when it has
// any (the Itanium C++ ABI reuses it); then the sizes are equal.
struct StudentExtendedTailProbe : StudentExtended {
  char after;
};
}  // namespace detail
static_assert(sizeof(detail::StudentExtendedTailProbe) > sizeof(StudentExtended),
              "StudentExtended must have no tail padding: libc++ 16/17 keeps std::expected's has_value flag there "
              "(LLVM issue 68552), so Result<StudentExtended> would lose it");

/// @brief Stable names of the typed codes, for display.
[[nodiscard]] constexpr std::string_view to_string(Gender g) noexcept {
  switch (g) {
    case Gender::male: return "male";
    case Gender::female: return "female";
    case Gender::not_provided: return "not_provided";
    case Gender::unrecognized: return "unrecognized";
  }
  return "unrecognized";
}
/// @brief The value's stable lower-case name.
[[nodiscard]] constexpr std::string_view to_string(InternationalStatus s) noexcept {
  switch (s) {
    case InternationalStatus::foreign: return "foreign";
    case InternationalStatus::resident_alien: return "resident_alien";
    case InternationalStatus::domestic: return "domestic";
    case InternationalStatus::unrecognized: return "unrecognized";
  }
  return "unrecognized";
}
/// @brief The value's stable lower-case name.
[[nodiscard]] constexpr std::string_view to_string(AdmitLevel a) noexcept {
  switch (a) {
    case AdmitLevel::freshman: return "freshman";
    case AdmitLevel::transfer: return "transfer";
    case AdmitLevel::none: return "none";
    case AdmitLevel::unrecognized: return "unrecognized";
  }
  return "unrecognized";
}
/// @brief The value's stable lower-case name.
[[nodiscard]] constexpr std::string_view to_string(ReleaseStatus r) noexcept {
  switch (r) {
    case ReleaseStatus::releasable: return "releasable";
    case ReleaseStatus::not_for_release: return "not_for_release";
    case ReleaseStatus::unknown: return "unknown";
  }
  return "unknown";
}

}  // namespace studentsvc

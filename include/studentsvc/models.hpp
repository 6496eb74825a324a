#pragma once
/// @file models.hpp
/// @brief StudentMinimal and StudentExtended (interface section 2), their typed
/// code views, and their JSON mapping with the interface's own keys.

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include <studentsvc/errors.hpp>

namespace studentsvc {

/// @brief True when `perm` is exactly 7 ASCII digits, the interface's perm format.
[[nodiscard]] constexpr bool is_valid_perm(std::string_view perm) noexcept {
  if (perm.size() != 7) return false;
  for (const char c : perm) {
    if (c < '0' || c > '9') return false;
  }
  return true;
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
  std::string perm;        ///< `perm`: 7-digit perm number.
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
  std::optional<bool> nfr;                                ///< `nfr`: Not-For-Release flag.

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

namespace detail {

[[nodiscard]] inline std::string_view json_type_name(const nlohmann::json& j) noexcept {
  return j.type_name();
}

[[nodiscard]] inline std::unexpected<ApiError> field_type_error(std::string_view key, std::string_view expected,
                                                                std::string_view got_type) {
  return make_error(ErrorKind::decode, "field '" + std::string(key) + "' must be " + std::string(expected) +
                                           " or null, got " + std::string(got_type));
}

[[nodiscard]] inline std::unexpected<ApiError> field_type_error(std::string_view key, std::string_view expected,
                                                                const nlohmann::json& got) {
  return field_type_error(key, expected, json_type_name(got));
}

/// Basic field: string, or null/absent as "".
[[nodiscard]] inline Result<void> read_basic(const nlohmann::json& object, std::string_view key, std::string& out) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) return field_type_error(key, "a string", *it);
  out = it->get_ref<const std::string&>();
  return {};
}

/// Extended field: string, or null/absent as std::nullopt.
[[nodiscard]] inline Result<void> read_optional(const nlohmann::json& object, std::string_view key,
                                                std::optional<std::string>& out) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_string()) return field_type_error(key, "a string", *it);
  out = it->get_ref<const std::string&>();
  return {};
}

[[nodiscard]] inline Result<void> read_optional(const nlohmann::json& object, std::string_view key,
                                                std::optional<bool>& out) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_boolean()) return field_type_error(key, "a boolean", *it);
  out = it->get<bool>();
  return {};
}

[[nodiscard]] inline Result<void> read_minimal(const nlohmann::json& j, StudentMinimal& s) {
  for (auto [key, field] : {std::pair{"perm", &s.perm}, std::pair{"firstName", &s.first_name},
                            std::pair{"lastName", &s.last_name}, std::pair{"suffix", &s.suffix},
                            std::pair{"email", &s.email}}) {
    if (auto r = read_basic(j, key, *field); !r) return r;
  }
  return {};
}

[[nodiscard]] inline Result<void> read_extended(const nlohmann::json& j, StudentExtended& s) {
  if (auto r = read_minimal(j, s); !r) return r;
  for (auto [key, field] : {std::pair{"firstNameLegal", &s.first_name_legal},
                            std::pair{"middleName", &s.middle_name},
                            std::pair{"gender", &s.gender},
                            std::pair{"birthDate", &s.birth_date},
                            std::pair{"internationalStudentCode", &s.international_student_code},
                            std::pair{"firstCensusQuarter", &s.first_census_quarter},
                            std::pair{"lastCensusQuarter", &s.last_census_quarter},
                            std::pair{"lastRegisteredQuarter", &s.last_registered_quarter},
                            std::pair{"admitLevel", &s.admit_level},
                            std::pair{"admitQuarter", &s.admit_quarter},
                            std::pair{"pronounCode", &s.pronoun_code}}) {
    if (auto r = read_optional(j, key, *field); !r) return r;
  }
  return read_optional(j, "nfr", s.nfr);
}

[[nodiscard]] inline Result<nlohmann::json> parse_object(std::string_view body) {
  auto j = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_discarded()) return make_error(ErrorKind::decode, "response body is not valid JSON");
  if (!j.is_object()) {
    return make_error(ErrorKind::decode, "response body must be a JSON object, got " + std::string(j.type_name()));
  }
  return j;
}

/// The top-level keys decode_student reads, in the order their errors are
/// reported: the five basic ones, the extended strings, then `nfr`.
inline constexpr std::array<std::string_view, 17> student_keys = {
    "perm",           "firstName",          "lastName",          "suffix",
    "email",          "firstNameLegal",     "middleName",        "gender",
    "birthDate",      "internationalStudentCode", "firstCensusQuarter", "lastCensusQuarter",
    "lastRegisteredQuarter", "admitLevel",  "admitQuarter",      "pronounCode",
    "nfr"};
inline constexpr std::size_t basic_key_count = 5;
inline constexpr std::size_t nfr_key = 16;

/// SAX handler that decodes a student body straight into the struct, with no
/// DOM in between. Same rules as the DOM path (decode_student_json): only
/// top-level keys count, unknown keys and nested values are skipped, null or
/// absent leaves the field empty, and the first wrong type in student_keys
/// order is reported, naming the field. A student key that comes twice is a
/// decode error naming it (the DOM path cannot see duplicates: nlohmann keeps
/// the last one while parsing).
class StudentSaxDecoder {
 public:
  using json = nlohmann::json;

  /// `extended` null: only the five basic keys are read (the `/current` answer).
  StudentSaxDecoder(StudentMinimal& basic, StudentExtended* extended) noexcept
      : basic_(basic), extended_(extended), known_(extended != nullptr ? student_keys.size() : basic_key_count) {}

  // Scalars: at depth 0 the body itself is not an object; at depth 1 they are a key's value.
  bool null() {
    if (const std::size_t f = take_field(); f != none) reset(f);
    return top_level("null");
  }
  bool boolean(bool value) {
    if (const std::size_t f = take_field(); f != none) {
      if (f == nfr_key) {
        extended_->nfr = value;
        wrong_[f] = nullptr;
      } else {
        wrong_[f] = "boolean";
      }
    }
    return top_level("boolean");
  }
  bool number_integer(json::number_integer_t) { return wrong_type("number"); }
  bool number_unsigned(json::number_unsigned_t) { return wrong_type("number"); }
  bool number_float(json::number_float_t, const json::string_t&) { return wrong_type("number"); }
  bool binary(json::binary_t&) { return wrong_type("binary"); }
  bool string(json::string_t& value) {
    if (const std::size_t f = take_field(); f != none) {
      if (f == nfr_key) {
        wrong_[f] = "string";
      } else {
        assign(f, value);
        wrong_[f] = nullptr;
      }
    }
    return top_level("string");
  }
  bool start_object(std::size_t) {
    if (const std::size_t f = take_field(); f != none) wrong_[f] = "object";
    ++depth_;
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (const std::size_t f = take_field(); f != none) wrong_[f] = "array";
    (void)top_level("array");
    ++depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool key(json::string_t& name) {
    if (depth_ == 1 && top_type_ == nullptr) {
      field_ = find(name);
      if (field_ != none) {
        // Parsers disagree on which of two values wins: refuse rather than pick one.
        if (seen_[field_]) {
          duplicate_ = field_;
          return false;  // stops the parse
        }
        seen_[field_] = true;
      }
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  /// The outcome once sax_parse has returned `parsed`.
  [[nodiscard]] Result<void> result(bool parsed) const {
    if (duplicate_ != none) {
      return make_error(ErrorKind::decode,
                        "field '" + std::string(student_keys[duplicate_]) + "' appears more than once");
    }
    if (!parsed) return make_error(ErrorKind::decode, "response body is not valid JSON");
    if (top_type_ != nullptr) {
      return make_error(ErrorKind::decode, "response body must be a JSON object, got " + std::string(top_type_));
    }
    for (std::size_t f = 0; f < known_; ++f) {
      if (wrong_[f] != nullptr) {
        return field_type_error(student_keys[f], f == nfr_key ? "a boolean" : "a string", std::string_view(wrong_[f]));
      }
    }
    return {};
  }

 private:
  static constexpr std::size_t none = student_keys.size();

  [[nodiscard]] std::size_t find(std::string_view name) const noexcept {
    for (std::size_t f = 0; f < known_; ++f) {
      if (student_keys[f] == name) return f;
    }
    return none;
  }
  /// The field whose value this event is (and forget it), or `none`.
  std::size_t take_field() noexcept {
    if (depth_ != 1) return none;
    const std::size_t f = field_;
    field_ = none;
    return f;
  }
  bool top_level(const char* type) noexcept {
    if (depth_ == 0) top_type_ = type;
    return true;
  }
  bool wrong_type(const char* type) {
    if (const std::size_t f = take_field(); f != none) wrong_[f] = type;
    return top_level(type);
  }
  [[nodiscard]] std::string* basic_field(std::size_t f) noexcept {
    switch (f) {
      case 0: return &basic_.perm;
      case 1: return &basic_.first_name;
      case 2: return &basic_.last_name;
      case 3: return &basic_.suffix;
      case 4: return &basic_.email;
      default: return nullptr;
    }
  }
  [[nodiscard]] std::optional<std::string>* optional_field(std::size_t f) const noexcept {
    StudentExtended& s = *extended_;
    switch (f) {
      case 5: return &s.first_name_legal;
      case 6: return &s.middle_name;
      case 7: return &s.gender;
      case 8: return &s.birth_date;
      case 9: return &s.international_student_code;
      case 10: return &s.first_census_quarter;
      case 11: return &s.last_census_quarter;
      case 12: return &s.last_registered_quarter;
      case 13: return &s.admit_level;
      case 14: return &s.admit_quarter;
      case 15: return &s.pronoun_code;
      default: return nullptr;
    }
  }
  // Copies rather than moves: the lexer's buffer keeps its capacity for the next token.
  void assign(std::size_t f, const std::string& value) {
    if (std::string* b = basic_field(f)) {
      b->assign(value);
    } else if (std::optional<std::string>* o = optional_field(f)) {
      if (*o) {
        (*o)->assign(value);
      } else {
        o->emplace(value);
      }
    }
  }
  void reset(std::size_t f) noexcept {
    wrong_[f] = nullptr;
    if (std::string* b = basic_field(f)) {
      b->clear();
    } else if (std::optional<std::string>* o = optional_field(f)) {
      o->reset();
    } else if (f == nfr_key) {
      extended_->nfr.reset();
    }
  }

  StudentMinimal& basic_;
  StudentExtended* extended_;
  std::size_t known_;
  std::size_t depth_ = 0;
  std::size_t field_ = none;
  const char* top_type_ = nullptr;                      // set when the body is not an object
  std::array<const char*, student_keys.size()> wrong_{};  // per field: the wrong JSON type it had
  std::array<bool, student_keys.size()> seen_{};          // per field: its key has come
  std::size_t duplicate_ = none;                          // the first field whose key came twice
};

/// Decodes `body` with StudentSaxDecoder into `basic` (and `extended` when not null).
[[nodiscard]] inline Result<void> sax_decode_student(std::string_view body, StudentMinimal& basic,
                                                     StudentExtended* extended) {
  StudentSaxDecoder decoder(basic, extended);
  const bool parsed = nlohmann::json::sax_parse(body.begin(), body.end(), &decoder);
  return decoder.result(parsed);
}

}  // namespace detail

/// @brief Decodes a parsed StudentExtended object. Unknown keys are ignored; a wrong
/// JSON type gives ErrorKind::decode with a message naming the field.
[[nodiscard]] inline Result<StudentExtended> decode_student_json(const nlohmann::json& object) {
  if (!object.is_object()) {
    return make_error(ErrorKind::decode, "student must be a JSON object, got " + std::string(object.type_name()));
  }
  StudentExtended s;
  if (auto r = detail::read_extended(object, s); !r) return std::unexpected(std::move(r.error()));
  return s;
}

/// @brief Parses and decodes a StudentExtended response body, in one pass
/// (SAX, no DOM); the same rules and messages as decode_student_json.
[[nodiscard]] inline Result<StudentExtended> decode_student(std::string_view body) {
  StudentExtended s;
  if (auto r = detail::sax_decode_student(body, s, &s); !r) return std::unexpected(std::move(r.error()));
  return s;
}

/// @brief Decodes a parsed StudentMinimal object (the `/current` answer); other keys are ignored.
[[nodiscard]] inline Result<StudentMinimal> decode_student_minimal_json(const nlohmann::json& object) {
  if (!object.is_object()) {
    return make_error(ErrorKind::decode, "student must be a JSON object, got " + std::string(object.type_name()));
  }
  StudentMinimal s;
  if (auto r = detail::read_minimal(object, s); !r) return std::unexpected(std::move(r.error()));
  return s;
}

/// @brief Parses and decodes a StudentMinimal response body (one pass, like decode_student).
[[nodiscard]] inline Result<StudentMinimal> decode_student_minimal(std::string_view body) {
  StudentMinimal s;
  if (auto r = detail::sax_decode_student(body, s, nullptr); !r) return std::unexpected(std::move(r.error()));
  return s;
}

/// @brief Writes the five basic fields with the interface's keys.
inline void to_json(nlohmann::json& j, const StudentMinimal& s) {
  j = nlohmann::json{{"perm", s.perm},
                     {"firstName", s.first_name},
                     {"lastName", s.last_name},
                     {"suffix", s.suffix},
                     {"email", s.email}};
}

/// @brief Writes every field; an empty optional is written as null.
inline void to_json(nlohmann::json& j, const StudentExtended& s) {
  to_json(j, static_cast<const StudentMinimal&>(s));
  auto put = [&j](const char* key, const auto& field) {
    if (field) {
      j[key] = *field;
    } else {
      j[key] = nullptr;
    }
  };
  put("firstNameLegal", s.first_name_legal);
  put("middleName", s.middle_name);
  put("gender", s.gender);
  put("birthDate", s.birth_date);
  put("nfr", s.nfr);
  put("internationalStudentCode", s.international_student_code);
  put("firstCensusQuarter", s.first_census_quarter);
  put("lastCensusQuarter", s.last_census_quarter);
  put("lastRegisteredQuarter", s.last_registered_quarter);
  put("admitLevel", s.admit_level);
  put("admitQuarter", s.admit_quarter);
  put("pronounCode", s.pronoun_code);
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

}  // namespace studentsvc

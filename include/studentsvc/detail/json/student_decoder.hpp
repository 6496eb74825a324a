#pragma once
/// @file detail/json/student_decoder.hpp
/// @brief decode_student and decode_student_minimal: a student response body
/// decoded in one SAX pass (no DOM), driven by the field table.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include <studentsvc/detail/json/sax.hpp>
#include <studentsvc/detail/model/student_fields.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/models.hpp>

namespace studentsvc {
namespace detail {

/// What a row's JSON value must be, for error messages.
[[nodiscard]] constexpr std::string_view expected_json_type(const StudentField& f) noexcept {
  return f.type == FieldType::flag ? "a boolean" : "a string";
}

[[nodiscard]] inline std::unexpected<ApiError> field_type_error(const StudentField& f, std::string_view got_type) {
  return make_error(ErrorKind::decode, "field '" + std::string(f.key) + "' must be " +
                                           std::string(expected_json_type(f)) + " or null, got " +
                                           std::string(got_type));
}

/// SAX handler that decodes a student body straight into the struct, with no
/// DOM in between. Same rules as the DOM path (decode_student_json in
/// json.hpp): only top-level keys count, unknown keys and nested values are
/// skipped, null or absent leaves the field empty, and the first wrong type in
/// student_fields order is reported, naming the field. A student key that
/// comes twice is a decode error naming it (the DOM path cannot see
/// duplicates: nlohmann keeps the last one while parsing).
class StudentSaxDecoder {
 public:
  using json = nlohmann::json;

  /// `extended` null: only the five basic keys are read (the `/current` answer).
  StudentSaxDecoder(StudentMinimal& basic, StudentExtended* extended) noexcept
      : basic_(basic), extended_(extended), fields_(student_fields_of(extended != nullptr)) {}

  // Scalars: at depth 0 the body itself is not an object; at depth 1 they are a key's value.
  bool null() {
    if (const std::size_t f = take_field(); f != none) reset(f);
    return top_level("null");
  }
  bool boolean(bool value) {
    if (const std::size_t f = take_field(); f != none) {
      if (fields_[f].type == FieldType::flag) {
        extended_->*fields_[f].flag = value;
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
      if (fields_[f].type == FieldType::flag) {
        wrong_[f] = "string";
      } else {
        assign(fields_[f], value);
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

  /// The outcome once the parse has returned `parsed`.
  [[nodiscard]] Result<void> result(bool parsed) const {
    if (duplicate_ != none) {
      return make_error(ErrorKind::decode,
                        "field '" + std::string(fields_[duplicate_].key) + "' appears more than once");
    }
    if (!parsed) return make_error(ErrorKind::decode, "response body is not valid JSON");
    if (top_type_ != nullptr) {
      return make_error(ErrorKind::decode, "response body must be a JSON object, got " + std::string(top_type_));
    }
    for (std::size_t f = 0; f < fields_.size(); ++f) {
      if (wrong_[f] != nullptr) return field_type_error(fields_[f], wrong_[f]);
    }
    return {};
  }

 private:
  static constexpr std::size_t none = student_fields.size();

  [[nodiscard]] std::size_t find(std::string_view name) const noexcept {
    for (std::size_t f = 0; f < fields_.size(); ++f) {
      if (fields_[f].key == name) return f;
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
  // Copies rather than moves: the lexer's buffer keeps its capacity for the next token.
  void assign(const StudentField& field, const std::string& value) {
    if (field.type == FieldType::basic) {
      (basic_.*field.basic).assign(value);
    } else if (auto& o = extended_->*field.text) {
      o->assign(value);
    } else {
      o.emplace(value);
    }
  }
  void reset(std::size_t f) noexcept {
    wrong_[f] = nullptr;
    switch (fields_[f].type) {
      case FieldType::basic: (basic_.*fields_[f].basic).clear(); break;
      case FieldType::text: (extended_->*fields_[f].text).reset(); break;
      case FieldType::flag: (extended_->*fields_[f].flag).reset(); break;
    }
  }

  StudentMinimal& basic_;
  StudentExtended* extended_;
  std::span<const StudentField> fields_;
  std::size_t depth_ = 0;
  std::size_t field_ = none;
  const char* top_type_ = nullptr;                        // set when the body is not an object
  std::array<const char*, student_fields.size()> wrong_{};  // per field: the wrong JSON type it had
  std::array<bool, student_fields.size()> seen_{};          // per field: its key has come
  std::size_t duplicate_ = none;                            // the first field whose key came twice
};

/// Decodes `body` with StudentSaxDecoder into `basic` (and `extended` when not null).
[[nodiscard]] inline Result<void> sax_decode_student(std::string_view body, StudentMinimal& basic,
                                                     StudentExtended* extended) {
  StudentSaxDecoder decoder(basic, extended);
  const bool parsed = sax_parse_json(body, &decoder);
  return decoder.result(parsed);
}

/// A student body as a StudentExtended: every field, or only the basic ones
/// (the `/current` answer) when not `extended`.
[[nodiscard]] inline Result<StudentExtended> decode_student_record(std::string_view body, bool extended) {
  StudentExtended s;
  if (auto r = sax_decode_student(body, s, extended ? &s : nullptr); !r) return std::unexpected(std::move(r.error()));
  return s;
}

}  // namespace detail

/// @brief Parses and decodes a StudentExtended response body in one pass (SAX,
/// no DOM). Unknown keys are ignored; a wrong JSON type or a student key that
/// comes twice gives ErrorKind::decode with a message naming the field.
[[nodiscard]] inline Result<StudentExtended> decode_student(std::string_view body) {
  return detail::decode_student_record(body, true);
}

/// @brief Parses and decodes a StudentMinimal response body (the `/current`
/// answer; one pass, like decode_student); other keys are ignored.
[[nodiscard]] inline Result<StudentMinimal> decode_student_minimal(std::string_view body) {
  StudentMinimal s;
  if (auto r = detail::sax_decode_student(body, s, nullptr); !r) return std::unexpected(std::move(r.error()));
  return s;
}

}  // namespace studentsvc

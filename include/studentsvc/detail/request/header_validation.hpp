#pragma once
/// @file detail/request/header_validation.hpp
/// @brief Checks header names and values before anything is sent.

#include <array>
#include <string>
#include <string_view>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc::detail {

/// RFC 9110 field values hold no control character but horizontal tab: CR, LF
/// or NUL could split the request (header injection), and the others are
/// handled differently by each server and proxy on the way.
[[nodiscard]] constexpr bool is_safe_header_value(std::string_view value) noexcept {
  // No early exit: every request checks every header, and a loop without
  // branches is the one the compiler vectorises.
  unsigned unsafe = 0;
  for (const char c : value) {
    const auto b = static_cast<unsigned char>(c);
    unsafe |= static_cast<unsigned>((b < 0x20) & (b != '\t')) | static_cast<unsigned>(b == 0x7f);
  }
  return unsafe == 0;
}

/// Which bytes RFC 9110 allows in a token, such as a header name.
inline constexpr auto header_token_chars = [] {
  std::array<bool, 256> table{};
  for (unsigned char c = '0'; c <= '9'; ++c) table[c] = true;
  for (unsigned char c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (unsigned char c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (const char c : std::string_view("!#$%&'*+-.^_`|~")) table[static_cast<unsigned char>(c)] = true;
  return table;
}();

/// RFC 9110 token characters.
[[nodiscard]] constexpr bool is_valid_header_name(std::string_view name) noexcept {
  bool valid = !name.empty();
  for (const char c : name) valid &= header_token_chars[static_cast<unsigned char>(c)];
  return valid;
}

/// The error names the header, never its value: the value may be a secret.
[[nodiscard]] inline Result<void> validate_headers(const Headers& headers) {
  for (const auto& [name, value] : headers) {
    if (!is_valid_header_name(name)) {
      return make_error(ErrorKind::invalid_argument, "header name '" + std::string(name) + "' is not a valid token");
    }
    if (!is_safe_header_value(value)) {
      return make_error(ErrorKind::invalid_argument,
                        "header '" + std::string(name) + "' value contains a control character (only tab is allowed)");
    }
  }
  return {};
}

}  // namespace studentsvc::detail

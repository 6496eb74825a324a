#pragma once
/// @file detail/header_validation.hpp
/// @brief Checks header names and values before anything is sent.

#include <string>
#include <string_view>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc::detail {

/// A value with CR, LF or NUL could split the request (header injection).
[[nodiscard]] constexpr bool is_safe_header_value(std::string_view value) noexcept {
  for (const char c : value) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

/// RFC 9110 token characters.
[[nodiscard]] constexpr bool is_valid_header_name(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

/// The error names the header, never its value: the value may be a secret.
[[nodiscard]] inline Result<void> validate_headers(const Headers& headers) {
  for (const auto& [name, value] : headers) {
    if (!is_valid_header_name(name)) {
      return make_error(ErrorKind::invalid_argument, "header name '" + std::string(name) + "' is not a valid token");
    }
    if (!is_safe_header_value(value)) {
      return make_error(ErrorKind::invalid_argument,
                        "header '" + std::string(name) + "' value contains CR, LF or NUL");
    }
  }
  return {};
}

}  // namespace studentsvc::detail

#pragma once
/// @file detail/request/header_validation.hpp
/// @brief Checks header names and values before anything is sent.

#include <string>
#include <string_view>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc::detail {

/// RFC 9110 field values hold no control character but horizontal tab: CR, LF
/// or NUL could split the request (header injection), and the others are
/// handled differently by each server and proxy on the way.
[[nodiscard]] constexpr bool is_safe_header_value(std::string_view value) noexcept {
  for (const char c : value) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && b != '\t') || b == 0x7f) return false;
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
                        "header '" + std::string(name) + "' value contains a control character (only tab is allowed)");
    }
  }
  return {};
}

}  // namespace studentsvc::detail

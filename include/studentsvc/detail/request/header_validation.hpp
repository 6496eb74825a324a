#pragma once
/// @file detail/request/header_validation.hpp
/// @brief Checks header names and values before anything is sent.

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include <studentsvc/detail/text/ascii.hpp>
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

/// How a header's value is named in an error: the setting it comes from, so
/// the message says what to fix; never the value, which may be a secret.
[[nodiscard]] inline std::string header_value_label(std::string_view name) {
  if (iequals(name, "x-api-key")) return "the API key (x-api-key)";
  if (iequals(name, "svc-api-key")) return "the svc-api-key";
  if (iequals(name, "authorization")) return "the Basic credential (network id and password, Authorization)";
  if (iequals(name, "svc-user-jwt")) return "the user JWT (svc-user-jwt)";
  if (iequals(name, "svc-api-version")) return "api_version (svc-api-version)";
  if (iequals(name, "content-type")) return "content_type (Content-Type)";
  return "header '" + std::string(name) + "'";
}

/// Spaces and tabs: what HTTP parsers (and libcurl) trim around a field value.
[[nodiscard]] constexpr bool is_header_blank(char c) noexcept { return c == ' ' || c == '\t'; }

/// @brief Checks one header value the SDK is about to send, so that what
/// arrives is exactly what was asked for, or nothing is sent:
///
/// - a control character but tab (CR, LF, NUL could split the request);
/// - more than max_header_value_bytes (servers and libcurl refuse or cut
///   long lines, and the failure would look like the server's);
/// - empty, or only spaces and tabs: libcurl drops such a header, so a blank
///   user JWT would silently lift the "only the token's own student" rule;
/// - a space or tab first or last: HTTP trims them, so the server would see
///   another value.
///
/// The error is invalid_argument, names the header's setting (never the
/// value: it may be a secret) and says nothing was sent.
[[nodiscard]] inline Result<void> validate_header_value(std::string_view name, std::string_view value) {
  if (!is_safe_header_value(value)) {
    return make_error(ErrorKind::invalid_argument,
                      "header '" + std::string(name) + "' value contains a control character (only tab is allowed)");
  }
  if (value.size() > max_header_value_bytes) {
    return make_error(ErrorKind::invalid_argument,
                      header_value_label(name) + " is " + std::to_string(value.size()) + " bytes, over the " +
                          std::to_string(max_header_value_bytes) + "-byte cap on a request header value; nothing was sent");
  }
  if (std::all_of(value.begin(), value.end(), is_header_blank)) {
    return make_error(ErrorKind::invalid_argument,
                      header_value_label(name) +
                          " is blank (empty, or only spaces and tabs), which HTTP would drop; nothing was sent");
  }
  if (is_header_blank(value.front()) || is_header_blank(value.back())) {
    return make_error(ErrorKind::invalid_argument,
                      header_value_label(name) +
                          " starts or ends with a space or tab, which HTTP would strip; nothing was sent");
  }
  return {};
}

/// Every header of a request the SDK built: a valid name and a value that
/// validate_header_value accepts. The error names the header, never its value.
[[nodiscard]] inline Result<void> validate_headers(const Headers& headers) {
  for (const auto& [name, value] : headers) {
    if (!is_valid_header_name(name)) {
      return make_error(ErrorKind::invalid_argument, "header name '" + std::string(name) + "' is not a valid token");
    }
    if (auto r = validate_header_value(name, value); !r) return r;
  }
  return {};
}

/// @brief The URL of a request the SDK built is at most max_request_url_bytes;
/// `what` names the settings that made it long ("sub_path and query").
[[nodiscard]] inline Result<void> validate_url_length(std::string_view url, std::string_view what) {
  if (url.size() <= max_request_url_bytes) return {};
  return make_error(ErrorKind::invalid_argument,
                    "the request URL is " + std::to_string(url.size()) + " bytes, over the " +
                        std::to_string(max_request_url_bytes) + "-byte cap (check " + std::string(what) +
                        "); nothing was sent");
}

}  // namespace studentsvc::detail

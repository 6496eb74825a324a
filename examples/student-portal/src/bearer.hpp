#pragma once
// The ID token from `Authorization: Bearer <token>`, as an authenticating
// reverse proxy forwards it (RFC 6750, section 2.1).

#include <optional>
#include <string_view>

namespace student_portal {

// The token, or std::nullopt when the header is absent, names another scheme,
// or the token is empty or holds a character outside b64token
// (ALPHA DIGIT - . _ ~ + / then any '='), so it is never sent upstream.
[[nodiscard]] constexpr std::optional<std::string_view> bearer_token(std::string_view authorization) noexcept {
  constexpr std::string_view scheme = "bearer";
  if (authorization.size() <= scheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < scheme.size(); ++i) {  // the scheme is case-insensitive
    const char c = authorization[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != scheme[i]) return std::nullopt;
  }
  std::string_view rest = authorization.substr(scheme.size());
  if (rest.front() != ' ') return std::nullopt;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  std::size_t i = 0;
  for (; i < rest.size(); ++i) {
    const char c = rest[i];
    const bool token_char = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
    if (!token_char) break;
  }
  if (i == 0) return std::nullopt;
  for (std::size_t j = i; j < rest.size(); ++j) {
    if (rest[j] != '=') return std::nullopt;
  }
  return rest;
}

}  // namespace student_portal

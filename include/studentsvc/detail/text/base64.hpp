#pragma once
/// @file detail/text/base64.hpp
/// @brief Standard base64 (RFC 4648 section 4, with padding) for the Basic credential.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <studentsvc/detail/text/wipe.hpp>

namespace studentsvc::detail {

/// Appends the encoding of `bytes` to `out`, as they are: a non-ASCII password
/// is encoded byte for byte. Written in place: one resize, no check per character.
inline void append_base64(std::string& out, std::string_view bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::size_t at = out.size();
  out.resize(at + (bytes.size() + 2) / 3 * 4);
  char* p = out.data() + at;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(bytes[k])); };
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (byte(i) << 16U) | (byte(i + 1) << 8U) | byte(i + 2);
    *p++ = alphabet[(v >> 18U) & 63U];
    *p++ = alphabet[(v >> 12U) & 63U];
    *p++ = alphabet[(v >> 6U) & 63U];
    *p++ = alphabet[v & 63U];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    unsigned v = byte(i) << 16U;
    if (rest == 2) v |= byte(i + 1) << 8U;
    *p++ = alphabet[(v >> 18U) & 63U];
    *p++ = alphabet[(v >> 12U) & 63U];
    *p++ = rest == 2 ? alphabet[(v >> 6U) & 63U] : '=';
    *p = '=';
  }
}

/// Encodes bytes as they are (see append_base64).
[[nodiscard]] inline std::string base64_encode(std::string_view bytes) {
  std::string out;
  append_base64(out, bytes);
  return out;
}

/// Decodes padded base64; std::nullopt for anything else. Redaction uses it to
/// find the password inside a Basic value it did not build from AuthPolicy::basic.
[[nodiscard]] inline std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const std::size_t pad = last ? (text[i + 3] == '=' ? (text[i + 2] == '=' ? 2U : 1U) : 0U) : 0U;
    unsigned v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int d = k >= 4 - pad ? 0 : value(text[i + k]);
      if (d < 0) {
        wipe_string(out);  // what was decoded may be a credential's start
        return std::nullopt;
      }
      v = (v << 6U) | static_cast<unsigned>(d);
    }
    out += static_cast<char>((v >> 16U) & 0xFFU);
    if (pad < 2) out += static_cast<char>((v >> 8U) & 0xFFU);
    if (pad < 1) out += static_cast<char>(v & 0xFFU);
  }
  return out;
}

}  // namespace studentsvc::detail

#pragma once
/// @file detail/base64.hpp
/// @brief Standard base64 (RFC 4648 section 4, with padding) for the Basic credential.

#include <cstddef>
#include <string>
#include <string_view>

namespace studentsvc::detail {

/// Encodes bytes as they are: a non-ASCII password is encoded byte for byte.
[[nodiscard]] inline std::string base64_encode(std::string_view bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16U) |
                       (static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8U) |
                       static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 2]));
    out += alphabet[(v >> 18U) & 63U];
    out += alphabet[(v >> 12U) & 63U];
    out += alphabet[(v >> 6U) & 63U];
    out += alphabet[v & 63U];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    unsigned v = static_cast<unsigned>(static_cast<unsigned char>(bytes[i])) << 16U;
    if (rest == 2) v |= static_cast<unsigned>(static_cast<unsigned char>(bytes[i + 1])) << 8U;
    out += alphabet[(v >> 18U) & 63U];
    out += alphabet[(v >> 12U) & 63U];
    out += rest == 2 ? alphabet[(v >> 6U) & 63U] : '=';
    out += '=';
  }
  return out;
}

}  // namespace studentsvc::detail

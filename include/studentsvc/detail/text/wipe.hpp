#pragma once
/// @file detail/text/wipe.hpp
/// @brief Overwriting a string's bytes before its memory is reused or freed:
/// Secret, the request headers (Headers), the coalescing key and libcurl's
/// header list all carry credentials.

#include <cstddef>
#include <string>

namespace studentsvc::detail {

/// Overwrites `size` bytes at `bytes` with zeros, through volatile writes the
/// compiler keeps (a buffer a secret was read through).
inline void wipe_bytes(void* bytes, std::size_t size) noexcept {
  volatile auto* p = static_cast<unsigned char*>(bytes);
  for (std::size_t i = 0; i < size; ++i) p[i] = 0;
}

/// Overwrites every byte of `s`'s buffer with zeros, spare capacity and a
/// short string's inline buffer included, through volatile writes the
/// compiler keeps; then empties it. Never allocates (it stays within the
/// capacity), so it cannot fail. A moved-from string is wiped too: its inline
/// buffer may still hold the bytes it had.
inline void wipe_string(std::string& s) noexcept {
  s.resize(s.capacity());  // within capacity: no allocation
  wipe_bytes(s.data(), s.size());
  s.clear();
}

}  // namespace studentsvc::detail

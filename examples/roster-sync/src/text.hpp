#pragma once
// Messages built from pieces (GCC 12's library has no <format>).

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace roster_sync {

/// Appends strings and numbers: cat("run ", 3, ": ", status).
template <class... Parts>
[[nodiscard]] std::string cat(const Parts&... parts) {
  std::string out;
  auto add = [&out](const auto& part) {
    using Part = std::remove_cvref_t<decltype(part)>;
    if constexpr (std::is_arithmetic_v<Part> && !std::is_same_v<Part, char>) {
      out += std::to_string(part);
    } else {
      out += part;
    }
  };
  (add(parts), ...);
  return out;
}

/// 16 lowercase hex digits.
[[nodiscard]] inline std::string hex64(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

}  // namespace roster_sync

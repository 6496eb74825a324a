#pragma once
/// @file detail/request/trace_context.hpp
/// @brief W3C Trace Context `traceparent`: checking a caller's value and
/// making a fresh one (version 00, random trace and parent ids, sampled).

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace studentsvc::detail {

[[nodiscard]] constexpr bool is_lower_hex(std::string_view s) noexcept {
  for (const char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

/// `00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>`, lower-case, ids
/// not all zeros (W3C Trace Context, section 3.2). A later version may be
/// longer; this SDK sends version 00 only, so it accepts that form only.
[[nodiscard]] constexpr bool is_valid_traceparent(std::string_view v) noexcept {
  if (v.size() != 55 || v[2] != '-' || v[35] != '-' || v[52] != '-') return false;
  const auto version = v.substr(0, 2);
  const auto trace_id = v.substr(3, 32);
  const auto parent_id = v.substr(36, 16);
  const auto flags = v.substr(53, 2);
  if (version != "00" || !is_lower_hex(trace_id) || !is_lower_hex(parent_id) || !is_lower_hex(flags)) return false;
  return trace_id.find_first_not_of('0') != std::string_view::npos &&
         parent_id.find_first_not_of('0') != std::string_view::npos;
}

/// A fresh sampled traceparent. Ids come from a per-thread generator seeded
/// once from std::random_device: unique in practice, with no lock between threads.
[[nodiscard]] inline std::string make_traceparent() {
  thread_local std::mt19937_64 rng{(static_cast<std::uint64_t>(std::random_device{}()) << 32U) ^
                                   std::random_device{}()};
  static constexpr std::array<char, 16> hex{'0', '1', '2', '3', '4', '5', '6', '7',
                                            '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  auto append = [](std::string& out, std::uint64_t v) {
    if (v == 0) v = 1;  // an all-zero id is invalid
    for (int shift = 60; shift >= 0; shift -= 4) out += hex[(v >> static_cast<unsigned>(shift)) & 15U];
  };
  std::string out = "00-";
  out.reserve(55);
  append(out, rng());
  append(out, rng());
  out += '-';
  append(out, rng());
  out += "-01";
  return out;
}

}  // namespace studentsvc::detail

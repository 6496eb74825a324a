#pragma once
// A RetryPolicy whose waits are a few milliseconds, shared by the tests that
// retry against a real or fake server and must not spend real seconds on it.

#include <chrono>
#include <cstdint>

#include <studentsvc/options.hpp>

namespace studentsvc::test {

/// `attempts` attempts in all, backoff waits of at most 4 ms, Retry-After
/// capped at `max_retry_after`, and a fixed jitter seed so a rerun retries alike.
[[nodiscard]] inline RetryPolicy fast_retry(int attempts = 3,
                                            std::chrono::milliseconds max_retry_after = std::chrono::milliseconds{10},
                                            std::uint64_t seed = 7) {
  RetryPolicy p;
  p.max_attempts = attempts;
  p.initial_backoff = std::chrono::milliseconds{1};
  p.max_backoff = std::chrono::milliseconds{4};
  p.max_retry_after = max_retry_after;
  p.jitter_seed = seed;
  return p;
}

}  // namespace studentsvc::test

#pragma once
/// @file detail/retry/deadline.hpp
/// @brief The overflow-safe deadline of RetryPolicy::max_total_time, shared by
/// the single-request and the batch retry loops.

#include <algorithm>
#include <chrono>

namespace studentsvc::detail {

/// A point on steady_clock `bound` after `start`. A bound the clock cannot hold
/// (milliseconds::max(), "no bound") is no deadline at all: `now + bound` would
/// overflow steady_clock's nanoseconds and wrap into the past.
class Deadline {
 public:
  using clock = std::chrono::steady_clock;

  explicit Deadline(std::chrono::milliseconds bound, clock::time_point start = clock::now()) noexcept {
    // Compared in milliseconds: converting `bound` to the clock's nanoseconds could overflow.
    const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - start);
    unbounded_ = bound >= room;
    at_ = unbounded_ ? clock::time_point::max() : start + std::max(bound, std::chrono::milliseconds{0});
  }

  /// True when there is no deadline.
  [[nodiscard]] bool unbounded() const noexcept { return unbounded_; }

  /// Time left (zero once passed); milliseconds::max() when unbounded.
  [[nodiscard]] std::chrono::milliseconds left(clock::time_point now = clock::now()) const noexcept {
    if (unbounded_) return std::chrono::milliseconds::max();
    if (now >= at_) return std::chrono::milliseconds{0};
    return std::chrono::duration_cast<std::chrono::milliseconds>(at_ - now);
  }

  /// An attempt's timeout: `full`, cut to the time left, at least 1 ms (libcurl reads 0 as "no timeout").
  [[nodiscard]] std::chrono::milliseconds cut(std::chrono::milliseconds full,
                                              clock::time_point now = clock::now()) const noexcept {
    return std::max(std::chrono::milliseconds{1}, std::min(full, left(now)));
  }

  /// True when waiting `wait` from `now` would reach the deadline.
  [[nodiscard]] bool passed_after(std::chrono::milliseconds wait, clock::time_point now = clock::now()) const noexcept {
    return !unbounded_ && wait >= left(now);
  }

 private:
  clock::time_point at_;
  bool unbounded_ = false;
};

}  // namespace studentsvc::detail

#pragma once
/// @brief Client-wide admission control, shared by every thread, async call and
/// batch of one client: a token bucket (requests per second with a burst), a
/// retry budget (retries up to a ratio of first attempts, plus a minimum) and a
/// pause that a 429/503 `Retry-After` puts on every caller. Thread-safe; time
/// comes from an injectable RetryClock, so tests run in simulated time.
/// @file detail/limits/rate_limit.hpp

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

#include <studentsvc/errors.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/detail/retry/clock.hpp>

namespace studentsvc::detail {

// The public settings (options.hpp), by their names here.
using studentsvc::RateLimitOptions;
using studentsvc::RetryBudgetOptions;

/// What an attempt is, for the retry budget.
enum class AttemptKind : unsigned char { first, retry };

/// Whether an attempt may go, and when.
struct Admission {
  bool allowed = true;                ///< false: a retry refused by the retry budget (send nothing).
  std::chrono::milliseconds wait{0};  ///< When allowed: wait this long, then send.
};

/// @brief GCRA (virtual scheduling) form of a token bucket: a reservation never
/// fails, it says when its token comes, so blocking and event-loop callers use
/// it alike and waiting callers are served in the order they asked.
class TokenBucket {
 public:
  explicit TokenBucket(RateLimitOptions options) {
    if (options.requests_per_second > 0 && std::isfinite(options.requests_per_second)) {
      const double ns = 1e9 / options.requests_per_second;
      interval_ = std::chrono::nanoseconds{ns >= 9e18 ? INT64_MAX : std::max<std::int64_t>(1, std::llround(ns))};
      const auto extra = static_cast<std::int64_t>(std::max(options.burst, 1) - 1);
      tolerance_ = extra > 0 && interval_.count() > INT64_MAX / extra ? std::chrono::nanoseconds{INT64_MAX}
                                                                       : interval_ * extra;
    }
  }
  /// @brief True when the bucket limits anything.
  [[nodiscard]] bool enabled() const noexcept { return interval_.count() > 0; }
  /// @brief Takes the next token for a send no earlier than `earliest`
  /// (now, or the end of a pause) and returns when that send may go.
  /// Not thread-safe on its own: ClientThrottle holds the lock.
  std::chrono::steady_clock::time_point reserve(std::chrono::steady_clock::time_point earliest) {
    if (!enabled()) return earliest;
    theoretical_ = std::max(theoretical_, earliest);
    const auto at = std::max(earliest, theoretical_ - tolerance_);
    theoretical_ = saturating_add(theoretical_, interval_);
    return at;
  }

 private:
  static std::chrono::steady_clock::time_point saturating_add(std::chrono::steady_clock::time_point t,
                                                              std::chrono::nanoseconds d) {
    const auto room = std::chrono::steady_clock::time_point::max() - t;
    return d >= room ? std::chrono::steady_clock::time_point::max() : t + d;
  }

  std::chrono::nanoseconds interval_{0};   // 1 / rate; 0: no limit
  std::chrono::nanoseconds tolerance_{0};  // (burst - 1) * interval
  std::chrono::steady_clock::time_point theoretical_{};  // when the bucket would next be empty-handed
};

/// @brief Counts first attempts and retries over a sliding window (in tenths of
/// it) and allows a retry while retries < min_retries + ratio * first attempts.
/// Not thread-safe on its own: ClientThrottle holds the lock.
class RetryBudget {
 public:
  explicit RetryBudget(RetryBudgetOptions options)
      : ratio_(std::max(options.ratio, 0.0)),
        min_retries_(std::max(options.min_retries, 0)),
        window_(std::max(options.window, std::chrono::milliseconds{10})),
        slot_(window_ / 10) {}

  void record_first_attempt(std::chrono::steady_clock::time_point now) { slot_at(now).first_attempts += 1; }

  /// @brief True, and the retry counted, when the budget has room for one more.
  bool try_retry(std::chrono::steady_clock::time_point now) {
    Slot& current = slot_at(now);
    long long firsts = 0;
    long long retries = 0;
    for (const Slot& s : slots_) {
      firsts += s.first_attempts;
      retries += s.retries;
    }
    const double allowed = static_cast<double>(min_retries_) + ratio_ * static_cast<double>(firsts);
    if (static_cast<double>(retries + 1) > allowed + 1e-9) return false;
    current.retries += 1;
    return true;
  }

 private:
  struct Slot {
    std::chrono::steady_clock::time_point start;
    long long first_attempts = 0;
    long long retries = 0;
  };

  // The slot that holds `now`, after dropping those that left the window.
  Slot& slot_at(std::chrono::steady_clock::time_point now) {
    while (!slots_.empty() && now - slots_.front().start >= window_) slots_.pop_front();
    if (slots_.empty() || now - slots_.back().start >= slot_) {
      // Slots start on multiples of slot_ from the clock's epoch, so a window is exactly ten of them.
      const auto since_epoch = now.time_since_epoch();
      slots_.push_back(Slot{now - (since_epoch % slot_), 0, 0});
    }
    return slots_.back();
  }

  double ratio_;
  int min_retries_;
  std::chrono::milliseconds window_;
  std::chrono::steady_clock::duration slot_;
  std::deque<Slot> slots_;
};

/// @brief One client's admission control: the token bucket, the retry budget
/// (optional) and the client-wide pause, behind one mutex.
///
/// Every attempt asks admit() (first attempts and retries alike) and, when
/// allowed, waits `wait` before sending; a 429 or 503 with `Retry-After` is
/// reported with pause_for_status(), which holds every later admission until
/// the pause ends. Tokens after a pause are spaced from its end, so a pause is
/// not followed by a burst beyond `burst`.
class ClientThrottle {
 public:
  explicit ClientThrottle(RateLimitOptions rate = {}, std::optional<RetryBudgetOptions> budget = std::nullopt,
                          RetryClock clock = {})
      : clock_(std::move(clock)), bucket_(rate) {
    if (budget) budget_.emplace(*budget);
  }

  /// @brief Whether an attempt may go and how long to wait first. A first
  /// attempt is always allowed; a retry only while the retry budget has room.
  Admission admit(AttemptKind kind) {
    const std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    if (budget_) {
      if (kind == AttemptKind::first) {
        budget_->record_first_attempt(now);
      } else if (!budget_->try_retry(now)) {
        ++retries_refused_;
        return Admission{false, std::chrono::milliseconds{0}};
      }
    }
    const auto send_at = bucket_.reserve(std::max(now, paused_until_));
    return Admission{true, ceil_ms(send_at - now)};
  }

  /// @brief Pauses every caller for `d` from now (a longer pause already in
  /// place is kept). A negative `d` is zero.
  void pause_for(std::chrono::milliseconds d) {
    const std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::time_point::max() - now);
    const auto until = now + std::clamp(d, std::chrono::milliseconds{0}, room);
    if (until > paused_until_) paused_until_ = until;
  }

  /// @brief The client-wide reaction to an answer: a 429 or 503 whose
  /// `Retry-After` asked for `retry_after` pauses everyone for it, capped at
  /// `cap` (RetryPolicy::max_retry_after). Other statuses, or no Retry-After
  /// (a negative value), pause nothing. Returns the pause applied.
  std::chrono::milliseconds pause_for_status(int status, std::chrono::milliseconds retry_after,
                                             std::chrono::milliseconds cap) {
    if ((status != 429 && status != 503) || retry_after < std::chrono::milliseconds{0}) {
      return std::chrono::milliseconds{0};
    }
    const auto d = std::min(retry_after, std::max(cap, std::chrono::milliseconds{0}));
    pause_for(d);
    return d;
  }

  /// @brief How long the client-wide pause still lasts (0 when none).
  [[nodiscard]] std::chrono::milliseconds pause_remaining() const {
    const std::lock_guard lock(mutex_);
    const auto now = clock_.now();
    return paused_until_ > now ? ceil_ms(paused_until_ - now) : std::chrono::milliseconds{0};
  }

  /// @brief Retries the budget refused so far.
  [[nodiscard]] long long retries_refused() const {
    const std::lock_guard lock(mutex_);
    return retries_refused_;
  }

 private:
  static std::chrono::milliseconds ceil_ms(std::chrono::steady_clock::duration d) {
    return d <= std::chrono::steady_clock::duration::zero() ? std::chrono::milliseconds{0}
                                                           : std::chrono::ceil<std::chrono::milliseconds>(d);
  }

  RetryClock clock_;
  mutable std::mutex mutex_;
  TokenBucket bucket_;
  std::optional<RetryBudget> budget_;
  std::chrono::steady_clock::time_point paused_until_{};
  long long retries_refused_ = 0;
};

}  // namespace studentsvc::detail

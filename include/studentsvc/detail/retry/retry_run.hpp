#pragma once
/// @file detail/retry/retry_run.hpp
/// @brief Which failures retry, the full-jitter backoff, `Retry-After`
/// (delay-seconds or any HTTP-date form), and RetryRun: the retry decisions of
/// one call. The public names are declared through <studentsvc/retry.hpp>.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>

#include <studentsvc/detail/retry/deadline.hpp>
#include <studentsvc/detail/retry/http_date.hpp>
#include <studentsvc/detail/limits/rate_limit.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc {

/// @brief Parses an HTTP-date in any form RFC 9110 makes recipients accept:
/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
/// std::nullopt for anything else, an impossible date (Feb 30) or trailing text.
[[nodiscard]] inline std::optional<std::chrono::sys_seconds> parse_http_date(std::string_view s) {
  return detail::parse_http_date(s, std::chrono::system_clock::now());
}

/// @brief The wait a `Retry-After` value asks for: delay-seconds or an HTTP-date
/// relative to `now` (a date in the past means zero; a number too large for
/// milliseconds is milliseconds::max()). std::nullopt when unparsable.
[[nodiscard]] inline std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value, std::chrono::system_clock::time_point now) {
  return detail::parse_retry_after(value, now);
}

namespace detail {

/// The wait before the next attempt after `outcome`: the server's
/// `Retry-After` (read against the wall clock `now`) capped by
/// max_retry_after, or `backoff` when there is none or it does not parse.
/// Pure: the same arguments give the same wait.
[[nodiscard]] inline std::chrono::milliseconds next_wait(const Result<HttpResponse>& outcome,
                                                         const RetryPolicy& policy,
                                                         std::chrono::milliseconds backoff,
                                                         std::chrono::system_clock::time_point now) {
  if (outcome) {
    if (const auto header = outcome->headers.find("Retry-After")) {
      if (const auto asked = parse_retry_after(*header, now)) {
        // A negative cap counts as zero, like a negative backoff.
        return std::max(std::min(*asked, policy.max_retry_after), std::chrono::milliseconds{0});
      }
    }
  }
  return backoff;
}

/// RetryPolicy::max_total_time must be positive: zero would end every call before it starts.
[[nodiscard]] inline Result<void> validate_policy(const RetryPolicy& policy) {
  if (policy.max_total_time <= std::chrono::milliseconds{0}) {
    return make_error(ErrorKind::invalid_argument, "RetryPolicy::max_total_time must be positive");
  }
  return {};
}

}  // namespace detail

/// @brief Full-jitter backoff before retry `retry` (1 for the first retry).
template <class Rng>
[[nodiscard]] std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry, Rng& rng) {
  const auto initial = std::max<std::int64_t>(policy.initial_backoff.count(), 0);
  const auto ceiling = std::max<std::int64_t>(policy.max_backoff.count(), 0);
  std::int64_t bound = initial;
  for (int i = 1; i < retry && bound < ceiling; ++i) bound = bound > ceiling / 2 ? ceiling : bound * 2;
  bound = std::min(bound, ceiling);
  if (bound <= 0) return std::chrono::milliseconds{0};
  std::uniform_int_distribution<std::int64_t> dist(0, bound);
  return std::chrono::milliseconds{dist(rng)};
}

/// @brief A jitter source safe to share between threads.
class JitterSource {
 public:
  /// @brief Seeded with `seed`, or from std::random_device when it is std::nullopt.
  explicit JitterSource(std::optional<std::uint64_t> seed = std::nullopt)
      : rng_(seed ? *seed : (static_cast<std::uint64_t>(std::random_device{}()) << 32U) ^ std::random_device{}()) {}

  /// @brief The full-jitter wait before retry number `retry` (1, 2, ...) under `policy`.
  [[nodiscard]] std::chrono::milliseconds backoff(const RetryPolicy& policy, int retry) {
    const std::lock_guard lock(mutex_);
    return backoff_delay(policy, retry, rng_);
  }

 private:
  std::mutex mutex_;
  std::mt19937_64 rng_;
};

/// @brief Whether an attempt's outcome may be retried: a transport failure the
/// transport marked `retryable` (not a certificate that failed verification, a
/// body over the cap or a refused scheme: those fail the same way again), or a
/// retryable status. Anything else (2xx, 400, 401, 404, ...) is final.
[[nodiscard]] inline bool should_retry(const Result<HttpResponse>& outcome) {
  if (!outcome) return outcome.error().kind == ErrorKind::transport && outcome.error().retryable;
  return is_retryable_status(outcome->status);
}

namespace detail {

/// What to do once an attempt's outcome is in.
struct RetryDecision {
  bool retry = false;                 ///< false: done, the outcome is final.
  std::chrono::milliseconds wait{0};  ///< With retry: the wait before the next attempt.
  bool out_of_time = false;           ///< Done because the wait would pass max_total_time.
};

/// The retry decisions of one call, with no clock, sleep or transport of its
/// own: outcome in, decision out. The call pipeline (detail/call/pipeline.hpp)
/// feeds it, whichever runtime sends and waits.
class RetryRun {
 public:
  RetryRun(const RetryPolicy& policy, bool idempotent, std::chrono::steady_clock::time_point start)
      : policy_(policy),
        deadline_(policy.max_total_time, start),
        max_attempts_(idempotent ? std::max(policy.max_attempts, 1) : 1) {}

  /// An attempt's timeout when started at `now`: `full`, cut to what is left of max_total_time.
  [[nodiscard]] std::chrono::milliseconds timeout(std::chrono::milliseconds full,
                                                  std::chrono::steady_clock::time_point now) const noexcept {
    return deadline_.cut(full, now);
  }
  /// Attempts recorded so far.
  [[nodiscard]] int attempts() const noexcept { return attempts_; }

  /// Records an attempt's outcome: retry it after a wait (the server's
  /// Retry-After or the backoff), or stop.
  [[nodiscard]] RetryDecision record(const Result<HttpResponse>& outcome, JitterSource& jitter,
                                     std::chrono::steady_clock::time_point now,
                                     std::chrono::system_clock::time_point wall) {
    RetryDecision decision;
    if (++attempts_ >= max_attempts_ || !should_retry(outcome)) return decision;
    decision.wait = next_wait(outcome, policy_, jitter.backoff(policy_, attempts_), wall);
    if (deadline_.passed_after(decision.wait, now)) {
      decision.out_of_time = true;
      return decision;
    }
    decision.retry = true;
    return decision;
  }

 private:
  RetryPolicy policy_;
  Deadline deadline_;
  int max_attempts_;
  int attempts_ = 0;
};

/// The client-wide reaction to one outcome: a 429 or 503 whose `Retry-After`
/// parses pauses every call of the client for it (capped by max_retry_after).
inline void pause_client_for(ClientThrottle& throttle, const Result<HttpResponse>& outcome, const RetryPolicy& policy,
                             std::chrono::system_clock::time_point wall) {
  if (!outcome || (outcome->status != 429 && outcome->status != 503)) return;
  const auto header = outcome->headers.find("Retry-After");
  if (!header) return;
  if (const auto asked = parse_retry_after(*header, wall)) {
    throttle.pause_for_status(outcome->status, *asked, policy.max_retry_after);
  }
}

}  // namespace detail

}  // namespace studentsvc

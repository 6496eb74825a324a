#pragma once
/// @file retry.hpp
/// @brief The retry loop around Transport::send: which failures retry, the
/// full-jitter backoff, and `Retry-After` (delay-seconds or any HTTP-date form).

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include <studentsvc/detail/deadline.hpp>
#include <studentsvc/detail/http_date.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/logging.hpp>
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
/// `Retry-After` capped by max_retry_after, or `backoff` when there is none or
/// it does not parse.
[[nodiscard]] inline std::chrono::milliseconds next_wait(const Result<HttpResponse>& outcome,
                                                         const RetryPolicy& policy,
                                                         std::chrono::milliseconds backoff) {
  if (outcome) {
    if (const auto header = outcome->headers.find("Retry-After")) {
      if (const auto asked = parse_retry_after(*header, std::chrono::system_clock::now())) {
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

/// @brief Sends `request`, retrying per `policy` when `idempotent`.
///
/// Returns the last outcome: a response (any status) or a transport error.
/// Each attempt's timeout is cut to what is left of max_total_time, so a
/// stalled attempt ends with the bound. `attempts` receives the number of
/// attempts made (0, and invalid_argument, when max_total_time is not positive).
[[nodiscard]] inline Result<HttpResponse> send_with_retry(Transport& transport, const HttpRequest& request,
                                                          const RetryPolicy& policy, bool idempotent,
                                                          JitterSource& jitter, const Logger& logger,
                                                          int& attempts) {
  attempts = 0;
  if (auto valid = detail::validate_policy(policy); !valid) return std::unexpected(std::move(valid.error()));
  const detail::Deadline deadline(policy.max_total_time);
  const int max_attempts = idempotent ? std::max(policy.max_attempts, 1) : 1;
  const auto full_timeout = request.timeout;
  std::optional<HttpRequest> trimmed;  // a copy, made only once the time left cuts the timeout
  for (;;) {
    const HttpRequest* attempt = &request;
    if (const auto cut = deadline.cut(full_timeout); cut < full_timeout) {
      if (!trimmed) trimmed = request;
      trimmed->timeout = cut;
      attempt = &*trimmed;
    }
    ++attempts;
    auto outcome = transport.send(*attempt);
    if (attempts >= max_attempts || !should_retry(outcome)) return outcome;

    const auto wait = detail::next_wait(outcome, policy, jitter.backoff(policy, attempts));
    if (deadline.passed_after(wait)) {
      logger.log(LogLevel::warning, "retry: giving up, the next wait would pass max_total_time");
      return outcome;
    }
    if (logger.enabled(LogLevel::info)) {
      logger.log(LogLevel::info, "retry: attempt " + std::to_string(attempts) + " failed (" +
                                     (outcome ? "status " + std::to_string(outcome->status)
                                              : std::string("transport error")) +
                                     "), waiting " + std::to_string(wait.count()) + " ms");
    }
    std::this_thread::sleep_for(wait);
  }
}

}  // namespace studentsvc

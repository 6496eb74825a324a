#pragma once
/// @file retry.hpp
/// @brief The retry loop around Transport::send: which failures retry, the
/// full-jitter backoff, and `Retry-After` in both of its forms.

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

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc {

/// @brief Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the HTTP-date form senders must use.
[[nodiscard]] inline std::optional<std::chrono::sys_seconds> parse_http_date(std::string_view s) {
  // "Www, DD Mon YYYY HH:MM:SS GMT" is exactly 29 characters.
  if (s.size() != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
      s[19] != ':' || s[22] != ':' || s.substr(25) != " GMT") {
    return std::nullopt;
  }
  auto number = [&](std::size_t pos, std::size_t len) -> int {
    int v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  static constexpr std::array<std::string_view, 12> months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const auto it = std::find(months.begin(), months.end(), s.substr(8, 3));
  const int day = number(5, 2), year = number(12, 4), hh = number(17, 2), mm = number(20, 2), ss = number(23, 2);
  if (it == months.end() || day < 0 || year < 0 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day ymd{std::chrono::year{year},
                                        std::chrono::month{static_cast<unsigned>(it - months.begin() + 1)},
                                        std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days{ymd} + std::chrono::hours{hh} + std::chrono::minutes{mm} + std::chrono::seconds{ss};
}

/// @brief The wait a `Retry-After` value asks for: delay-seconds or an HTTP-date
/// relative to `now` (a date in the past means zero). std::nullopt when unparsable.
[[nodiscard]] inline std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value, std::chrono::system_clock::time_point now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string_view::npos) {
    if (value.size() > 9) return std::chrono::milliseconds::max();  // absurd; the cap applies
    long long seconds = 0;
    for (const char c : value) seconds = seconds * 10 + (c - '0');
    return std::chrono::seconds{seconds};
  }
  const auto date = parse_http_date(value);
  if (!date) return std::nullopt;
  // In milliseconds: system_clock's nanoseconds overflow for dates past 2262.
  const auto wait = std::chrono::time_point_cast<std::chrono::milliseconds>(*date) -
                    std::chrono::time_point_cast<std::chrono::milliseconds>(now);
  return std::max(wait, std::chrono::milliseconds{0});
}

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
/// Each attempt's timeout is cut to what is left of max_total_time.
/// `attempts` receives the number of attempts made.
[[nodiscard]] inline Result<HttpResponse> send_with_retry(Transport& transport, const HttpRequest& request,
                                                          const RetryPolicy& policy, bool idempotent,
                                                          JitterSource& jitter, const Logger& logger,
                                                          int& attempts) {
  using clock = std::chrono::steady_clock;
  // Capped at 100 years: milliseconds::max() ("no bound") would overflow steady_clock's nanoseconds.
  const auto deadline =
      clock::now() + std::min<std::chrono::milliseconds>(policy.max_total_time, std::chrono::hours{24 * 365 * 100});
  const int max_attempts = idempotent ? std::max(policy.max_attempts, 1) : 1;
  const auto full_timeout = request.timeout;
  std::optional<HttpRequest> trimmed;  // a copy, made only once the time left cuts the timeout
  attempts = 0;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    const HttpRequest* attempt = &request;
    if (left < full_timeout) {
      if (!trimmed) trimmed = request;
      trimmed->timeout = std::max(std::chrono::milliseconds{1}, left);
      attempt = &*trimmed;
    }
    ++attempts;
    auto outcome = transport.send(*attempt);
    if (attempts >= max_attempts || !should_retry(outcome)) return outcome;

    std::chrono::milliseconds wait = jitter.backoff(policy, attempts);
    if (outcome) {
      if (const auto header = outcome->headers.find("Retry-After")) {
        if (const auto asked = parse_retry_after(*header, std::chrono::system_clock::now())) {
          wait = std::min(*asked, policy.max_retry_after);
        }
      }
    }
    // Compared in milliseconds: now + a huge wait would overflow steady_clock's nanoseconds.
    if (wait >= std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now())) {
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

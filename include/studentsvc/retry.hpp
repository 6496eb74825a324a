#pragma once
/// @file retry.hpp
/// @brief The retry loop around Transport::send: which failures retry, the
/// full-jitter backoff, and `Retry-After` (delay-seconds or any HTTP-date form).

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <studentsvc/detail/attempt_events.hpp>
#include <studentsvc/detail/deadline.hpp>
#include <studentsvc/detail/http_date.hpp>
#include <studentsvc/detail/rate_limit.hpp>
#include <studentsvc/detail/retry_clock.hpp>
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

/// What to do once a round's outcomes are in.
struct RetryDecision {
  bool retry = false;                 ///< false: done, the outcomes are final.
  std::chrono::milliseconds wait{0};  ///< With retry: the wait before the next round.
  bool out_of_time = false;           ///< Done because the wait would pass max_total_time.
};

/// The retry state machine of one call (a batch of one) or one batch, with
/// no clock, sleep or transport of its own: outcomes in, decision out. A
/// blocking driver (send_rounds below) or an event loop feeds it.
class RetryRun {
 public:
  RetryRun(const RetryPolicy& policy, std::size_t requests, bool idempotent,
           std::chrono::steady_clock::time_point start)
      : policy_(policy),
        deadline_(policy.max_total_time, start),
        max_attempts_(idempotent ? std::max(policy.max_attempts, 1) : 1),
        attempts_(requests, 0) {
    pending_.reserve(requests);
    for (std::size_t k = 0; k < requests; ++k) pending_.push_back(k);
  }

  /// The requests of the next round (all of them at first), as indices.
  [[nodiscard]] const std::vector<std::size_t>& pending() const noexcept { return pending_; }
  /// An attempt's timeout when started at `now`: `full`, cut to what is left of max_total_time.
  [[nodiscard]] std::chrono::milliseconds timeout(std::chrono::milliseconds full,
                                                  std::chrono::steady_clock::time_point now) const noexcept {
    return deadline_.cut(full, now);
  }
  /// Takes request `k` out of the next round: its last outcome is final (a
  /// retry the client's retry budget refused).
  void drop(std::size_t k) { std::erase(pending_, k); }
  /// Attempts made by request `k`.
  [[nodiscard]] int attempts(std::size_t k) const noexcept { return attempts_[k]; }
  /// Rounds sent so far.
  [[nodiscard]] int rounds() const noexcept { return rounds_; }

  /// Records a round: `round[j]` is the outcome of pending()[j]. One wait
  /// covers the whole next round: the longest any retried outcome asks for.
  [[nodiscard]] RetryDecision record(std::span<const Result<HttpResponse>> round, JitterSource& jitter,
                                     std::chrono::steady_clock::time_point now,
                                     std::chrono::system_clock::time_point wall) {
    ++rounds_;
    std::vector<std::size_t> again;
    for (std::size_t j = 0; j < pending_.size() && j < round.size(); ++j) {
      const std::size_t k = pending_[j];
      if (++attempts_[k] < max_attempts_ && should_retry(round[j])) again.push_back(j);
    }
    RetryDecision decision;
    if (again.empty()) {
      pending_.clear();
      return decision;
    }
    const auto backoff = jitter.backoff(policy_, rounds_);
    for (const std::size_t j : again) decision.wait = std::max(decision.wait, next_wait(round[j], policy_, backoff, wall));
    if (deadline_.passed_after(decision.wait, now)) {
      pending_.clear();
      decision.out_of_time = true;
      return decision;
    }
    for (std::size_t& j : again) j = pending_[j];
    pending_ = std::move(again);
    decision.retry = true;
    return decision;
  }

 private:
  RetryPolicy policy_;
  Deadline deadline_;
  int max_attempts_;
  std::vector<int> attempts_;
  std::vector<std::size_t> pending_;
  int rounds_ = 0;
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

/// Asks the client's throttle for every request of the next round: a retry
/// the retry budget refuses is dropped (its last outcome is final); the round
/// waits for the latest token it was given. False when nothing is left to send.
inline bool admit_round(ClientThrottle& throttle, RetryRun& run, const Logger& logger, std::string_view what,
                        const RetryClock& clock) {
  std::chrono::milliseconds wait{0};
  std::vector<std::size_t> refused;
  for (const std::size_t k : run.pending()) {
    const Admission a = throttle.admit(run.attempts(k) == 0 ? AttemptKind::first : AttemptKind::retry);
    if (!a.allowed) {
      refused.push_back(k);
    } else {
      wait = std::max(wait, a.wait);
    }
  }
  for (const std::size_t k : refused) run.drop(k);
  if (!refused.empty()) {
    logger.log(LogLevel::info, std::string(what) + ": " + std::to_string(refused.size()) +
                                   " retry(ies) not sent: the client's retry budget is spent");
  }
  if (run.pending().empty()) return false;
  if (wait > std::chrono::milliseconds{0}) clock.sleep(wait);
  return true;
}

/// The blocking driver of RetryRun, shared by send_with_retry and
/// Client::get_students: send a round with `send_round` (span of requests →
/// one outcome each), record it, sleep, repeat. `out[k]` is request k's last
/// outcome; `attempts[k]` its attempt count (0 each, and invalid_argument,
/// when the policy is refused). `what` prefixes the log lines. `events`,
/// empty or one per request, gets an AttemptEvent at the start and end of
/// every attempt (in a batch round, an attempt's latency is the round's).
template <class SendRound>
[[nodiscard]] std::vector<Result<HttpResponse>> send_rounds(std::span<const HttpRequest> requests,
                                                            SendRound&& send_round, const RetryPolicy& policy,
                                                            bool idempotent, JitterSource& jitter,
                                                            const Logger& logger, const RetryClock& clock,
                                                            std::string_view what, std::vector<int>& attempts,
                                                            int& rounds,
                                                            std::span<const AttemptContext> events = {},
                                                            ClientThrottle* throttle = nullptr) {
  std::vector<Result<HttpResponse>> out(requests.size());
  attempts.assign(requests.size(), 0);
  rounds = 0;
  if (auto valid = validate_policy(policy); !valid) {
    for (auto& o : out) o = std::unexpected(valid.error());
    return out;
  }
  RetryRun run(policy, requests.size(), idempotent, clock.now());
  const bool observed = events.size() == requests.size();
  std::vector<RetryReason> reasons;
  if (observed) {
    for (const auto& e : events) reasons.push_back(e.first_reason);
  }
  std::vector<HttpRequest> round;  // copies, made only when a timeout is cut or a subset is resent
  while (!run.pending().empty()) {
    if (throttle != nullptr && !admit_round(*throttle, run, logger, what, clock)) break;
    const auto now = clock.now();
    const auto& pending = run.pending();
    bool copy = pending.size() != requests.size();
    for (std::size_t j = 0; j < pending.size() && !copy; ++j) {
      copy = run.timeout(requests[pending[j]].timeout, now) != requests[pending[j]].timeout;
    }
    std::span<const HttpRequest> sending = requests;
    if (copy) {
      round.clear();
      for (const std::size_t k : pending) {
        round.push_back(requests[k]);
        round.back().timeout = run.timeout(requests[k].timeout, now);
      }
      sending = round;
    }
    if (observed) {
      for (const std::size_t k : pending) {
        attempt_started(events[k], events[k].attempts_before + run.attempts(k) + 1, reasons[k]);
      }
    }
    const auto round_start = clock.now();
    std::vector<Result<HttpResponse>> outcomes = send_round(sending);
    if (observed) {
      const auto elapsed = clock.now() - round_start;
      for (std::size_t j = 0; j < pending.size() && j < outcomes.size(); ++j) {
        const std::size_t k = pending[j];
        attempt_ended(events[k], events[k].attempts_before + run.attempts(k) + 1, reasons[k], outcomes[j], elapsed);
        reasons[k] = retry_reason_after(outcomes[j]);
      }
    }
    const std::vector<std::size_t> sent = pending;
    if (throttle != nullptr) {
      for (const auto& o : outcomes) pause_client_for(*throttle, o, policy, clock.wall());
    }
    const auto decision = run.record(outcomes, jitter, clock.now(), clock.wall());
    for (std::size_t j = 0; j < sent.size() && j < outcomes.size(); ++j) out[sent[j]] = std::move(outcomes[j]);
    if (decision.out_of_time) {
      logger.log(LogLevel::warning, std::string(what) + ": giving up, the next wait would pass max_total_time");
    }
    if (!decision.retry) break;
    if (logger.enabled(LogLevel::info)) {
      std::string line = std::string(what) + ": ";
      if (sent.size() == 1) {
        const auto& o = out[sent[0]];
        line += "attempt " + std::to_string(run.rounds()) + " failed (" +
                (o ? "status " + std::to_string(o->status) : std::string("transport error")) + ")";
      } else {
        line += "retrying " + std::to_string(run.pending().size()) + " lookup(s) after attempt " +
                std::to_string(run.rounds());
      }
      logger.log(LogLevel::info, line + ", waiting " + std::to_string(decision.wait.count()) + " ms");
    }
    clock.sleep(decision.wait);
  }
  for (std::size_t k = 0; k < requests.size(); ++k) attempts[k] = run.attempts(k);
  rounds = run.rounds();
  return out;
}

/// Transport::send_all, with one outcome per request even from a transport
/// that returns too few or too many.
[[nodiscard]] inline std::vector<Result<HttpResponse>> checked_send_all(Transport& transport,
                                                                        std::span<const HttpRequest> requests,
                                                                        std::size_t max_concurrency) {
  auto outcomes = transport.send_all(requests, max_concurrency);
  if (outcomes.size() > requests.size()) outcomes.resize(requests.size());
  while (outcomes.size() < requests.size()) {
    outcomes.emplace_back(make_error(ErrorKind::transport, "the transport returned no outcome for this request"));
  }
  return outcomes;
}

/// The batch form of send_with_retry: send all, then resend the retryable ones
/// together after one wait, round by round.
[[nodiscard]] inline std::vector<Result<HttpResponse>> send_all_with_retry(
    Transport& transport, std::span<const HttpRequest> requests, std::size_t max_concurrency,
    const RetryPolicy& policy, JitterSource& jitter, const Logger& logger, const RetryClock& clock,
    std::vector<int>& attempts, int& rounds, std::span<const AttemptContext> events = {}) {
  return send_rounds(
      requests,
      [&](std::span<const HttpRequest> round) {
        return checked_send_all(transport, round, std::max<std::size_t>(max_concurrency, 1));
      },
      policy, true, jitter, logger, clock, "get_students", attempts, rounds, events);
}

}  // namespace detail

/// @brief Sends `request`, retrying per `policy` when `idempotent`, on the
/// clock and sleep of `clock` (simulated time in tests).
///
/// Returns the last outcome: a response (any status) or a transport error.
/// Each attempt's timeout is cut to what is left of max_total_time, so a
/// stalled attempt ends with the bound. `attempts` receives the number of
/// attempts made (0, and invalid_argument, when max_total_time is not positive).
[[nodiscard]] inline Result<HttpResponse> send_with_retry(Transport& transport, const HttpRequest& request,
                                                          const RetryPolicy& policy, bool idempotent,
                                                          JitterSource& jitter, const Logger& logger,
                                                          const detail::RetryClock& clock, int& attempts,
                                                          const detail::AttemptContext& events = {},
                                                          detail::ClientThrottle* throttle = nullptr) {
  std::vector<int> counts;
  int rounds = 0;
  auto out = detail::send_rounds(
      std::span<const HttpRequest>(&request, 1),
      [&transport](std::span<const HttpRequest> round) {
        std::vector<Result<HttpResponse>> outcomes;
        outcomes.push_back(transport.send(round.front()));
        return outcomes;
      },
      policy, idempotent, jitter, logger, clock, "retry", counts, rounds,
      events.sink != nullptr ? std::span<const detail::AttemptContext>(&events, 1)
                             : std::span<const detail::AttemptContext>(),
      throttle);
  attempts = counts.front();
  return std::move(out.front());
}

/// @brief Sends `request`, retrying per `policy` when `idempotent`, on the real clock.
///
/// Returns the last outcome: a response (any status) or a transport error.
/// Each attempt's timeout is cut to what is left of max_total_time, so a
/// stalled attempt ends with the bound. `attempts` receives the number of
/// attempts made (0, and invalid_argument, when max_total_time is not positive).
[[nodiscard]] inline Result<HttpResponse> send_with_retry(Transport& transport, const HttpRequest& request,
                                                          const RetryPolicy& policy, bool idempotent,
                                                          JitterSource& jitter, const Logger& logger,
                                                          int& attempts) {
  return send_with_retry(transport, request, policy, idempotent, jitter, logger, detail::RetryClock{}, attempts);
}

}  // namespace studentsvc

#pragma once
/// @file detail/call/circuit_breaker.hpp
/// @brief CircuitBreaker: a client's breaker (ClientOptions::circuit_breaker),
/// shared by all its copies; the call pipeline asks it before each attempt and
/// tells it each attempt's outcome.
/// @sa docs/pipeline.md, CircuitBreakerOptions

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <studentsvc/detail/call/context.hpp>
#include <studentsvc/detail/retry/clock.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc::detail {

/// What an attempt's outcome says about the service.
enum class BreakerVerdict : unsigned char {
  failure,  ///< The service looks down: a transport error, 500, 502, 503, 504.
  success,  ///< The service answered (2xx, 4xx including 408 and 429: busy is not down).
  neutral,  ///< Says nothing: cancelled, or a body over the cap (the service did answer, and will again).
};

[[nodiscard]] inline BreakerVerdict breaker_verdict(const Result<HttpResponse>& outcome) noexcept {
  if (!outcome) {
    const ApiError& e = outcome.error();
    if (e.kind != ErrorKind::transport || e.transport_failure == TransportFailure::body_too_large) {
      return BreakerVerdict::neutral;
    }
    return BreakerVerdict::failure;
  }
  const int s = outcome->status;
  return s == 500 || s == 502 || s == 503 || s == 504 ? BreakerVerdict::failure : BreakerVerdict::success;
}

/// "transport error" or "status 503".
[[nodiscard]] inline std::string breaker_cause(int status) {
  return status == 0 ? std::string("transport error") : "status " + std::to_string(status);
}

/// "28 s", or "350 ms" under a second (rounded up: never "0 s" while still open).
[[nodiscard]] inline std::string breaker_wait_text(std::chrono::milliseconds left) {
  if (left < std::chrono::seconds{1}) return std::to_string(std::max<long long>(left.count(), 0)) + " ms";
  return std::to_string((left.count() + 999) / 1000) + " s";
}

/// The breaker's state machine, one mutex, no I/O: closed → (threshold
/// failures in a row) → open → (cool-down passed; one caller becomes the
/// probe) → half_open → closed on the probe's success, open again on its failure.
class CircuitBreaker {
 public:
  /// Whether an attempt may go, and the transition admitting it caused.
  struct Admission {
    bool allowed = true;
    bool probe = false;                ///< This attempt is the half-open probe: report its outcome with probe = true.
    std::optional<CircuitEvent> event;  ///< open → half_open, when this attempt is the probe.
    ApiError refusal;                   ///< When refused: ErrorKind::circuit_open, saying when the next try is.
  };

  explicit CircuitBreaker(CircuitBreakerOptions options, RetryClock clock = {})
      : options_(options), clock_(std::move(clock)) {}

  /// Before an attempt: closed lets it go; open refuses until the cool-down
  /// has passed, then lets exactly one probe go (half-open); half-open refuses
  /// while its probe is out.
  [[nodiscard]] Admission admit() {
    Admission a;
    const std::lock_guard lock(mutex_);
    if (state_ == CircuitState::closed) return a;
    const auto now = clock_.now();
    if (state_ == CircuitState::open && now >= open_until_) {
      state_ = CircuitState::half_open;
      a.event = CircuitEvent{CircuitState::half_open, 0, 0, std::chrono::milliseconds{0}};
    }
    if (state_ == CircuitState::half_open && !probe_out_) {
      probe_out_ = true;
      a.probe = true;
      return a;
    }
    a.allowed = false;
    std::string message = "circuit open " + reason_ + "; next try ";
    if (state_ == CircuitState::half_open) {
      message += "when the probe request in flight has answered";
    } else {
      message += "in " + breaker_wait_text(std::chrono::ceil<std::chrono::milliseconds>(open_until_ - now));
    }
    a.refusal = make_error(ErrorKind::circuit_open, std::move(message)).error();
    return a;
  }

  /// After an attempt: its verdict (breaker_verdict) and whether it was the probe.
  /// Returns the transition it caused (open or closed), if any.
  [[nodiscard]] std::optional<CircuitEvent> record(BreakerVerdict verdict, bool probe, int status) {
    const std::lock_guard lock(mutex_);
    if (probe) probe_out_ = false;
    if (verdict == BreakerVerdict::neutral) return std::nullopt;
    if (verdict == BreakerVerdict::success) {
      if (state_ == CircuitState::closed) {
        failures_ = 0;
        return std::nullopt;
      }
      if (!probe) return std::nullopt;  // a late answer to a call let through before the breaker opened
      state_ = CircuitState::closed;
      failures_ = 0;
      return CircuitEvent{CircuitState::closed, 0, 0, std::chrono::milliseconds{0}};
    }
    if (state_ == CircuitState::closed) {
      if (++failures_ < options_.failure_threshold) return std::nullopt;
      reason_ = "after " + std::to_string(failures_) + " consecutive failure" + (failures_ == 1 ? "" : "s") + " (" +
                breaker_cause(status) + ")";
      return open(failures_, status);
    }
    if (!probe) return std::nullopt;  // already open: a late failure changes nothing
    reason_ = "after the probe request failed (" + breaker_cause(status) + ")";
    return open(1, status);
  }

  /// An admitted probe that was never sent (cancelled, refused by the retry
  /// budget): the next caller may probe instead.
  void release_probe() {
    const std::lock_guard lock(mutex_);
    probe_out_ = false;
  }

  [[nodiscard]] CircuitState state() const {
    const std::lock_guard lock(mutex_);
    return state_;
  }

 private:
  CircuitEvent open(int failures, int status) {
    state_ = CircuitState::open;
    open_until_ = clock_.now() + options_.cool_down;
    failures_ = 0;
    return CircuitEvent{CircuitState::open, failures, status, options_.cool_down};
  }

  mutable std::mutex mutex_;
  CircuitBreakerOptions options_;
  RetryClock clock_;
  CircuitState state_ = CircuitState::closed;
  int failures_ = 0;
  bool probe_out_ = false;
  std::chrono::steady_clock::time_point open_until_{};
  std::string reason_;  // "after 5 consecutive failures (status 503)": only SDK text, never the server's
};

/// A transition, to the logger (warning when it opens, info when it closes,
/// debug for half-open) and the instrumentation hook.
inline void report_circuit(const CircuitEvent& event, const Logger& logger, Instrumentation* sink) {
  switch (event.state) {
    case CircuitState::open:
      logger.log(LogLevel::warning,
                 "circuit breaker: open after " + std::to_string(event.consecutive_failures) +
                     " consecutive failure(s) (" + breaker_cause(event.status) + "); calls fail at once for " +
                     breaker_wait_text(event.cool_down));
      break;
    case CircuitState::half_open:
      logger.log(LogLevel::debug, "circuit breaker: half-open, one probe request let through");
      break;
    case CircuitState::closed:
      logger.log(LogLevel::info, "circuit breaker: closed, the probe request succeeded");
      break;
  }
  if (sink == nullptr) return;
  try {
    sink->on_circuit(event);
  } catch (...) {
    // Documented: a hook must not throw; the call goes on either way.
  }
}

/// ClientOptions::circuit_breaker and ::hedging: a value that cannot work is refused before any request.
[[nodiscard]] inline Result<void> validate_resilience(const ClientOptions& options) {
  if (const auto& b = options.circuit_breaker) {
    if (b->failure_threshold < 1) {
      return make_error(ErrorKind::invalid_argument, "circuit_breaker.failure_threshold must be at least 1");
    }
    if (b->cool_down <= std::chrono::milliseconds{0}) {
      return make_error(ErrorKind::invalid_argument, "circuit_breaker.cool_down must be positive");
    }
  }
  if (const auto& h = options.hedging; h && h->delay <= std::chrono::milliseconds{0}) {
    return make_error(ErrorKind::invalid_argument, "hedging.delay must be positive");
  }
  return {};
}

/// @name The breaker stage of a call (Call::attempt and Call::on_outcome)
/// `probe`: the call's attempt in flight is the half-open probe.
/// @{

/// Before an attempt: an open breaker refuses it (circuit_open, nothing is
/// sent); after its cool-down one attempt is let through as the probe.
[[nodiscard]] inline std::optional<ApiError> breaker_admit(const CallContext& context, bool& probe) {
  if (context.breaker == nullptr) return std::nullopt;
  auto a = context.breaker->admit();
  if (a.event) report_circuit(*a.event, *context.logger, context.sink);
  if (!a.allowed) return std::move(a.refusal);
  probe = a.probe;
  return std::nullopt;
}

/// After an attempt: the breaker counts its outcome (breaker_verdict).
inline void breaker_record(const CallContext& context, const Result<HttpResponse>& outcome, bool& probe) {
  if (context.breaker == nullptr) return;
  const auto event = context.breaker->record(breaker_verdict(outcome), probe, outcome ? outcome->status : 0);
  probe = false;
  if (event) report_circuit(*event, *context.logger, context.sink);
}

/// An admitted probe that never got an outcome: the next caller probes instead.
inline void breaker_release(const CallContext& context, bool& probe) noexcept {
  if (!probe) return;
  probe = false;
  try {
    context.breaker->release_probe();
  } catch (...) {  // a mutex that fails to lock: nothing better to do
  }
}
/// @}

}  // namespace studentsvc::detail

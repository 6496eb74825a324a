#pragma once
/// @file detail/call/pipeline.hpp
/// @brief The call pipeline: every step of one call, each written once and in
/// order: build (validate, authorise) → attempt (stop, throttle) → send →
/// classify → retry, refresh credentials or wait → request id → map → scrub →
/// log → complete. Blocking calls, asynchronous calls and batches all run it;
/// a CallRuntime only decides how to send and wait.
/// @sa docs/pipeline.md

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/detail/call/attempt_events.hpp>
#include <studentsvc/detail/call/circuit_breaker.hpp>
#include <studentsvc/detail/call/coalescer.hpp>
#include <studentsvc/detail/call/context.hpp>
#include <studentsvc/detail/call/hedge.hpp>
#include <studentsvc/detail/call/registry.hpp>
#include <studentsvc/detail/call/stop.hpp>
#include <studentsvc/detail/limits/rate_limit.hpp>
#include <studentsvc/detail/call/redact.hpp>
#include <studentsvc/detail/retry/clock.hpp>
#include <studentsvc/credential_provider.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/detail/retry/retry_run.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

template <class T>
void start_call(CallContext context, CallSpec spec, MapOutcome<T> map, CallDone<T> done, const StopToken& stop);

/// @brief One call, from building its request to its completion. Owned by
/// the completions it hands to the runtime; freed when the last has run.
///
/// Every step that does not depend on the answer's type is here, compiled
/// once for all calls; Call::Typed<T> adds the typed end (map, deliver,
/// share). start_call and run_call are the only ways to run one.
class Call : public std::enable_shared_from_this<Call> {
 public:
  template <class T>
  class Typed;

  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  virtual ~Call() {
    // Only if a transport dropped a completion without calling it: count out anyway.
    if (!finished_ && context_.registry != nullptr) context_.registry->leave();
    breaker_release(context_, probe_);
  }

 protected:
  // By rvalue reference: Typed's constructor hands its own parameters on, with no move in between.
  Call(CallContext&& context, CallSpec&& spec, const StopToken& stop, const StopToken& closing)
      : context_(std::move(context)),
        spec_(std::move(spec)),
        stop_(stop, closing),
        start_(context_.runtime.now()) {}

  // The typed end of the call (Call::Typed<T>).
  /// Waits for the identical request in flight instead of sending this one.
  virtual void join_flight(const HttpRequest& request) = 0;
  /// Maps the last outcome and completes with it; `request_id` goes on a failure.
  virtual void map_and_finish(Result<HttpResponse>&& outcome, std::string request_id) = 0;
  /// Completes with `error`: nothing was sent, or the call ended before an outcome.
  virtual void fail(ApiError error) = 0;

  [[nodiscard]] const Logger& logger() const { return *context_.logger; }

  // Build: nothing is sent on bad input.
  void begin() {
    auto built = spec_.build();
    if (!built) {
      logger().log(LogLevel::warning, spec_.name + ": not sent: " + built.error().message);
      fail(std::move(built.error()));
      return;
    }
    if (auto valid = validate_policy(spec_.policy); !valid) {
      fail(std::move(valid.error()));
      return;
    }
    // A blocking call inside a completion must not wait for a shared request: it sends its own.
    if (spec_.coalesce && context_.coalescer != nullptr && !(context_.runtime.blocking && in_async_completion)) {
      join_flight(*built);
      return;
    }
    use_request(std::move(*built), spec_.policy, spec_.idempotent, RetryReason::none);
    attempt();
  }

  // A request to run attempts of, under `policy`: the first, or the one rebuilt after a 401.
  void use_request(HttpRequest request, const RetryPolicy& policy, bool idempotent, RetryReason first_reason) {
    // A request replaced (rebuilt after a 401) keeps its credentials secret in
    // this call's text; the current one's are worked out only when text is scrubbed.
    if (context_.secrets && !request_.url.empty()) add_secrets(secrets_, context_.secrets(request_.headers));
    request_ = std::move(request);
    timeout_ = request_.timeout;
    if (logger().enabled(LogLevel::trace)) {
      logger().log(LogLevel::trace, spec_.name + ": " + request_.method + " headers: " + redacted_headers(request_.headers));
    }
    events_ = attempt_context(context_.sink, spec_.endpoint, spec_.has_sub_path, request_, *context_.request_id_headers);
    events_.attempts_before = attempts_before_;
    events_.first_reason = first_reason;
    reason_ = first_reason;
    run_.emplace(policy, idempotent, context_.runtime.now());
  }

  [[nodiscard]] int attempts() const noexcept { return attempts_before_ + (run_ ? run_->attempts() : 0); }

  // Attempt: a stop request ends the call; the client's throttle may refuse
  // a retry (the last outcome is then final) or hold the send on a timer.
  void attempt() {
    if (stop_.stop_requested()) {
      finish_outcome(std::unexpected(cancelled_error("cancelled (stop requested) before the request was sent")));
      return;
    }
    if (auto refused = breaker_admit(context_, probe_)) {  // the breaker stage: circuit_breaker.hpp
      finish_outcome(std::unexpected(std::move(*refused)));
      return;
    }
    if (context_.throttle != nullptr) {
      const Admission a = context_.throttle->admit(attempts() == 0 ? AttemptKind::first : AttemptKind::retry);
      if (!a.allowed && last_) {
        logger().log(LogLevel::info, spec_.name + ": retry not sent: the client's retry budget is spent");
        finish_outcome(std::move(*last_));
        return;
      }
      if (a.wait > std::chrono::milliseconds{0}) {
        wait_then(a.wait, &Call::send_attempt, "waiting for the rate limit");
        return;
      }
    }
    send_attempt();
  }

  // Runs `next` once `delay` has passed; a stop request meanwhile ends the
  // call as cancelled, saying what it was `waiting` for.
  void wait_then(std::chrono::milliseconds delay, void (Call::*next)(), const char* waiting) {
    auto self = shared_from_this();
    context_.runtime.after(
        delay,
        [self, next, waiting](bool elapsed) {
          if (elapsed) {
            ((*self).*next)();
          } else {
            self->finish_outcome(
                std::unexpected(cancelled_error(std::string("cancelled (stop requested) while ") + waiting)));
          }
        },
        stop_.token());
  }

  // Send: each attempt's timeout is cut to what is left of max_total_time
  // (request_ is sent as it is: a blocking send reads it without a copy).
  void send_attempt() {
    request_.timeout = run_->timeout(timeout_, context_.runtime.now());
    attempt_number_ = attempts() + 1;
    attempt_started(events_, attempt_number_, reason_);
    attempt_start_ = context_.runtime.now();
    if (hedges(context_, spec_, probe_)) {  // the hedging stage: detail/call/hedge.hpp
      send_hedged(HedgedCall{weak_from_this(), &context_, &spec_.name, stop_.token(),
                             [](const std::shared_ptr<void>& call, Result<HttpResponse>&& outcome) {
                               static_cast<Call*>(call.get())->on_outcome(std::move(outcome));
                             }},
                  shared_from_this(), request_);
      return;
    }
    auto self = shared_from_this();
    context_.runtime.send(
        request_, [self](Result<HttpResponse> outcome) { self->on_outcome(std::move(outcome)); }, stop_.token());
  }

  // Classify: retry after a wait, try once more with fresh credentials, or finish.
  void on_outcome(Result<HttpResponse> outcome) {
    attempt_ended(events_, attempt_number_, reason_, outcome, context_.runtime.now() - attempt_start_);
    breaker_record(context_, outcome, probe_);
    if (context_.throttle != nullptr) pause_client_for(*context_.throttle, outcome, spec_.policy, context_.runtime.wall());
    reason_ = retry_reason_after(outcome);
    const auto decision = run_->record(outcome, *context_.jitter, context_.runtime.now(), context_.runtime.wall());
    if (decision.out_of_time) {
      logger().log(LogLevel::warning, spec_.name + ": giving up, the next wait would pass max_total_time");
    }
    if (decision.retry) {
      if (logger().enabled(LogLevel::info)) {
        logger().log(LogLevel::info, spec_.name + ": attempt " + std::to_string(run_->attempts()) + " failed (" +
                                         (outcome ? "status " + std::to_string(outcome->status)
                                                  : std::string("transport error")) +
                                         "), waiting " + std::to_string(decision.wait.count()) + " ms");
      }
      last_ = std::make_unique<Result<HttpResponse>>(std::move(outcome));
      wait_then(decision.wait, &Call::attempt, "waiting to retry");
      return;
    }
    if (may_refresh_credentials(outcome)) {
      refreshed_ = true;
      // Final if the retry budget refuses the try with fresh credentials.
      last_ = std::make_unique<Result<HttpResponse>>(outcome);
      context_.provider->invalidate();
      if (auto again = spec_.build(); again) {
        logger().log(LogLevel::info, spec_.name + ": 401, trying once more with fresh credentials");
        attempts_before_ = attempts();
        use_request(std::move(*again), RetryPolicy::none(), true, RetryReason::credentials);
        attempt();
        return;
      }
    }
    finish_outcome(std::move(outcome));
  }

  // A 401 while a CredentialProvider is set may be an old credential: the
  // provider is asked afresh and an idempotent call tries once more.
  [[nodiscard]] bool may_refresh_credentials(const Result<HttpResponse>& outcome) const noexcept {
    return !refreshed_ && spec_.idempotent && context_.provider != nullptr && outcome && outcome->status == 401;
  }

  // The last outcome (or `cancelled` during a wait): logged without URL,
  // headers or body, then mapped (map_and_finish).
  void finish_outcome(Result<HttpResponse> outcome) {
    if (logger().enabled(LogLevel::debug)) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(context_.runtime.now() - start_).count();
      std::string line = spec_.name + ": " +
                         (outcome ? "status " + std::to_string(outcome->status)
                                  : "transport error: " + outcome.error().message) +
                         " after " + std::to_string(attempts()) + " attempt(s), " + std::to_string(ms) + " ms";
      scrub(line, secrets());
      logger().log(LogLevel::debug, line);
    }
    std::string request_id = request_id_of(outcome, *context_.request_id_headers);
    map_and_finish(std::move(outcome), std::move(request_id));
  }

  // A mapped failure gets its attempts and request id, and every credential
  // the request carried is scrubbed from it (a success carries no text from
  // the server to scrub).
  void annotate_failure(ApiError& error, std::string request_id) const {
    error.attempts = attempts();
    error.request_id = std::move(request_id);
    scrub(error, secrets());
  }

  // Every credential this call's requests carried (most calls succeed with
  // nothing to scrub: no need to work them out on every call).
  [[nodiscard]] SecretList secrets() const {
    SecretList all = secrets_;
    if (context_.secrets) add_secrets(all, context_.secrets(request_.headers));
    return all;
  }

  // The completion runs exactly once: claim it (false: it already ran), run it
  // inside an AsyncCompletionScope, then count the call out (counted_out).
  [[nodiscard]] bool claim_finish() noexcept {
    if (finished_) return false;
    finished_ = true;
    breaker_release(context_, probe_);
    return true;
  }
  void completion_threw() const {
    // Documented: a completion must not throw; the call is over either way.
    logger().log(LogLevel::error, spec_.name + ": the completion callback threw; the exception was dropped");
  }
  void counted_out() const {
    if (context_.registry != nullptr) context_.registry->leave();
  }

  CallContext context_;
  CallSpec spec_;
  CallStop stop_;
  std::chrono::steady_clock::time_point start_;
  HttpRequest request_;
  std::chrono::milliseconds timeout_{0};  ///< request_'s own timeout, before max_total_time cuts it
  std::optional<RetryRun> run_;
  AttemptContext events_;
  RetryReason reason_ = RetryReason::none;
  int attempt_number_ = 0;
  int attempts_before_ = 0;
  std::chrono::steady_clock::time_point attempt_start_;
  SecretList secrets_;  // of the requests this call replaced; see secrets()
  /// The outcome a refused retry ends with (kept only once a retry is planned).
  std::unique_ptr<Result<HttpResponse>> last_;
  bool refreshed_ = false;
  bool finished_ = false;
  bool probe_ = false;  ///< The attempt in flight is the circuit breaker's half-open probe.
};

/// @brief A Call whose last outcome is mapped to a Result<T>: the typed end of
/// the pipeline (map, deliver, share a flight), all the rest being Call's.
template <class T>
class Call::Typed final : public Call {
  struct Private {
    explicit Private() = default;
  };
  friend void start_call<T>(CallContext, CallSpec, MapOutcome<T>, CallDone<T>, const StopToken&);

 public:
  /// Only start_call can name Private: public for make_shared (one allocation for the call and its count).
  Typed(Private, CallContext context, CallSpec spec, MapOutcome<T> map, CallDone<T> done, const StopToken& stop,
        const StopToken& closing)
      : Call(std::move(context), std::move(spec), stop, closing), map_(std::move(map)), done_(std::move(done)) {}

 private:
  // Coalesce (the stage: FlightSeat, detail/call/coalescer.hpp): wait for the
  // identical request in flight, or lead it as a call of its own on the
  // asynchronous runtime, with the flight's stop.
  void join_flight(const HttpRequest& request) override {
    seat_ = std::make_unique<FlightSeat<T>>();
    auto self = std::static_pointer_cast<Typed>(shared_from_this());
    seat_->join(
        context_, spec_, request, self,
        [self](Result<T> result, int n) {
          self->attempts_before_ = n;
          self->finish(std::move(result));
        },
        [this](auto complete, const StopToken& flight_stop) {
          CallContext shared = context_;
          shared.runtime.blocking = false;
          shared.registry = context_.flight_registry;
          shared.coalescer = nullptr;
          CallSpec spec = spec_;
          spec.coalesce = false;
          start_call<T>(std::move(shared), std::move(spec), map_, std::move(complete), flight_stop);
        },
        stop_.token(), [](const std::shared_ptr<void>& call) {
          static_cast<Typed*>(call.get())->finish_outcome(
              std::unexpected(cancelled_error("cancelled (stop requested) while waiting for a shared lookup")));
        });
  }

  void map_and_finish(Result<HttpResponse>&& outcome, std::string request_id) override {
    auto result = map_(std::move(outcome));
    if (!result) annotate_failure(result.error(), std::move(request_id));
    finish(std::move(result));
  }

  void fail(ApiError error) override { finish(std::unexpected(std::move(error))); }

  void finish(Result<T>&& result) {
    if (!claim_finish()) return;
    {
      const AsyncCompletionScope scope;
      try {
        done_(std::move(result), attempts());
      } catch (...) {
        completion_threw();
      }
      done_ = nullptr;  // its captures go here, still inside the scope
    }
    counted_out();
  }

  MapOutcome<T> map_;
  CallDone<T> done_;
  std::unique_ptr<FlightSeat<T>> seat_;  ///< Coalesced: the shared request this call waits for.
};

/// @brief The asynchronous driver: starts a call; `done` runs exactly once
/// (before start_call returns for a blocking runtime or a send-only
/// transport; else on the event thread). A call that cannot be counted in
/// (its client is being destroyed) completes as cancelled at once.
template <class T>
void start_call(CallContext context, CallSpec spec, MapOutcome<T> map, CallDone<T> done, const StopToken& stop) {
  StopToken closing;  // the client's: stopped when its last handle goes
  if (CallRegistry* registry = context.registry) {
    if (!registry->enter()) {  // not counted in while the client is being destroyed: nothing to start
      done(std::unexpected(cancelled_error("cancelled: the client is being destroyed")), 0);
      return;
    }
    closing = registry->token();
  }
  auto call = std::make_shared<Call::Typed<T>>(typename Call::Typed<T>::Private{}, std::move(context),
                                               std::move(spec), std::move(map), std::move(done), stop, closing);
  call->begin();
}

/// @brief The blocking driver: runs a call and returns its result. On a
/// blocking runtime every step runs on this thread before start_call returns.
/// A hedged lookup needs two transfers at once: it runs on the asynchronous
/// runtime and is waited for here (never inside a completion, which must not
/// wait: no hedge there).
template <class T>
[[nodiscard]] Result<T> run_call(CallContext context, CallSpec spec, MapOutcome<T> map, int* attempts = nullptr) {
  if (spec.hedge && !in_async_completion) {
    context.runtime.blocking = false;
    context.registry = context.flight_registry;
    auto promise = std::make_shared<std::promise<Result<T>>>();
    auto result = promise->get_future();
    int made = 0;
    start_call<T>(
        std::move(context), std::move(spec), std::move(map),
        [promise, &made](Result<T>&& r, int n) {
          made = n;
          promise->set_value(std::move(r));
        },
        StopToken{});
    auto out = result.get();
    if (attempts != nullptr) *attempts = made;
    return out;
  }
  // Returned as it is (no copy or move on the way out); replaced by the outcome.
  Result<T> out{std::unexpect};
  int made = -1;  // the attempts made; -1: no outcome (two references: no allocation for the completion)
  start_call<T>(
      std::move(context), std::move(spec), std::move(map),
      [&out, &made](Result<T>&& result, int n) {
        out = std::move(result);
        made = n;
      },
      StopToken{});
  if (made < 0) out = make_error(ErrorKind::transport, "the transport returned no outcome for this request");
  if (attempts != nullptr) *attempts = std::max(made, 0);
  return out;
}

}  // namespace studentsvc::detail

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

/// @brief How a call sends and waits: the only thing its drivers differ in.
///
/// Blocking: Transport::send on the calling thread, waits slept on `clock`.
/// Asynchronous: the transport's send_async and run_after (CurlTransport: its
/// event thread). Both read the time from `clock` (simulated in tests).
struct CallRuntime {
  Transport* transport = nullptr;
  const RetryClock* clock = nullptr;
  bool blocking = true;

  /// A blocking send reads `request` in place; an asynchronous one sends a copy.
  void send(const HttpRequest& request, SendCompletion done, const StopToken& stop) const {
    if (blocking) {
      done(transport->send(request));
    } else {
      transport->send_async(request, std::move(done), stop);
    }
  }
  void after(std::chrono::milliseconds delay, const std::function<void(bool)>& fn, const StopToken& stop) const {
    if (!blocking) {
      transport->run_after(delay, fn, stop);
      return;
    }
    clock->sleep(delay);
    fn(!stop.stop_requested());
  }
  [[nodiscard]] std::chrono::steady_clock::time_point now() const { return clock->now(); }
  [[nodiscard]] std::chrono::system_clock::time_point wall() const { return clock->wall(); }
};

/// @brief What a call reads from its client (kept alive by `owner` while it runs).
struct CallContext {
  std::shared_ptr<const void> owner;
  CallRuntime runtime;
  const Logger* logger = nullptr;
  Instrumentation* sink = nullptr;              ///< null: no attempt events
  CredentialProvider* provider = nullptr;       ///< null: a 401 is final
  const std::vector<std::string>* request_id_headers = nullptr;
  JitterSource* jitter = nullptr;
  ClientThrottle* throttle = nullptr;           ///< The rate limit and retry budget; null: none.
  CallRegistry* registry = nullptr;             ///< Counts the call in and out; null: not counted.
  CircuitBreaker* breaker = nullptr;            ///< The client's circuit breaker; null: none.
  Coalescer* coalescer = nullptr;               ///< The client's lookups in flight; null: none shared.
  /// Counts a shared request (a flight, always asynchronous) in and out; null: not counted.
  CallRegistry* flight_registry = nullptr;
  /// ClientOptions::hedging's delay; zero: no hedge.
  std::chrono::milliseconds hedge_delay{0};
  /// Everything to scrub from text that came back for a request with these headers; null: nothing.
  std::function<std::vector<std::string>(const Headers&)> secrets;
};

/// @brief What a call is: its name in log lines, its endpoint (for the
/// attempt events), whether it may be sent twice, and its retry policy.
struct CallSpec {
  std::string name;
  Endpoint endpoint = Endpoint::get_student;
  bool has_sub_path = false;
  bool idempotent = true;
  RetryPolicy policy;
  bool coalesce = false;  ///< Shares one request with identical calls in flight (Coalescer).
  bool hedge = false;     ///< An idempotent lookup: may send a second copy of a slow attempt (HedgeRace).
};

/// @brief One call, from building its request to its completion. Owned by
/// the completions it hands to the runtime; freed when the last has run.
///
/// Every step that does not depend on the answer's type is here, compiled
/// once for all calls; CallOf<T> adds the typed end (map, deliver, share).
class Call : public std::enable_shared_from_this<Call> {
 public:
  using Build = std::function<Result<HttpRequest>()>;

  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  virtual ~Call() {
    // Only if a transport dropped a completion without calling it: count out anyway.
    if (!finished_ && context_.registry != nullptr) context_.registry->leave();
    release_probe();
  }

 protected:
  // By rvalue reference: CallOf's constructor hands its own parameters on, with no move in between.
  Call(CallContext&& context, CallSpec&& spec, Build&& build, const StopToken& stop, const StopToken& closing)
      : context_(std::move(context)),
        spec_(std::move(spec)),
        build_(std::move(build)),
        stop_(stop, closing),
        start_(context_.runtime.now()) {}

  /// Counts a new call in; false (and nothing to start) while the client is being destroyed.
  [[nodiscard]] static bool enter(const CallContext& context, StopToken& closing) {
    CallRegistry* registry = context.registry;
    if (registry == nullptr) return true;
    if (!registry->enter()) return false;
    closing = registry->token();
    return true;
  }

  // The typed end of the call (CallOf<T>).
  /// Waits for the identical request in flight instead of sending this one.
  virtual void join_flight(const HttpRequest& request) = 0;
  /// Maps the last outcome and completes with it; `request_id` goes on a failure.
  virtual void map_and_finish(Result<HttpResponse>&& outcome, std::string request_id) = 0;
  /// Completes with `error`: nothing was sent, or the call ended before an outcome.
  virtual void fail(ApiError error) = 0;

  [[nodiscard]] const Logger& logger() const { return *context_.logger; }

  // Build: nothing is sent on bad input.
  void begin() {
    auto built = build_();
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
    if (context_.breaker != nullptr && !admitted_by_breaker()) return;
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

  // Circuit breaker: an open breaker ends the call at once (circuit_open,
  // nothing sent); after its cool-down one attempt is let through as the probe.
  [[nodiscard]] bool admitted_by_breaker() {
    auto a = context_.breaker->admit();
    if (a.event) report_circuit(*a.event, logger(), context_.sink);
    if (!a.allowed) {
      finish_outcome(std::unexpected(std::move(a.refusal)));
      return false;
    }
    probe_ = a.probe;
    return true;
  }

  // An admitted probe that never got an outcome: the next caller probes instead.
  void release_probe() noexcept {
    if (!probe_) return;
    probe_ = false;
    try {
      context_.breaker->release_probe();
    } catch (...) {  // a mutex that fails to lock: nothing better to do
    }
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
    auto self = shared_from_this();
    if (hedging()) {
      send_hedged(request_);
      return;
    }
    context_.runtime.send(
        request_, [self](Result<HttpResponse> outcome) { self->on_outcome(std::move(outcome)); }, stop_.token());
  }

  // Hedge: only an idempotent lookup on the asynchronous runtime (two
  // transfers at once), and never the circuit breaker's probe.
  [[nodiscard]] bool hedging() const noexcept {
    return spec_.hedge && spec_.idempotent && !context_.runtime.blocking && !probe_ &&
           context_.hedge_delay > std::chrono::milliseconds{0};
  }

  // Sends the attempt; if no answer came after the hedge delay, a second
  // copy. The first answer wins and goes on to classify; the other is stopped.
  // The race holds the call until an answer is in; the copies and the timer only the race.
  void send_hedged(HttpRequest sending) {
    std::weak_ptr<Call> weak = shared_from_this();
    auto race = std::make_shared<HedgeRace>(shared_from_this(), stop_.token());
    send_copy(race, 0, sending);
    if (race->decided()) return;  // answered at once (a transport that sends inline)
    context_.runtime.after(
        context_.hedge_delay,
        [weak, race, sending = std::move(sending)](bool elapsed) mutable {
          auto self = weak.lock();
          if (elapsed && self) self->hedge(race, std::move(sending));
        },
        race->token(2));
  }

  void send_copy(const std::shared_ptr<HedgeRace>& race, std::size_t i, const HttpRequest& request) {
    context_.runtime.send(
        request,
        [race, i](Result<HttpResponse> outcome) {
          if (auto owner = race->win(i)) static_cast<Call*>(owner.get())->on_outcome(std::move(outcome));
        },
        race->token(i));
  }

  // The hedge itself: not while the breaker is anything but closed, and only
  // with a token from the retry budget (refused: no hedge).
  void hedge(const std::shared_ptr<HedgeRace>& race, HttpRequest request) {
    if (race->decided()) return;
    if (context_.breaker != nullptr && context_.breaker->state() != CircuitState::closed) return;
    std::chrono::milliseconds wait{0};
    if (context_.throttle != nullptr) {
      const Admission a = context_.throttle->admit(AttemptKind::retry);
      if (!a.allowed) {
        logger().log(LogLevel::debug, spec_.name + ": hedge not sent: the client's retry budget is spent");
        return;
      }
      wait = a.wait;
    }
    std::weak_ptr<Call> weak = shared_from_this();
    auto go = [weak, race, request = std::move(request)](bool elapsed) mutable {
      auto self = weak.lock();
      if (!elapsed || !self || !race->add_hedge(self->stop_.token())) return;
      if (self->logger().enabled(LogLevel::debug)) {
        self->logger().log(LogLevel::debug, self->spec_.name + ": no answer after " +
                                                std::to_string(self->context_.hedge_delay.count()) +
                                                " ms, sending a second copy (hedge)");
      }
      self->send_copy(race, 1, std::move(request));
    };
    if (wait > std::chrono::milliseconds{0}) {
      context_.runtime.after(wait, go, race->token(2));
    } else {
      go(true);
    }
  }

  // Classify: retry after a wait, try once more with fresh credentials, or finish.
  void on_outcome(Result<HttpResponse> outcome) {
    attempt_ended(events_, attempt_number_, reason_, outcome, context_.runtime.now() - attempt_start_);
    if (context_.breaker != nullptr) {
      const auto event = context_.breaker->record(breaker_verdict(outcome), probe_, outcome ? outcome->status : 0);
      probe_ = false;
      if (event) report_circuit(*event, logger(), context_.sink);
    }
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
      if (auto again = build_(); again) {
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
  [[nodiscard]] std::vector<std::string> secrets() const {
    std::vector<std::string> all = secrets_;
    if (context_.secrets) add_secrets(all, context_.secrets(request_.headers));
    return all;
  }

  // The completion runs exactly once: claim it (false: it already ran), run it
  // inside an AsyncCompletionScope, then count the call out (counted_out).
  [[nodiscard]] bool claim_finish() noexcept {
    if (finished_) return false;
    finished_ = true;
    release_probe();
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
  Build build_;
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
  std::vector<std::string> secrets_;  // of the requests this call replaced; see secrets()
  /// The outcome a refused retry ends with (kept only once a retry is planned).
  std::unique_ptr<Result<HttpResponse>> last_;
  bool refreshed_ = false;
  bool finished_ = false;
  bool probe_ = false;  ///< The attempt in flight is the circuit breaker's half-open probe.
};

/// @brief A Call whose last outcome is mapped to a Result<T>: the typed end of
/// the pipeline (map, deliver, share a flight), all the rest being Call's.
template <class T>
class CallOf final : public Call {
  struct Private {
    explicit Private() = default;
  };

 public:
  using Map = std::function<Result<T>(Result<HttpResponse>&&)>;
  /// Gets the result and the attempts made, exactly once.
  using Done = std::function<void(Result<T>&&, int)>;

  /// Starts the call; `done` runs exactly once (before start returns for a
  /// blocking runtime or a send-only transport; else on the event thread).
  static void start(CallContext context, CallSpec spec, Build build, Map map, Done done, const StopToken& stop) {
    StopToken closing;
    if (!enter(context, closing)) {
      done(std::unexpected(cancelled_error("cancelled: the client is being destroyed")), 0);
      return;
    }
    auto call = std::make_shared<CallOf>(Private{}, std::move(context), std::move(spec), std::move(build),
                                         std::move(map), std::move(done), stop, closing);
    call->begin();
  }

  /// Only start() can name Private: public for make_shared (one allocation for the call and its count).
  CallOf(Private, CallContext context, CallSpec spec, Build build, Map map, Done done, const StopToken& stop,
         const StopToken& closing)
      : Call(std::move(context), std::move(spec), std::move(build), stop, closing),
        map_(std::move(map)),
        done_(std::move(done)) {}

 private:
  // Coalesce: wait for the identical request in flight (starting it when
  // there is none) instead of sending one. The shared request is a call of
  // its own on the asynchronous runtime with its own stop: a waiter that
  // stops waiting cancels it only when it was the last one.
  void join_flight(const HttpRequest& request) override {
    flight_ = std::make_unique<JoinedFlight>();
    flight_->key = coalescing_key(operation_of(spec_.endpoint), request, spec_.policy);
    auto self = std::static_pointer_cast<CallOf>(shared_from_this());
    std::shared_ptr<std::promise<void>> delivered;
    std::future<void> blocking_wait;
    if (context_.runtime.blocking) {
      delivered = std::make_shared<std::promise<void>>();
      blocking_wait = delivered->get_future();
    }
    auto joined = context_.coalescer->join<T>(flight_->key, [self, delivered](Result<T> result, int n) {
      self->attempts_before_ = n;
      self->finish(std::move(result));
      if (delivered) delivered->set_value();
    });
    flight_->flight = joined.flight;
    flight_->id = joined.id;
    if (!joined.leader && logger().enabled(LogLevel::debug)) {
      logger().log(LogLevel::debug, spec_.name + ": sharing the identical request in flight");
    }
    if (joined.leader) {
      CallContext shared = context_;
      shared.runtime.blocking = false;
      shared.registry = context_.flight_registry;
      shared.coalescer = nullptr;
      CallSpec spec = spec_;
      spec.coalesce = false;
      Coalescer* coalescer = context_.coalescer;
      start(
          std::move(shared), std::move(spec), build_, map_,
          [coalescer, key = flight_->key, flight = joined.flight](Result<T> result, int n) {
            coalescer->complete<T>(key, flight, std::move(result), n);
          },
          joined.flight->token());
    }
#if STUDENTSVC_HAS_STOP_TOKEN
    if (!context_.runtime.blocking) on_stop_.emplace(stop_.token(), StopWaiting{self});
#endif
    if (blocking_wait.valid()) blocking_wait.wait();
  }

#if STUDENTSVC_HAS_STOP_TOKEN
  // A waiter's stop: it leaves the flight and completes as cancelled, on the event thread.
  struct StopWaiting {
    std::weak_ptr<CallOf> weak;
    void operator()() const noexcept {
      auto call = weak.lock();
      if (!call) return;
      try {
        const JoinedFlight& joined = *call->flight_;
        if (!call->context_.coalescer->template leave<T>(joined.key, joined.flight, joined.id)) return;
        call->context_.runtime.after(
            std::chrono::milliseconds{0},
            [call](bool) {
              call->finish_outcome(
                  std::unexpected(cancelled_error("cancelled (stop requested) while waiting for a shared lookup")));
            },
            StopToken{});
      } catch (...) {  // out of memory: the flight still delivers to this waiter
      }
    }
  };
#endif

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

  Map map_;
  Done done_;
  /// Coalesced: the shared request this call waits for.
  struct JoinedFlight {
    std::string key;  ///< never printed
    std::shared_ptr<Coalescer::Flight<T>> flight;
    std::uint64_t id = 0;
  };
  // Held apart from the call (as last_ is) so that a plain lookup's Call stays
  // a small allocation: allocators serve those from a per-thread cache.
  std::unique_ptr<JoinedFlight> flight_;
#if STUDENTSVC_HAS_STOP_TOKEN
  std::optional<std::stop_callback<StopWaiting>> on_stop_;  // last: goes first, while the rest is intact
#endif
};

/// @brief Runs a call on a blocking runtime and returns its result: every
/// step ran on this thread before CallOf::start returned.
template <class T>
[[nodiscard]] Result<T> run_blocking(CallContext context, CallSpec spec, Call::Build build,
                                     typename CallOf<T>::Map map, int* attempts = nullptr) {
  // Returned as it is (no copy or move on the way out); replaced by the outcome.
  Result<T> out{std::unexpect};
  int made = -1;  // the attempts made; -1: no outcome (two references: no allocation for the completion)
  CallOf<T>::start(
      std::move(context), std::move(spec), std::move(build), std::move(map),
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

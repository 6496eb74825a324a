#pragma once
/// @file detail/async_call.hpp
/// @brief The asynchronous form of one call: build → authorise → send with
/// retries → map, as a chain of completions on Transport::send_async and
/// Transport::run_after instead of a blocked thread. Its retry decisions come
/// from the same RetryRun as the blocking calls and batches (retry.hpp).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/detail/attempt_events.hpp>
#include <studentsvc/detail/call_stop.hpp>
#include <studentsvc/detail/rate_limit.hpp>
#include <studentsvc/detail/redact.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/retry.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

/// True on a thread that runs asynchronous completions (a transport's event
/// thread, or a caller inside a completion): it must never wait for them.
inline thread_local bool in_async_completion = false;

/// Sets in_async_completion for a scope.
class AsyncCompletionScope {
 public:
  AsyncCompletionScope() noexcept : was_(in_async_completion) { in_async_completion = true; }
  ~AsyncCompletionScope() { in_async_completion = was_; }
  AsyncCompletionScope(const AsyncCompletionScope&) = delete;
  AsyncCompletionScope& operator=(const AsyncCompletionScope&) = delete;

 private:
  bool was_;
};

/// A client's asynchronous calls in flight: counted, so that the last Client
/// handle's destruction can cancel them (one stop source) and wait for them.
class AsyncCallRegistry {
 public:
  /// Counts a call in; false (do not start it) once the client is closing.
  [[nodiscard]] bool enter() {
    const std::lock_guard lock(mutex_);
    if (closing_) return false;
    ++in_flight_;
    return true;
  }
  /// Counts a call out, after its completion has run.
  void leave() {
    {
      const std::lock_guard lock(mutex_);
      --in_flight_;
    }
    idle_.notify_all();
  }
  /// Cancels every call in flight and waits until each has completed, except
  /// on a thread that runs completions (waiting there would wait for itself).
  void close() {
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
    }
#if STUDENTSVC_HAS_STOP_TOKEN
    stop_.request_stop();
#endif
    if (in_async_completion) return;
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return in_flight_ == 0; });
  }
  [[nodiscard]] std::size_t in_flight() const {
    const std::lock_guard lock(mutex_);
    return in_flight_;
  }
#if STUDENTSVC_HAS_STOP_TOKEN
  [[nodiscard]] StopToken token() const noexcept { return stop_.get_token(); }
#else
  [[nodiscard]] static StopToken token() noexcept { return {}; }
#endif

 private:
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t in_flight_ = 0;
  bool closing_ = false;
#if STUDENTSVC_HAS_STOP_TOKEN
  std::stop_source stop_;
#endif
};

/// What an asynchronous call needs from its client: the pieces of ClientState
/// it reads (kept alive by `owner` while the call runs).
struct AsyncCallContext {
  std::shared_ptr<const void> owner;
  Transport* transport = nullptr;
  const ClientOptions* options = nullptr;
  JitterSource* jitter = nullptr;
  AsyncCallRegistry* registry = nullptr;
  ClientThrottle* throttle = nullptr;  ///< The client's rate limit and retry budget; null: none.
  /// Everything to scrub from text that came back for a request with these headers.
  std::function<std::vector<std::string>(const Headers&)> secrets;
};

/// @brief One asynchronous call, from its built request to the caller's
/// completion. Shared by the completions it hands to the transport; freed
/// when the last of them has run.
template <class T>
class AsyncCall : public std::enable_shared_from_this<AsyncCall<T>> {
 public:
  using Build = std::function<Result<HttpRequest>()>;
  using Map = std::function<Result<T>(Result<HttpResponse>&&)>;
  using Done = std::function<void(Result<T>)>;

  struct Spec {
    Endpoint endpoint = Endpoint::get_student;
    bool has_sub_path = false;
    bool idempotent = true;
    RetryPolicy policy;
  };

  /// Starts the call; `done` runs exactly once (on the transport's event
  /// thread for CurlTransport, before start returns for a send-only one).
  static void start(AsyncCallContext context, Spec spec, Build build, Map map, Done done, const StopToken& stop) {
    if (!context.registry->enter()) {
      done(std::unexpected(cancelled_error("cancelled: the client is being destroyed")));
      return;
    }
    auto call = std::shared_ptr<AsyncCall>(
        new AsyncCall(std::move(context), std::move(spec), std::move(build), std::move(map), std::move(done), stop));
    call->begin();
  }

  AsyncCall(const AsyncCall&) = delete;
  AsyncCall& operator=(const AsyncCall&) = delete;
  ~AsyncCall() {
    if (!finished_) {
      // Only if a transport dropped a completion without calling it: count out anyway.
      context_.registry->leave();
    }
  }

 private:
  AsyncCall(AsyncCallContext context, Spec spec, Build build, Map map, Done done, const StopToken& stop)
      : context_(std::move(context)),
        spec_(std::move(spec)),
        build_(std::move(build)),
        map_(std::move(map)),
        done_(std::move(done)),
        stop_(stop, context_.registry->token()),
        start_(std::chrono::steady_clock::now()) {}

  [[nodiscard]] const Logger& logger() const { return context_.options->logger; }
  [[nodiscard]] std::string name() const { return std::string(endpoint_name_of(spec_.endpoint)) + " (async)"; }

  static std::string_view endpoint_name_of(Endpoint e) noexcept {
    switch (e) {
      case Endpoint::get_student: return "get_student";
      case Endpoint::current_student: return "current_student";
      case Endpoint::conversation: return "conversation";
    }
    return "call";
  }

  void begin() {
    auto built = build_();
    if (!built) {
      logger().log(LogLevel::warning, name() + ": not sent: " + built.error().message);
      finish(std::unexpected(std::move(built.error())), false);
      return;
    }
    request_ = std::move(*built);
    if (logger().enabled(LogLevel::trace)) {
      logger().log(LogLevel::trace, name() + ": " + request_.method + " headers: " + redacted_headers(request_.headers));
    }
    if (auto valid = validate_policy(spec_.policy); !valid) {
      finish(std::unexpected(std::move(valid.error())), false);
      return;
    }
    secrets_ = context_.secrets(request_.headers);
    events_ = attempt_context(context_.options->instrumentation.get(), spec_.endpoint, spec_.has_sub_path, request_,
                              context_.options->request_id_headers);
    reason_ = events_.first_reason;
    run_.emplace(spec_.policy, 1, spec_.idempotent, std::chrono::steady_clock::now());
    attempt();
  }

  // Asks the client's throttle first, if it has one: a retry over the retry
  // budget is not sent (the last outcome is final); a token not yet due is
  // waited for on a timer.
  void attempt() {
    if (stop_.stop_requested()) {
      finish_outcome(std::unexpected(cancelled_error("cancelled (stop requested) before the request was sent")));
      return;
    }
    if (context_.throttle != nullptr) {
      const bool first = run_->attempts(0) == 0 && attempts_before_ == 0;
      const Admission a = context_.throttle->admit(first ? AttemptKind::first : AttemptKind::retry);
      if (!a.allowed && last_) {
        logger().log(LogLevel::info, name() + ": retry not sent: the client's retry budget is spent");
        finish_outcome(std::move(*last_));
        return;
      }
      if (a.wait > std::chrono::milliseconds{0}) {
        wait_then(a.wait, &AsyncCall::send_attempt, "waiting for the rate limit");
        return;
      }
    }
    send_attempt();
  }

  // Runs `next` once `delay` has passed, on the transport's timer; a stop
  // request meanwhile ends the call as cancelled, saying what it was `waiting`.
  void wait_then(std::chrono::milliseconds delay, void (AsyncCall::*next)(), const char* waiting) {
    auto self = this->shared_from_this();
    context_.transport->run_after(
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

  void send_attempt() {
    HttpRequest sending = request_;
    sending.timeout = run_->timeout(request_.timeout, std::chrono::steady_clock::now());
    attempt_number_ = events_.attempts_before + run_->attempts(0) + 1;
    attempt_started(events_, attempt_number_, reason_);
    attempt_start_ = std::chrono::steady_clock::now();
    auto self = this->shared_from_this();
    context_.transport->send_async(
        std::move(sending), [self](Result<HttpResponse> outcome) { self->on_outcome(std::move(outcome)); },
        stop_.token());
  }

  void on_outcome(Result<HttpResponse> outcome) {
    attempt_ended(events_, attempt_number_, reason_, outcome, std::chrono::steady_clock::now() - attempt_start_);
    if (context_.throttle != nullptr) {
      pause_client_for(*context_.throttle, outcome, spec_.policy, std::chrono::system_clock::now());
    }
    reason_ = retry_reason_after(outcome);
    const auto decision = run_->record(std::span<const Result<HttpResponse>>(&outcome, 1), *context_.jitter,
                                       std::chrono::steady_clock::now(), std::chrono::system_clock::now());
    if (decision.out_of_time) {
      logger().log(LogLevel::warning, name() + ": giving up, the next wait would pass max_total_time");
    }
    if (decision.retry) {
      if (logger().enabled(LogLevel::info)) {
        logger().log(LogLevel::info, name() + ": attempt " + std::to_string(run_->rounds()) + " failed (" +
                                         (outcome ? "status " + std::to_string(outcome->status)
                                                  : std::string("transport error")) +
                                         "), waiting " + std::to_string(decision.wait.count()) + " ms");
      }
      last_ = std::move(outcome);
      wait_then(decision.wait, &AsyncCall::attempt, "waiting to retry");
      return;
    }
    // A 401 while a CredentialProvider is set: ask it afresh, try once more.
    if (!refreshed_ && spec_.idempotent && context_.options->auth.provider && outcome && outcome->status == 401) {
      refreshed_ = true;
      last_ = outcome;  // final if the retry budget refuses the try with fresh credentials
      context_.options->auth.provider->invalidate();
      if (auto again = build_(); again) {
        logger().log(LogLevel::info, name() + ": 401, trying once more with fresh credentials");
        attempts_before_ += run_->attempts(0);
        request_ = std::move(*again);
        add_secrets(secrets_, context_.secrets(request_.headers));
        events_ = attempt_context(context_.options->instrumentation.get(), spec_.endpoint, spec_.has_sub_path,
                                  request_, context_.options->request_id_headers);
        events_.attempts_before = attempts_before_;
        reason_ = RetryReason::credentials;
        run_.emplace(RetryPolicy::none(), 1, true, std::chrono::steady_clock::now());
        attempt();
        return;
      }
    }
    finish_outcome(std::move(outcome));
  }

  // The last attempt's outcome, or `cancelled` during a wait (then the
  // attempt before it is what was last seen, but the call did not finish it).
  void finish_outcome(Result<HttpResponse> outcome) {
    const int attempts = attempts_before_ + (run_ ? run_->attempts(0) : 0);
    if (logger().enabled(LogLevel::debug)) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start_).count();
      std::string line = name() + ": " +
                         (outcome ? "status " + std::to_string(outcome->status)
                                  : "transport error: " + outcome.error().message) +
                         " after " + std::to_string(attempts) + " attempt(s), " + std::to_string(ms) + " ms";
      scrub(line, secrets_);
      logger().log(LogLevel::debug, line);
    }
    std::string request_id = request_id_of(outcome, context_.options->request_id_headers);
    auto result = map_(std::move(outcome));
    if (!result) {
      result.error().attempts = attempts;
      result.error().request_id = std::move(request_id);
      scrub(result.error(), secrets_);
    }
    finish(std::move(result), true);
  }

  void finish(Result<T> result, bool sent) {
    (void)sent;
    if (finished_) return;
    finished_ = true;
    {
      const AsyncCompletionScope scope;
      try {
        done_(std::move(result));
      } catch (...) {
        // Documented: a completion must not throw; the call is over either way.
        logger().log(LogLevel::error, name() + ": the completion callback threw; the exception was dropped");
      }
      done_ = nullptr;  // its captures go here, still inside the scope
    }
    context_.registry->leave();
  }

  AsyncCallContext context_;
  Spec spec_;
  Build build_;
  Map map_;
  Done done_;
  CallStop stop_;
  std::chrono::steady_clock::time_point start_;
  HttpRequest request_;
  std::optional<RetryRun> run_;
  AttemptContext events_;
  RetryReason reason_ = RetryReason::none;
  int attempt_number_ = 0;
  int attempts_before_ = 0;
  std::chrono::steady_clock::time_point attempt_start_;
  std::vector<std::string> secrets_;
  std::optional<Result<HttpResponse>> last_;
  bool refreshed_ = false;
  bool finished_ = false;
};

}  // namespace studentsvc::detail

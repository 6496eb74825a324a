#pragma once
/// @file detail/call/context.hpp
/// @brief What a call is (CallSpec) and what it reads from its client
/// (CallContext, with the CallRuntime that sends and waits): the vocabulary
/// the pipeline (pipeline.hpp) and its stages (hedge.hpp, coalescer.hpp) share.
/// @sa docs/pipeline.md

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/credential_provider.hpp>
#include <studentsvc/detail/call/redact.hpp>
#include <studentsvc/detail/retry/clock.hpp>
#include <studentsvc/detail/retry/retry_run.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

class CallRegistry;    // registry.hpp
class CircuitBreaker;  // circuit_breaker.hpp
class ClientThrottle;  // ../limits/rate_limit.hpp
class Coalescer;       // coalescer.hpp

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
  std::function<SecretList(const Headers&)> secrets;
};

/// @brief What a call is: its name in log lines, its endpoint (for the
/// attempt events), whether it may be sent twice, its retry policy, and how
/// its request is built (again after a 401, with fresh credentials).
struct CallSpec {
  using Build = std::function<Result<HttpRequest>()>;

  std::string name;
  Endpoint endpoint = Endpoint::get_student;
  bool has_sub_path = false;
  bool idempotent = true;
  RetryPolicy policy;
  bool coalesce = false;  ///< Shares one request with identical calls in flight (Coalescer).
  bool hedge = false;     ///< An idempotent lookup: may send a second copy of a slow attempt (HedgeRace).
  Build build;
};

/// How a call's last outcome becomes its Result<T>.
template <class T>
using MapOutcome = std::function<Result<T>(Result<HttpResponse>&&)>;
/// Gets a call's result and the attempts made, exactly once.
template <class T>
using CallDone = std::function<void(Result<T>&&, int)>;

}  // namespace studentsvc::detail

#pragma once
/// @file detail/call/coalescer.hpp
/// @brief The coalescing stage of a call (ClientOptions::coalesce_lookups,
/// and always within a batch): the Coalescer holds a client's lookups in
/// flight by the exact request they send, so that identical concurrent
/// lookups share one request; a FlightSeat is one call waiting for one.
/// @sa docs/pipeline.md

#include <cstddef>
#include <cstdint>
#include <chrono>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <studentsvc/detail/call/attempt_events.hpp>
#include <studentsvc/detail/call/context.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/secret.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

/// What makes two lookups "the same request": the call's name, the built
/// request's method, URL, every header (credentials and JWT included, so two
/// identities never share), its limits, and the retry policy. Held in memory
/// only, never printed or logged.
///
/// The key holds the credentials' bytes, compared in full (a hash alone could
/// let two identities share a request on a collision), so it is a Secret:
/// every copy (the call's, the flight's, the map's) is wiped when it goes.
/// It is built in a buffer sized up front, so no reallocation leaves a copy.
[[nodiscard]] inline Secret coalescing_key(std::string_view name, const HttpRequest& request,
                                           const RetryPolicy& policy) {
  const long long numbers[] = {static_cast<long long>(request.connect_timeout.count()),
                               static_cast<long long>(request.timeout.count()),
                               static_cast<long long>(request.max_response_bytes),
                               static_cast<long long>(request.max_response_header_bytes),
                               static_cast<long long>(policy.max_attempts),
                               static_cast<long long>(policy.initial_backoff.count()),
                               static_cast<long long>(policy.max_backoff.count()),
                               static_cast<long long>(policy.max_retry_after.count()),
                               static_cast<long long>(policy.max_total_time.count())};
  constexpr std::size_t number_bytes = 21;  // "-9223372036854775808" and a space
  std::size_t size = name.size() + 1 + request.method.size() + 1 + request.url.size() + 1 +
                     std::size(numbers) * number_bytes;
  for (const auto& [field, value] : request.headers) size += field.size() + 1 + value.size() + 1;
  std::string key;
  key.reserve(size);
  key += name;
  key += '\n';
  key += request.method;
  key += '\n';
  key += request.url;
  key += '\n';
  for (const auto& [field, value] : request.headers) {
    key += field;
    key += ':';
    key += value;
    key += '\n';
  }
  for (const long long n : numbers) {
    key += std::to_string(n);
    key += ' ';
  }
  return Secret(std::move(key));
}

/// Hashes a coalescing key's bytes (the map compares them in full).
struct SecretKeyHash {
  [[nodiscard]] std::size_t operator()(const Secret& key) const noexcept {
    return std::hash<std::string_view>{}(key.reveal());
  }
};

/// The lookups in flight of one client. A flight is one shared request (a
/// call run on the asynchronous runtime with its own stop) and the callers
/// waiting for it; each waiter gets its own copy of the result, exactly once.
class Coalescer {
 public:
  template <class T>
  using Deliver = std::function<void(Result<T>, int)>;

  struct FlightBase {
    virtual ~FlightBase() = default;
    StopSource stop;  ///< Stopped when every waiter has gone.
    [[nodiscard]] StopToken token() const noexcept { return stop.get_token(); }
  };
  template <class T>
  struct Flight : FlightBase {
    std::vector<std::pair<std::uint64_t, Deliver<T>>> waiters;  // guarded by the Coalescer's mutex
  };

  template <class T>
  struct Joined {
    std::shared_ptr<Flight<T>> flight;
    std::uint64_t id = 0;
    bool leader = false;  ///< No such request was in flight: the caller starts the flight.
  };

  /// Waits for the flight sending `key`, creating it (leader) when there is none.
  template <class T>
  [[nodiscard]] Joined<T> join(const Secret& key, Deliver<T> deliver) {
    Joined<T> j;
    const std::lock_guard lock(mutex_);
    auto& slot = flights_[key];
    if (!slot) {
      slot = std::make_shared<Flight<T>>();
      j.leader = true;
    }
    // The key starts with the call's name, and each name has one result type.
    j.flight = std::static_pointer_cast<Flight<T>>(slot);
    j.id = ++next_id_;
    j.flight->waiters.emplace_back(j.id, std::move(deliver));
    return j;
  }

  /// The flight's result: every waiter still there gets a copy (the last the original).
  template <class T>
  void complete(const Secret& key, const std::shared_ptr<Flight<T>>& flight, Result<T> result, int attempts) {
    std::vector<std::pair<std::uint64_t, Deliver<T>>> waiters;
    {
      const std::lock_guard lock(mutex_);
      forget(key, flight.get());
      waiters.swap(flight->waiters);
    }
    for (std::size_t i = 0; i < waiters.size(); ++i) {
      if (i + 1 == waiters.size()) {
        waiters[i].second(std::move(result), attempts);
      } else {
        waiters[i].second(result, attempts);
      }
    }
  }

  /// A waiter that stopped waiting: true when it was still waiting (it then
  /// completes itself as cancelled). The last waiter to go stops the flight.
  template <class T>
  [[nodiscard]] bool leave(const Secret& key, const std::shared_ptr<Flight<T>>& flight, std::uint64_t id) {
    bool found = false;
    bool last = false;
    {
      const std::lock_guard lock(mutex_);
      auto& w = flight->waiters;
      for (auto it = w.begin(); it != w.end(); ++it) {
        if (it->first == id) {
          w.erase(it);
          found = true;
          break;
        }
      }
      if (found && w.empty()) {
        forget(key, flight.get());  // a new caller starts a new request, not this cancelled one
        last = true;
      }
    }
    if (last) flight->stop.request_stop();
    return found;
  }

  /// Flights in flight (for tests).
  [[nodiscard]] std::size_t size() const {
    const std::lock_guard lock(mutex_);
    return flights_.size();
  }

 private:
  void forget(const Secret& key, const FlightBase* flight) {
    const auto it = flights_.find(key);
    if (it != flights_.end() && it->second.get() == flight) flights_.erase(it);
  }

  mutable std::mutex mutex_;
  std::unordered_map<Secret, std::shared_ptr<FlightBase>, SecretKeyHash> flights_;
  std::uint64_t next_id_ = 0;
};

/// @brief One call's seat in a flight: the coalescing stage. Instead of
/// sending its request, the call waits for the identical request in flight,
/// starting it when there is none. The shared request is a call of its own on
/// the asynchronous runtime with its own stop: a waiter that stops waiting
/// cancels it only when it was the last one. Held by the call (apart from it,
/// so that a plain lookup's call stays a small allocation).
template <class T>
class FlightSeat {
 public:
  /// Completes the call as cancelled, once it left the flight on a stop request.
  using Cancel = void (*)(const std::shared_ptr<void>& call);

  /// Joins the flight sending `request` (made by `spec`). `deliver(result,
  /// attempts)` gets the flight's result (it holds the call until then);
  /// `lead(complete, stop)` starts the shared request when there was none.
  /// A blocking caller waits here until delivered; an asynchronous one leaves
  /// the flight on a stop request of `stop`, and `cancel` then completes it.
  template <class Deliver, class Lead>
  void join(const CallContext& context, const CallSpec& spec, const HttpRequest& request, std::weak_ptr<void> call,
            Deliver&& deliver, Lead&& lead, const StopToken& stop, Cancel cancel) {
    key_ = coalescing_key(operation_of(spec.endpoint), request, spec.policy);
    std::shared_ptr<std::promise<void>> delivered;
    std::future<void> blocking_wait;
    if (context.runtime.blocking) {
      delivered = std::make_shared<std::promise<void>>();
      blocking_wait = delivered->get_future();
    }
    auto joined = context.coalescer->join<T>(
        key_, [deliver = std::forward<Deliver>(deliver), delivered](Result<T> result, int n) mutable {
          deliver(std::move(result), n);
          if (delivered) delivered->set_value();
        });
    flight_ = joined.flight;
    id_ = joined.id;
    if (!joined.leader && context.logger->enabled(LogLevel::debug)) {
      context.logger->log(LogLevel::debug, spec.name + ": sharing the identical request in flight");
    }
    if (joined.leader) {
      lead(
          [coalescer = context.coalescer, key = key_, flight = joined.flight](Result<T> result, int n) {
            coalescer->complete<T>(key, flight, std::move(result), n);
          },
          joined.flight->token());
    }
    if (!context.runtime.blocking) on_stop_.emplace(stop, StopWaiting{std::move(call), this, &context, cancel});
    if (blocking_wait.valid()) blocking_wait.wait();
  }

 private:
  // A waiter's stop: it leaves the flight and completes as cancelled, on the
  // event thread. `seat` and `context` are the call's: read only while it lives.
  struct StopWaiting {
    std::weak_ptr<void> call;
    FlightSeat* seat;
    const CallContext* context;
    Cancel cancel;
    void operator()() const noexcept {
      auto owner = call.lock();
      if (!owner) return;
      try {
        if (!context->coalescer->template leave<T>(seat->key_, seat->flight_, seat->id_)) return;
        context->runtime.after(
            std::chrono::milliseconds{0}, [owner, done = cancel](bool) { done(owner); }, StopToken{});
      } catch (...) {  // out of memory: the flight still delivers to this waiter
      }
    }
  };

  Secret key_;  ///< never printed; holds the credentials (wiped)
  std::shared_ptr<Coalescer::Flight<T>> flight_;
  std::uint64_t id_ = 0;
  std::optional<StopCallback<StopWaiting>> on_stop_;  // last: goes first, while the rest is intact
};

}  // namespace studentsvc::detail

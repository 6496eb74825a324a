#pragma once
/// @file detail/call/coalescer.hpp
/// @brief Coalescer: a client's lookups in flight, by the exact request they
/// send, so that identical concurrent lookups share one request
/// (ClientOptions::coalesce_lookups, and always within a batch).
/// @sa docs/pipeline.md

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

/// What makes two lookups "the same request": the call's name, the built
/// request's method, URL, every header (credentials and JWT included, so two
/// identities never share), its limits, and the retry policy. Held in memory
/// only, never printed or logged.
[[nodiscard]] inline std::string coalescing_key(std::string_view name, const HttpRequest& request,
                                                const RetryPolicy& policy) {
  std::string key(name);
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
  for (const long long n : {static_cast<long long>(request.connect_timeout.count()),
                            static_cast<long long>(request.timeout.count()),
                            static_cast<long long>(request.max_response_bytes),
                            static_cast<long long>(request.max_response_header_bytes),
                            static_cast<long long>(policy.max_attempts), static_cast<long long>(policy.initial_backoff.count()),
                            static_cast<long long>(policy.max_backoff.count()),
                            static_cast<long long>(policy.max_retry_after.count()),
                            static_cast<long long>(policy.max_total_time.count())}) {
    key += std::to_string(n);
    key += ' ';
  }
  return key;
}

/// The lookups in flight of one client. A flight is one shared request (a
/// call run on the asynchronous runtime with its own stop) and the callers
/// waiting for it; each waiter gets its own copy of the result, exactly once.
class Coalescer {
 public:
  template <class T>
  using Deliver = std::function<void(Result<T>, int)>;

  struct FlightBase {
    virtual ~FlightBase() = default;
#if STUDENTSVC_HAS_STOP_TOKEN
    std::stop_source stop;  ///< Stopped when every waiter has gone.
#endif
    [[nodiscard]] StopToken token() const noexcept {
#if STUDENTSVC_HAS_STOP_TOKEN
      return stop.get_token();
#else
      return {};
#endif
    }
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
  [[nodiscard]] Joined<T> join(const std::string& key, Deliver<T> deliver) {
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
  void complete(const std::string& key, const std::shared_ptr<Flight<T>>& flight, Result<T> result, int attempts) {
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
  [[nodiscard]] bool leave(const std::string& key, const std::shared_ptr<Flight<T>>& flight, std::uint64_t id) {
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
#if STUDENTSVC_HAS_STOP_TOKEN
    if (last) flight->stop.request_stop();
#else
    (void)last;
#endif
    return found;
  }

  /// Flights in flight (for tests).
  [[nodiscard]] std::size_t size() const {
    const std::lock_guard lock(mutex_);
    return flights_.size();
  }

 private:
  void forget(const std::string& key, const FlightBase* flight) {
    const auto it = flights_.find(key);
    if (it != flights_.end() && it->second.get() == flight) flights_.erase(it);
  }

  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<FlightBase>> flights_;
  std::uint64_t next_id_ = 0;
};

}  // namespace studentsvc::detail

#pragma once
// A MockServer with a failure script in front of its routes: the first
// `failures` requests get `status` (and a Retry-After when given), later ones
// fall through to the mock. The retry end-to-end tests' common setup.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <httplib.h>

#include <studentsvc/client.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "fast_retry.hpp"

namespace studentsvc::test {

/// What the server does to the first requests.
struct Script {
  int failures = 0;   ///< How many requests fail (then the mock answers).
  int status = 503;   ///< Their status.
  std::function<std::string()> retry_after;  ///< Their Retry-After value; empty: no header.
};

/// A MockServer on 127.0.0.1 that follows a Script and records when each request arrived.
class ScriptedServer {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ScriptedServer(Script script, testing::MockServerOptions options = {})
      : state_(std::make_shared<State>()), server_(with_intercept(std::move(options), script)) {}

  /// The mock's client options with `policy` as the retry policy.
  [[nodiscard]] ClientOptions options(const RetryPolicy& policy = fast_retry()) const {
    auto o = server_.client_options();
    o.retry = policy;
    return o;
  }
  /// When each request arrived, in order.
  [[nodiscard]] std::vector<Clock::time_point> arrivals() const {
    const std::lock_guard lock(state_->mutex);
    return state_->arrivals;
  }
  /// The server, for its own counters.
  [[nodiscard]] testing::MockServer& server() noexcept { return server_; }

 private:
  struct State {
    std::mutex mutex;
    std::vector<Clock::time_point> arrivals;
  };

  testing::MockServerOptions with_intercept(testing::MockServerOptions options, Script script) {
    options.intercept = [state = state_, script = std::move(script)](const httplib::Request&,
                                                                     httplib::Response& res) {
      int n = 0;
      {
        const std::lock_guard lock(state->mutex);
        state->arrivals.push_back(Clock::now());
        n = static_cast<int>(state->arrivals.size());
      }
      if (n > script.failures) return false;
      res.status = script.status;
      if (script.retry_after) res.set_header("Retry-After", script.retry_after());
      res.set_content(R"({"message":"failure )" + std::to_string(n) + R"("})", "application/json");
      return true;
    };
    return options;
  }

  std::shared_ptr<State> state_;
  testing::MockServer server_;
};

}  // namespace studentsvc::test

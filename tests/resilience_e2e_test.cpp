// Issue 20 end to end: the real CurlTransport against MockServer on
// 127.0.0.1. The circuit breaker with a service that goes away and comes
// back, and with many threads and asynchronous calls at once.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/log_capture.hpp"

using namespace std::chrono_literals;
using studentsvc::Client;
using studentsvc::ErrorKind;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;

namespace {

/// A gate the server's handler waits at until the test opens it (or 20 s pass).
class Gate {
 public:
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, 20s, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace

TEST_CASE("breaker e2e: a service that goes away opens the breaker; when it is back the probe closes it",
          "[circuit][e2e]") {
  // Learn the mock's client options and port, then stop it: the port is closed.
  auto first = std::make_unique<MockServer>();
  REQUIRE(first->running());
  const int port = first->port();
  auto options = first->client_options();
  first.reset();

  studentsvc::test::LogCapture log;
  options.logger = log.logger(studentsvc::LogLevel::info);
  options.retry = studentsvc::RetryPolicy::none();
  options.circuit_breaker = studentsvc::CircuitBreakerOptions{3, 400ms};
  const Client client(options);
  for (int i = 0; i < 3; ++i) {
    const auto r = client.get_student("1234567");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::transport);
  }
  const auto refused = client.get_student("1234567");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::circuit_open);
  CHECK(refused.error().attempts == 0);
  CHECK(refused.error().message.starts_with("circuit open after 3 consecutive failures (transport error); next try in "));
  CHECK(client.get_student_async("1234567").get().error().kind == ErrorKind::circuit_open);

  MockServerOptions back;
  back.port = port;
  MockServer server(back);
  REQUIRE(server.running());
  // Still open until the cool-down has passed: nothing reaches the server.
  std::this_thread::sleep_for(450ms);
  const auto probe = client.get_student("1234567");
  REQUIRE(probe);
  CHECK(probe->perm == "1234567");
  CHECK(server.request_count() == 1);
  CHECK(client.get_student("2345678"));
  CHECK(server.request_count() == 2);
  bool opened = false;
  bool closed = false;
  for (const auto& [level, text] : log.entries()) {
    opened = opened || (level == studentsvc::LogLevel::warning && text.starts_with("circuit breaker: open after 3"));
    closed = closed || (level == studentsvc::LogLevel::info && text == "circuit breaker: closed, the probe request succeeded");
  }
  CHECK(opened);
  CHECK(closed);
}

TEST_CASE("breaker e2e: many threads and async calls while the probe is out: one request reaches the server",
          "[circuit][e2e][concurrency]") {
  Gate gate;
  std::atomic<int> answered{0};
  MockServerOptions mo;
  mo.intercept = [&](const httplib::Request&, httplib::Response& res) {
    if (answered.fetch_add(1) == 0) {  // the first: a 503 that opens the breaker
      res.status = 503;
      return true;
    }
    gate.wait();  // the probe: held until every other call has been refused
    return false;
  };
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = studentsvc::RetryPolicy::none();
  options.circuit_breaker = studentsvc::CircuitBreakerOptions{1, 200ms};
  const Client client(options);
  CHECK(client.get_student("1234567").error().status == 503);
  std::this_thread::sleep_for(250ms);

  // The probe: an async call held at the server.
  auto probe = client.get_student_async("1234567");
  while (server.request_count() < 2) std::this_thread::sleep_for(1ms);

  constexpr int threads = 8;
  constexpr int per_thread = 20;
  std::atomic<int> open_refusals{0};
  std::atomic<int> other{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const Client copy = client;  // copies share the breaker
      for (int i = 0; i < per_thread; ++i) {
        auto r = (i + t) % 2 == 0 ? copy.get_student("2345678") : copy.get_student_async("2345678").get();
        (r || r.error().kind != ErrorKind::circuit_open ? other : open_refusals)++;
      }
    });
  }
  for (auto& t : pool) t.join();
  CHECK(open_refusals.load() == threads * per_thread);
  CHECK(other.load() == 0);
  CHECK(server.request_count() == 2);
  gate.open();
  const auto answer = probe.get();
  REQUIRE(answer);
  CHECK(answer->perm == "1234567");
  CHECK(client.get_student("2345678"));  // closed again
  CHECK(server.request_count() == 3);
}

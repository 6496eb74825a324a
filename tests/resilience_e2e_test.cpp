// Issue 20 end to end: the real CurlTransport against MockServer on
// 127.0.0.1. The circuit breaker with a service that goes away and comes
// back, and with many threads and asynchronous calls at once.

#include <catch2/catch.hpp>

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/log_capture.hpp"
#include "support/raw_server.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace resilience_e2e_test {

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

TEST_CASE("breaker e2e: a service that goes away opens the breaker, and when it is back the probe closes it",
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

namespace {

std::string student_response(const std::string& perm) {
  const std::string body = R"({"perm":")" + perm + R"(","firstName":"Ana","lastName":"Lopez"})";
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

/// Until the peer closes `fd` (true) or `wait` passes (false).
bool closed_by_peer(int fd, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  char buf[256];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      const auto n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return true;
    }
  }
  return false;
}

/// A raw server whose first request is held (until the client closes it, or
/// `hold` passes, then answered); every later one is answered at once.
struct HeldFirst {
  explicit HeldFirst(std::chrono::milliseconds hold = 20s)
      : server([this, hold](int fd, int) {
          const std::string request = studentsvc::test::RawServer::read_request(fd);
          if (request.empty()) return;
          if (requests.fetch_add(1) == 0) {
            if (closed_by_peer(fd, hold)) {
              first_cancelled = true;
              return;
            }
          }
          (void)studentsvc::test::RawServer::write_all(fd, student_response("1234567"));
          (void)closed_by_peer(fd, 2s);
        }) {}
  std::atomic<int> requests{0};
  std::atomic<bool> first_cancelled{false};
  studentsvc::test::RawServer server;
};

studentsvc::ClientOptions raw_options(const std::string& base_url) {
  studentsvc::ClientOptions o;
  o.base_url = base_url;
  o.allow_insecure_loopback = true;
  o.auth.api_key = "k";
  o.retry = studentsvc::RetryPolicy::none();
  return o;
}

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds wait = 20s) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

}  // namespace

TEST_CASE("hedge e2e: a held first copy loses to the hedge, and its transfer is cancelled", "[hedge][e2e]") {
  HeldFirst held;
  auto options = raw_options(held.server.base_url());
  options.hedging = studentsvc::HedgingOptions{50ms};
  const Client client(options);
  SECTION("blocking") {
    const auto r = client.get_student("1234567");  // answered while the first copy is still held
    REQUIRE(r);
    CHECK(r->perm == "1234567");
  }
  SECTION("async") {
    const auto r = client.get_student_async("1234567").get();
    REQUIRE(r);
    CHECK(r->perm == "1234567");
  }
  CHECK(held.requests.load() == 2);
  CHECK(wait_for([&] { return held.first_cancelled.load(); }));
}

TEST_CASE("hedge e2e: no hedge when the retry budget refuses it, for a conversation, or for the breaker's probe",
          "[hedge][e2e]") {
  HeldFirst held(300ms);
  auto options = raw_options(held.server.base_url());
  options.hedging = studentsvc::HedgingOptions{20ms};
  SECTION("retry budget spent") {
    options.retry_budget = studentsvc::RetryBudgetOptions{0.0, 0, 10'000ms};
    const Client client(options);
    CHECK(client.get_student("1234567"));
  }
  SECTION("conversation") {
    const Client client(options);
    studentsvc::ConversationRequest request;
    request.method = "GET";
    request.idempotent = true;
    CHECK(client.conversation(request));
  }
  CHECK(held.requests.load() == 1);
  CHECK_FALSE(held.first_cancelled.load());
}

TEST_CASE("coalesce e2e: blocking and async callers on many threads share one request, and two JWTs do not",
          "[coalesce][e2e][concurrency]") {
  Gate gate;
  MockServerOptions mo;
  mo.intercept = [&](const httplib::Request&, httplib::Response&) {
    gate.wait();
    return false;
  };
  MockServer server(mo);
  studentsvc::test::LogCapture log;
  auto options = server.client_options();
  options.coalesce_lookups = true;
  options.logger = log.logger(studentsvc::LogLevel::debug);
  const Client client(options);
  auto sharing = [&] {
    std::size_t n = 0;
    for (const auto& line : log.texts()) n += line.ends_with("sharing the identical request in flight") ? 1 : 0;
    return n;
  };
  constexpr int callers = 12;
  std::vector<std::future<studentsvc::Result<studentsvc::StudentExtended>>> results;
  for (int i = 0; i < callers; ++i) {
    results.push_back(std::async(std::launch::async, [&client, i] {
      return i % 2 == 0 ? client.get_student("1234567") : client.get_student_async("1234567").get();
    }));
  }
  REQUIRE(wait_for([&] { return sharing() >= callers - 1; }));
  // Two identities for the same student at the same time: two requests.
  studentsvc::CallOptions ana;
  ana.user_jwt = "mock-jwt-ana";
  auto with_jwt = client.get_student_async("1234567", ana);
  auto current = client.current_student_async("mock-jwt-ana");
  REQUIRE(wait_for([&] { return server.request_count() >= 3; }));
  gate.open();
  for (auto& r : results) {
    const auto student = r.get();
    REQUIRE(student);
    CHECK(student->perm == "1234567");
  }
  CHECK(with_jwt.get());
  CHECK(current.get());
  CHECK(server.request_count() == 3);
}

TEST_CASE("coalesce e2e: when every waiter has stopped waiting the shared request is cancelled",
          "[coalesce][e2e][concurrency]") {
  HeldFirst held;
  auto options = raw_options(held.server.base_url());
  options.coalesce_lookups = true;
  const Client client(options);
  std::stop_source a;
  std::stop_source b;
  auto first = client.get_student_async("1234567", {}, a.get_token());
  auto second = client.get_student_async("1234567", {}, b.get_token());
  REQUIRE(wait_for([&] { return held.requests.load() >= 1; }));
  a.request_stop();
  CHECK(first.get().error().kind == ErrorKind::cancelled);
  CHECK_FALSE(held.first_cancelled.load());  // b still waits: the request goes on
  b.request_stop();
  CHECK(second.get().error().kind == ErrorKind::cancelled);
  CHECK(wait_for([&] { return held.first_cancelled.load(); }));
  // A new lookup starts a new request.
  CHECK(client.get_student("1234567"));
  CHECK(held.requests.load() == 2);
}

}  // namespace resilience_e2e_test

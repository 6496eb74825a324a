// The circuit breaker (ClientOptions::circuit_breaker): the state machine on
// simulated time (threshold, which outcomes count, cool-down, exactly one
// probe under many threads, probe success and failure), then a Client on a
// FakeTransport (every form refused at once, attempts 0, logger, hook,
// metrics, options refused by Client::create).

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <studentsvc/detail/call/circuit_breaker.hpp>
#include <studentsvc/metrics.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/fake_transport.hpp>

#include "support/fast_retry.hpp"
#include "support/log_capture.hpp"
#include "support/simulated_time.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace circuit_breaker_test {

using namespace std::chrono_literals;
using studentsvc::CircuitBreakerOptions;
using studentsvc::CircuitEvent;
using studentsvc::CircuitState;
using studentsvc::ErrorKind;
using studentsvc::HttpResponse;
using studentsvc::Result;
using studentsvc::detail::BreakerVerdict;
using studentsvc::detail::CircuitBreaker;

namespace {

Result<HttpResponse> status(int s) { return HttpResponse{s, {}, {}}; }
Result<HttpResponse> transport_error(studentsvc::TransportFailure f = studentsvc::TransportFailure::connect) {
  auto e = studentsvc::make_error(ErrorKind::transport, "connect refused");
  e.error().transport_failure = f;
  return e;
}

CircuitBreaker breaker(studentsvc::test::SimulatedTime& time, int threshold = 3, std::chrono::milliseconds cool = 30s) {
  return CircuitBreaker(CircuitBreakerOptions{threshold, cool}, time.clock());
}

void fail(CircuitBreaker& b, int n, int s = 0) {
  for (int i = 0; i < n; ++i) (void)b.record(BreakerVerdict::failure, false, s);
}

struct CircuitRecorder final : studentsvc::Instrumentation {
  void on_attempt(const studentsvc::AttemptEvent&) override {}
  void on_circuit(const CircuitEvent& e) override {
    const std::lock_guard lock(mutex);
    events.push_back(e);
  }
  std::vector<CircuitEvent> snapshot() {
    const std::lock_guard lock(mutex);
    return events;
  }
  std::mutex mutex;
  std::vector<CircuitEvent> events;
};

const std::string ana = R"({"perm":"1234567","firstName":"Ana","lastName":"Lopez"})";

}  // namespace

TEST_CASE("which outcomes say the service is down", "[circuit]") {
  using studentsvc::detail::breaker_verdict;
  for (int s : {500, 502, 503, 504}) CHECK(breaker_verdict(status(s)) == BreakerVerdict::failure);
  CHECK(breaker_verdict(transport_error()) == BreakerVerdict::failure);
  CHECK(breaker_verdict(transport_error(studentsvc::TransportFailure::timeout)) == BreakerVerdict::failure);
  // The service answered: busy (429), a request timeout (408), a client error or a body that will not decode.
  for (int s : {200, 400, 401, 403, 404, 408, 429, 501}) CHECK(breaker_verdict(status(s)) == BreakerVerdict::success);
  CHECK(breaker_verdict(transport_error(studentsvc::TransportFailure::body_too_large)) == BreakerVerdict::neutral);
  CHECK(breaker_verdict(studentsvc::make_error(ErrorKind::cancelled, "stop")) == BreakerVerdict::neutral);
}

TEST_CASE("the breaker opens after failure_threshold failures in a row, and a success resets the count", "[circuit]") {
  studentsvc::test::SimulatedTime time;
  auto b = breaker(time, 3);
  fail(b, 2);
  CHECK(!b.record(BreakerVerdict::success, false, 200));  // the count starts again
  fail(b, 2);
  CHECK(b.admit().allowed);
  CHECK(b.state() == CircuitState::closed);
  const auto opened = b.record(BreakerVerdict::failure, false, 503);
  REQUIRE(opened);
  CHECK(opened->state == CircuitState::open);
  CHECK(opened->consecutive_failures == 3);
  CHECK(opened->status == 503);
  CHECK(opened->cool_down == 30s);
  const auto refused = b.admit();
  CHECK_FALSE(refused.allowed);
  CHECK(refused.refusal.kind == ErrorKind::circuit_open);
  CHECK(refused.refusal.retryable);
  CHECK(refused.refusal.message == "circuit open after 3 consecutive failures (status 503); next try in 30 s");
  CHECK(to_string(refused.refusal) ==
        "circuit_open: circuit open after 3 consecutive failures (status 503); next try in 30 s (retryable)");
  // Neutral outcomes neither count nor reset.
  studentsvc::test::SimulatedTime t2;
  auto c = breaker(t2, 2);
  fail(c, 1);
  CHECK(!c.record(BreakerVerdict::neutral, false, 0));
  CHECK(c.record(BreakerVerdict::failure, false, 0));
}

TEST_CASE("after the cool-down exactly one probe goes, and others are refused while it is out", "[circuit]") {
  studentsvc::test::SimulatedTime time;
  auto b = breaker(time, 1, 30s);
  fail(b, 1);
  time.advance(28'500ms);
  auto early = b.admit();
  CHECK_FALSE(early.allowed);
  CHECK(early.refusal.message == "circuit open after 1 consecutive failure (transport error); next try in 2 s");
  time.advance(1'200ms);
  CHECK(b.admit().refusal.message.ends_with("next try in 300 ms"));
  time.advance(300ms);
  const auto probe = b.admit();
  CHECK(probe.allowed);
  CHECK(probe.probe);
  REQUIRE(probe.event);
  CHECK(probe.event->state == CircuitState::half_open);
  const auto second = b.admit();
  CHECK_FALSE(second.allowed);
  CHECK(second.refusal.message.ends_with("next try when the probe request in flight has answered"));
  // A late failure of a call let through before the breaker opened changes nothing.
  CHECK(!b.record(BreakerVerdict::failure, false, 0));
  CHECK(!b.record(BreakerVerdict::success, false, 200));
  CHECK(b.state() == CircuitState::half_open);
}

TEST_CASE("a probe's success closes the breaker", "[circuit]") {
  studentsvc::test::SimulatedTime time;
  auto b = breaker(time, 2, 1s);
  fail(b, 2);
  time.advance(1s);
  REQUIRE(b.admit().probe);
  const auto closed = b.record(BreakerVerdict::success, true, 200);
  REQUIRE(closed);
  CHECK(closed->state == CircuitState::closed);
  CHECK(b.state() == CircuitState::closed);
  for (int i = 0; i < 5; ++i) CHECK(b.admit().allowed);
  // The failure count started again from zero.
  fail(b, 1);
  CHECK(b.state() == CircuitState::closed);
}

TEST_CASE("a probe's failure opens the breaker again and restarts the cool-down", "[circuit]") {
  studentsvc::test::SimulatedTime time;
  auto b = breaker(time, 2, 10s);
  fail(b, 2);
  time.advance(10s);
  REQUIRE(b.admit().probe);
  const auto reopened = b.record(BreakerVerdict::failure, true, 502);
  REQUIRE(reopened);
  CHECK(reopened->state == CircuitState::open);
  CHECK(reopened->consecutive_failures == 1);
  const auto refused = b.admit();
  CHECK_FALSE(refused.allowed);
  CHECK(refused.refusal.message == "circuit open after the probe request failed (status 502); next try in 10 s");
  time.advance(9'999ms);
  CHECK_FALSE(b.admit().allowed);
  time.advance(1ms);
  CHECK(b.admit().probe);
}

TEST_CASE("a probe that never got an outcome (cancelled, not sent) lets the next caller probe", "[circuit]") {
  studentsvc::test::SimulatedTime time;
  auto b = breaker(time, 1, 1s);
  fail(b, 1);
  time.advance(1s);
  REQUIRE(b.admit().probe);
  CHECK_FALSE(b.admit().allowed);
  b.release_probe();
  CHECK(b.admit().probe);
  CHECK(!b.record(BreakerVerdict::neutral, true, 0));  // a cancelled probe: still half-open
  CHECK(b.state() == CircuitState::half_open);
  CHECK(b.admit().probe);
}

TEST_CASE("many threads after the cool-down: exactly one probe is let through", "[circuit][concurrency]") {
  studentsvc::test::SimulatedTime time;
  auto b = breaker(time, 1, 1s);
  fail(b, 1);
  time.advance(1s);  // before the threads start: they only read the clock
  std::atomic<int> allowed{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        const auto a = b.admit();
        (a.allowed ? allowed : refused)++;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(allowed.load() == 1);
  CHECK(refused.load() == 8 * 200 - 1);
}

TEST_CASE("Client: an open breaker refuses every form of call at once, with no attempt", "[circuit]") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  auto recorder = std::make_shared<CircuitRecorder>();
  studentsvc::test::LogCapture log;
  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "k";
  options.transport = fake;
  options.retry = studentsvc::RetryPolicy::none();
  options.instrumentation = recorder;
  options.logger = log.logger(studentsvc::LogLevel::info);
  options.circuit_breaker = CircuitBreakerOptions{2, 150ms};
  auto client = studentsvc::Client::create(options);
  REQUIRE(client);
  fake->fail("connect refused");
  fake->respond(503);
  CHECK(client->get_student("1234567").error().kind == ErrorKind::transport);
  CHECK(client->get_student("1234567").error().status == 503);
  REQUIRE(fake->request_count() == 2);

  const auto copy = *client;
  const auto blocking = copy.get_student("1234567");
  REQUIRE_FALSE(blocking);
  CHECK(blocking.error().kind == ErrorKind::circuit_open);
  CHECK(blocking.error().attempts == 0);
  CHECK(blocking.error().retryable);
  CHECK(blocking.error().message.starts_with("circuit open after 2 consecutive failures (status 503); next try in "));
  CHECK(client->current_student("jwt").error().kind == ErrorKind::circuit_open);
  CHECK(client->get_student_async("1234567").get().error().kind == ErrorKind::circuit_open);
  studentsvc::ConversationRequest conversation;
  conversation.method = "GET";
  CHECK(client->conversation(conversation).error().kind == ErrorKind::circuit_open);
  const std::vector<std::string> perms{"1234567", "2345678", "1234567"};
  for (const auto& r : client->get_students(perms)) CHECK(r.error().kind == ErrorKind::circuit_open);
  CHECK(fake->request_count() == 2);  // nothing more was sent

  auto events = recorder->snapshot();
  REQUIRE(events.size() == 1);
  CHECK(events[0].state == CircuitState::open);
  bool warned = false;
  for (const auto& [level, text] : log.entries()) {
    warned = warned || (level == studentsvc::LogLevel::warning &&
                        text == "circuit breaker: open after 2 consecutive failure(s) (status 503); calls fail at "
                                "once for 150 ms");
  }
  CHECK(warned);

  // After the cool-down the probe succeeds and closes the breaker.
  std::this_thread::sleep_for(200ms);
  fake->respond(200, ana);
  CHECK(client->get_student("1234567"));
  events = recorder->snapshot();
  REQUIRE(events.size() == 3);
  CHECK(events[1].state == CircuitState::half_open);
  CHECK(events[2].state == CircuitState::closed);
  bool closed_logged = false;
  for (const auto& [level, text] : log.entries()) {
    closed_logged = closed_logged || (level == studentsvc::LogLevel::info &&
                                      text == "circuit breaker: closed, the probe request succeeded");
  }
  CHECK(closed_logged);
}

TEST_CASE("Client: retries count as attempts, and once the breaker opens the next retry is not sent", "[circuit]") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>(
      [](const studentsvc::HttpRequest&) -> Result<HttpResponse> { return HttpResponse{502, {}, {}}; });
  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "k";
  options.transport = fake;
  options.retry = studentsvc::test::fast_retry(5);
  options.circuit_breaker = CircuitBreakerOptions{2, 60s};
  const studentsvc::Client client(options);
  const auto r = client.get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::circuit_open);
  CHECK(r.error().attempts == 2);
  CHECK(fake->request_count() == 2);
  const auto again = client.get_student("1234567");
  CHECK(again.error().kind == ErrorKind::circuit_open);
  CHECK(again.error().attempts == 0);
  CHECK(fake->request_count() == 2);
}

TEST_CASE("Client: 400, 401, 404, 408, 429 and a decode error never open the breaker", "[circuit]") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "k";
  options.transport = fake;
  options.retry = studentsvc::RetryPolicy::none();
  options.circuit_breaker = CircuitBreakerOptions{1, 60s};
  const studentsvc::Client client(options);
  for (int s : {400, 401, 404, 408, 429}) fake->respond(s);
  fake->respond(200, "<html>not json</html>");
  for (int i = 0; i < 6; ++i) CHECK(client.get_student("1234567").error().kind != ErrorKind::circuit_open);
  fake->respond(504);
  CHECK(client.get_student("1234567").error().status == 504);
  CHECK(client.get_student("1234567").error().kind == ErrorKind::circuit_open);
}

TEST_CASE("AttemptMetrics counts the breaker's transitions and keeps its state", "[circuit][metrics]") {
  studentsvc::AttemptMetrics metrics;
  CHECK(metrics.prometheus_text().empty());
  metrics.on_circuit(CircuitEvent{CircuitState::open, 5, 0, 30s});
  auto text = metrics.prometheus_text();
  CHECK(text.find("studentsvc_circuit_transitions_total{to=\"open\"} 1\n") != std::string::npos);
  CHECK(text.find("studentsvc_circuit_transitions_total{to=\"closed\"} 0\n") != std::string::npos);
  CHECK(text.find("# TYPE studentsvc_circuit_state gauge\nstudentsvc_circuit_state 1\n") != std::string::npos);
  metrics.on_circuit(CircuitEvent{CircuitState::half_open, 0, 0, 0ms});
  CHECK(metrics.prometheus_text().find("studentsvc_circuit_state 2\n") != std::string::npos);
  metrics.on_circuit(CircuitEvent{CircuitState::closed, 0, 0, 0ms});
  text = metrics.prometheus_text();
  CHECK(text.find("studentsvc_circuit_transitions_total{to=\"closed\"} 1\n") != std::string::npos);
  CHECK(text.find("studentsvc_circuit_state 0\n") != std::string::npos);
  CHECK(metrics.circuit_transitions(CircuitState::open) == 1);
  CHECK(metrics.circuit_transitions(CircuitState::closed) == 1);
}

TEST_CASE("Client::create refuses breaker and hedging options that cannot work", "[circuit][options]") {
  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "k";
  options.transport = std::make_shared<studentsvc::testing::FakeTransport>();
  auto refused = [&](const std::string& why) {
    auto c = studentsvc::Client::create(options);
    return !c && c.error().kind == ErrorKind::invalid_argument && c.error().message == why;
  };
  options.circuit_breaker = CircuitBreakerOptions{0, 1s};
  CHECK(refused("circuit_breaker.failure_threshold must be at least 1"));
  options.circuit_breaker = CircuitBreakerOptions{1, 0ms};
  CHECK(refused("circuit_breaker.cool_down must be positive"));
  options.circuit_breaker = CircuitBreakerOptions{1, -5ms};
  CHECK(refused("circuit_breaker.cool_down must be positive"));
  options.circuit_breaker.reset();
  options.hedging = studentsvc::HedgingOptions{0ms};
  CHECK(refused("hedging.delay must be positive"));
  options.hedging = studentsvc::HedgingOptions{50ms};
  options.circuit_breaker = CircuitBreakerOptions{1, 1ms};
  CHECK(studentsvc::Client::create(options));
  // A Client built directly refuses every call the same way.
  options.hedging = studentsvc::HedgingOptions{-1ms};
  const studentsvc::Client direct(options);
  CHECK(direct.get_student("1234567").error().message == "hedging.delay must be positive");
}

}  // namespace circuit_breaker_test

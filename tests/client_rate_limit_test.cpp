// The client-wide rate limit, retry budget and Retry-After pause
// (ClientOptions::rate_limit and retry_budget) end to end: the real
// CurlTransport against a MockServer that records when each request arrived,
// and an instrumentation hook that records when each attempt started.
// Lower bounds on spacing only; upper bounds are generous (a loaded machine).

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/fast_retry.hpp"
#include "support/log_capture.hpp"
#include "support/many_students.hpp"
#include "support/scripted_server.hpp"
#include "support/wait.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace client_rate_limit_test {

using namespace std::chrono_literals;
using studentsvc::Client;
using studentsvc::ErrorKind;
using studentsvc::test::Script;
using studentsvc::test::ScriptedServer;

namespace {

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Start k (0-based) may come no earlier than (k - burst + 1) intervals after
// the first token: a token bucket of `rate` per second and `burst`. Measured
// from `before`, a time taken before the first call (so before the first
// token), never from the first recorded start: a loaded machine may run the
// first attempt's hook late, and spacing between recorded times then shrinks.
// The hook runs after the token's wait; 5 ms for timer rounding.
void check_never_faster(std::chrono::steady_clock::time_point before,
                        const std::vector<std::chrono::steady_clock::time_point>& starts, double rate, int burst) {
  REQUIRE_FALSE(starts.empty());
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const double earliest = std::max(0.0, (static_cast<double>(k) - burst + 1) / rate) - 0.005;
    INFO("attempt start " << k);
    CHECK(seconds_between(before, starts[k]) >= earliest);
  }
}

// On the wire, the last request arrives no earlier than the bucket's time for
// the requests beyond the burst, counted from before the first call.
void check_span_on_the_wire(std::chrono::steady_clock::time_point before,
                            const std::vector<std::chrono::steady_clock::time_point>& arrivals, double rate,
                            int burst) {
  REQUIRE_FALSE(arrivals.empty());
  const double least = (static_cast<double>(arrivals.size()) - burst) / rate - 0.005;
  CHECK(seconds_between(before, *std::max_element(arrivals.begin(), arrivals.end())) >= least);
}

// Records when each attempt starts, in order, from any thread.
class StartTimes : public studentsvc::Instrumentation {
 public:
  void on_attempt(const studentsvc::AttemptEvent& event) override {
    if (event.phase != studentsvc::AttemptPhase::start) return;
    const std::lock_guard lock(mutex_);
    starts_.push_back(std::chrono::steady_clock::now());
  }
  std::vector<std::chrono::steady_clock::time_point> starts() const {
    const std::lock_guard lock(mutex_);
    auto copy = starts_;
    std::sort(copy.begin(), copy.end());
    return copy;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::chrono::steady_clock::time_point> starts_;
};

}  // namespace

TEST_CASE("a rate limit spaces a batch's requests, however many are in flight", "[rate_limit][e2e]") {
  studentsvc::testing::MockServerOptions mock;
  const auto perms = studentsvc::test::add_students(mock, 24);  // distinct: a batch looks each up once
  ScriptedServer server(Script{}, mock);
  auto options = server.options();
  options.rate_limit.requests_per_second = 40;
  options.rate_limit.burst = 3;
  const auto starts = std::make_shared<StartTimes>();
  options.instrumentation = starts;
  const Client client(options);
  studentsvc::BatchOptions batch;
  batch.max_concurrency = 8;
  const auto start = std::chrono::steady_clock::now();
  const auto results = client.get_students(perms, batch);
  for (const auto& r : results) REQUIRE(r.has_value());
  const auto arrivals = server.arrivals();
  REQUIRE(arrivals.size() == perms.size());
  REQUIRE(starts->starts().size() == perms.size());
  check_never_faster(start, starts->starts(), 40, 3);
  check_span_on_the_wire(start, arrivals, 40, 3);
  // (24 - 3) / 40 s at least; far less than sequential-at-a-crawl.
  CHECK(seconds_between(start, std::chrono::steady_clock::now()) >= 0.5);
  CHECK(seconds_between(start, std::chrono::steady_clock::now()) < 10.0);
}

TEST_CASE("one rate limit is shared by the client's threads, copies, async calls and batches", "[rate_limit][e2e]") {
  studentsvc::testing::MockServerOptions mock;
  const auto perms = studentsvc::test::add_students(mock, 10);  // distinct: a batch looks each up once
  ScriptedServer server(Script{}, mock);
  auto options = server.options();
  options.rate_limit.requests_per_second = 50;
  options.rate_limit.burst = 2;
  const auto starts = std::make_shared<StartTimes>();
  options.instrumentation = starts;
  const Client client(options);
  const Client copy = client;  // shares the limit
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::future<studentsvc::Result<studentsvc::StudentExtended>>> pending;
  for (int i = 0; i < 10; ++i) pending.push_back(client.get_student_async("1234567"));
  int blocking_ok = 0;  // Catch's assertions are not thread-safe: counted here, checked after join
  std::thread blocking([&] {
    for (int i = 0; i < 10; ++i) blocking_ok += copy.get_student("2345678").has_value() ? 1 : 0;
  });
  for (const auto& r : copy.get_students(perms)) REQUIRE(r.has_value());
  blocking.join();
  CHECK(blocking_ok == 10);
  for (auto& f : pending) REQUIRE(f.get().has_value());
  const auto arrivals = server.arrivals();
  REQUIRE(arrivals.size() == 30);
  REQUIRE(starts->starts().size() == 30);
  check_never_faster(start, starts->starts(), 50, 2);
  check_span_on_the_wire(start, arrivals, 50, 2);
}

TEST_CASE("a 429 with Retry-After pauses the whole client, not one lookup", "[rate_limit][e2e]") {
  Script script;
  script.failures = 1;
  script.status = 429;
  script.retry_after = [] { return std::string("1"); };
  ScriptedServer server(script);
  // A generous limit: only the pause should hold anyone back.
  auto options = server.options(studentsvc::test::fast_retry(3, 5s));
  options.rate_limit.requests_per_second = 1000;
  options.rate_limit.burst = 100;
  const studentsvc::test::LogCapture log;
  options.logger = log.logger(studentsvc::LogLevel::info);
  const Client client(options);
  auto first = client.get_student_async("1234567");  // answered 429, Retry-After: 1
  // The client has taken the 429 in (and so paused) once it logs its wait to
  // retry: a sleep after the arrival only usually covered that on a loaded machine.
  REQUIRE(studentsvc::test::eventually([&] {
    for (const auto& line : log.texts()) {
      if (line.find("failed (status 429)") != std::string::npos) return true;
    }
    return false;
  }));
  const auto second = client.get_student("2345678");
  REQUIRE(second.has_value());
  REQUIRE(first.get().has_value());
  const auto arrivals = server.arrivals();
  REQUIRE(arrivals.size() == 3);
  // Both later requests (the retry and the other call) wait out the second.
  CHECK(seconds_between(arrivals[0], arrivals[1]) >= 0.95);
  CHECK(seconds_between(arrivals[0], arrivals[2]) >= 0.95);
}

TEST_CASE("a spent retry budget ends a call with its last outcome, unretried", "[rate_limit][e2e]") {
  Script script;
  script.failures = 1000;
  script.status = 503;
  ScriptedServer server(script);
  auto options = server.options(studentsvc::test::fast_retry(4));
  studentsvc::RetryBudgetOptions budget;
  budget.ratio = 0;
  budget.min_retries = 2;  // two retries in the window, then none
  options.retry_budget = budget;
  const Client client(options);
  const auto a = client.get_student("1234567");  // 1 + 2 retries: the budget is spent
  REQUIRE_FALSE(a.has_value());
  CHECK(a.error().status == 503);
  const auto b = client.get_student("1234567");  // first attempt only
  REQUIRE_FALSE(b.has_value());
  CHECK(b.error().attempts == 1);
  const auto c = client.get_student_async("1234567").get();  // the async path shares the budget
  REQUIRE_FALSE(c.has_value());
  CHECK(c.error().attempts == 1);
  CHECK(server.arrivals().size() == 5);
}

TEST_CASE("rate limit and retry budget settings are checked when the client is built", "[rate_limit]") {
  studentsvc::ClientOptions base;
  base.base_url = "https://registrar.example.edu";
  base.auth.api_key = "k";
  const auto refused = [&](auto&& change, std::string_view field) {
    auto options = base;
    change(options);
    const auto client = Client::create(options);
    REQUIRE_FALSE(client.has_value());
    CHECK(client.error().kind == ErrorKind::invalid_argument);
    CHECK(client.error().message.find(field) != std::string::npos);
  };
  refused([](auto& o) { o.rate_limit.requests_per_second = -1; }, "rate_limit.requests_per_second");
  refused([](auto& o) { o.rate_limit.requests_per_second = std::numeric_limits<double>::quiet_NaN(); },
          "rate_limit.requests_per_second");
  refused([](auto& o) { o.rate_limit.requests_per_second = 5, o.rate_limit.burst = 0; }, "rate_limit.burst");
  refused([](auto& o) { o.retry_budget = studentsvc::RetryBudgetOptions{-0.5, 10, 10s}; }, "retry_budget.ratio");
  refused([](auto& o) { o.retry_budget = studentsvc::RetryBudgetOptions{0.2, -1, 10s}; }, "retry_budget.min_retries");
  refused([](auto& o) { o.retry_budget = studentsvc::RetryBudgetOptions{0.2, 10, 1ms}; }, "retry_budget.window");
  auto fine = base;
  fine.rate_limit.requests_per_second = 0;  // off
  CHECK(Client::create(fine).has_value());
}

}  // namespace client_rate_limit_test

// Unit tests for detail/limits/rate_limit.hpp in simulated time: the token bucket's
// spacing and burst, the retry budget's ratio, minimum and window, the
// client-wide pause after a 429/503 Retry-After, and sharing across threads.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include <studentsvc/detail/limits/rate_limit.hpp>

#include "support/simulated_time.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace rate_limit_test {

using namespace std::chrono_literals;
using studentsvc::detail::Admission;
using studentsvc::detail::AttemptKind;
using studentsvc::detail::ClientThrottle;
using studentsvc::detail::RateLimitOptions;
using studentsvc::detail::RetryBudgetOptions;
using studentsvc::test::SimulatedTime;

namespace {

// The waits of `n` first attempts asked for at the same simulated instant.
std::vector<std::chrono::milliseconds> waits_of(ClientThrottle& throttle, int n) {
  std::vector<std::chrono::milliseconds> out;
  for (int i = 0; i < n; ++i) {
    const Admission a = throttle.admit(AttemptKind::first);
    REQUIRE(a.allowed);
    out.push_back(a.wait);
  }
  return out;
}

}  // namespace

TEST_CASE("rate limit: off by default, nothing waits", "[rate_limit]") {
  SimulatedTime time;
  ClientThrottle throttle({}, std::nullopt, time.clock());
  for (int i = 0; i < 1000; ++i) {
    const Admission a = throttle.admit(i % 2 == 0 ? AttemptKind::first : AttemptKind::retry);
    CHECK(a.allowed);
    CHECK(a.wait == 0ms);
  }
  CHECK(throttle.pause_remaining() == 0ms);
}

TEST_CASE("rate limit: a burst goes at once, then one per interval", "[rate_limit]") {
  SimulatedTime time;
  ClientThrottle throttle(RateLimitOptions{10.0, 3}, std::nullopt, time.clock());
  const auto w = waits_of(throttle, 6);
  CHECK(w == std::vector<std::chrono::milliseconds>{0ms, 0ms, 0ms, 100ms, 200ms, 300ms});
}

TEST_CASE("rate limit: tokens come back with quiet time, up to the burst only", "[rate_limit]") {
  SimulatedTime time;
  ClientThrottle throttle(RateLimitOptions{10.0, 2}, std::nullopt, time.clock());
  CHECK(waits_of(throttle, 2) == std::vector<std::chrono::milliseconds>{0ms, 0ms});
  time.advance(100ms);  // one token back
  CHECK(waits_of(throttle, 2) == std::vector<std::chrono::milliseconds>{0ms, 100ms});
  time.advance(60s);  // a long quiet spell still gives only `burst`
  CHECK(waits_of(throttle, 3) == std::vector<std::chrono::milliseconds>{0ms, 0ms, 100ms});
}

TEST_CASE("rate limit: callers that wait their turn are sent at the configured rate", "[rate_limit]") {
  SimulatedTime time;
  ClientThrottle throttle(RateLimitOptions{50.0, 1}, std::nullopt, time.clock());
  std::vector<std::chrono::milliseconds> sent_at;
  for (int i = 0; i < 100; ++i) {
    const Admission a = throttle.admit(AttemptKind::first);
    REQUIRE(a.allowed);
    time.advance(a.wait);  // the caller waits its turn, as the call pipeline does
    sent_at.push_back(time.elapsed());
  }
  CHECK(sent_at.front() == 0ms);
  CHECK(sent_at.back() == 99 * 20ms);  // 50 per second, exactly
  for (std::size_t i = 1; i < sent_at.size(); ++i) CHECK(sent_at[i] - sent_at[i - 1] == 20ms);
}

TEST_CASE("rate limit: odd settings are taken safely", "[rate_limit]") {
  SimulatedTime time;
  SECTION("zero, negative, NaN and infinite rates mean no limit") {
    for (const double rate : {0.0, -5.0, std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity()}) {
      ClientThrottle throttle(RateLimitOptions{rate, 1}, std::nullopt, time.clock());
      CHECK(waits_of(throttle, 5) == std::vector<std::chrono::milliseconds>(5, 0ms));
    }
  }
  SECTION("a burst below 1 is 1") {
    ClientThrottle throttle(RateLimitOptions{10.0, -3}, std::nullopt, time.clock());
    CHECK(waits_of(throttle, 2) == std::vector<std::chrono::milliseconds>{0ms, 100ms});
  }
  SECTION("a tiny rate gives long but finite waits") {
    ClientThrottle throttle(RateLimitOptions{1e-6, 1}, std::nullopt, time.clock());
    const auto w = waits_of(throttle, 2);
    CHECK(w[0] == 0ms);
    CHECK(w[1] == std::chrono::milliseconds{1'000'000'000});  // 10^6 s
  }
  SECTION("a huge rate never waits a whole millisecond per request") {
    ClientThrottle throttle(RateLimitOptions{1e12, 1}, std::nullopt, time.clock());
    const auto w = waits_of(throttle, 1000);
    CHECK(w.back() <= 1ms);
  }
}

TEST_CASE("retry budget: the minimum, then the ratio of first attempts", "[rate_limit][retry_budget]") {
  SimulatedTime time;
  ClientThrottle throttle({}, RetryBudgetOptions{0.2, 3, 10s}, time.clock());
  // With no first attempts only the minimum (3) may retry.
  int allowed = 0;
  for (int i = 0; i < 10; ++i) allowed += throttle.admit(AttemptKind::retry).allowed ? 1 : 0;
  CHECK(allowed == 3);
  CHECK(throttle.retries_refused() == 7);
  // 50 first attempts add 0.2 * 50 = 10 more.
  for (int i = 0; i < 50; ++i) CHECK(throttle.admit(AttemptKind::first).allowed);
  allowed = 0;
  for (int i = 0; i < 30; ++i) allowed += throttle.admit(AttemptKind::retry).allowed ? 1 : 0;
  CHECK(allowed == 10);
  // First attempts are never refused by the budget.
  CHECK(throttle.admit(AttemptKind::first).allowed);
}

TEST_CASE("retry budget: counts leave the window and the budget refills", "[rate_limit][retry_budget]") {
  SimulatedTime time;
  ClientThrottle throttle({}, RetryBudgetOptions{0.0, 2, 10s}, time.clock());
  CHECK(throttle.admit(AttemptKind::retry).allowed);
  CHECK(throttle.admit(AttemptKind::retry).allowed);
  CHECK_FALSE(throttle.admit(AttemptKind::retry).allowed);
  time.advance(9s);
  CHECK_FALSE(throttle.admit(AttemptKind::retry).allowed);  // still inside the window
  time.advance(1s);
  CHECK(throttle.admit(AttemptKind::retry).allowed);  // the first two have left it
  CHECK(throttle.admit(AttemptKind::retry).allowed);
  CHECK_FALSE(throttle.admit(AttemptKind::retry).allowed);
}

TEST_CASE("retry budget: a retry storm adds at most the ratio", "[rate_limit][retry_budget]") {
  // Every first attempt fails and wants up to 3 retries: 1,000 lookups over 100 s.
  SimulatedTime time;
  ClientThrottle throttle({}, RetryBudgetOptions{0.1, 5, 10s}, time.clock());
  long long firsts = 0;
  long long retries = 0;
  for (int i = 0; i < 1000; ++i) {
    ++firsts;
    REQUIRE(throttle.admit(AttemptKind::first).allowed);
    for (int r = 0; r < 3; ++r) {
      if (!throttle.admit(AttemptKind::retry).allowed) break;
      ++retries;
    }
    time.advance(100ms);
  }
  const double ratio = static_cast<double>(retries) / static_cast<double>(firsts);
  CAPTURE(retries, firsts);
  CHECK(ratio <= 0.1 + 0.06);  // the ratio plus the minimum per window (5 per 10 s, 10 windows)
  CHECK(ratio >= 0.1);
}

TEST_CASE("retry budget: with a rate limit, a refused retry takes no token", "[rate_limit][retry_budget]") {
  SimulatedTime time;
  ClientThrottle throttle(RateLimitOptions{10.0, 1}, RetryBudgetOptions{0.0, 0, 10s}, time.clock());
  CHECK(throttle.admit(AttemptKind::first).wait == 0ms);
  CHECK_FALSE(throttle.admit(AttemptKind::retry).allowed);
  CHECK(throttle.admit(AttemptKind::first).wait == 100ms);  // the next token, not the one after
}

TEST_CASE("pause: a 429 or 503 Retry-After holds every caller, then the rate resumes", "[rate_limit][pause]") {
  SimulatedTime time;
  ClientThrottle throttle(RateLimitOptions{10.0, 2}, std::nullopt, time.clock());
  CHECK(throttle.pause_for_status(503, 5s, 60s) == 5s);
  CHECK(throttle.pause_remaining() == 5s);
  // Every caller, first attempts and retries alike, waits for the pause's end;
  // after it, the bucket's burst and then its spacing apply (no pile-up).
  const auto w = waits_of(throttle, 4);
  CHECK(w == std::vector<std::chrono::milliseconds>{5000ms, 5000ms, 5100ms, 5200ms});
  time.advance(2s);
  CHECK(throttle.pause_remaining() == 3s);
  time.advance(3s);
  CHECK(throttle.pause_remaining() == 0ms);
}

TEST_CASE("pause: the longer pause wins, the cap applies, other answers pause nothing", "[rate_limit][pause]") {
  SimulatedTime time;
  ClientThrottle throttle({}, std::nullopt, time.clock());
  CHECK(throttle.pause_for_status(429, 2s, 60s) == 2s);
  CHECK(throttle.pause_for_status(429, 1s, 60s) == 1s);
  CHECK(throttle.pause_remaining() == 2s);  // a shorter one does not cut it
  CHECK(throttle.pause_for_status(503, 10min, 30s) == 30s);  // capped at max_retry_after
  CHECK(throttle.pause_remaining() == 30s);
  CHECK(throttle.pause_for_status(500, 5min, 10min) == 0ms);  // not 429/503
  CHECK(throttle.pause_for_status(503, -1ms, 10min) == 0ms);  // no Retry-After
  CHECK(throttle.pause_for_status(429, 5s, -1s) == 0ms);      // a negative cap is zero
  CHECK(throttle.pause_remaining() == 30s);
  CHECK(throttle.admit(AttemptKind::first).wait == 30s);
  throttle.pause_for(-5s);  // ignored
  CHECK(throttle.pause_remaining() == 30s);
  throttle.pause_for(std::chrono::milliseconds::max());  // saturates, no overflow
  CHECK(throttle.pause_remaining() > std::chrono::hours{24 * 365});
}

TEST_CASE("the throttle is shared by many threads: every token handed out once", "[rate_limit][concurrency]") {
  // The clock is frozen (no sleeps): 8 threads x 100 admissions of a 100/s
  // bucket must get exactly the waits 0, 10, 20, ... ms, each once.
  SimulatedTime time;
  const studentsvc::detail::RetryClock frozen{[] { return std::chrono::steady_clock::time_point{}; },
                                              [] { return std::chrono::system_clock::time_point{}; },
                                              [](std::chrono::milliseconds) {}};
  ClientThrottle throttle(RateLimitOptions{100.0, 1}, RetryBudgetOptions{0.5, 0, 10s}, frozen);
  std::mutex mutex;
  std::vector<long long> waits;
  long long retries_allowed = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        const Admission first = throttle.admit(AttemptKind::first);
        const Admission retry = throttle.admit(AttemptKind::retry);
        const std::lock_guard lock(mutex);
        waits.push_back(first.wait.count());
        if (retry.allowed) {
          ++retries_allowed;
          waits.push_back(retry.wait.count());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  std::sort(waits.begin(), waits.end());
  for (std::size_t i = 0; i < waits.size(); ++i) CHECK(waits[i] == static_cast<long long>(i) * 10);
  CHECK(retries_allowed == 400);  // exactly half of 800 first attempts
  CHECK(throttle.retries_refused() == 400);
}

}  // namespace rate_limit_test

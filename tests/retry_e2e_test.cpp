// Retries end to end (CurlTransport ↔ MockServer / raw sockets on 127.0.0.1):
// Retry-After in both forms and its cap, giving up with the last error, the
// statuses that are never retried, non-idempotent conversation, the total time
// bound, and deterministic jitter under a seed.

#include <ctime>

#include <catch2/catch.hpp>

#include <atomic>
#include <optional>
#include <chrono>
#include <string>
#include <vector>

#include <httplib.h>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/fast_retry.hpp"
#include "support/log_capture.hpp"
#include "support/raw_server.hpp"
#include "support/scripted_server.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace retry_e2e_test {

using namespace std::chrono_literals;
using studentsvc::test::fast_retry;
using studentsvc::test::Script;
using studentsvc::test::ScriptedServer;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string http_date(std::chrono::system_clock::time_point t, const char* format = "%a, %d %b %Y %H:%M:%S GMT") {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

/// A policy whose first backoff (up to a day, over 30 s with this seed) is past its 30 s bound: the call
/// only retries when it reads the server's Retry-After. Proves a Retry-After
/// was understood without waiting for it (a date in the past means "now").
studentsvc::RetryPolicy retry_only_on_retry_after() {
  studentsvc::RetryPolicy p;
  p.max_attempts = 3;
  p.initial_backoff = std::chrono::hours{24};
  p.max_backoff = std::chrono::hours{24};
  p.max_total_time = 30s;
  p.jitter_seed = 1;
  studentsvc::JitterSource probe(p.jitter_seed);
  REQUIRE(probe.backoff(p, 1) > p.max_total_time);
  return p;
}

}  // namespace

TEST_CASE("503 with Retry-After in seconds, then 200: succeeds after the asked wait", "[retry]") {
  // The one test that waits a real second: a server's `Retry-After: 1` is the behaviour.
  ScriptedServer server(Script{1, 503, [] { return std::string("1"); }});
  const studentsvc::Client client(server.options(fast_retry(3, 2s)));
  const auto start = Clock::now();
  const auto result = client.get_student("1234567");
  const double took = seconds(Clock::now() - start);
  REQUIRE(result);
  CHECK(result->first_name == "Ana");
  const auto times = server.arrivals();
  REQUIRE(times.size() == 2);
  CHECK(seconds(times[1] - times[0]) >= 0.95);  // waited what the server asked (not the 1-4 ms backoff)
  CHECK(took < 1.0 + 5.0);
}

TEST_CASE("429 with Retry-After as an HTTP-date, then 200: the date is read", "[retry][http-date]") {
  // A date in the past means "retry now"; the backoff alone would pass the bound.
  ScriptedServer server(
      Script{1, 429, [] { return http_date(std::chrono::system_clock::now() - std::chrono::hours{1}); }});
  const auto result = studentsvc::Client(server.options(retry_only_on_retry_after())).current_student("mock-jwt-ana");
  REQUIRE(result);
  CHECK(result->perm == "1234567");
  CHECK(server.arrivals().size() == 2);
}

TEST_CASE("a Retry-After beyond the cap waits only the cap", "[retry]") {
  ScriptedServer server(Script{1, 503, [] { return std::string("3600"); }});
  const auto start = Clock::now();
  const auto result = studentsvc::Client(server.options(fast_retry(3, 300ms))).get_student("2345678");
  const double took = seconds(Clock::now() - start);
  REQUIRE(result);
  const auto times = server.arrivals();
  REQUIRE(times.size() == 2);
  CHECK(seconds(times[1] - times[0]) >= 0.29);
  CHECK(took < 0.3 + 5.0);  // not the hour it asked for
}

TEST_CASE("an error that is returned still carries the server's Retry-After", "[retry]") {
  ScriptedServer server(Script{100, 503, [] { return std::string("7"); }});
  const auto result = studentsvc::Client(server.options(studentsvc::RetryPolicy::none())).get_student("1234567");
  REQUIRE_FALSE(result);
  CHECK(result.error().status == 503);
  CHECK(result.error().retryable);
  CHECK(result.error().retry_after_ms == 7000);
  CHECK(result.error().attempts == 1);
}

TEST_CASE("repeated 500s give up after max_attempts with the last error", "[retry]") {
  ScriptedServer server(Script{100, 500, {}});
  const auto result = studentsvc::Client(server.options(fast_retry(4))).get_student("1234567");
  REQUIRE_FALSE(result);
  CHECK(result.error().kind == studentsvc::ErrorKind::http_status);
  CHECK(result.error().status == 500);
  CHECK(result.error().message == "failure 4");  // the last answer, not the first
  CHECK(result.error().attempts == 4);
  CHECK(result.error().retryable);
  CHECK(server.arrivals().size() == 4);
}

TEST_CASE("400, 401 and 404 are never retried", "[retry]") {
  const int status = GENERATE(400, 401, 404);
  ScriptedServer server(Script{100, status, {}});
  const auto result = studentsvc::Client(server.options(fast_retry(5))).get_student("1234567");
  REQUIRE_FALSE(result);
  CHECK(result.error().status == status);
  CHECK_FALSE(result.error().retryable);
  CHECK(result.error().attempts == 1);
  CHECK(server.arrivals().size() == 1);
}

TEST_CASE("the mock's own 400, 401 and 404 answers are sent once", "[retry]") {
  MockServer server;
  auto options = server.client_options();
  options.retry = fast_retry(5);
  SECTION("404 unknown perm") {
    const auto r = studentsvc::Client(options).get_student("7654321");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == studentsvc::ErrorKind::not_found);
  }
  SECTION("401 wrong API key") {
    options.auth.api_key = "wrong-key";
    const auto r = studentsvc::Client(options).get_student("1234567");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == studentsvc::ErrorKind::unauthorized);
  }
  SECTION("400 unsupported version") {
    options.api_version = "9.9";
    const auto r = studentsvc::Client(options).get_student("1234567");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == studentsvc::ErrorKind::bad_request);
  }
  CHECK(server.request_count() == 1);
}

TEST_CASE("a non-idempotent conversation POST is not retried unless marked idempotent", "[retry]") {
  std::atomic<int> calls{0};
  MockServerOptions mo;
  mo.conversation = [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.status = 503;
    res.set_content(R"({"message":"busy"})", "application/json");
  };
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = fast_retry(3);
  const studentsvc::Client client(options);

  studentsvc::ConversationRequest post;
  post.method = "POST";
  post.body = R"({"text":"hello"})";
  const auto once = client.conversation(post);
  REQUIRE_FALSE(once);
  CHECK(once.error().status == 503);
  CHECK(once.error().attempts == 1);
  CHECK(calls == 1);

  post.idempotent = true;
  const auto retried = client.conversation(post);
  REQUIRE_FALSE(retried);
  CHECK(retried.error().attempts == 3);
  CHECK(calls == 4);
}

TEST_CASE("a conversation POST whose connection drops is not resent", "[retry]") {
  // The request may have been processed: only an idempotent call may be repeated.
  studentsvc::test::RawServer raw([](int fd, int) {
    (void)studentsvc::test::RawServer::read_request(fd);  // then close without answering
  });
  studentsvc::ClientOptions options;
  options.base_url = raw.base_url();
  options.allow_insecure_loopback = true;
  options.auth.api_key = "k";
  options.retry = fast_retry(3);
  const studentsvc::Client client(options);
  studentsvc::ConversationRequest post;
  post.method = "POST";
  post.body = "{}";
  const auto r = client.conversation(post);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == studentsvc::ErrorKind::transport);
  CHECK(r.error().attempts == 1);
  CHECK(raw.connections() == 1);

  // A GET is idempotent: the same fault is retried.
  const auto get = client.get_student("1234567");
  REQUIRE_FALSE(get);
  CHECK(get.error().attempts == 3);
  CHECK(raw.connections() == 4);
}

TEST_CASE("transport failures on an idempotent call are retried until one succeeds", "[retry]") {
  using studentsvc::test::RawServer;
  RawServer raw([](int fd, int connection) {
    if (RawServer::read_request(fd).empty()) return;
    if (connection < 2) return;  // the first two connections close with no response
    RawServer::write_all(fd, RawServer::response(
                                 200, R"({"perm":"1234567","firstName":"Ana","lastName":"N","email":"a@x.edu"})",
                                 "Connection: close\r\n"));
  });
  studentsvc::ClientOptions options;
  options.base_url = raw.base_url();
  options.allow_insecure_loopback = true;
  options.auth.api_key = "k";
  options.retry = fast_retry(3);
  const auto r = studentsvc::Client(options).get_student("1234567");
  REQUIRE(r);
  CHECK(r->first_name == "Ana");
  CHECK(raw.connections() == 3);
}

TEST_CASE("the total time bound holds whatever the attempts and Retry-After say", "[retry][total]") {
  // Retry-After: 1 under a 1.5 s bound: a second attempt after 1 s, then the next wait would pass it.
  ScriptedServer server(Script{1000, 503, [] { return std::string("1"); }});
  auto policy = fast_retry(50, 5s);
  policy.max_total_time = 1500ms;
  const auto start = Clock::now();
  const auto result = studentsvc::Client(server.options(policy)).get_student("1234567");
  const double took = seconds(Clock::now() - start);
  REQUIRE_FALSE(result);
  CHECK(result.error().status == 503);
  CHECK(took < 1.5 + 5.0);
  CHECK(result.error().attempts >= 1);
  CHECK(result.error().attempts <= 2);
}

TEST_CASE("the total time bound also cuts an attempt that stalls", "[retry][total]") {
  using studentsvc::test::RawServer;
  RawServer raw([&raw](int fd, int) {
    (void)RawServer::read_request(fd);
    raw.sleep_unless_stopped(30s);
  });
  studentsvc::ClientOptions options;
  options.base_url = raw.base_url();
  options.allow_insecure_loopback = true;
  options.auth.api_key = "k";
  options.timeout = 300ms;
  options.retry = fast_retry(20);
  options.retry.max_total_time = 700ms;
  const auto start = Clock::now();
  const auto result = studentsvc::Client(options).get_student("1234567");
  const double took = seconds(Clock::now() - start);
  REQUIRE_FALSE(result);
  CHECK(result.error().kind == studentsvc::ErrorKind::transport);
  CHECK(took >= 0.5);        // it waited for the attempts...
  CHECK(took < 0.7 + 5.0);   // ...and not 20 of 300 ms each
  CHECK(result.error().attempts >= 2);
}

TEST_CASE("jitter is deterministic under a seeded generator and bounded by the backoff", "[retry][jitter]") {
  // The engine's own test (retry_test) checks every wait on simulated time; this
  // one proves a Client's seed reaches it, through CurlTransport.
  auto logged_waits = [](std::optional<std::uint64_t> seed) {
    ScriptedServer server(Script{1000, 500, {}});
    auto policy = fast_retry(6);
    policy.initial_backoff = 2ms;
    policy.max_backoff = 6ms;
    policy.jitter_seed = seed;
    auto options = server.options(policy);
    const studentsvc::test::LogCapture logs;
    options.logger = logs.logger(studentsvc::LogLevel::info);
    CHECK_FALSE(studentsvc::Client(options).get_student("1234567"));
    std::vector<long> waits;
    for (const auto& line : logs.texts()) {
      // "... waiting 3 ms" (no std::regex: GCC 12 warns inside it under ASan).
      const auto at = line.find("waiting ");
      if (at == std::string::npos) continue;
      waits.push_back(std::stol(line.substr(at + 8)));
    }
    return waits;
  };
  const auto a = logged_waits(42);
  REQUIRE(a.size() == 5);
  CHECK(a == logged_waits(42));
  CHECK(a != logged_waits(7));
  const long bounds[] = {2, 4, 6, 6, 6};  // min(max_backoff, initial * 2^(n-1))
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i] >= 0);
    CHECK(a[i] <= bounds[i]);
  }
}

TEST_CASE("Retry-After in the obsolete RFC 850 and asctime forms is honoured end to end", "[retry][http-date]") {
  // RFC 9110 5.6.7: recipients must accept both. A date in the past: retry at once.
  const char* format = GENERATE("%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y");
  CAPTURE(format);
  const Script script{1, 503, [format] {
                        return http_date(std::chrono::system_clock::now() - std::chrono::hours{1}, format);
                      }};
  SECTION("single call") {
    ScriptedServer server(script);
    const auto result = studentsvc::Client(server.options(retry_only_on_retry_after())).get_student("1234567");
    REQUIRE(result);
    CHECK(server.arrivals().size() == 2);
  }
  SECTION("batch") {
    ScriptedServer server(script);
    const std::vector<std::string> perms{"1234567"};
    const auto results = studentsvc::Client(server.options(retry_only_on_retry_after())).get_students(perms);
    REQUIRE(results.size() == 1);
    REQUIRE(results[0]);
    CHECK(server.arrivals().size() == 2);
  }
}

}  // namespace retry_e2e_test

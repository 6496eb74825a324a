// Retries end to end (CurlTransport ↔ MockServer / raw sockets on 127.0.0.1):
// Retry-After in both forms and its cap, giving up with the last error, the
// statuses that are never retried, non-idempotent conversation, the total time
// bound, and deterministic jitter under a seed.

#include <ctime>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/raw_server.hpp"

using namespace std::chrono_literals;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;
using Clock = std::chrono::steady_clock;

namespace {

/// Quick retries: tests wait at most about a second for Retry-After.
studentsvc::RetryPolicy quick_policy(int attempts = 3) {
  studentsvc::RetryPolicy p;
  p.max_attempts = attempts;
  p.initial_backoff = 10ms;
  p.max_backoff = 40ms;
  p.max_retry_after = 2s;
  p.max_total_time = 10s;
  return p;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

/// Records when each request arrived; the first `failures` get `status` (and
/// Retry-After when given), later ones fall through to the mock's routes.
struct Script {
  std::mutex mutex;
  std::vector<Clock::time_point> arrivals;
  int failures = 0;
  int status = 503;
  std::function<std::string()> retry_after;  // empty: no header

  auto intercept() {
    return [this](const httplib::Request&, httplib::Response& res) {
      const std::lock_guard lock(mutex);
      arrivals.push_back(Clock::now());
      const int n = static_cast<int>(arrivals.size());
      if (n > failures) return false;
      res.status = status;
      if (retry_after) res.set_header("Retry-After", retry_after());
      res.set_content(R"({"message":"failure )" + std::to_string(n) + R"("})", "application/json");
      return true;
    };
  }
  std::vector<Clock::time_point> times() {
    const std::lock_guard lock(mutex);
    return arrivals;
  }
};

std::string http_date(std::chrono::system_clock::time_point t, const char* format = "%a, %d %b %Y %H:%M:%S GMT") {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

}  // namespace

TEST_CASE("503 with Retry-After in seconds, then 200: succeeds after the asked wait", "[retry]") {
  Script script;
  script.failures = 1;
  script.status = 503;
  script.retry_after = [] { return std::string("1"); };
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = quick_policy();
  const studentsvc::Client client(options);

  const auto start = Clock::now();
  const auto result = client.get_student("1234567");
  const double took = seconds(Clock::now() - start);

  REQUIRE(result);
  CHECK(result->first_name == "Ana");
  const auto times = script.times();
  REQUIRE(times.size() == 2);
  CHECK(seconds(times[1] - times[0]) >= 0.95);  // waited what the server asked (not the 10-40 ms backoff)
  CHECK(took < 2.5);
}

TEST_CASE("429 with Retry-After as an HTTP-date, then 200: succeeds after the asked wait", "[retry]") {
  Script script;
  script.failures = 1;
  script.status = 429;
  // Two seconds ahead at one-second resolution: the client waits 1-2 s.
  script.retry_after = [] { return http_date(std::chrono::system_clock::now() + 2s); };
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = quick_policy();
  options.retry.max_retry_after = 5s;
  const studentsvc::Client client(options);

  const auto start = Clock::now();
  const auto result = client.current_student("mock-jwt-ana");
  const double took = seconds(Clock::now() - start);

  REQUIRE(result);
  CHECK(result->perm == "1234567");
  const auto times = script.times();
  REQUIRE(times.size() == 2);
  CHECK(seconds(times[1] - times[0]) >= 0.9);
  CHECK(took < 3.5);
}

TEST_CASE("a Retry-After beyond the cap waits only the cap", "[retry]") {
  Script script;
  script.failures = 1;
  script.status = 503;
  script.retry_after = [] { return std::string("3600"); };
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = quick_policy();
  options.retry.max_retry_after = 1s;
  const studentsvc::Client client(options);

  const auto start = Clock::now();
  const auto result = client.get_student("2345678");
  const double took = seconds(Clock::now() - start);
  REQUIRE(result);
  CHECK(took >= 0.95);
  CHECK(took < 2.5);
}

TEST_CASE("an error that is returned still carries the server's Retry-After", "[retry]") {
  Script script;
  script.failures = 100;
  script.status = 503;
  script.retry_after = [] { return std::string("7"); };
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = studentsvc::RetryPolicy::none();
  const auto result = studentsvc::Client(options).get_student("1234567");
  REQUIRE_FALSE(result);
  CHECK(result.error().status == 503);
  CHECK(result.error().retryable);
  CHECK(result.error().retry_after_ms == 7000);
  CHECK(result.error().attempts == 1);
}

TEST_CASE("repeated 500s give up after max_attempts with the last error", "[retry]") {
  Script script;
  script.failures = 100;
  script.status = 500;
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = quick_policy(4);
  const auto result = studentsvc::Client(options).get_student("1234567");
  REQUIRE_FALSE(result);
  CHECK(result.error().kind == studentsvc::ErrorKind::http_status);
  CHECK(result.error().status == 500);
  CHECK(result.error().message == "failure 4");  // the last answer, not the first
  CHECK(result.error().attempts == 4);
  CHECK(result.error().retryable);
  CHECK(script.times().size() == 4);
}

TEST_CASE("400, 401 and 404 are never retried", "[retry]") {
  const int status = GENERATE(400, 401, 404);
  Script script;
  script.failures = 100;
  script.status = status;
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = quick_policy(5);
  const auto result = studentsvc::Client(options).get_student("1234567");
  REQUIRE_FALSE(result);
  CHECK(result.error().status == status);
  CHECK_FALSE(result.error().retryable);
  CHECK(result.error().attempts == 1);
  CHECK(script.times().size() == 1);
}

TEST_CASE("the mock's own 400, 401 and 404 answers are sent once", "[retry]") {
  MockServer server;
  auto options = server.client_options();
  options.retry = quick_policy(5);
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
  options.retry = quick_policy(3);
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
  options.retry = quick_policy(3);
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
  options.retry = quick_policy(3);
  const auto r = studentsvc::Client(options).get_student("1234567");
  REQUIRE(r);
  CHECK(r->first_name == "Ana");
  CHECK(raw.connections() == 3);
}

TEST_CASE("the total time bound holds whatever the attempts and Retry-After say", "[retry]") {
  Script script;
  script.failures = 1000;
  script.status = 503;
  script.retry_after = [] { return std::string("1"); };
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = quick_policy(50);
  options.retry.max_total_time = 2500ms;
  const auto start = Clock::now();
  const auto result = studentsvc::Client(options).get_student("1234567");
  const double took = seconds(Clock::now() - start);
  REQUIRE_FALSE(result);
  CHECK(result.error().status == 503);
  CHECK(took < 3.0);
  CHECK(result.error().attempts >= 2);
  CHECK(result.error().attempts <= 3);
}

TEST_CASE("the total time bound also cuts an attempt that stalls", "[retry]") {
  using studentsvc::test::RawServer;
  RawServer raw([&raw](int fd, int) {
    (void)RawServer::read_request(fd);
    raw.sleep_unless_stopped(30s);
  });
  studentsvc::ClientOptions options;
  options.base_url = raw.base_url();
  options.allow_insecure_loopback = true;
  options.auth.api_key = "k";
  options.timeout = 800ms;
  options.retry = quick_policy(20);
  options.retry.max_total_time = 2s;
  const auto start = Clock::now();
  const auto result = studentsvc::Client(options).get_student("1234567");
  const double took = seconds(Clock::now() - start);
  REQUIRE_FALSE(result);
  CHECK(result.error().kind == studentsvc::ErrorKind::transport);
  CHECK(took < 3.0);
  CHECK(result.error().attempts >= 2);
}

namespace {

/// The backoff waits a client logs while retrying a server that always fails.
std::vector<long> logged_waits(std::optional<std::uint64_t> seed) {
  Script script;
  script.failures = 1000;
  script.status = 500;
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = quick_policy(6);
  options.retry.initial_backoff = 20ms;
  options.retry.max_backoff = 60ms;
  options.retry.jitter_seed = seed;
  std::mutex m;
  std::vector<long> waits;
  options.logger.level = studentsvc::LogLevel::info;
  options.logger.sink = [&](studentsvc::LogLevel, std::string_view line) {
    // "... waiting 37 ms" (no std::regex: GCC 12 warns inside it under ASan).
    const auto at = line.find("waiting ");
    if (at == std::string_view::npos) return;
    const std::string_view rest = line.substr(at + 8);
    const auto digits = rest.find_first_not_of("0123456789");
    if (digits == 0 || digits == std::string_view::npos || !rest.substr(digits).starts_with(" ms")) return;
    const std::lock_guard lock(m);
    waits.push_back(std::stol(std::string(rest.substr(0, digits))));
  };
  const auto result = studentsvc::Client(options).get_student("1234567");
  CHECK_FALSE(result);
  return waits;
}

}  // namespace

TEST_CASE("jitter is deterministic under a seeded generator and bounded by the backoff", "[retry]") {
  const auto a = logged_waits(42);
  const auto b = logged_waits(42);
  const auto c = logged_waits(7);
  REQUIRE(a.size() == 5);
  CHECK(a == b);
  CHECK(a != c);
  const long bounds[] = {20, 40, 60, 60, 60};  // min(max_backoff, initial * 2^(n-1))
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i] >= 0);
    CHECK(a[i] <= bounds[i]);
  }

  // The same function, without a network: equal seeds give equal sequences.
  studentsvc::RetryPolicy p;
  p.initial_backoff = 100ms;
  p.max_backoff = 1s;
  std::mt19937_64 r1(99), r2(99);
  for (int retry = 1; retry <= 8; ++retry) {
    CHECK(studentsvc::backoff_delay(p, retry, r1) == studentsvc::backoff_delay(p, retry, r2));
  }
}

TEST_CASE("Retry-After in the obsolete RFC 850 and asctime forms is honoured end to end", "[retry][http-date]") {
  // RFC 9110 5.6.7: recipients must accept both. Two seconds ahead at one-second resolution.
  const char* format = GENERATE("%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y");
  CAPTURE(format);
  Script script;
  script.failures = 1;
  script.status = 503;
  script.retry_after = [format] { return http_date(std::chrono::system_clock::now() + 2s, format); };
  MockServerOptions mo;
  mo.intercept = script.intercept();
  MockServer server(mo);
  auto options = server.client_options();
  options.retry = quick_policy();
  options.retry.max_retry_after = 5s;
  const studentsvc::Client client(options);
  const auto start = Clock::now();
  const auto result = client.get_student("1234567");
  const double took = seconds(Clock::now() - start);
  REQUIRE(result);
  const auto times = script.times();
  REQUIRE(times.size() == 2);
  CHECK(seconds(times[1] - times[0]) >= 0.9);  // the date was read: the backoff alone is under 40 ms
  CHECK(took < 2.0 + 5.0);

  SECTION("and in the batch loop") {
    Script again;
    again.failures = 1;
    again.status = 503;
    again.retry_after = script.retry_after;
    MockServerOptions mo2;
    mo2.intercept = again.intercept();
    MockServer server2(mo2);
    auto options2 = server2.client_options();
    options2.retry = quick_policy();
    options2.retry.max_retry_after = 5s;
    const std::vector<std::string> perms{"1234567"};
    const auto results = studentsvc::Client(options2).get_students(perms);
    REQUIRE(results.size() == 1);
    REQUIRE(results[0]);
    const auto t = again.times();
    REQUIRE(t.size() == 2);
    CHECK(seconds(t[1] - t[0]) >= 0.9);
  }
}

// Tests for metrics.hpp: AttemptMetrics counts finished attempts by operation
// and outcome, retries by reason, bytes and a cumulative latency histogram,
// renders them in the Prometheus text format whatever the global locale, is
// safe from many threads, and holds nothing but the SDK's own labels.

#include <catch2/catch.hpp>

#include <chrono>
#include <locale>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/metrics.hpp>
#include <studentsvc/testing/fake_transport.hpp>

#include "support/fast_retry.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace metrics_test {

using studentsvc::AttemptEvent;
using studentsvc::AttemptMetrics;
using studentsvc::AttemptPhase;
using studentsvc::ErrorKind;
using studentsvc::RetryReason;
using namespace std::chrono_literals;

namespace {

AttemptEvent ended(std::string_view operation, std::chrono::microseconds latency,
                   std::optional<ErrorKind> error = std::nullopt, RetryReason reason = RetryReason::none) {
  AttemptEvent e;
  e.phase = AttemptPhase::end;
  e.operation = operation;
  e.path_template = "/students/v2/students/{perm}";
  e.method = "GET";
  e.status = error ? 503 : 200;
  e.error = error;
  e.retry_reason = reason;
  e.attempt = reason == RetryReason::none ? 1 : 2;
  e.latency = latency;
  e.bytes_sent = 100;
  e.bytes_received = 250;
  return e;
}

bool contains(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

/// A numpunct that groups thousands with a dot and writes a comma for the decimal point.
struct GermanStylePunct final : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

}  // namespace

TEST_CASE("AttemptMetrics: nothing counted renders nothing", "[metrics]") {
  const AttemptMetrics metrics;
  CHECK(metrics.prometheus_text().empty());
  CHECK(metrics.attempts("get_student", "ok") == 0);
}

TEST_CASE("AttemptMetrics: end events by operation and outcome, retries, bytes, cumulative buckets", "[metrics]") {
  AttemptMetrics metrics;
  AttemptEvent start = ended("get_student", 0us);
  start.phase = AttemptPhase::start;
  metrics.on_attempt(start);  // not counted: an attempt counts once, when it ends
  metrics.on_attempt(ended("get_student", 3ms, ErrorKind::http_status));
  metrics.on_attempt(ended("get_student", 40ms, std::nullopt, RetryReason::status));
  metrics.on_attempt(ended("get_student", 7s, ErrorKind::transport));
  metrics.on_attempt(ended("current_student", 200ms, ErrorKind::unauthorized));
  metrics.on_attempt(ended("current_student", 20ms, std::nullopt, RetryReason::credentials));

  CHECK(metrics.attempts("get_student", "ok") == 1);
  CHECK(metrics.attempts("get_student", "http_status") == 1);
  CHECK(metrics.attempts("get_student", "transport") == 1);
  CHECK(metrics.attempts("conversation", "ok") == 0);
  const std::string text = metrics.prometheus_text();
  CHECK(contains(text, "# TYPE studentsvc_attempts_total counter\n"));
  CHECK(contains(text, "studentsvc_attempts_total{operation=\"get_student\",outcome=\"ok\"} 1\n"));
  CHECK(contains(text, "studentsvc_attempts_total{operation=\"current_student\",outcome=\"unauthorized\"} 1\n"));
  CHECK(contains(text, "studentsvc_retries_total{operation=\"get_student\",reason=\"status\"} 1\n"));
  CHECK(contains(text, "studentsvc_retries_total{operation=\"current_student\",reason=\"credentials\"} 1\n"));
  CHECK_FALSE(contains(text, "reason=\"none\""));
  // Cumulative: 3 ms is in every bucket, 40 ms from 0.05 on, 7 s only in +Inf.
  CHECK(contains(text, "studentsvc_attempt_seconds_bucket{operation=\"get_student\",le=\"0.005\"} 1\n"));
  CHECK(contains(text, "studentsvc_attempt_seconds_bucket{operation=\"get_student\",le=\"0.025\"} 1\n"));
  CHECK(contains(text, "studentsvc_attempt_seconds_bucket{operation=\"get_student\",le=\"0.05\"} 2\n"));
  CHECK(contains(text, "studentsvc_attempt_seconds_bucket{operation=\"get_student\",le=\"5\"} 2\n"));
  CHECK(contains(text, "studentsvc_attempt_seconds_bucket{operation=\"get_student\",le=\"+Inf\"} 3\n"));
  CHECK(contains(text, "studentsvc_attempt_seconds_count{operation=\"get_student\"} 3\n"));
  CHECK(contains(text, "studentsvc_attempt_seconds_sum{operation=\"get_student\"} 7.043\n"));
  CHECK(contains(text, "studentsvc_request_bytes_total{operation=\"get_student\"} 300\n"));
  CHECK(contains(text, "studentsvc_response_bytes_total{operation=\"current_student\"} 500\n"));
}

TEST_CASE("AttemptMetrics: no retry, no retries family", "[metrics]") {
  AttemptMetrics metrics;
  metrics.on_attempt(ended("conversation", 1ms));
  const std::string text = metrics.prometheus_text();
  CHECK(contains(text, "studentsvc_attempts_total{operation=\"conversation\",outcome=\"ok\"} 1\n"));
  CHECK_FALSE(contains(text, "studentsvc_retries_total"));
}

TEST_CASE("AttemptMetrics: the text does not follow the program's global locale", "[metrics]") {
  AttemptMetrics metrics;
  for (int i = 0; i < 1234; ++i) metrics.on_attempt(ended("get_student", 1500us));
  const std::locale before = std::locale::global(std::locale(std::locale::classic(), new GermanStylePunct));
  const std::string text = metrics.prometheus_text();
  std::locale::global(before);
  CHECK(contains(text, "studentsvc_attempts_total{operation=\"get_student\",outcome=\"ok\"} 1234\n"));
  CHECK(contains(text, "le=\"0.005\"} 1234\n"));
  CHECK(contains(text, "studentsvc_request_bytes_total{operation=\"get_student\"} 123400\n"));
}

TEST_CASE("AttemptMetrics: counts from many threads at once add up", "[metrics][concurrency]") {
  AttemptMetrics metrics;
  constexpr int threads = 4;
  constexpr int per_thread = 2000;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&metrics] {
      for (int i = 0; i < per_thread; ++i) metrics.on_attempt(ended("get_student", 1ms));
    });
  }
  for (int i = 0; i < 100; ++i) (void)metrics.prometheus_text();  // reads while the writers write
  for (auto& t : pool) t.join();
  CHECK(metrics.attempts("get_student", "ok") == threads * per_thread);
}

TEST_CASE("AttemptMetrics as a client's hooks: a retried lookup and a missing student", "[metrics]") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  auto metrics = std::make_shared<AttemptMetrics>();
  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "KEY-canary-metrics";
  options.transport = fake;
  options.instrumentation = metrics;
  options.retry = studentsvc::test::fast_retry(3);
  fake->respond(503, "busy");
  fake->respond(200, R"({"perm":"1234567","firstName":"Ana"})");
  fake->respond(404, R"({"message":"Student not found."})", studentsvc::Headers{{"Content-Type", "application/json"}});
  const studentsvc::Client client(options);
  REQUIRE(client.get_student("1234567"));
  const auto missing = client.get_student("7654321");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == ErrorKind::not_found);

  CHECK(metrics->attempts("get_student", "ok") == 1);
  CHECK(metrics->attempts("get_student", "not_found") == 1);
  const std::string text = metrics->prometheus_text();
  CHECK(contains(text, "studentsvc_retries_total{operation=\"get_student\",reason=\"status\"} 1\n"));
  CHECK(contains(text, "studentsvc_attempt_seconds_count{operation=\"get_student\"} 3\n"));
  for (const char* canary : {"1234567", "7654321", "KEY-canary-metrics", "Ana", "busy"}) {
    CHECK_FALSE(contains(text, canary));
  }
}

}  // namespace metrics_test

// docs/observability.md's example: per-operation counters and a latency
// histogram fed by the instrumentation hooks (studentsvc::AttemptMetrics),
// printed in Prometheus text format, against the mock server. No dependency
// beyond the SDK.
#include <iostream>
#include <memory>
#include <string>

#include <studentsvc/metrics.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

int main() {
  const studentsvc::testing::MockServer server;
  // [metrics-use]
  auto metrics = std::make_shared<studentsvc::AttemptMetrics>();  // <studentsvc/metrics.hpp>
  auto options = server.client_options();                         // or ClientOptions::from_env()
  options.instrumentation = metrics;  // every attempt of every call, no student data
  const studentsvc::Client client(options);
  (void)client.get_student("1234567");
  (void)client.get_student("7654321");  // 404
  (void)client.current_student("mock-jwt-ana");
  std::cout << metrics->prometheus_text();  // serve it on your /metrics page
  // [metrics-use]
  const std::string text = metrics->prometheus_text();
  const bool ok =
      text.find("studentsvc_attempts_total{operation=\"get_student\",outcome=\"ok\"} 1") != std::string::npos &&
      text.find("studentsvc_attempts_total{operation=\"get_student\",outcome=\"not_found\"} 1") != std::string::npos &&
      text.find("studentsvc_attempt_seconds_count{operation=\"current_student\"} 1") != std::string::npos &&
      metrics->attempts("get_student", "ok") == 1 && text.find("1234567") == std::string::npos;
  std::cout << (ok ? "metrics example: ok\n" : "metrics example: FAILED\n");
  return ok ? 0 : 1;
}

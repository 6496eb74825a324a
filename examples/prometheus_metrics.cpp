// The README's "Observability" example: per-operation counters and a latency
// histogram fed by the instrumentation hooks, printed in Prometheus text
// format, against the mock server. No dependency beyond the SDK.
#include <array>
#include <chrono>
#include <cstddef>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

// [metrics-hooks]
/// Counts attempts by (operation, outcome) and their latency in a histogram.
class PrometheusMetrics final : public studentsvc::Instrumentation {
 public:
  void on_attempt(const studentsvc::AttemptEvent& e) override {
    if (e.phase != studentsvc::AttemptPhase::end) return;
    const std::string outcome = e.error ? std::string(studentsvc::to_string(*e.error)) : "ok";
    const double seconds = std::chrono::duration<double>(e.latency).count();
    const std::lock_guard lock(mutex_);
    ++attempts_[{std::string(e.operation), outcome}];
    auto& h = latency_[std::string(e.operation)];
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      if (seconds <= bounds[i]) ++h.buckets[i];
    }
    ++h.count;
    h.sum += seconds;
  }

  /// The Prometheus text exposition format.
  std::string render() const {
    const std::lock_guard lock(mutex_);
    std::ostringstream out;
    out << "# TYPE studentsvc_attempts_total counter\n";
    for (const auto& [key, n] : attempts_) {
      out << "studentsvc_attempts_total{operation=\"" << key.first << "\",outcome=\"" << key.second << "\"} " << n
          << '\n';
    }
    out << "# TYPE studentsvc_attempt_seconds histogram\n";
    for (const auto& [operation, h] : latency_) {
      for (std::size_t i = 0; i < bounds.size(); ++i) {
        out << "studentsvc_attempt_seconds_bucket{operation=\"" << operation << "\",le=\"" << bounds[i] << "\"} "
            << h.buckets[i] << '\n';
      }
      out << "studentsvc_attempt_seconds_bucket{operation=\"" << operation << "\",le=\"+Inf\"} " << h.count << '\n';
      out << "studentsvc_attempt_seconds_sum{operation=\"" << operation << "\"} " << h.sum << '\n';
      out << "studentsvc_attempt_seconds_count{operation=\"" << operation << "\"} " << h.count << '\n';
    }
    return out.str();
  }

 private:
  static constexpr std::array<double, 6> bounds{0.005, 0.01, 0.05, 0.1, 0.5, 1.0};
  struct Histogram {
    std::array<long, bounds.size()> buckets{};
    long count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, long> attempts_;
  std::map<std::string, Histogram> latency_;
};
// [metrics-hooks]

int main() {
  const studentsvc::testing::MockServer server;
  // [metrics-use]
  auto metrics = std::make_shared<PrometheusMetrics>();
  auto options = server.client_options();  // or ClientOptions::from_env()
  options.instrumentation = metrics;       // every attempt of every call, no student data
  const studentsvc::Client client(options);
  // [metrics-use]
  (void)client.get_student("1234567");
  (void)client.get_student("7654321");  // 404
  (void)client.current_student("mock-jwt-ana");
  const std::string text = metrics->render();
  std::cout << text;
  const bool ok =
      text.find("studentsvc_attempts_total{operation=\"get_student\",outcome=\"ok\"} 1") != std::string::npos &&
      text.find("studentsvc_attempts_total{operation=\"get_student\",outcome=\"not_found\"} 1") != std::string::npos &&
      text.find("studentsvc_attempt_seconds_count{operation=\"current_student\"} 1") != std::string::npos &&
      text.find("1234567") == std::string::npos;
  std::cout << (ok ? "metrics example: ok\n" : "metrics example: FAILED\n");
  return ok ? 0 : 1;
}

#pragma once
/// @file metrics.hpp
/// @brief AttemptMetrics: per-operation attempt counters and a latency
/// histogram fed by the instrumentation hooks, rendered in the Prometheus text
/// exposition format. Not in the umbrella header: include it where you use it.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <locale>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/errors.hpp>
#include <studentsvc/instrumentation.hpp>

namespace studentsvc {

/// @brief An Instrumentation that keeps, per operation, the attempts by
/// outcome, the retries by reason, the bytes sent and received, and a latency
/// histogram of the attempts, and prints them in the Prometheus text format.
///
/// Every label value is one of the SDK's own constants (the operation, an
/// ErrorKind name, a RetryReason name): like the events it counts, the output
/// never holds a secret, a perm or a student's data. Thread-safe; one short
/// lock per finished attempt.
///
/// @code
/// auto metrics = std::make_shared<studentsvc::AttemptMetrics>();
/// options.instrumentation = metrics;
/// // ... calls ...
/// std::cout << metrics->prometheus_text();
/// @endcode
///
/// @sa Instrumentation, AttemptEvent, ClientOptions::instrumentation
class AttemptMetrics final : public Instrumentation {
 public:
  /// @brief The upper bounds of the latency buckets, in seconds (a `+Inf`
  /// bucket follows them).
  static constexpr std::array<double, 10> latency_bounds{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0};

  /// @brief Counts an attempt when it ends (start events are not counted).
  void on_attempt(const AttemptEvent& event) override {
    if (event.phase != AttemptPhase::end) return;
    const std::string_view outcome = event.error ? to_string(*event.error) : std::string_view("ok");
    const double seconds = std::chrono::duration<double>(event.latency).count();
    const std::lock_guard lock(mutex_);
    auto& op = operations_[std::string(event.operation)];
    ++op.attempts[std::string(outcome)];
    if (event.retry_reason != RetryReason::none) ++op.retries[std::string(to_string(event.retry_reason))];
    op.bytes_sent += event.bytes_sent;
    op.bytes_received += event.bytes_received;
    for (std::size_t i = 0; i < latency_bounds.size(); ++i) {
      if (seconds <= latency_bounds[i]) ++op.buckets[i];
    }
    ++op.count;
    op.seconds += seconds;
  }

  /// @brief Counts the circuit breaker's transitions and keeps its state
  /// (for one Client: a metrics object shared by several keeps the last transition).
  void on_circuit(const CircuitEvent& event) override {
    const std::lock_guard lock(mutex_);
    circuit_seen_ = true;
    circuit_state_ = event.state;
    if (event.state == CircuitState::open) ++circuit_opens_;
    if (event.state == CircuitState::closed) ++circuit_closes_;
  }

  /// @brief How many times the circuit breaker opened (`to` open) or closed (`to` closed).
  [[nodiscard]] std::uint64_t circuit_transitions(CircuitState to) const {
    const std::lock_guard lock(mutex_);
    return to == CircuitState::open ? circuit_opens_ : to == CircuitState::closed ? circuit_closes_ : 0;
  }

  /// @brief The attempts counted so far that ended with `outcome` ("ok" or an
  /// ErrorKind name) for `operation`.
  [[nodiscard]] std::uint64_t attempts(std::string_view operation, std::string_view outcome) const {
    const std::lock_guard lock(mutex_);
    const auto op = operations_.find(operation);
    if (op == operations_.end()) return 0;
    const auto n = op->second.attempts.find(outcome);
    return n == op->second.attempts.end() ? 0 : n->second;
  }

  /// @brief Everything counted so far in the Prometheus text exposition format
  /// (`studentsvc_attempts_total`, `studentsvc_retries_total`,
  /// `studentsvc_attempt_seconds` histogram, `studentsvc_request_bytes_total`,
  /// `studentsvc_response_bytes_total`; once the circuit breaker has moved,
  /// `studentsvc_circuit_transitions_total{to="open"|"closed"}` and the gauge
  /// `studentsvc_circuit_state` (0 closed, 1 open, 2 half-open)); empty
  /// metric families are left out.
  [[nodiscard]] std::string prometheus_text() const {
    const std::lock_guard lock(mutex_);
    if (operations_.empty() && !circuit_seen_) return {};
    std::ostringstream out;
    out.imbue(std::locale::classic());  // "0.005" and "1234", whatever the program's global locale
    write_operations(out);
    if (circuit_seen_) {
      out << "# HELP studentsvc_circuit_transitions_total Circuit breaker transitions, by the state moved to.\n"
          << "# TYPE studentsvc_circuit_transitions_total counter\n"
          << "studentsvc_circuit_transitions_total{to=\"open\"} " << circuit_opens_ << '\n'
          << "studentsvc_circuit_transitions_total{to=\"closed\"} " << circuit_closes_ << '\n'
          << "# HELP studentsvc_circuit_state The circuit breaker's state: 0 closed, 1 open, 2 half-open.\n"
          << "# TYPE studentsvc_circuit_state gauge\n"
          << "studentsvc_circuit_state " << static_cast<int>(circuit_state_) << '\n';
    }
    return std::move(out).str();
  }

 private:
  void write_operations(std::ostringstream& out) const {
    if (operations_.empty()) return;
    out << "# HELP studentsvc_attempts_total Attempts by operation and outcome (ok or an ErrorKind).\n"
        << "# TYPE studentsvc_attempts_total counter\n";
    for (const auto& [name, op] : operations_) {
      for (const auto& [outcome, n] : op.attempts) {
        out << "studentsvc_attempts_total{operation=\"" << name << "\",outcome=\"" << outcome << "\"} " << n << '\n';
      }
    }
    bool any_retry = false;
    for (const auto& entry : operations_) any_retry = any_retry || !entry.second.retries.empty();
    if (any_retry) {
      out << "# HELP studentsvc_retries_total Attempts that were retries, by operation and reason.\n"
          << "# TYPE studentsvc_retries_total counter\n";
      for (const auto& [name, op] : operations_) {
        for (const auto& [reason, n] : op.retries) {
          out << "studentsvc_retries_total{operation=\"" << name << "\",reason=\"" << reason << "\"} " << n << '\n';
        }
      }
    }
    out << "# HELP studentsvc_attempt_seconds Latency of an attempt, from its start to its end.\n"
        << "# TYPE studentsvc_attempt_seconds histogram\n";
    for (const auto& [name, op] : operations_) {
      for (std::size_t i = 0; i < latency_bounds.size(); ++i) {
        out << "studentsvc_attempt_seconds_bucket{operation=\"" << name << "\",le=\"" << latency_bounds[i] << "\"} "
            << op.buckets[i] << '\n';
      }
      out << "studentsvc_attempt_seconds_bucket{operation=\"" << name << "\",le=\"+Inf\"} " << op.count << '\n'
          << "studentsvc_attempt_seconds_sum{operation=\"" << name << "\"} " << op.seconds << '\n'
          << "studentsvc_attempt_seconds_count{operation=\"" << name << "\"} " << op.count << '\n';
    }
    out << "# HELP studentsvc_request_bytes_total Bytes sent: header fields and body.\n"
        << "# TYPE studentsvc_request_bytes_total counter\n";
    for (const auto& [name, op] : operations_) {
      out << "studentsvc_request_bytes_total{operation=\"" << name << "\"} " << op.bytes_sent << '\n';
    }
    out << "# HELP studentsvc_response_bytes_total Bytes received: header fields and body.\n"
        << "# TYPE studentsvc_response_bytes_total counter\n";
    for (const auto& [name, op] : operations_) {
      out << "studentsvc_response_bytes_total{operation=\"" << name << "\"} " << op.bytes_received << '\n';
    }
  }

  struct Operation {
    std::map<std::string, std::uint64_t, std::less<>> attempts;  // by outcome
    std::map<std::string, std::uint64_t, std::less<>> retries;   // by reason
    std::array<std::uint64_t, latency_bounds.size()> buckets{};  // cumulative, as Prometheus has them
    std::uint64_t count = 0;
    double seconds = 0;
    std::uint64_t bytes_sent = 0;
    std::uint64_t bytes_received = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Operation, std::less<>> operations_;
  bool circuit_seen_ = false;
  CircuitState circuit_state_ = CircuitState::closed;
  std::uint64_t circuit_opens_ = 0;
  std::uint64_t circuit_closes_ = 0;
};

}  // namespace studentsvc

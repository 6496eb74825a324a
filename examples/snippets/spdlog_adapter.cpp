// An adapter to spdlog (Debian's libspdlog-dev) for the SDK's log sink and
// instrumentation hooks, run against the mock server. spdlog is a dependency
// of this example only, never of the header-only SDK target.
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

namespace {

// [spdlog-adapter]
/// The SDK's (already redacted) log lines, at the matching spdlog level.
studentsvc::Logger spdlog_logger(std::shared_ptr<spdlog::logger> log, studentsvc::LogLevel level) {
  return studentsvc::Logger{level, [log = std::move(log)](studentsvc::LogLevel l, std::string_view line) {
                              using studentsvc::LogLevel;
                              const auto to = l == LogLevel::trace     ? spdlog::level::trace
                                              : l == LogLevel::debug   ? spdlog::level::debug
                                              : l == LogLevel::info    ? spdlog::level::info
                                              : l == LogLevel::warning ? spdlog::level::warn
                                                                       : spdlog::level::err;
                              log->log(to, "{}", line);
                            }};
}

/// One structured line per finished attempt; an event holds no secret or student data.
class SpdlogHooks final : public studentsvc::Instrumentation {
 public:
  explicit SpdlogHooks(std::shared_ptr<spdlog::logger> log) : log_(std::move(log)) {}
  void on_attempt(const studentsvc::AttemptEvent& e) override {
    if (e.phase != studentsvc::AttemptPhase::end) return;
    log_->info("op={} {} {} attempt={} status={} error={} latency_us={} sent={} received={} request_id={}",
               e.operation, e.method, e.path_template, e.attempt, e.status,
               e.error ? studentsvc::to_string(*e.error) : std::string_view("none"), e.latency.count(),
               e.bytes_sent, e.bytes_received, e.request_id.empty() ? std::string_view("-") : e.request_id);
  }

 private:
  std::shared_ptr<spdlog::logger> log_;
};
// [spdlog-adapter]

}  // namespace

int main() {
  std::ostringstream captured;
  auto log = std::make_shared<spdlog::logger>("studentsvc", std::make_shared<spdlog::sinks::ostream_sink_mt>(captured));
  log->set_level(spdlog::level::trace);
  log->set_pattern("%l %v");

  const studentsvc::testing::MockServer server;
  auto options = server.client_options();
  options.logger = spdlog_logger(log, studentsvc::LogLevel::debug);
  options.instrumentation = std::make_shared<SpdlogHooks>(log);
  const studentsvc::Client client(options);
  (void)client.get_student("1234567");
  log->flush();

  const std::string text = captured.str();
  std::cout << text;
  const bool ok = text.find("info op=get_student GET /students/v2/students/{perm} attempt=1 status=200") !=
                      std::string::npos &&
                  text.find("debug get_student: status 200") != std::string::npos &&
                  text.find("1234567") == std::string::npos && text.find(options.auth.api_key.reveal()) == std::string::npos;
  std::cout << (ok ? "spdlog example: ok\n" : "spdlog example: FAILED\n");
  return ok ? 0 : 1;
}

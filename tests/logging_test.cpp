// Unit tests for logging.hpp: Logger levels and threshold, header redaction.

#include <catch2/catch.hpp>

#include <unistd.h>  // dup, dup2

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/logging.hpp>

#include "support/log_capture.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace logging_test {

using studentsvc::Headers;
using studentsvc::Logger;
using studentsvc::LogLevel;

namespace {

/// The shared capture, read as (level, text) pairs.
struct Capture {
  studentsvc::test::LogCapture store;
  Logger logger(LogLevel threshold) const { return store.logger(threshold); }
  [[nodiscard]] std::vector<std::pair<LogLevel, std::string>> lines() const { return store.entries(); }
};

void log_all(const Logger& logger) {
  logger.log(LogLevel::trace, "t");
  logger.log(LogLevel::debug, "d");
  logger.log(LogLevel::info, "i");
  logger.log(LogLevel::warning, "w");
  logger.log(LogLevel::error, "e");
  logger.log(LogLevel::off, "never");  // `off` is a threshold, not a level to log at
}

}  // namespace

TEST_CASE("Logger passes lines at or above the threshold", "[logging]") {
  struct Case {
    LogLevel threshold;
    std::vector<std::string> expected;
  };
  const auto c = GENERATE(Case{LogLevel::trace, {"t", "d", "i", "w", "e"}}, Case{LogLevel::debug, {"d", "i", "w", "e"}},
                          Case{LogLevel::info, {"i", "w", "e"}}, Case{LogLevel::warning, {"w", "e"}},
                          Case{LogLevel::error, {"e"}}, Case{LogLevel::off, {}});
  CAPTURE(studentsvc::to_string(c.threshold));
  Capture cap;
  log_all(cap.logger(c.threshold));
  std::vector<std::string> got;
  for (const auto& [level, line] : cap.lines()) got.push_back(line);
  CHECK(got == c.expected);
}

TEST_CASE("Logger hands the level to the sink", "[logging]") {
  Capture cap;
  const auto logger = cap.logger(LogLevel::trace);
  logger.log(LogLevel::warning, "careful");
  REQUIRE(cap.lines().size() == 1);
  CHECK(cap.lines()[0].first == LogLevel::warning);
  CHECK(cap.lines()[0].second == "careful");
}

TEST_CASE("Logger enabled()", "[logging]") {
  Capture cap;
  const auto info = cap.logger(LogLevel::info);
  CHECK_FALSE(info.enabled(LogLevel::debug));
  CHECK(info.enabled(LogLevel::info));
  CHECK(info.enabled(LogLevel::error));
  CHECK_FALSE(info.enabled(LogLevel::off));
  CHECK_FALSE(cap.logger(LogLevel::off).enabled(LogLevel::error));
  SECTION("no sink: nothing is enabled and log() is a no-op") {
    const Logger no_sink{LogLevel::trace, {}};
    CHECK_FALSE(no_sink.enabled(LogLevel::error));
    no_sink.log(LogLevel::error, "dropped");
    CHECK(cap.lines().empty());
  }
  SECTION("the default Logger is off") {
    const Logger def;
    CHECK(def.level == LogLevel::off);
    CHECK_FALSE(def.enabled(LogLevel::error));
  }
}

TEST_CASE("to_string(LogLevel)", "[logging]") {
  CHECK(studentsvc::to_string(LogLevel::trace) == "trace");
  CHECK(studentsvc::to_string(LogLevel::debug) == "debug");
  CHECK(studentsvc::to_string(LogLevel::info) == "info");
  CHECK(studentsvc::to_string(LogLevel::warning) == "warning");
  CHECK(studentsvc::to_string(LogLevel::error) == "error");
  CHECK(studentsvc::to_string(LogLevel::off) == "off");
}

TEST_CASE("redacted_headers keeps allow-listed values and redacts the rest", "[logging]") {
  const Headers h{{"x-api-key", "KEY-canary"},
                  {"svc-api-key", "SVC-canary"},
                  {"Authorization", "Basic UFctY2FuYXJ5"},
                  {"svc-user-jwt", "JWT-canary"},
                  {"Cookie", "session=COOKIE-canary"},
                  {"Set-Cookie", "id=SETCOOKIE-canary"},
                  {"Proxy-Authorization", "Basic PROXY-canary"},
                  {"X-Unknown", "UNKNOWN-canary"},
                  {"svc-api-version", "2.0"},
                  {"Accept", "application/json, text/json"},
                  {"User-Agent", "studentsvc-cpp/0.1.0"},
                  {"Content-Type", "application/json"},
                  {"Retry-After", "3"}};
  const auto line = studentsvc::redacted_headers(h);
  CHECK_THAT(line, !Catch::Contains("canary"));
  CHECK_THAT(line, !Catch::Contains("UFct"));
  CHECK_THAT(line, Catch::Contains("x-api-key: REDACTED"));
  CHECK_THAT(line, Catch::Contains("svc-api-key: REDACTED"));
  CHECK_THAT(line, Catch::Contains("Authorization: REDACTED"));
  CHECK_THAT(line, Catch::Contains("svc-user-jwt: REDACTED"));
  CHECK_THAT(line, Catch::Contains("Cookie: REDACTED"));
  CHECK_THAT(line, Catch::Contains("Set-Cookie: REDACTED"));
  CHECK_THAT(line, Catch::Contains("Proxy-Authorization: REDACTED"));
  CHECK_THAT(line, Catch::Contains("X-Unknown: REDACTED"));
  CHECK_THAT(line, Catch::Contains("svc-api-version: 2.0"));
  CHECK_THAT(line, Catch::Contains("Accept: application/json, text/json"));
  CHECK_THAT(line, Catch::Contains("User-Agent: studentsvc-cpp/0.1.0"));
  CHECK_THAT(line, Catch::Contains("Content-Type: application/json"));
  CHECK_THAT(line, Catch::Contains("Retry-After: 3"));
  CHECK_THAT(line, Catch::StartsWith("x-api-key: REDACTED, svc-api-key: REDACTED, "));  // order kept, ", " joined
}

TEST_CASE("redaction allow-list is case-insensitive and exact", "[logging]") {
  CHECK(studentsvc::is_loggable_header("ACCEPT"));
  CHECK(studentsvc::is_loggable_header("user-agent"));
  CHECK_FALSE(studentsvc::is_loggable_header("X-API-KEY"));
  CHECK_FALSE(studentsvc::is_loggable_header("accept-x"));
  CHECK_FALSE(studentsvc::is_loggable_header("authorization"));
  CHECK_FALSE(studentsvc::is_loggable_header(""));
  CHECK(studentsvc::redacted_headers(Headers{{"AUTHORIZATION", "Basic x"}}) == "AUTHORIZATION: REDACTED");
  CHECK(studentsvc::redacted_headers(Headers{}).empty());
  for (const auto name : studentsvc::loggable_header_names) {
    CHECK_FALSE(studentsvc::detail::iequals(name, "x-api-key"));
    CHECK_FALSE(studentsvc::detail::iequals(name, "svc-api-key"));
    CHECK_FALSE(studentsvc::detail::iequals(name, "svc-user-jwt"));
    CHECK_FALSE(studentsvc::detail::iequals(name, "authorization"));
    CHECK_FALSE(studentsvc::detail::iequals(name, "cookie"));
  }
}

TEST_CASE("parse_log_level reads back every to_string(LogLevel)", "[logging]") {
  for (const LogLevel l :
       {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warning, LogLevel::error, LogLevel::off}) {
    CHECK(studentsvc::parse_log_level(studentsvc::to_string(l)) == l);
  }
  CHECK(studentsvc::parse_log_level("Warning") == LogLevel::warning);
  CHECK_FALSE(studentsvc::parse_log_level(""));
  CHECK_FALSE(studentsvc::parse_log_level("warn"));
  CHECK_FALSE(studentsvc::parse_log_level("debug "));
}

TEST_CASE("stderr_logger writes one prefixed line per call at or above its level", "[logging]") {
  const auto logger = studentsvc::stderr_logger(LogLevel::info);
  CHECK(logger.enabled(LogLevel::warning));
  CHECK_FALSE(logger.enabled(LogLevel::debug));

  // Point fd 2 at a temporary file for the two calls, then read it back.
  std::FILE* captured = std::tmpfile();
  REQUIRE(captured != nullptr);
  std::fflush(stderr);
  const int saved = ::dup(2);
  REQUIRE(saved >= 0);
  REQUIRE(::dup2(::fileno(captured), 2) >= 0);
  logger.log(LogLevel::debug, "dropped");
  logger.log(LogLevel::warning, "get_student: status 503 after 3 attempt(s), 12 ms");
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::rewind(captured);
  std::string text(256, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), captured));
  std::fclose(captured);
  CHECK(text == "studentsvc warning: get_student: status 503 after 3 attempt(s), 12 ms\n");
}

}  // namespace logging_test

#pragma once
/// @file logging.hpp
/// @brief The logging hook: levels, a sink, and header redaction by allow-list.

#include <array>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/detail/text/ascii.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc {

/// @brief Severity of a log line; `off` as a threshold silences the hook.
enum class LogLevel { trace, debug, info, warning, error, off };

/// @brief The level's lower-case name ("trace", ..., "off").
[[nodiscard]] constexpr std::string_view to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warning: return "warning";
    case LogLevel::error: return "error";
    case LogLevel::off: return "off";
  }
  return "off";
}

/// @brief A sink and a threshold. The SDK logs the endpoint, method, status,
/// attempt and timing; never a credential, a JWT, a URL path with a perm, or a
/// student field. Header values appear only for allow-listed names.
///
/// The sink is called on the thread of a blocking call, and on the SDK's event
/// thread for asynchronous calls and batches: it must be thread-safe.
struct Logger {
  LogLevel level = LogLevel::off;  ///< Lines below this level are dropped; `off` drops all.
  std::function<void(LogLevel, std::string_view)> sink;  ///< Receives each line; empty: logging is off.

  /// @brief True when a line at level `l` would reach the sink.
  [[nodiscard]] bool enabled(LogLevel l) const noexcept {
    return sink && level != LogLevel::off && l != LogLevel::off && l >= level;
  }
  /// @brief Passes `line` to the sink when level `l` is enabled.
  void log(LogLevel l, std::string_view line) const {
    if (enabled(l)) sink(l, line);
  }
};

/// @brief The level spelled `name` as to_string(LogLevel) spells it ("debug",
/// ...; ASCII case ignored), or std::nullopt.
[[nodiscard]] inline std::optional<LogLevel> parse_log_level(std::string_view name) noexcept {
  for (const LogLevel l : {LogLevel::trace, LogLevel::debug, LogLevel::info, LogLevel::warning, LogLevel::error,
                           LogLevel::off}) {
    if (detail::iequals(name, to_string(l))) return l;
  }
  return std::nullopt;
}

/// @brief A Logger that writes each line at or above `level` to stderr as
/// `studentsvc <level>: <line>`, in one write (lines from threads do not interleave).
/// ClientOptions::from_env() sets it from `STUDENTSVC_LOG`.
[[nodiscard]] inline Logger stderr_logger(LogLevel level) {
  return Logger{level, [](LogLevel l, std::string_view line) {
                  std::string out = "studentsvc ";
                  out += to_string(l);
                  out += ": ";
                  out += line;
                  out += '\n';
                  std::fwrite(out.data(), 1, out.size(), stderr);
                }};
}

/// @brief Header names whose values may be logged; every other value is redacted.
inline constexpr std::array<std::string_view, 15> loggable_header_names = {
    "accept",         "accept-encoding", "cache-control", "connection", "content-length",
    "content-type",   "date",            "retry-after",   "server",     "svc-api-version",
    "transfer-encoding", "user-agent",   "x-request-id",  "x-correlation-id", "traceparent"};

/// @brief True when `name` is on the allow-list (case-insensitive).
[[nodiscard]] constexpr bool is_loggable_header(std::string_view name) noexcept {
  for (const auto allowed : loggable_header_names) {
    if (detail::iequals(name, allowed)) return true;
  }
  return false;
}

/// @brief `name: value` lines joined by ", ", with `REDACTED` for any name not on the allow-list.
[[nodiscard]] inline std::string redacted_headers(const Headers& headers) {
  std::string out;
  for (const auto& [name, value] : headers) {
    if (!out.empty()) out += ", ";
    out += name;
    out += ": ";
    out += is_loggable_header(name) ? std::string_view(value) : std::string_view("REDACTED");
  }
  return out;
}

}  // namespace studentsvc

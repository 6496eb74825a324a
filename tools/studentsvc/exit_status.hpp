#pragma once
// The tool's exit statuses and its one-line messages on stderr (tool code, not SDK API).

#include <iostream>
#include <string>
#include <string_view>

#include <studentsvc/errors.hpp>

namespace studentsvc_cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_internal = 1;
inline constexpr int exit_usage = 2;
/// A batch ran to its end and at least one lookup failed (the failures are in the output).
inline constexpr int exit_some_failed = 10;

/// One distinct status per ErrorKind (3..9; see the help text).
[[nodiscard]] constexpr int exit_status(studentsvc::ErrorKind kind) noexcept {
  using studentsvc::ErrorKind;
  switch (kind) {
    case ErrorKind::invalid_argument: return 3;
    case ErrorKind::transport: return 4;
    case ErrorKind::circuit_open: return 4;  // the service was unreachable just before: the same remedy
    case ErrorKind::bad_request: return 5;
    case ErrorKind::unauthorized: return 6;
    case ErrorKind::not_found: return 7;
    case ErrorKind::http_status: return 8;
    case ErrorKind::decode: return 9;
    default: break;  // a kind newer than this table (cancelled): the tool never asks for it
  }
  return exit_internal;
}

/// Replaces control characters, so text from the server or the SDK stays on one line
/// and cannot drive the terminal.
[[nodiscard]] inline std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) c = ' ';
  }
  return out;
}

inline void error_line(std::string_view text) { std::cerr << "studentsvc: " << printable(text) << '\n'; }

/// Usage error: one line on stderr, pointing at the help.
[[nodiscard]] inline int usage_error(std::string_view text) {
  std::cerr << "studentsvc: " << printable(text) << " (see 'studentsvc --help')\n";
  return exit_usage;
}

[[nodiscard]] inline int report(std::string_view command, const studentsvc::ApiError& error) {
  error_line(std::string(command) + ": " + studentsvc::to_string(error));
  return exit_status(error.kind);
}

}  // namespace studentsvc_cli

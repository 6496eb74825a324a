#pragma once
// The tool's exit statuses and its one-line messages on stderr (tool code, not SDK API).

#include <ostream>
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

/// Text made safe to show on a terminal, on one line: escape sequences (ESC,
/// as ECMA-48 delimits them), C1 controls (U+0080 to U+009F), DEL and the
/// bidirectional overrides (U+202A to U+202E, U+2066 to U+2069) are removed;
/// other C0 controls (line breaks, tabs) become a space, and a byte that is
/// not UTF-8 becomes `?`. Text from the server or the SDK cannot drive the
/// terminal or reorder the line that way.
[[nodiscard]] std::string printable(std::string_view text);

/// printable() for each line of a multi-line text (a body in the table output): the line breaks kept.
[[nodiscard]] std::string printable_lines(std::string_view text);

/// `studentsvc: TEXT` on `err`, made printable.
void error_line(std::ostream& err, std::string_view text);

/// Usage error: one line on `err`, pointing at the help; returns exit_usage.
[[nodiscard]] int usage_error(std::ostream& err, std::string_view text);

/// `studentsvc: COMMAND: ERROR` on `err`; returns the error's exit status.
[[nodiscard]] int report(std::ostream& err, std::string_view command, const studentsvc::ApiError& error);

}  // namespace studentsvc_cli

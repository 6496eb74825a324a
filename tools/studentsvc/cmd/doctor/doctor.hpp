#pragma once
// `studentsvc doctor`: a whole API client's setup checked step by step, as
// `gh auth status`, `aws configure list` and `gcloud info --run-diagnostics`
// do: configuration, proxy, name resolution, connect, TLS, base path, each
// credential, the API version and, asked for, one lookup. It stops at the
// first failure that makes the later checks meaningless, and its output is
// safe to paste into a ticket (no secret, no student field, perms masked).

#include "command.hpp"

namespace studentsvc_cli {

/// Runs the checks on the session's settings and prints them; the first failure's exit status.
[[nodiscard]] int run_doctor(Session& s);

extern const Command doctor_command;

}  // namespace studentsvc_cli

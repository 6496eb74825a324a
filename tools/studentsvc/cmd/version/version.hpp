#pragma once
// `studentsvc version` (and --version): the tool's and the SDK's version.

#include "command.hpp"

namespace studentsvc_cli {

/// Prints the version and the User-Agent on the session's out; exit_ok.
[[nodiscard]] int run_version(Session& s);

extern const Command version_command;

}  // namespace studentsvc_cli

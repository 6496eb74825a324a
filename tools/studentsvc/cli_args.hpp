#pragma once
// The tool's command line, parsed with CLI11: common options before or after
// the command, each command's options (registered by its own file, cmd/),
// help and usage errors handled by the tool itself (so `COMMAND --bogus
// --help` still shows the help).

#include <span>

#include "args.hpp"
#include "command.hpp"

namespace studentsvc_cli {

/// Parses the command line against the commands of `table`; a usage error is
/// kept in Args::first_error.
[[nodiscard]] Args parse_command_line(int argc, const char* const* argv, std::span<const Command* const> table);

}  // namespace studentsvc_cli

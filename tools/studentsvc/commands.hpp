#pragma once
// The table of the tool's commands, one folder each under cmd/: run_cli()
// parses the command line against it, finds the command and runs it.

#include <span>
#include <string>
#include <string_view>

#include "args.hpp"
#include "command.hpp"

namespace studentsvc_cli {

/// Every command, in the order the help lists them.
[[nodiscard]] std::span<const Command* const> commands();

/// The command named `name`, or nullptr.
[[nodiscard]] const Command* find_command(std::string_view name);

/// Parses the command line against the table; a usage error is kept in Args::first_error.
[[nodiscard]] Args parse_args(int argc, const char* const* argv);

/// "get, current, ... or mock": the commands `help` takes.
[[nodiscard]] std::string command_names();

/// The help of one command (`topic` "" for the overview).
[[nodiscard]] std::string help_text(std::string_view topic);

}  // namespace studentsvc_cli

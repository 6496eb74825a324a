#pragma once
// The table of the tool's commands, one file (or folder) each under cmd/: main()
// parses the command line against it, finds the command and runs it.

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "cli_args.hpp"
#include "cmd/config.hpp"
#include "cmd/conversation.hpp"
#include "cmd/current.hpp"
#include "cmd/doctor/doctor.hpp"
#include "cmd/get/get.hpp"
#include "cmd/mock.hpp"
#include "cmd/version.hpp"
#include "command.hpp"
#include "help_text.hpp"

namespace studentsvc_cli {

/// Every command, in the order the help lists them.
inline constexpr std::array<Command, 7> commands = {
    get_command, current_command, conversation_command, config_command, doctor_command, mock_command, version_command,
};

/// The command named `name`, or nullptr.
[[nodiscard]] inline const Command* find_command(std::string_view name) {
  for (const Command& c : commands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

/// Parses the command line against the table; a usage error is kept in Args::first_error.
[[nodiscard]] inline Args parse_args(int argc, const char* const* argv) {
  return parse_command_line(argc, argv, commands);
}

/// "get, current, ... or mock": the commands `help` takes.
[[nodiscard]] inline std::string command_names() {
  std::string out;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    out += std::string(commands[i].name);
    if (i + 2 < commands.size()) out += ", ";
    if (i + 2 == commands.size()) out += " or ";
  }
  return out;
}

/// The help of one command (`topic` "" for the overview).
[[nodiscard]] inline std::string help_text(std::string_view topic) {
  std::string out;
  if (const Command* c = find_command(topic)) {
    out = c->help;
    if (c->needs == Needs::nothing) return out;  // mock and version take no common option
  } else {
    out.append(main_help_intro).append(common_options_help).append("\n").append(exit_status_help);
    out.append("\n").append(doctor_exit_help).append("\n").append(main_help_examples);
    return out;
  }
  out.append("\nCommon options (connection, --mock, --verbose, ...): see 'studentsvc --help'.\n\n");
  out.append(exit_status_help);
  return out;
}

}  // namespace studentsvc_cli

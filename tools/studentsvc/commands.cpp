// The table of the tool's commands (commands.hpp).

#include "commands.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "cli_args.hpp"
#include "cmd/config/config.hpp"
#include "cmd/conversation/conversation.hpp"
#include "cmd/current/current.hpp"
#include "cmd/doctor/doctor.hpp"
#include "cmd/get/get.hpp"
#include "cmd/mock/mock.hpp"
#include "cmd/version/version.hpp"
#include "help_text.hpp"

namespace studentsvc_cli {

namespace {

// Addresses only: constant-initialized, whatever the order the files' objects are made in.
constexpr std::array<const Command*, 7> table = {
    &get_command,    &current_command, &conversation_command, &config_command,
    &doctor_command, &mock_command,    &version_command,
};

}  // namespace

std::span<const Command* const> commands() { return table; }

const Command* find_command(std::string_view name) {
  for (const Command* c : table) {
    if (c->name == name) return c;
  }
  return nullptr;
}

Args parse_args(int argc, const char* const* argv) { return parse_command_line(argc, argv, table); }

std::string command_names() {
  std::string out;
  for (std::size_t i = 0; i < table.size(); ++i) {
    out += std::string(table[i]->name);
    if (i + 2 < table.size()) out += ", ";
    if (i + 2 == table.size()) out += " or ";
  }
  return out;
}

std::string help_text(std::string_view topic) {
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

#pragma once
// `studentsvc config`: each setting, masked when secret, with its source; then the check.

#include "command.hpp"

namespace studentsvc_cli {

/// Prints the session's settings and checks them (Client::create); exit_ok or the check's status.
[[nodiscard]] int run_config(Session& s);

extern const Command config_command;

}  // namespace studentsvc_cli

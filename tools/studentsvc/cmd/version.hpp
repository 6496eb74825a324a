#pragma once
// `studentsvc version` (and --version): the tool's and the SDK's version.

#include <iostream>
#include <string_view>

#include <studentsvc/version.hpp>

#include "command.hpp"
#include "exit_status.hpp"

namespace studentsvc_cli {

inline constexpr std::string_view version_help =
    "Usage: studentsvc version\n"
    "\n"
    "Prints the version and the User-Agent the tool sends (also: studentsvc --version).\n";

[[nodiscard]] inline int run_version(Session&) {
  std::cout << "studentsvc " << studentsvc::version << " (" << studentsvc::user_agent << ")\n";
  return exit_ok;
}

inline constexpr Command version_command{
    .name = "version",
    .help = version_help,
    .needs = Needs::nothing,
    .run = run_version,  // before any misuse rule: `version` always answers
};

}  // namespace studentsvc_cli

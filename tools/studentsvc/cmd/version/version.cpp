// `studentsvc version` (and --version): the tool's and the SDK's version.

#include "cmd/version/version.hpp"

#include <ostream>
#include <string_view>

#include <studentsvc/version.hpp>

#include "exit_status.hpp"

namespace studentsvc_cli {

namespace {

constexpr std::string_view version_help =
    "Usage: studentsvc version\n"
    "\n"
    "Prints the version and the User-Agent the tool sends (also: studentsvc --version).\n";

}  // namespace

int run_version(Session& s) {
  s.io.out << "studentsvc " << studentsvc::version << " (" << studentsvc::user_agent << ")\n";
  return exit_ok;
}

const Command version_command{
    .name = "version",
    .help = version_help,
    .needs = Needs::nothing,
    .run = run_version,  // before any misuse rule: `version` always answers
};

}  // namespace studentsvc_cli

// `studentsvc current`: the student named by an end-user JWT (GET /students/v2/students/current).

#include "cmd/current/current.hpp"

#include <optional>
#include <string>
#include <utility>

#include <studentsvc/studentsvc.hpp>

#include "config_sources.hpp"
#include "exit_status.hpp"
#include "student_output.hpp"

namespace studentsvc_cli {

namespace {

constexpr std::string_view current_help =
    "Usage: studentsvc [OPTIONS] current [--jwt TOKEN]\n"
    "\n"
    "Looks up the student named by an end-user JWT (GET /students/v2/students/current)\n"
    "and prints the StudentMinimal record (perm, firstName, lastName, suffix, email).\n"
    "\n"
    "Options:\n"
    "  --jwt TOKEN            the user's JWT; when absent, STUDENTSVC_USER_JWT is read\n"
    "                         (safer than the flag); with --mock and neither, the mock's\n"
    "                         demo JWT is used\n"
    "  --format json|table    JSON (default) or a table\n";

void add_current_options(CLI::App& sub, Args& a) {
  sub.add_option_function<std::string>("--jwt", [&a](const std::string& v) { a.jwt = v; });
}

std::optional<std::string> current_misuse(const Args& a) {
  if (!a.positionals.empty()) return "current takes no arguments (the JWT goes in --jwt)";
  return batch_format_misuse(a);
}

}  // namespace

int run_current(Session& s) {
  const studentsvc::Client& client = *s.client;
  const Args& a = s.args;
  std::optional<std::string> demo_jwt = s.demo_jwt;
  std::optional<std::string> jwt = a.jwt;
  if (!jwt) jwt = getenv_string("STUDENTSVC_USER_JWT");
  if (!jwt && demo_jwt) {
    client.options().logger.log(studentsvc::LogLevel::debug, "current: using the mock server's demo user JWT");
    jwt = std::move(demo_jwt);
  }
  if (!jwt) {
    error_line(s.io.err, "current: no user JWT: pass --jwt TOKEN or set STUDENTSVC_USER_JWT");
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  const auto student = client.current_student(*jwt);
  if (!student) return report(s.io.err, "current", student.error());
  print_student(s.io.out, *student, a.format.value_or(Format::json), false);
  return exit_ok;
}

const Command current_command{
    .name = "current",
    .help = current_help,
    .needs = Needs::client,
    .add_options = add_current_options,
    .misuse = current_misuse,
    .run = run_current,
};

}  // namespace studentsvc_cli

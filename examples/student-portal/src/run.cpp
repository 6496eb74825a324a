#include "run.hpp"

#include "server.hpp"

namespace student_portal {

int run(std::span<const std::string_view> args, const EnvLookup& env, std::ostream& out, std::ostream& log) {
  const auto settings = parse_arguments(args);
  if (!settings) {
    log << "student-portal: " << settings.error() << "\n" << usage;
    return exit_usage;
  }
  if (!*settings) {
    out << usage;
    return exit_ok;
  }
  auto options = studentsvc::ClientOptions::from_env(env);
  if (!options) {  // from_env's errors name the variable, never its value
    log << "student-portal: configuration: " << to_string(options.error()) << '\n';
    return exit_config;
  }
  return serve(**settings, portal_client_options(std::move(*options)), out, log);
}

}  // namespace student_portal

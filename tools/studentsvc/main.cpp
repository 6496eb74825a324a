// studentsvc — the command-line client of the Student Information and
// Conversation Service, built on the studentsvc C++ SDK. Each command is in
// its own file under cmd/, collected in the table of commands.hpp; this file
// parses, finds the command, sets up what it needs and runs it. The help
// texts are the reference: commands, options, exit statuses.
//
// Configuration comes from the STUDENTSVC_* environment (see the README) and
// the matching flags; a flag beats its variable. With --mock the environment's
// connection settings are ignored and the bundled MockServer's are used.
// Nothing this program prints ever holds the API key, the password, the Basic
// value or a JWT, --verbose included (`studentsvc mock` prints only the mock's
// own test credentials).

#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <studentsvc/metrics.hpp>
#include <studentsvc/studentsvc.hpp>

#include "commands.hpp"
#include "config_sources.hpp"
#include "exit_status.hpp"

#if STUDENTSVC_CLI_WITH_MOCK
#include <studentsvc/testing/mock_server.hpp>
#endif

namespace {

using namespace studentsvc_cli;

#if STUDENTSVC_CLI_WITH_MOCK
/// The mock runs in this process on 127.0.0.1; keep any proxy from the
/// environment away from it (only this process's environment is changed).
void bypass_proxy_for_loopback() {
  ::setenv("no_proxy", "127.0.0.1,localhost,::1", 1);  // NOLINT(concurrency-mt-unsafe): before any thread
  ::setenv("NO_PROXY", "127.0.0.1,localhost,::1", 1);  // NOLINT(concurrency-mt-unsafe)
}
#endif

/// The rules that hold for every command, after the command's own.
[[nodiscard]] std::optional<std::string> common_misuse(const Args& a) {
  if (a.mock && a.env_overrides.contains("STUDENTSVC_BASE_URL")) return "--mock and --base-url do not go together";
  if (a.mock && a.command == "mock") return "--mock does not go with the mock command";
  return std::nullopt;
}

[[nodiscard]] int print_help(const Args& a) {
  std::string topic = a.command == "help" ? "" : a.command;
  if (a.command == "help" && !a.positionals.empty()) {
    if (a.positionals.size() > 1 || find_command(a.positionals.front()) == nullptr) {
      return usage_error("help takes one command: " + command_names());
    }
    topic = a.positionals.front();
  }
  std::cout << help_text(topic);
  if (!std::cout.flush()) {
    error_line("could not write the output");
    return exit_internal;
  }
  return exit_ok;
}

[[nodiscard]] int run(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  Session session(a);
  if (a.version || a.command == "version") return find_command("version")->run(session);
  if (a.help || a.command == "help") return print_help(a);
  if (a.first_error) return usage_error(*a.first_error);
  if (a.command.empty()) return usage_error("no command given");
  const Command& command = *find_command(a.command);
  if (command.misuse) {
    if (const auto misuse = command.misuse(a)) return usage_error(*misuse);
  }
  if (const auto misuse = common_misuse(a)) return usage_error(*misuse);
#if !STUDENTSVC_CLI_WITH_MOCK
  if (a.mock) return usage_error("--mock is not available: this build has no mock server (cpp-httplib)");
#endif
  if (command.prepare) {
    if (const auto status = command.prepare(session)) return *status;
  }
  if (command.needs == Needs::nothing) return command.run(session);

  std::optional<studentsvc::ClientOptions> mock_options;
#if STUDENTSVC_CLI_WITH_MOCK
  std::optional<studentsvc::testing::MockServer> mock;
  if (a.mock) {
    bypass_proxy_for_loopback();
    mock.emplace();
    if (!mock->running()) {
      error_line("the mock server did not start");
      return exit_internal;
    }
    mock_options = mock->client_options();
    session.demo_jwt = "mock-jwt-ana";  // MockServerOptions' default token for student 1234567
  }
#endif

  auto profile = selected_profile(a);
  if (!profile) {
    error_line(profile.error());
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  const ConfigSources sources(a, mock_options, std::move(*profile));
  session.sources = &sources;
  if (command.needs == Needs::configuration) return command.run(session);

  // The configuration is checked once, before anything is sent: a mistake is one line, not a row per perm.
  auto options = build_options(a, sources);
  if (!options) {
    error_line(options.error().message);
    return exit_status(options.error().kind);
  }
  if (a.mock) options->logger.log(studentsvc::LogLevel::debug, "using the bundled mock server on 127.0.0.1");
  if (command.configure) command.configure(a, *options);
  std::shared_ptr<studentsvc::AttemptMetrics> stats;
  if (a.stats) {
    stats = std::make_shared<studentsvc::AttemptMetrics>();
    options->instrumentation = stats;
  }
  auto client = studentsvc::Client::create(std::move(*options));
  if (!client) return report(a.command, client.error());
  session.client = &*client;

  const int status = command.run(session);
  if (stats) std::cerr << stats->prometheus_text();  // the SDK's own labels only: no perm, no secret
  if (!std::cout.flush()) {
    error_line("could not write the output");
    return exit_internal;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    studentsvc_cli::error_line(std::string("internal error: ") + e.what());
  } catch (...) {
    studentsvc_cli::error_line("internal error");
  }
  return studentsvc_cli::exit_internal;
}

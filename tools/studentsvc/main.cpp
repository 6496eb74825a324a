// studentsvc — the command-line client of the Student Information and
// Conversation Service, built on the studentsvc C++ SDK. The help text
// (help_text.hpp) is the reference: commands, options, exit statuses.
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

#include "cli_args.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "exit_status.hpp"
#include "help_text.hpp"

#if STUDENTSVC_CLI_WITH_MOCK
#include <studentsvc/testing/mock_server.hpp>

#include "mock_command.hpp"
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

[[nodiscard]] bool is_command(const std::string& word) {
  return word == "get" || word == "current" || word == "conversation" || word == "config" || word == "mock";
}

/// The per-command checks CLI11 does not make; nullopt when the arguments fit.
[[nodiscard]] std::optional<std::string> command_misuse(const Args& a) {
  if (a.command == "current" && !a.positionals.empty()) return "current takes no arguments (the JWT goes in --jwt)";
  if (a.command == "conversation" && a.positionals.size() > 1) return "conversation takes at most one SUBPATH";
  if (a.command == "get" && a.positionals.empty() && !a.from) return "get takes at least one PERM (or --from FILE)";
  if (a.command != "get" && a.format && (*a.format == Format::csv || *a.format == Format::ndjson)) {
    return "--format csv and ndjson apply to 'get' only";
  }
  if (a.mock && a.env_overrides.contains("STUDENTSVC_BASE_URL")) return "--mock and --base-url do not go together";
  if (a.mock && a.command == "mock") return "--mock does not go with the mock command";
  return std::nullopt;
}

[[nodiscard]] int run(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  if (a.version || a.command == "version") {
    std::cout << "studentsvc " << studentsvc::version << " (" << studentsvc::user_agent << ")\n";
    return exit_ok;
  }
  if (a.help || a.command == "help") {
    std::string topic = a.command == "help" ? "" : a.command;
    if (a.command == "help" && !a.positionals.empty()) {
      if (a.positionals.size() > 1 || !is_command(a.positionals.front())) {
        return usage_error("help takes one command: get, current, conversation, config or mock");
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
  if (a.first_error) return usage_error(*a.first_error);
  if (a.command.empty()) return usage_error("no command given");
  if (const auto misuse = command_misuse(a)) return usage_error(*misuse);

  if (a.command == "mock") {
#if STUDENTSVC_CLI_WITH_MOCK
    return run_mock(a);
#else
    return usage_error("mock is not available: this build has no mock server (cpp-httplib)");
#endif
  }

  std::vector<std::string> perms;
  if (a.command == "get") {
    auto read = get_perms(a);
    if (!read) {
      if (read.error().first == exit_usage) return usage_error(read.error().second);
      error_line("get: " + read.error().second);
      return read.error().first;
    }
    perms = std::move(*read);
    if (perms.empty()) {
      error_line("get: no perms to look up in " + *a.from);
      return exit_status(studentsvc::ErrorKind::invalid_argument);
    }
  }

  std::optional<studentsvc::ClientOptions> mock_options;
  std::optional<std::string> demo_jwt;
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
    demo_jwt = "mock-jwt-ana";  // MockServerOptions' default token for student 1234567
  }
#else
  if (a.mock) return usage_error("--mock is not available: this build has no mock server (cpp-httplib)");
#endif

  auto profile = selected_profile(a);
  if (!profile) {
    error_line(profile.error());
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  const ConfigSources sources(a, mock_options, std::move(*profile));
  if (a.command == "config") {
    const int status = run_config(a, sources);
    if (!std::cout.flush()) return exit_internal;
    return status;
  }

  // The configuration is checked once, before anything is sent: a mistake is one line, not a row per perm.
  auto options = build_options(a, sources);
  if (!options) {
    error_line(options.error().message);
    return exit_status(options.error().kind);
  }
  if (a.mock) options->logger.log(studentsvc::LogLevel::debug, "using the bundled mock server on 127.0.0.1");
  std::shared_ptr<studentsvc::AttemptMetrics> stats;
  if (a.stats) {
    stats = std::make_shared<studentsvc::AttemptMetrics>();
    options->instrumentation = stats;
  }
  auto client = studentsvc::Client::create(std::move(*options));
  if (!client) return report(a.command, client.error());

  int status = exit_internal;
  if (a.command == "get") status = run_get(*client, a, perms);
  if (a.command == "current") status = run_current(*client, a, demo_jwt);
  if (a.command == "conversation") status = run_conversation(*client, a);
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

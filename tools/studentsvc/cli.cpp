// The tool's dispatcher (cli.hpp): what main() did, on the streams it is given.
//
// Configuration comes from the STUDENTSVC_* environment (see docs/tool.md) and
// the matching flags; a flag beats its variable. With --mock the environment's
// connection settings are ignored and the bundled MockServer's are used.
// Nothing this program prints ever holds the API key, the password, the Basic
// value or a JWT, --verbose included (`studentsvc mock` prints only the mock's
// own test credentials).

#include "cli.hpp"

#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include <studentsvc/metrics.hpp>
#include <studentsvc/studentsvc.hpp>

#include "cmd/mock/mock.hpp"
#include "command.hpp"
#include "commands.hpp"
#include "config_sources.hpp"
#include "exit_status.hpp"

namespace studentsvc_cli {

namespace {

#if STUDENTSVC_CLI_WITH_MOCK
/// The mock runs in this process on 127.0.0.1; keep any proxy from the
/// environment away from it (only this process's environment is changed).
void bypass_proxy_for_loopback() {
  ::setenv("no_proxy", "127.0.0.1,localhost,::1", 1);  // NOLINT(concurrency-mt-unsafe): before any thread
  ::setenv("NO_PROXY", "127.0.0.1,localhost,::1", 1);  // NOLINT(concurrency-mt-unsafe)
}
#endif

/// The rules that hold for every command, after the command's own.
std::optional<std::string> common_misuse(const Args& a) {
  if (a.mock && a.env_overrides.contains("STUDENTSVC_BASE_URL")) return "--mock and --base-url do not go together";
  if (a.mock && a.command == "mock") return "--mock does not go with the mock command";
  if (a.stats && (a.command == "config" || a.command == "mock")) {
    return "--stats applies to get, current, conversation and doctor (" + a.command + " makes no lookup to count)";
  }
  return std::nullopt;
}

int print_help(const Args& a, IoStreams io) {
  std::string topic = a.command == "help" ? "" : a.command;
  if (a.command == "help" && !a.positionals.empty()) {
    if (a.positionals.size() > 1 || find_command(a.positionals.front()) == nullptr) {
      return usage_error(io.err, "help takes one command: " + command_names());
    }
    topic = a.positionals.front();
  }
  io.out << help_text(topic);
  return exit_ok;
}

int run_command(int argc, const char* const* argv, IoStreams io) {
  const Args a = parse_args(argc, argv);
  Session session(a, io);
  if (a.version || a.command == "version") return find_command("version")->run(session);
  if (a.help || a.command == "help") return print_help(a, io);
  if (a.first_error) return usage_error(io.err, *a.first_error);
  if (a.command.empty()) return usage_error(io.err, "no command given");
  const Command& command = *find_command(a.command);
  if (command.misuse) {
    if (const auto misuse = command.misuse(a)) return usage_error(io.err, *misuse);
  }
  if (const auto misuse = common_misuse(a)) return usage_error(io.err, *misuse);
#if !STUDENTSVC_CLI_WITH_MOCK
  if (a.mock) return usage_error(io.err, "--mock is not available: this build has no mock server (cpp-httplib)");
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
    mock.emplace(mock_server_options(a));
    if (!mock->running()) {
      error_line(io.err, "the mock server did not start");
      return exit_internal;
    }
    mock_options = mock->client_options();
    session.demo_jwt = "mock-jwt-ana";  // MockServerOptions' default token for student 1234567
  }
#endif

  auto profile = selected_profile(a);
  if (!profile) {
    error_line(io.err, profile.error());
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  const ConfigSources sources(a, mock_options, std::move(*profile));
  session.sources = &sources;
  if (command.needs == Needs::configuration) return command.run(session);

  // The configuration is checked once, before anything is sent: a mistake is one line, not a row per perm.
  auto options = build_options(a, sources, io.err);
  if (!options) {
    error_line(io.err, options.error().message);
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
  if (!client) return report(io.err, a.command, client.error());
  session.client = &*client;

  const int status = command.run(session);
  if (stats) io.err << stats->prometheus_text();  // the SDK's own labels only: no perm, no secret
  return status;
}

}  // namespace

int run_cli(int argc, const char* const* argv, IoStreams io) {
  const int status = run_command(argc, argv, io);
  if (!io.out.flush()) {
    error_line(io.err, "could not write the output");
    return exit_internal;
  }
  return status;
}

}  // namespace studentsvc_cli

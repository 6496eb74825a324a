// The tool's command line, parsed with CLI11: common options before or after
// the command, each command's options (registered by its own file, cmd/),
// help and usage errors handled by the tool itself (so `COMMAND --bogus
// --help` still shows the help).

#include "cli_args.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "args.hpp"
#include "command.hpp"

namespace studentsvc_cli {

namespace {

void env_option(CLI::App& app, Args& a, const std::string& flag, const std::string& env) {
  app.add_option_function<std::string>(flag, [&a, env](const std::string& v) { a.env_overrides[env] = v; });
}

std::optional<Format> format_named(const std::string& name) {
  if (name == "json") return Format::json;
  if (name == "ndjson") return Format::ndjson;
  if (name == "csv") return Format::csv;
  if (name == "table") return Format::table;
  return std::nullopt;
}

/// A CLI11 message with every value from the command line (anything not an
/// option name) replaced: a secret given in the wrong place is never echoed.
std::string without_values(std::string message, int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("-")) {
      const auto eq = arg.find('=');
      if (eq == std::string_view::npos) continue;
      arg.remove_prefix(eq + 1);
    }
    if (arg.size() < 2) continue;  // a one-character value cannot be told from the message's own text
    for (auto at = message.find(arg); at != std::string::npos; at = message.find(arg, at + 7)) {
      message.replace(at, arg.size(), "(value)");
    }
  }
  return message;
}

}  // namespace

Args parse_command_line(int argc, const char* const* argv, std::span<const Command* const> table) {
  Args a;
  CLI::App app("studentsvc", "studentsvc");
  app.set_help_flag();  // the tool prints its own help (help_text.hpp)
  app.allow_extras();
  app.fallthrough();
  app.require_subcommand(0, 1);
  // An option given twice keeps its last value (a wrapper script's default, then the user's own).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  env_option(app, a, "--base-url", "STUDENTSVC_BASE_URL");
  env_option(app, a, "--api-key", "STUDENTSVC_API_KEY");
  env_option(app, a, "--svc-api-key", "STUDENTSVC_SVC_API_KEY");
  env_option(app, a, "--network-id", "STUDENTSVC_NETWORK_ID");
  env_option(app, a, "--password", "STUDENTSVC_PASSWORD");
  env_option(app, a, "--api-version", "STUDENTSVC_API_VERSION");
  env_option(app, a, "--perm-syntax", "STUDENTSVC_PERM_SYNTAX");
  env_option(app, a, "--ca-bundle", "STUDENTSVC_CA_BUNDLE");
  env_option(app, a, "--ca-pem", "STUDENTSVC_CA_PEM");
  env_option(app, a, "--client-cert", "STUDENTSVC_CLIENT_CERT");
  env_option(app, a, "--client-key", "STUDENTSVC_CLIENT_KEY");
  env_option(app, a, "--client-key-password", "STUDENTSVC_CLIENT_KEY_PASSWORD");
  env_option(app, a, "--pinned-public-key", "STUDENTSVC_PINNED_PUBLIC_KEY");
  app.add_option("--proxy", a.proxy);
  app.add_option_function<std::string>("--profile", [&a](const std::string& v) { a.profile = v; });
  app.add_option_function<std::string>("--config", [&a](const std::string& v) { a.config_file = v; });
  app.add_flag("--insecure-loopback", a.insecure_loopback)->disable_flag_override();
  app.add_option_function<long long>("--timeout", [&a](long long ms) { a.timeout = std::chrono::milliseconds(ms); })
      ->check(CLI::Range(1LL, 86'400'000LL));
  app.add_option_function<int>("--retries", [&a](int n) { a.retries = n; })->check(CLI::Range(0, 10));
  app.add_flag("--mock", a.mock)->disable_flag_override();
  app.add_option_function<std::string>("-o,--output,--format",
                                       [&a](const std::string& v) { a.format = format_named(v); })
      ->check(CLI::IsMember({"json", "ndjson", "csv", "table"}));
  app.add_flag("-v,--verbose", a.verbose)->disable_flag_override();
  app.add_flag("--stats", a.stats)->disable_flag_override();
  app.add_flag("-h,--help", a.help)->disable_flag_override();
  app.add_flag("--version", a.version)->disable_flag_override();

  std::string names;
  for (const Command* command : table) {
    const Command& c = *command;
    auto* sub = app.add_subcommand(std::string(c.name));
    if (c.add_options) c.add_options(*sub, a);
    names += std::string(c.name) + ", ";
  }
  auto* help = app.add_subcommand("help");
  help->add_option("topic", a.positionals);

  for (auto* sub : app.get_subcommands({})) {
    sub->set_help_flag();
    sub->allow_extras(false);
  }

  std::vector<std::string> args;
  for (int i = argc - 1; i > 0; --i) args.emplace_back(argv[i]);  // CLI11 takes them reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    a.first_error = without_values(e.what(), argc, argv);
  }
  for (auto* sub : app.get_subcommands({})) {
    if (sub->parsed()) a.command = sub->get_name();
  }
  if (!a.first_error) {
    for (const auto& extra : app.remaining()) {
      if (extra.starts_with("-")) {
        a.first_error = "unknown option " + extra.substr(0, extra.find('=')) +
                        (a.command.empty() ? "" : " (for '" + a.command + "')");
      } else if (a.command.empty()) {
        a.first_error = "unknown command (expected " + names + "or help)";
      } else {
        a.first_error = a.command + " takes no such argument (a value goes after its option)";
      }
      break;
    }
  }
  return a;
}

}  // namespace studentsvc_cli

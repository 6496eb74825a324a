#pragma once
// The tool's command line, parsed with CLI11: common options before or after
// the command, per-command options, help and usage errors handled by the tool
// itself (so `COMMAND --bogus --help` still shows the help).

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "student_output.hpp"

namespace studentsvc_cli {

struct Args {
  std::string command;  ///< get, current, conversation, config, mock, version, help; empty when none.
  std::vector<std::string> positionals;
  std::optional<std::string> first_error;  ///< The first usage error; reported unless --help/--version.

  std::map<std::string, std::string, std::less<>> env_overrides;  ///< STUDENTSVC_* name → flag value.
  std::string proxy;
  std::optional<std::string> profile;      ///< --profile (else STUDENTSVC_PROFILE)
  std::optional<std::string> config_file;  ///< --config (else STUDENTSVC_CONFIG, else the default file)
  bool insecure_loopback = false;
  bool mock = false;
  bool help = false;
  bool version = false;
  int verbose = 0;
  bool stats = false;  ///< --stats: the attempt metrics on stderr at the end
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<int> retries;
  std::optional<Format> format;

  std::optional<std::string> jwt;
  // conversation
  std::optional<std::string> method;
  std::optional<std::string> data;
  std::optional<std::string> content_type;
  std::vector<std::pair<std::string, std::string>> query;
  bool idempotent = false;
  // get
  std::optional<std::string> from;
  std::optional<std::string> column;
  std::size_t concurrency = 16;
  bool fail_fast = false;
  bool quiet = false;
  // mock
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::optional<std::string> students_file;
  std::chrono::milliseconds latency{0};
  int port = 0;  ///< mock --port; 0: a free port
};

namespace detail_args {

inline void env_option(CLI::App& app, Args& a, const std::string& flag, const std::string& env) {
  app.add_option_function<std::string>(flag, [&a, env](const std::string& v) { a.env_overrides[env] = v; });
}

[[nodiscard]] inline std::optional<Format> format_named(const std::string& name) {
  if (name == "json") return Format::json;
  if (name == "ndjson") return Format::ndjson;
  if (name == "csv") return Format::csv;
  if (name == "table") return Format::table;
  return std::nullopt;
}

/// A CLI11 message with every value from the command line (anything not an
/// option name) replaced: a secret given in the wrong place is never echoed.
[[nodiscard]] inline std::string without_values(std::string message, int argc, const char* const* argv) {
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

}  // namespace detail_args

/// Parses the command line; a usage error is kept in Args::first_error.
[[nodiscard]] inline Args parse_args(int argc, const char* const* argv) {
  Args a;
  CLI::App app("studentsvc", "studentsvc");
  app.set_help_flag();  // the tool prints its own help (help_text.hpp)
  app.allow_extras();
  app.fallthrough();
  app.require_subcommand(0, 1);
  // An option given twice keeps its last value (a wrapper script's default, then the user's own).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  using detail_args::env_option;
  env_option(app, a, "--base-url", "STUDENTSVC_BASE_URL");
  env_option(app, a, "--api-key", "STUDENTSVC_API_KEY");
  env_option(app, a, "--svc-api-key", "STUDENTSVC_SVC_API_KEY");
  env_option(app, a, "--network-id", "STUDENTSVC_NETWORK_ID");
  env_option(app, a, "--password", "STUDENTSVC_PASSWORD");
  env_option(app, a, "--api-version", "STUDENTSVC_API_VERSION");
  env_option(app, a, "--ca-bundle", "STUDENTSVC_CA_BUNDLE");
  app.add_option("--proxy", a.proxy);
  app.add_option_function<std::string>("--profile", [&a](const std::string& v) { a.profile = v; });
  app.add_option_function<std::string>("--config", [&a](const std::string& v) { a.config_file = v; });
  app.add_flag("--insecure-loopback", a.insecure_loopback)->disable_flag_override();
  app.add_option_function<long long>("--timeout", [&a](long long ms) { a.timeout = std::chrono::milliseconds(ms); })
      ->check(CLI::Range(1LL, 86'400'000LL));
  app.add_option_function<int>("--retries", [&a](int n) { a.retries = n; })->check(CLI::Range(0, 10));
  app.add_flag("--mock", a.mock)->disable_flag_override();
  app.add_option_function<std::string>("-o,--output,--format", [&a](const std::string& v) {
       a.format = detail_args::format_named(v);
     })->check(CLI::IsMember({"json", "ndjson", "csv", "table"}));
  app.add_flag("-v,--verbose", a.verbose)->disable_flag_override();
  app.add_flag("--stats", a.stats)->disable_flag_override();
  app.add_flag("-h,--help", a.help)->disable_flag_override();
  app.add_flag("--version", a.version)->disable_flag_override();

  auto* get = app.add_subcommand("get");
  get->add_option("perms", a.positionals);
  get->add_option_function<std::string>("--jwt", [&a](const std::string& v) { a.jwt = v; });
  get->add_option_function<std::string>("--from", [&a](const std::string& v) { a.from = v; });
  get->add_option_function<std::string>("--column", [&a](const std::string& v) { a.column = v; });
  get->add_option("--concurrency", a.concurrency)->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  get->add_flag("--fail-fast", a.fail_fast)->disable_flag_override();
  get->add_flag("-q,--quiet", a.quiet)->disable_flag_override();

  auto* current = app.add_subcommand("current");
  current->add_option_function<std::string>("--jwt", [&a](const std::string& v) { a.jwt = v; });

  auto* conversation = app.add_subcommand("conversation");
  conversation->add_option("subpath", a.positionals);
  conversation->add_option_function<std::string>("--method", [&a](const std::string& v) { a.method = v; });
  conversation->add_option_function<std::string>("--data", [&a](const std::string& v) { a.data = v; });
  conversation->add_option_function<std::string>("--content-type",
                                                 [&a](const std::string& v) { a.content_type = v; });
  conversation->add_option_function<std::vector<std::string>>("--query", [&a](const std::vector<std::string>& v) {
    for (const auto& kv : v) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw CLI::ValidationError("--query", "expects K=V, got '" + kv + "'");
      a.query.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  })->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)->allow_extra_args(false);
  conversation->add_flag("--idempotent", a.idempotent)->disable_flag_override();

  app.add_subcommand("config");

  auto* mock = app.add_subcommand("mock");
  mock->add_option_function<std::string>("--tls-cert", [&a](const std::string& v) { a.tls_cert = v; });
  mock->add_option_function<std::string>("--tls-key", [&a](const std::string& v) { a.tls_key = v; });
  mock->add_option_function<std::string>("--students", [&a](const std::string& v) { a.students_file = v; });
  mock->add_option("--port", a.port)->check(CLI::Range(1, 65535));
  mock->add_option_function<long long>("--latency", [&a](long long ms) { a.latency = std::chrono::milliseconds(ms); })
      ->check(CLI::Range(0LL, 60'000LL));

  app.add_subcommand("version");
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
    a.first_error = detail_args::without_values(e.what(), argc, argv);
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
        a.first_error = "unknown command (expected get, current, conversation, config, mock, version or help)";
      } else {
        a.first_error = a.command + " takes no such argument (a value goes after its option)";
      }
      break;
    }
  }
  return a;
}

}  // namespace studentsvc_cli

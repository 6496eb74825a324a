// studentsvc — the command-line client of the Student Information and
// Conversation Service, built on the studentsvc C++ SDK.
//
//   studentsvc [OPTIONS] get PERM
//   studentsvc [OPTIONS] current [--jwt TOKEN]
//   studentsvc [OPTIONS] conversation [--method M] [--data BODY] [--query K=V]... [SUBPATH]
//   studentsvc --mock get 1234567          (the demo: an in-process mock server, no network)
//
// Configuration comes from the STUDENTSVC_* environment (see the README) and
// the matching flags; a flag beats its variable. With --mock the environment's
// connection settings are ignored and the bundled MockServer's are used.
//
// Output: JSON on stdout (the interface's own keys), or `--format table`.
// An error is one line on stderr. Nothing this program prints ever holds the
// API key, the password, the Basic value or a JWT, --verbose included.
//
// Exit statuses (stable; scripts may rely on them):
//   0  success
//   1  internal error: an unexpected failure, stdout could not be written, or
//      the mock server did not start
//   2  usage error: unknown command or option, missing or malformed argument
//   3  invalid_argument: bad input or configuration caught before anything was
//      sent (perm not 7 digits, empty or missing JWT, no base URL or API key,
//      http:// without --insecure-loopback, CR/LF in a header value)
//   4  transport: DNS, connect, TLS, timeout, connection reset, response too large
//   5  bad_request: the service answered 400
//   6  unauthorized: the service answered 401 (API key, Basic credential or user JWT refused)
//   7  not_found: the service answered 404
//   8  http_status: any other non-2xx status
//   9  decode: a 2xx answer whose body is not the documented JSON

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/detail/student_fields.hpp>
#include <studentsvc/studentsvc.hpp>

#include "cli_json.hpp"

#if STUDENTSVC_CLI_WITH_MOCK
#include <studentsvc/testing/mock_server.hpp>
#endif

namespace {

using studentsvc::ApiError;
using studentsvc::ErrorKind;

// ---------------------------------------------------------------- exit statuses

constexpr int exit_ok = 0;
constexpr int exit_internal = 1;
constexpr int exit_usage = 2;

/// One distinct status per ErrorKind (see the table at the top of this file).
[[nodiscard]] constexpr int exit_status(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_argument: return 3;
    case ErrorKind::transport: return 4;
    case ErrorKind::bad_request: return 5;
    case ErrorKind::unauthorized: return 6;
    case ErrorKind::not_found: return 7;
    case ErrorKind::http_status: return 8;
    case ErrorKind::decode: return 9;
  }
  return exit_internal;
}

// ---------------------------------------------------------------- help texts

constexpr std::string_view exit_status_help =
    "Exit status:\n"
    "  0  success\n"
    "  1  internal error (unexpected failure, output not written, mock server did not start)\n"
    "  2  usage error (unknown command or option, missing or malformed argument)\n"
    "  3  invalid_argument: bad input or configuration, nothing was sent\n"
    "     (perm not 7 digits, no or empty JWT, no base URL or API key,\n"
    "     http:// without --insecure-loopback)\n"
    "  4  transport: DNS, connect, TLS, timeout, connection reset, response too large\n"
    "  5  bad_request: the service answered 400\n"
    "  6  unauthorized: the service answered 401 (API key, Basic credential or JWT refused)\n"
    "  7  not_found: the service answered 404\n"
    "  8  http_status: any other non-2xx status\n"
    "  9  decode: a 2xx answer whose body is not the documented JSON\n";

constexpr std::string_view common_options_help =
    "Connection options (a flag beats its environment variable):\n"
    "  --base-url URL         https://host[:port][/prefix]        [STUDENTSVC_BASE_URL]\n"
    "  --api-key KEY          x-api-key (and svc-api-key)          [STUDENTSVC_API_KEY]\n"
    "  --svc-api-key KEY|off  another svc-api-key, or none         [STUDENTSVC_SVC_API_KEY]\n"
    "  --network-id ID        service account for HTTP Basic       [STUDENTSVC_NETWORK_ID]\n"
    "  --password PASSWORD    its password                         [STUDENTSVC_PASSWORD]\n"
    "  --api-version V        svc-api-version (default 2.0)        [STUDENTSVC_API_VERSION]\n"
    "  --ca-bundle FILE       PEM file of trusted CAs              [STUDENTSVC_CA_BUNDLE]\n"
    "  --proxy URL            explicit proxy (default: libcurl's https_proxy, no_proxy)\n"
    "  --insecure-loopback    allow http:// to 127.0.0.1, ::1 or localhost only (local tests)\n"
    "  --timeout MS           whole-request timeout in milliseconds (default 30000)\n"
    "  --retries N            retries on transient failures (transport, 408, 429, 5xx),\n"
    "                         0-10 (default 2); conversation only with --idempotent\n"
    "  --mock                 use the bundled mock server, started in this process\n"
    "                         (the demo: no network, the environment's connection\n"
    "                         settings are ignored, flags still apply)\n"
    "\n"
    "Output options:\n"
    "  --format json|table    JSON on stdout (default), or a readable table\n"
    "  -v, --verbose          log each call to stderr (status, attempts, time); twice\n"
    "                         adds the request headers, every credential as REDACTED\n"
    "  -h, --help             show help and exit\n"
    "  --version              print the version and exit\n"
    "\n"
    "Secrets: prefer the environment (STUDENTSVC_API_KEY, STUDENTSVC_PASSWORD,\n"
    "STUDENTSVC_USER_JWT) to --api-key, --password and --jwt: command-line arguments\n"
    "are visible to other local users (ps) and are kept in shell history. Nothing\n"
    "this tool prints holds a key, password, Basic value or JWT, --verbose included.\n";

constexpr std::string_view main_help_intro =
    "Usage: studentsvc [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Command-line client of the Student Information and Conversation Service.\n"
    "\n"
    "Commands:\n"
    "  get PERM               one student by 7-digit perm number\n"
    "  current                the student named by a user JWT (--jwt or STUDENTSVC_USER_JWT)\n"
    "  conversation [SUBPATH] call {base_url}/conversation[/SUBPATH] and print the answer\n"
    "  help [COMMAND]         this help, or a command's help\n"
    "\n"
    "Run 'studentsvc COMMAND --help' for a command's own options. Options may come\n"
    "before or after the command; '--' ends the options.\n"
    "\n";

constexpr std::string_view main_help_examples =
    "Examples:\n"
    "  studentsvc --mock get 1234567\n"
    "  studentsvc --mock --format table get 2345678\n"
    "  studentsvc --mock current --jwt mock-jwt-li\n"
    "  studentsvc --mock conversation --data '{\"text\":\"hello\"}' threads/42\n"
    "  STUDENTSVC_BASE_URL=https://api.example.edu STUDENTSVC_API_KEY=... studentsvc get 1234567\n";

constexpr std::string_view get_help =
    "Usage: studentsvc [OPTIONS] get PERM [--jwt TOKEN]\n"
    "\n"
    "Looks up one student by perm number (GET /students/v2/students/PERM) and\n"
    "prints the StudentExtended record. Extended-only fields are null unless the\n"
    "service account is approved for them.\n"
    "\n"
    "Arguments:\n"
    "  PERM                   the 7-digit perm number\n"
    "\n"
    "Options:\n"
    "  --jwt TOKEN            send svc-user-jwt: only the token's own student is returned\n"
    "  --format json|table    JSON (default), or a table of the fields and their\n"
    "                         typed views (gender, international status, admit level,\n"
    "                         birth date as YYYY-MM-DD, release status)\n";

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

constexpr std::string_view conversation_help =
    "Usage: studentsvc [OPTIONS] conversation [--method M] [--data BODY] [--query K=V]... [SUBPATH]\n"
    "\n"
    "Calls {base_url}/conversation[/SUBPATH]. The interface shows neither the method\n"
    "nor the payloads of this endpoint, so both pass through as given.\n"
    "\n"
    "Arguments:\n"
    "  SUBPATH                optional path below /conversation, e.g. threads/42\n"
    "                         (each segment is percent-encoded; '.' and '..' are refused)\n"
    "\n"
    "Options:\n"
    "  --method M             HTTP method (default GET, or POST when --data is given)\n"
    "  --data BODY            request body, e.g. '{\"text\":\"hello\"}'\n"
    "  --content-type TYPE    Content-Type of the body (default application/json)\n"
    "  --query K=V            a query parameter; repeat for more\n"
    "  --idempotent           allow retries (only for a method that is safe to repeat)\n"
    "  --format json|table    json (default): the response body, pretty-printed when it\n"
    "                         is JSON (nested at most 64 deep, at most 1 MiB), as it\n"
    "                         came otherwise; table: status, content type and body\n";

// ---------------------------------------------------------------- output helpers

/// Replaces control characters, so text from the server or the SDK stays on one line
/// and cannot drive the terminal.
[[nodiscard]] std::string printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) c = ' ';
  }
  return out;
}

void error_line(std::string_view text) { std::cerr << "studentsvc: " << printable(text) << '\n'; }

/// Usage error: one line on stderr, pointing at the help.
[[nodiscard]] int usage_error(std::string_view text) {
  std::cerr << "studentsvc: " << printable(text) << " (see 'studentsvc --help')\n";
  return exit_usage;
}

[[nodiscard]] int report(std::string_view command, const ApiError& error) {
  error_line(std::string(command) + ": " + studentsvc::to_string(error));
  return exit_status(error.kind);
}

using studentsvc_cli::dump_json;

/// The SDK's to_json object (keys sorted) in the interface's order: the SDK's
/// field table's order, then any other key.
[[nodiscard]] nlohmann::ordered_json in_interface_order(const nlohmann::json& j) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& field : studentsvc::detail::student_fields) {
    if (const auto it = j.find(field.key); it != j.end()) out[std::string(field.key)] = nlohmann::ordered_json(*it);
  }
  for (const auto& [key, value] : j.items()) {
    if (!out.contains(key)) out[key] = nlohmann::ordered_json(value);
  }
  return out;
}

// ---------------------------------------------------------------- arguments

enum class Command { none, get, current, conversation, help };
enum class Format { json, table };

/// Which commands accept an option.
enum Scope : unsigned { any = 0U, for_get = 1U, for_current = 2U, for_conversation = 4U };

struct OptionSpec {
  std::string_view name;
  bool takes_value;
  unsigned scope;
  std::string_view env;  ///< The STUDENTSVC_* variable the flag overrides, if any.
};

constexpr OptionSpec option_specs[] = {
    {"--base-url", true, any, "STUDENTSVC_BASE_URL"},
    {"--api-key", true, any, "STUDENTSVC_API_KEY"},
    {"--svc-api-key", true, any, "STUDENTSVC_SVC_API_KEY"},
    {"--network-id", true, any, "STUDENTSVC_NETWORK_ID"},
    {"--password", true, any, "STUDENTSVC_PASSWORD"},
    {"--api-version", true, any, "STUDENTSVC_API_VERSION"},
    {"--ca-bundle", true, any, "STUDENTSVC_CA_BUNDLE"},
    {"--proxy", true, any, {}},
    {"--insecure-loopback", false, any, {}},
    {"--timeout", true, any, {}},
    {"--retries", true, any, {}},
    {"--mock", false, any, {}},
    {"--format", true, any, {}},
    {"--verbose", false, any, {}},
    {"--help", false, any, {}},
    {"--version", false, any, {}},
    {"--jwt", true, for_get | for_current, {}},
    {"--method", true, for_conversation, {}},
    {"--data", true, for_conversation, {}},
    {"--content-type", true, for_conversation, {}},
    {"--query", true, for_conversation, {}},
    {"--idempotent", false, for_conversation, {}},
};

struct Args {
  Command command = Command::none;
  std::vector<std::string> positionals;
  std::optional<std::string> first_error;  ///< The first usage error; reported unless --help/--version.
  std::vector<const OptionSpec*> seen;     ///< For the per-command check after parsing.

  std::map<std::string, std::string, std::less<>> env_overrides;  ///< STUDENTSVC_* name → flag value.
  std::string proxy;
  bool insecure_loopback = false;
  bool mock = false;
  bool help = false;
  bool version = false;
  int verbose = 0;
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<int> retries;
  Format format = Format::json;

  std::optional<std::string> jwt;
  std::optional<std::string> method;
  std::optional<std::string> data;
  std::optional<std::string> content_type;
  std::vector<std::pair<std::string, std::string>> query;
  bool idempotent = false;
};

[[nodiscard]] std::optional<long long> parse_integer(std::string_view text, long long min, long long max) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return std::nullopt;
  return v;
}

[[nodiscard]] std::optional<Command> parse_command(std::string_view word) {
  if (word == "get") return Command::get;
  if (word == "current") return Command::current;
  if (word == "conversation") return Command::conversation;
  if (word == "help") return Command::help;
  return std::nullopt;
}

[[nodiscard]] constexpr std::string_view command_name(Command c) noexcept {
  switch (c) {
    case Command::get: return "get";
    case Command::current: return "current";
    case Command::conversation: return "conversation";
    case Command::help: return "help";
    case Command::none: break;
  }
  return "";
}

[[nodiscard]] constexpr unsigned command_scope(Command c) noexcept {
  switch (c) {
    case Command::get: return for_get;
    case Command::current: return for_current;
    case Command::conversation: return for_conversation;
    default: return 0U;
  }
}

/// An option name that is safe to repeat in an error: only the part before '=',
/// cut short. Values are never echoed, since they may be secrets.
[[nodiscard]] std::string option_name_for_message(std::string_view arg) {
  std::string_view name = arg.substr(0, arg.find('='));
  if (name.size() > 32) name = name.substr(0, 32);
  return printable(name);
}

/// Applies one option and its value; returns a usage error message on a bad value.
[[nodiscard]] std::optional<std::string> apply_option(Args& a, const OptionSpec& spec, std::string value) {
  const std::string_view n = spec.name;
  if (!spec.env.empty()) {
    a.env_overrides[std::string(spec.env)] = std::move(value);
  } else if (n == "--proxy") {
    a.proxy = std::move(value);
  } else if (n == "--insecure-loopback") {
    a.insecure_loopback = true;
  } else if (n == "--timeout") {
    const auto ms = parse_integer(value, 1, 3'600'000);
    if (!ms) return "--timeout needs a number of milliseconds from 1 to 3600000";
    a.timeout = std::chrono::milliseconds{*ms};
  } else if (n == "--retries") {
    const auto r = parse_integer(value, 0, 10);
    if (!r) return "--retries needs a number from 0 to 10";
    a.retries = static_cast<int>(*r);
  } else if (n == "--mock") {
    a.mock = true;
  } else if (n == "--format") {
    if (value == "json") {
      a.format = Format::json;
    } else if (value == "table") {
      a.format = Format::table;
    } else {
      return "--format must be json or table";
    }
  } else if (n == "--verbose") {
    ++a.verbose;
  } else if (n == "--help") {
    a.help = true;
  } else if (n == "--version") {
    a.version = true;
  } else if (n == "--jwt") {
    a.jwt = std::move(value);
  } else if (n == "--method") {
    if (value.empty()) return "--method needs an HTTP method such as GET or POST";
    a.method = std::move(value);
  } else if (n == "--data") {
    a.data = std::move(value);
  } else if (n == "--content-type") {
    a.content_type = std::move(value);
  } else if (n == "--query") {
    const auto eq = value.find('=');
    if (eq == std::string::npos || eq == 0) return "--query needs KEY=VALUE";
    a.query.emplace_back(value.substr(0, eq), value.substr(eq + 1));
  } else if (n == "--idempotent") {
    a.idempotent = true;
  }
  return std::nullopt;
}

[[nodiscard]] Args parse_args(int argc, char** argv) {
  Args a;
  auto fail = [&a](std::string message) {
    if (!a.first_error) a.first_error = std::move(message);
  };
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && arg.size() > 1 && arg.front() == '-') {
      std::string_view name = arg;
      std::optional<std::string> inline_value;
      if (arg == "-h") {
        name = "--help";
      } else if (arg == "-v") {
        name = "--verbose";
      } else if (arg == "-vv") {
        ++a.verbose;
        name = "--verbose";
      } else if (arg.starts_with("--")) {
        if (const auto eq = arg.find('='); eq != std::string_view::npos) {
          name = arg.substr(0, eq);
          inline_value = std::string(arg.substr(eq + 1));
        }
      }
      const OptionSpec* spec = nullptr;
      for (const auto& s : option_specs) {
        if (s.name == name) spec = &s;
      }
      if (spec == nullptr) {
        fail("unknown option '" + option_name_for_message(arg) + "'");
        continue;
      }
      std::string value;
      if (spec->takes_value) {
        if (inline_value) {
          value = std::move(*inline_value);
        } else if (i + 1 < argc) {
          value = argv[++i];
        } else {
          fail("option " + std::string(spec->name) + " needs a value");
          continue;
        }
      } else if (inline_value) {
        fail("option " + std::string(spec->name) + " takes no value");
        continue;
      }
      a.seen.push_back(spec);
      if (auto error = apply_option(a, *spec, std::move(value))) fail(std::move(*error));
      continue;
    }
    if (a.command == Command::none) {
      if (const auto c = parse_command(arg)) {
        a.command = *c;
      } else {
        fail("unknown command (expected get, current, conversation or help)");
      }
      continue;
    }
    a.positionals.emplace_back(arg);
  }

  // Command-specific options, now that the command is known.
  for (const OptionSpec* spec : a.seen) {
    if (spec->scope != any && (spec->scope & command_scope(a.command)) == 0U) {
      if (a.command == Command::none || a.command == Command::help) {
        fail("option " + std::string(spec->name) + " needs a command");
      } else {
        fail("option " + std::string(spec->name) + " does not apply to '" + std::string(command_name(a.command)) +
             "'");
      }
    }
  }
  return a;
}

/// The help text of a command (the overview for none).
[[nodiscard]] std::string help_text(Command c) {
  std::string out;
  switch (c) {
    case Command::get: out = get_help; break;
    case Command::current: out = current_help; break;
    case Command::conversation: out = conversation_help; break;
    case Command::none:
    case Command::help:
      out.append(main_help_intro).append(common_options_help).append("\n").append(exit_status_help);
      out.append("\n").append(main_help_examples);
      return out;
  }
  out.append("\nCommon options (connection, --mock, --verbose, ...): see 'studentsvc --help'.\n\n");
  out.append(exit_status_help);
  return out;
}

// ---------------------------------------------------------------- configuration

using Lookup = std::function<std::optional<std::string>(std::string_view)>;

[[nodiscard]] std::optional<std::string> getenv_string(std::string_view name) {
  const std::string key(name);
  // Only read, never written, in this single-threaded part of the program.
  if (const char* v = std::getenv(key.c_str()); v != nullptr) return std::string(v);  // NOLINT(concurrency-mt-unsafe)
  return std::nullopt;
}

/// Names where a setting came from, for --verbose; never its value.
[[nodiscard]] std::string source_of(const Args& a, std::string_view env, std::string_view flag, bool mock) {
  if (a.env_overrides.contains(env)) return std::string(flag);
  if (mock) return "the mock server";
  return std::string(env);
}

/// ClientOptions from flags over the environment (or over the mock's settings).
[[nodiscard]] studentsvc::Result<studentsvc::ClientOptions> build_options(
    const Args& a, const std::optional<studentsvc::ClientOptions>& mock_options) {
  // The mock's settings, spelled as the variables from_env() reads.
  std::map<std::string, std::string, std::less<>> mock_env;
  if (mock_options) {
    mock_env["STUDENTSVC_BASE_URL"] = mock_options->base_url;
    mock_env["STUDENTSVC_API_KEY"] = mock_options->auth.api_key;
    if (mock_options->auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom) {
      mock_env["STUDENTSVC_SVC_API_KEY"] = mock_options->auth.svc_api_key;
    }
    if (mock_options->auth.basic) {
      mock_env["STUDENTSVC_NETWORK_ID"] = mock_options->auth.basic->network_id;
      mock_env["STUDENTSVC_PASSWORD"] = mock_options->auth.basic->password;
    }
  }
  const Lookup lookup = [&](std::string_view name) -> std::optional<std::string> {
    if (const auto it = a.env_overrides.find(name); it != a.env_overrides.end()) return it->second;
    if (mock_options) {
      if (const auto it = mock_env.find(name); it != mock_env.end()) return it->second;
      return std::nullopt;
    }
    return getenv_string(name);
  };
  auto is_set = [&](std::string_view name) {
    const auto v = lookup(name);
    return v && !v->empty();
  };
  using studentsvc::make_error;
  if (!is_set("STUDENTSVC_BASE_URL")) {
    return make_error(ErrorKind::invalid_argument,
                      "no base URL: set STUDENTSVC_BASE_URL or pass --base-url (or try --mock)");
  }
  if (!is_set("STUDENTSVC_API_KEY")) {
    return make_error(ErrorKind::invalid_argument, "no API key: set STUDENTSVC_API_KEY or pass --api-key");
  }
  if (is_set("STUDENTSVC_NETWORK_ID") != is_set("STUDENTSVC_PASSWORD")) {
    return make_error(ErrorKind::invalid_argument,
                      "the network id and the password go together: set both STUDENTSVC_NETWORK_ID and "
                      "STUDENTSVC_PASSWORD (or --network-id and --password)");
  }
  auto options = studentsvc::ClientOptions::from_env(lookup);
  if (!options) return options;
  options->allow_insecure_loopback = a.insecure_loopback || mock_options.has_value();
  options->proxy = a.proxy;
  if (a.timeout) options->timeout = *a.timeout;
  if (a.retries) options->retry.max_attempts = *a.retries + 1;
  if (a.verbose > 0) {
    options->logger.level = a.verbose > 1 ? studentsvc::LogLevel::trace : studentsvc::LogLevel::debug;
    options->logger.sink = [](studentsvc::LogLevel level, std::string_view line) {
      std::cerr << "studentsvc: " << studentsvc::to_string(level) << ": " << printable(line) << '\n';
    };
    const bool mock = mock_options.has_value();
    options->logger.log(
        studentsvc::LogLevel::debug,
        "config: base URL from " + source_of(a, "STUDENTSVC_BASE_URL", "--base-url", mock) + ", API key from " +
            source_of(a, "STUDENTSVC_API_KEY", "--api-key", mock) + ", svc-api-key " +
            (options->auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::off        ? std::string("off")
             : options->auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom ? "set separately"
                                                                                    : "same as the API key") +
            ", Basic credential " +
            (options->auth.basic ? "from " + source_of(a, "STUDENTSVC_PASSWORD", "--password", mock)
                                 : std::string("not configured")) +
            ", svc-api-version " + options->api_version);
  }
  return options;
}

// ---------------------------------------------------------------- student output

[[nodiscard]] std::string show(const std::optional<std::string>& v) {
  if (!v) return "null";
  if (v->empty()) return "\"\"";
  return printable(*v);
}
[[nodiscard]] std::string show(const std::string& v) { return v.empty() ? "\"\"" : printable(v); }
[[nodiscard]] std::string show(const std::optional<bool>& v) {
  if (!v) return "null";
  return *v ? "true" : "false";
}

[[nodiscard]] std::string birth_date_view(const studentsvc::StudentExtended& s) {
  if (!s.birth_date) return "unknown";
  const auto ymd = s.birth_date_ymd();
  if (!ymd) return "not a valid date";
  std::ostringstream out;
  out << std::setfill('0') << std::setw(4) << static_cast<int>(ymd->year()) << '-' << std::setw(2)
      << static_cast<unsigned>(ymd->month()) << '-' << std::setw(2) << static_cast<unsigned>(ymd->day());
  return out.str();
}

void print_rows(std::ostream& out, std::string_view title,
                const std::vector<std::pair<std::string_view, std::string>>& rows) {
  constexpr int width = 26;
  out << std::left << std::setw(width) << title << "VALUE\n";
  for (const auto& [name, value] : rows) out << std::left << std::setw(width) << name << value << '\n';
}

void print_student_table(std::ostream& out, const studentsvc::StudentExtended& s, bool extended) {
  std::vector<std::pair<std::string_view, std::string>> rows;
  for (const auto& field : studentsvc::detail::student_fields_of(extended)) {
    studentsvc::detail::with_field(field, s, [&](const auto& member) { rows.emplace_back(field.key, show(member)); });
  }
  print_rows(out, "FIELD", rows);
  if (!extended) return;
  out << '\n';
  print_rows(out, "TYPED VIEW",
             {{"gender", std::string(to_string(s.gender_kind()))},
              {"international status", std::string(to_string(s.international_status()))},
              {"admit level", std::string(to_string(s.admit_level_kind()))},
              {"birth date", birth_date_view(s)},
              {"release status", std::string(to_string(s.release_status()))}});
}

void print_student(const studentsvc::StudentExtended& s, Format format, bool extended) {
  if (format == Format::table) {
    print_student_table(std::cout, s, extended);
    return;
  }
  nlohmann::json j;
  if (extended) {
    to_json(j, s);
  } else {
    to_json(j, static_cast<const studentsvc::StudentMinimal&>(s));
  }
  std::cout << dump_json(in_interface_order(j)) << '\n';
}

// ---------------------------------------------------------------- commands

[[nodiscard]] int run_get(const studentsvc::Client& client, const Args& a) {
  studentsvc::CallOptions call;
  if (a.jwt) call.user_jwt = *a.jwt;
  const auto student = client.get_student(a.positionals.front(), call);
  if (!student) return report("get", student.error());
  print_student(*student, a.format, true);
  return exit_ok;
}

[[nodiscard]] int run_current(const studentsvc::Client& client, const Args& a, std::optional<std::string> demo_jwt) {
  std::optional<std::string> jwt = a.jwt;
  if (!jwt) jwt = getenv_string("STUDENTSVC_USER_JWT");
  if (!jwt && demo_jwt) {
    client.options().logger.log(studentsvc::LogLevel::debug, "current: using the mock server's demo user JWT");
    jwt = std::move(demo_jwt);
  }
  if (!jwt) {
    error_line("current: no user JWT: pass --jwt TOKEN or set STUDENTSVC_USER_JWT");
    return exit_status(ErrorKind::invalid_argument);
  }
  const auto student = client.current_student(*jwt);
  if (!student) return report("current", student.error());
  print_student(*student, a.format, false);
  return exit_ok;
}

[[nodiscard]] int run_conversation(const studentsvc::Client& client, const Args& a) {
  studentsvc::ConversationRequest request;
  request.method = a.method.value_or(a.data ? "POST" : "GET");
  if (!a.positionals.empty()) request.sub_path = a.positionals.front();
  request.query = a.query;
  request.body = a.data.value_or("");
  request.content_type = a.content_type.value_or("");
  request.idempotent = a.idempotent;
  const auto response = client.conversation(request);
  if (!response) return report("conversation", response.error());

  // Pretty-printed only within bounds (cli_json.hpp): any other body is printed as it came.
  const auto pretty = studentsvc_cli::bounded_pretty_json(response->body);
  if (a.format == Format::table) {
    const auto type = response->headers.find("Content-Type");
    print_rows(std::cout, "FIELD",
               {{"status", std::to_string(response->status)},
                {"content-type", type ? printable(*type) : std::string("null")}});
    std::cout << "\nBODY\n";
    if (pretty) {
      std::cout << *pretty << '\n';
    } else if (!response->body.empty()) {
      std::cout << response->body << (response->body.ends_with('\n') ? "" : "\n");
    }
    return exit_ok;
  }
  if (pretty) {
    std::cout << *pretty << '\n';
  } else {
    std::cout << response->body;  // as it came: the tool does not know this payload
  }
  return exit_ok;
}

#if STUDENTSVC_CLI_WITH_MOCK
/// The mock runs in this process on 127.0.0.1; keep any proxy from the
/// environment away from it (only this process's environment is changed).
void bypass_proxy_for_loopback() {
#if !defined(_WIN32)
  ::setenv("no_proxy", "127.0.0.1,localhost,::1", 1);  // NOLINT(concurrency-mt-unsafe): before any thread
  ::setenv("NO_PROXY", "127.0.0.1,localhost,::1", 1);  // NOLINT(concurrency-mt-unsafe)
#endif
}
#endif

[[nodiscard]] int run(int argc, char** argv) {
  Args a = parse_args(argc, argv);
  if (a.version) {
    std::cout << "studentsvc " << studentsvc::version << " (" << studentsvc::user_agent << ")\n";
    return exit_ok;
  }
  if (a.help || a.command == Command::help) {
    Command topic = a.command;
    if (a.command == Command::help && !a.positionals.empty()) {
      const auto c = parse_command(a.positionals.front());
      if (!c || a.positionals.size() > 1) return usage_error("help takes one command: get, current or conversation");
      topic = *c;
    }
    std::cout << help_text(topic);
    if (!std::cout.flush()) {
      error_line("could not write the output");
      return exit_internal;
    }
    return exit_ok;
  }
  if (a.first_error) return usage_error(*a.first_error);
  switch (a.command) {
    case Command::none: return usage_error("no command given");
    case Command::get:
      if (a.positionals.size() != 1) return usage_error("get takes exactly one PERM");
      break;
    case Command::current:
      if (!a.positionals.empty()) return usage_error("current takes no arguments (the JWT goes in --jwt)");
      break;
    case Command::conversation:
      if (a.positionals.size() > 1) return usage_error("conversation takes at most one SUBPATH");
      break;
    case Command::help: break;
  }
  if (a.mock && a.env_overrides.contains("STUDENTSVC_BASE_URL")) {
    return usage_error("--mock and --base-url do not go together");
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

  auto options = build_options(a, mock_options);
  if (!options) {
    error_line(options.error().message);
    return exit_status(options.error().kind);
  }
  if (a.mock) options->logger.log(studentsvc::LogLevel::debug, "using the bundled mock server on 127.0.0.1");
  const bool plain_http = options->base_url.starts_with("http://");
  auto client = studentsvc::Client::create(std::move(*options));
  if (!client) {
    ApiError error = client.error();
    if (plain_http && !a.insecure_loopback) error.message += " (for a local test server: --insecure-loopback)";
    return report(command_name(a.command), error);
  }

  int status = exit_internal;
  switch (a.command) {
    case Command::get: status = run_get(*client, a); break;
    case Command::current: status = run_current(*client, a, demo_jwt); break;
    case Command::conversation: status = run_conversation(*client, a); break;
    case Command::none:
    case Command::help: break;
  }
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
    error_line(std::string("internal error: ") + e.what());
  } catch (...) {
    error_line("internal error");
  }
  return exit_internal;
}

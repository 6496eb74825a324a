// `studentsvc mock`: the bundled MockServer as a process, until SIGINT or SIGTERM,
// with fixture students and tokens from a JSON file in the interface's own keys.

#include "cmd/mock/mock.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include <studentsvc/json.hpp>
#include <studentsvc/student_fields.hpp>
#include <studentsvc/studentsvc.hpp>

#include "exit_status.hpp"

namespace studentsvc_cli {

namespace {

constexpr std::string_view mock_help =
    "Usage: studentsvc mock [--port N] [--tls-cert FILE --tls-key FILE] [--students FILE.json] [--latency MS]\n"
    "                       [--threads N]\n"
    "\n"
    "Runs the bundled MockServer on 127.0.0.1 (a free port) until SIGINT or SIGTERM,\n"
    "so any program can be tested against it. Prints the `export STUDENTSVC_*=...`\n"
    "lines that point a program at it on stdout (the mock's own test credentials,\n"
    "never real ones; `studentsvc mock > mock.env &` then `. ./mock.env`), and its\n"
    "base URL on stderr.\n"
    "\n"
    "Options:\n"
    "  --tls-cert FILE        serve HTTPS with this PEM certificate (chain)\n"
    "  --tls-key FILE         and this PEM key (both or neither)\n"
    "  --students FILE.json   fixture students and tokens instead of the seed data:\n"
    "                         {\"students\": [StudentExtended, ...],\n"
    "                          \"tokens\": {\"JWT\": \"PERM\", ...}}\n"
    "                         each student in the interface's own keys (perm, firstName, ...)\n"
    "  --latency MS           wait this long before every answer (0-60000)\n"
    "  --threads N            worker threads, one per busy keep-alive connection\n"
    "                         (1-1024, default 32): more for a load test\n"
    "  --port N               listen on 127.0.0.1:N (default: a free port, printed)\n";

}  // namespace

std::expected<MockFixtures, std::string> parse_mock_fixtures(std::string_view text, studentsvc::PermSyntax syntax) {
  const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return std::unexpected("not valid JSON");
  if (!j.is_object()) return std::unexpected("the top level must be an object with \"students\" and \"tokens\"");
  MockFixtures out;
  for (const auto& [key, value] : j.items()) {
    if (key == "students") {
      if (!value.is_array()) return std::unexpected("\"students\" must be an array of student objects");
      for (std::size_t i = 0; i < value.size(); ++i) {
        const auto& s = value[i];
        const std::string where = "students[" + std::to_string(i) + "]";
        if (!s.is_object()) return std::unexpected(where + " is not an object");
        const auto perm = s.find("perm");
        if (perm == s.end() || !perm->is_string() || !studentsvc::is_valid_perm(perm->get<std::string>(), syntax)) {
          return std::unexpected(where +
                                 (syntax == studentsvc::PermSyntax::alphanumeric
                                      ? " has no \"perm\" string of 7 letters or digits (--perm-syntax alphanumeric)"
                                      : " has no 7-digit \"perm\" string"));
        }
        for (const auto& [field, v] : s.items()) {
          const bool known = std::any_of(std::begin(studentsvc::student_fields), std::end(studentsvc::student_fields),
                                         [&](const auto& f) { return f.key == field; });
          if (!known) return std::unexpected(where + ": \"" + field + "\" is not a field of the interface");
        }
        // The SDK's own decoder: a fixture the client could not read is refused, not served.
        if (const auto decoded = studentsvc::decode_student_json(s); !decoded) {
          return std::unexpected(where + " does not match the interface: " + decoded.error().message);
        }
        if (!out.students.emplace(perm->get<std::string>(), s).second) {
          return std::unexpected(where + ": perm " + perm->get<std::string>() + " appears twice");
        }
      }
    } else if (key == "tokens") {
      if (!value.is_object()) return std::unexpected("\"tokens\" must be an object of JWT: perm");
      for (const auto& [jwt, perm] : value.items()) {
        if (!perm.is_string()) return std::unexpected("tokens[\"" + jwt + "\"] must be a perm string");
        out.jwts[jwt] = perm.get<std::string>();
      }
    } else {
      return std::unexpected("unknown key \"" + key + "\" (expected \"students\" and \"tokens\")");
    }
  }
  return out;
}

namespace {

[[maybe_unused]] std::expected<MockFixtures, std::string> read_mock_fixtures(const std::string& path,
                                                                             studentsvc::PermSyntax syntax) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected("--students " + path + ": cannot open the file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  auto fixtures = parse_mock_fixtures(buffer.str(), syntax);
  if (!fixtures) return std::unexpected("--students " + path + ": " + fixtures.error());
  return fixtures;
}

}  // namespace

std::string shell_quoted(std::string_view value) {
  std::string out = "'";
  for (const char c : value) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

#if STUDENTSVC_CLI_WITH_MOCK
namespace {

/// The `export` lines that point a program at `server`.
std::string mock_exports(const studentsvc::testing::MockServer& server, const std::optional<std::string>& ca_bundle) {
  const auto o = server.client_options();
  std::string out;
  auto line = [&](std::string_view name, std::string_view value) {
    out += "export " + std::string(name) + "=" + shell_quoted(value) + "\n";
  };
  line("STUDENTSVC_BASE_URL", o.base_url);
  line("STUDENTSVC_API_KEY", o.auth.api_key.reveal());
  if (o.auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom)
    line("STUDENTSVC_SVC_API_KEY", o.auth.svc_api_key.reveal());
  if (o.auth.basic) {
    line("STUDENTSVC_NETWORK_ID", o.auth.basic->network_id);
    line("STUDENTSVC_PASSWORD", o.auth.basic->password.reveal());
  }
  if (o.allow_insecure_loopback) line("STUDENTSVC_ALLOW_INSECURE_LOOPBACK", "1");
  if (o.perm_syntax != studentsvc::PermSyntax::digits)
    line("STUDENTSVC_PERM_SYNTAX", studentsvc::to_string(o.perm_syntax));
  if (ca_bundle) line("STUDENTSVC_CA_BUNDLE", *ca_bundle);
  return out;
}

/// Whether 127.0.0.1:`port` is free to listen on. Asked with a socket of our
/// own, without SO_REUSEPORT: cpp-httplib sets it on its listener, so a second
/// mock would otherwise bind the same port and share its connections.
bool loopback_port_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return true;  // cannot tell: let the server try
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // a TIME_WAIT remnant is no obstacle
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool free = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return free;
}

/// The perm syntax --perm-syntax names (digits when it is not given).
std::optional<studentsvc::PermSyntax> flag_perm_syntax(const Args& a) {
  const auto it = a.env_overrides.find("STUDENTSVC_PERM_SYNTAX");
  return it == a.env_overrides.end() ? studentsvc::PermSyntax::digits : studentsvc::parse_perm_syntax(it->second);
}

}  // namespace

studentsvc::testing::MockServerOptions mock_server_options(const Args& a) {
  studentsvc::testing::MockServerOptions options;
  if (flag_perm_syntax(a) == studentsvc::PermSyntax::alphanumeric) options = studentsvc::testing::with_alphanumeric_perms();
  options.max_recorded_requests = 0;  // a long roster or a long-running mock: keep no copy of each request
  return options;
}

namespace {

int serve_mock(const Args& a, IoStreams io) {
  if (a.tls_cert.has_value() != a.tls_key.has_value())
    return usage_error(io.err, "mock: --tls-cert and --tls-key go together");
  if (!flag_perm_syntax(a)) return usage_error(io.err, "mock: --perm-syntax takes digits or alphanumeric");
  studentsvc::testing::MockServerOptions options = mock_server_options(a);
  if (a.students_file) {
    auto fixtures = read_mock_fixtures(*a.students_file, options.perm_syntax);
    if (!fixtures) {
      error_line(io.err, "mock: " + fixtures.error());
      return exit_status(studentsvc::ErrorKind::invalid_argument);
    }
    options.students = std::move(fixtures->students);
    options.jwts = std::move(fixtures->jwts);
  }
  options.latency = a.latency;
  if (a.mock_threads > 0) options.worker_threads = a.mock_threads;
  options.port = a.port;
  if (a.port > 0 && !loopback_port_free(a.port)) {
    error_line(io.err, "mock: cannot listen on 127.0.0.1:" + std::to_string(a.port) +
                           " (in use); leave out --port for a free one");
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  std::optional<std::string> ca_bundle;
  if (a.tls_cert) {
    for (const auto& file : {*a.tls_cert, *a.tls_key}) {
      if (!std::ifstream(file)) {
        error_line(io.err, "mock: cannot read " + file);
        return exit_status(studentsvc::ErrorKind::invalid_argument);
      }
    }
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(*a.tls_cert, ec);
    ca_bundle = ec ? *a.tls_cert : absolute.string();
  }

  // Block the signals before the server's threads start, so they inherit the
  // mask and only sigwait below sees SIGINT and SIGTERM.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::optional<studentsvc::testing::MockServer> server;
  if (a.tls_cert) {
    server.emplace(std::move(options), *a.tls_cert, *a.tls_key);
  } else {
    server.emplace(std::move(options));
  }
  if (!server->running()) {
    if (a.port > 0) {
      error_line(io.err, "mock: cannot listen on 127.0.0.1:" + std::to_string(a.port) +
                             " (in use?); leave out --port for a free one");
      return exit_status(studentsvc::ErrorKind::invalid_argument);
    }
    error_line(io.err, "mock: the mock server did not start");
    return exit_internal;
  }
  // stdout holds only the export lines, so `studentsvc mock > mock.env` can be sourced.
  io.err << "studentsvc mock: listening on " << server->base_url() << " (stop with Ctrl-C or SIGTERM)\n" << std::flush;
  io.out << mock_exports(*server, ca_bundle) << std::flush;
  int received = 0;
  sigwait(&stop_signals, &received);
  server->stop();
  io.err << "studentsvc mock: stopped (" << (received == SIGINT ? "SIGINT" : "SIGTERM") << ")\n" << std::flush;
  return exit_ok;
}

}  // namespace
#endif  // STUDENTSVC_CLI_WITH_MOCK

namespace {

void add_mock_options(CLI::App& sub, Args& a) {
  sub.add_option_function<std::string>("--tls-cert", [&a](const std::string& v) { a.tls_cert = v; });
  sub.add_option_function<std::string>("--tls-key", [&a](const std::string& v) { a.tls_key = v; });
  sub.add_option_function<std::string>("--students", [&a](const std::string& v) { a.students_file = v; });
  sub.add_option("--port", a.port)->check(CLI::Range(1, 65535));
  sub.add_option("--threads", a.mock_threads)->check(CLI::Range(1, 1024));
  sub.add_option_function<long long>("--latency", [&a](long long ms) { a.latency = std::chrono::milliseconds(ms); })
      ->check(CLI::Range(0LL, 60'000LL));
}

}  // namespace

int run_mock(Session& s) {
#if STUDENTSVC_CLI_WITH_MOCK
  return serve_mock(s.args, s.io);
#else
  return usage_error(s.io.err, "mock is not available: this build has no mock server (cpp-httplib)");
#endif
}

const Command mock_command{
    .name = "mock",
    .help = mock_help,
    .needs = Needs::nothing,
    .add_options = add_mock_options,
    .misuse = batch_format_misuse,
    .run = run_mock,
};

}  // namespace studentsvc_cli

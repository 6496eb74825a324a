// `studentsvc mock` as a process: it prints its base URL and the STUDENTSVC_*
// lines to export, another program (here the tool itself, with only that
// environment) is served by it, and SIGINT or SIGTERM stops it cleanly.
// Also `studentsvc config` against those exports.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/raw_server.hpp"
#include "support/temp_dir.hpp"
#include "support/test_pki.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace tool_mock_test {

namespace {

using Env = studentsvc::test::Env;
using Args = studentsvc::test::Args;

const std::string cli = STUDENTSVC_CLI_PATH;
const std::string example_fixtures = std::string(STUDENTSVC_SOURCE_DIR) + "/docs/tool-mock-students.json";

/// `studentsvc mock ARGS` in the background, its stdout and stderr read as they come.
class MockProcess {
 public:
  explicit MockProcess(const Args& args) {
    std::array<int, 2> out{};
    std::array<int, 2> err{};
    REQUIRE(::pipe2(out.data(), O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err.data(), O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    std::vector<std::string> storage{cli, "mock"};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    char* envp[] = {nullptr};
    const int spawned = ::posix_spawn(&pid_, cli.c_str(), &actions, nullptr, argv.data(), envp);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    fds_ = {out[0], err[0]};
    REQUIRE(spawned == 0);
  }
  MockProcess(const MockProcess&) = delete;
  MockProcess& operator=(const MockProcess&) = delete;
  ~MockProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (const int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }

  /// Reads until stdout holds `text` or both streams are closed (20 s at most).
  bool read_until(const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (out_.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline &&
           (fds_[0] >= 0 || fds_[1] >= 0)) {
      std::array<pollfd, 2> p{pollfd{fds_[0], POLLIN, 0}, pollfd{fds_[1], POLLIN, 0}};
      if (::poll(p.data(), p.size(), 200) <= 0) continue;
      for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i].fd < 0 || p[i].revents == 0) continue;
        std::array<char, 4096> buf{};
        const ssize_t n = ::read(p[i].fd, buf.data(), buf.size());
        if (n > 0) {
          (i == 0 ? out_ : err_).append(buf.data(), static_cast<std::size_t>(n));
        } else {
          ::close(fds_[i]);
          fds_[i] = -1;
        }
      }
    }
    return out_.find(text) != std::string::npos;
  }

  /// The `export NAME='value'` lines printed so far.
  [[nodiscard]] Env exports() const {
    Env env;
    std::size_t at = 0;
    while ((at = out_.find("export ", at)) != std::string::npos) {
      const auto eq = out_.find('=', at);
      const auto end = out_.find('\n', eq);
      std::string value = out_.substr(eq + 1, end - eq - 1);
      if (value.size() >= 2 && value.front() == '\'') value = value.substr(1, value.size() - 2);
      env[out_.substr(at + 7, eq - at - 7)] = value;
      at = end;
    }
    return env;
  }

  /// Sends `signal` and waits (20 s at most) for the exit status.
  int stop(int signal) {
    ::kill(pid_, signal);
    read_until("\x04");  // never printed: reads to the end of both streams
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, 0);
    pid_ = -1;
    REQUIRE(done > 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  [[nodiscard]] const std::string& output() const { return out_; }
  [[nodiscard]] const std::string& errors() const { return err_; }

 private:
  pid_t pid_ = -1;
  std::array<int, 2> fds_{-1, -1};
  std::string out_;
  std::string err_;
};

studentsvc::test::ProcessResult tool(const Args& args, const Env& env) {
  return studentsvc::test::run_process(cli, args, env);
}

}  // namespace

TEST_CASE("tool mock serves the example fixtures to a program given only its exports, SIGTERM stops it", "[tool][mock]") {
  MockProcess mock({"--students", example_fixtures});
  REQUIRE(mock.read_until("STUDENTSVC_ALLOW_INSECURE_LOOPBACK='1'\n"));
  CHECK_THAT(mock.output(), Catch::StartsWith("export STUDENTSVC_BASE_URL='http://127.0.0.1:"));  // stdout: exports only
  CHECK_THAT(mock.errors(), Catch::StartsWith("studentsvc mock: listening on http://127.0.0.1:"));
  const Env env = mock.exports();
  for (const char* name : {"STUDENTSVC_BASE_URL", "STUDENTSVC_API_KEY", "STUDENTSVC_SVC_API_KEY",
                           "STUDENTSVC_NETWORK_ID", "STUDENTSVC_PASSWORD"}) {
    CHECK(env.contains(name));
  }
  CHECK(env.at("STUDENTSVC_ALLOW_INSECURE_LOOPBACK") == "1");

  const auto zoe = tool({"get", "7000001"}, env);
  REQUIRE(zoe.status == 0);
  const auto j = nlohmann::json::parse(zoe.out);
  CHECK(j.at("firstName") == "Zoë");
  CHECK(j.at("lastName") == "O'Brien-Núñez");
  CHECK(tool({"get", "1234567"}, env).status == 7);  // the seed students are replaced by the file's
  Env with_jwt = env;
  with_jwt["STUDENTSVC_USER_JWT"] = "jwt-zoe";
  const auto current = tool({"current"}, with_jwt);
  CHECK(current.status == 0);
  CHECK_THAT(current.out, Catch::Contains("\"perm\": \"7000001\""));

  // config: every value's source, secrets masked, and the check.
  const auto config = tool({"config"}, env);
  CHECK(config.status == 0);
  CHECK_THAT(config.out, Catch::Contains("STUDENTSVC_BASE_URL"));
  CHECK_THAT(config.out, Catch::Contains(env.at("STUDENTSVC_BASE_URL")));
  CHECK(config.out.find(env.at("STUDENTSVC_API_KEY")) == std::string::npos);
  CHECK(config.out.find(env.at("STUDENTSVC_PASSWORD")) == std::string::npos);
  CHECK_THAT(config.out, Catch::Contains("****"));
  CHECK_THAT(config.out, Catch::Contains("check: ok"));
  const auto flagged = tool({"--api-version", "2.0", "--timeout", "900", "config"}, env);
  CHECK_THAT(flagged.out, Catch::Contains("--api-version"));
  CHECK_THAT(flagged.out, Catch::Contains("--timeout"));

  CHECK(mock.stop(SIGTERM) == 0);
  CHECK_THAT(mock.errors(), Catch::EndsWith("studentsvc mock: stopped (SIGTERM)\n"));
  CHECK(mock.output().find("studentsvc mock:") == std::string::npos);
}

TEST_CASE("tool mock stops on SIGINT, --latency slows every answer", "[tool][mock]") {
  MockProcess mock({"--latency", "300"});
  REQUIRE(mock.read_until("STUDENTSVC_ALLOW_INSECURE_LOOPBACK='1'\n"));
  const auto started = std::chrono::steady_clock::now();
  CHECK(tool({"get", "1234567"}, mock.exports()).status == 0);
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::milliseconds(300));
  CHECK(mock.stop(SIGINT) == 0);
  CHECK_THAT(mock.errors(), Catch::EndsWith("studentsvc mock: stopped (SIGINT)\n"));
}

TEST_CASE("tool mock over TLS exports the certificate as the CA bundle", "[tool][mock]") {
  const studentsvc::test::TestPki pki;
  MockProcess mock({"--tls-cert", pki.self_cert.string(), "--tls-key", pki.self_key.string()});
  REQUIRE(mock.read_until(pki.self_cert.string() + "'\n"));
  const Env env = mock.exports();
  CHECK_THAT(env.at("STUDENTSVC_BASE_URL"), Catch::StartsWith("https://127.0.0.1:"));
  CHECK(env.at("STUDENTSVC_CA_BUNDLE") == pki.self_cert.string());
  CHECK_FALSE(env.contains("STUDENTSVC_ALLOW_INSECURE_LOOPBACK"));
  const auto r = tool({"get", "2345678"}, env);
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("\"firstName\": \"Li\""));
  CHECK(mock.stop(SIGTERM) == 0);
}

TEST_CASE("tool mock refuses a bad fixture file or half a TLS pair with one line", "[tool][mock]") {
  const studentsvc::test::TempDir dir;
  struct Case {
    Args args;
    int status;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"mock", "--students", dir.write("bad.json", R"({"students": [{"perm": "12"}]})")}, 3, "7-digit"},
      {{"mock", "--students", dir.write("nfr.json", R"({"students": [{"perm": "7000001", "nfr": "yes"}]})")}, 3,
       "field 'nfr' must be a boolean"},
      {{"mock", "--students", (dir.path() / "none.json").string()}, 3, "cannot open"},
      {{"mock", "--tls-cert", "only.pem"}, 2, "go together"},
      {{"mock", "--tls-cert", "no.pem", "--tls-key", "no.key"}, 3, "cannot read no.pem"},
      {{"mock", "--latency", "-5"}, 2, "--latency"},
      {{"mock", "--port", "70000"}, 2, "--port"},
      {{"--mock", "mock"}, 2, "does not go"},
  };
  for (const auto& c : cases) {
    INFO(c.message);
    const auto r = tool(c.args, {});
    CHECK(r.status == c.status);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(c.message));
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
}

TEST_CASE("tool mock --port listens on the port given, or says it is in use", "[tool][mock]") {
  const int port = studentsvc::test::free_loopback_port();
  MockProcess mock({"--port", std::to_string(port)});
  REQUIRE(mock.read_until("STUDENTSVC_ALLOW_INSECURE_LOOPBACK='1'\n"));
  const Env env = mock.exports();
  CHECK(env.at("STUDENTSVC_BASE_URL") == "http://127.0.0.1:" + std::to_string(port));
  CHECK(tool({"get", "1234567"}, env).status == 0);

  // The same port again, while the first mock holds it: one line, exit 3.
  const auto busy = tool({"mock", "--port", std::to_string(port)}, {});
  CHECK(busy.status == 3);
  CHECK(busy.out.empty());
  CHECK_THAT(busy.err, Catch::Contains("cannot listen on 127.0.0.1:" + std::to_string(port)));
  CHECK(mock.stop(SIGTERM) == 0);
}

}  // namespace tool_mock_test

// `studentsvc --profile NAME`: named profiles in a JSON config file, secrets as
// files that other users cannot read, and the precedence flag > environment >
// profile > default, as `studentsvc config` reports it and as requests show it.

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/testing/mock_server.hpp>

#include "profiles.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace tool_profiles_test {

namespace {

using studentsvc::testing::MockServer;
using Env = studentsvc::test::Env;
using Args = studentsvc::test::Args;
namespace fs = std::filesystem;

const std::string cli = STUDENTSVC_CLI_PATH;

studentsvc::test::ProcessResult tool(const Args& args, const Env& env) {
  return studentsvc::test::run_process(cli, args, env);
}

/// A config file with profile "dev" pointing at `server`, its secrets in 0600 files.
std::string write_config(const studentsvc::test::TempDir& dir, const MockServer& server, const std::string& extra = "") {
  const auto o = server.client_options();
  dir.write("api.key", std::string(o.auth.api_key.reveal()) + "\n");
  dir.write("svc.key", std::string(o.auth.svc_api_key.reveal()));
  dir.write("password", std::string(o.auth.basic->password.reveal()) + "\n");
  const std::string config = R"({"profiles": {"dev": {"base_url": ")" + server.base_url() +
                             R"(", "allow_insecure_loopback": true, "network_id": ")" + o.auth.basic->network_id +
                             R"(", "api_key_file": "api.key", "svc_api_key_file": "svc.key",
                                 "password_file": "password")" + extra + R"(},
                                 "prod": {"base_url": "https://registrar.example.edu"}}})";
  return dir.write("config.json", config);
}

}  // namespace

TEST_CASE("tool --profile: a profile's settings and secret files reach the service", "[tool][profile]") {
  MockServer server;
  const studentsvc::test::TempDir dir;
  const auto config = write_config(dir, server);

  const auto by_flag = tool({"--config", config, "--profile", "dev", "get", "1234567"}, {});
  CHECK(by_flag.status == 0);
  CHECK(nlohmann::json::parse(by_flag.out).at("firstName") == "Ana");

  const auto by_env = tool({"get", "1234567"}, {{"STUDENTSVC_CONFIG", config}, {"STUDENTSVC_PROFILE", "dev"}});
  CHECK(by_env.status == 0);

  // The default file: $XDG_CONFIG_HOME/studentsvc/config.json.
  fs::create_directories(dir.path() / "xdg" / "studentsvc");
  fs::copy_file(config, dir.path() / "xdg" / "studentsvc" / "config.json");
  for (const char* f : {"api.key", "svc.key", "password"}) fs::copy_file(dir.path() / f, dir.path() / "xdg" / "studentsvc" / f);
  const auto by_default = tool({"--profile", "dev", "get", "1234567"}, {{"XDG_CONFIG_HOME", (dir.path() / "xdg").string()}});
  CHECK(by_default.status == 0);
  CHECK(server.request_count() == 3);
}

TEST_CASE("tool --profile: flag beats environment beats profile beats default", "[tool][profile]") {
  MockServer server;
  const studentsvc::test::TempDir dir;
  const auto config = write_config(dir, server, R"(, "api_version": "9.9")");

  // The profile alone: its api_version 9.9 is sent (and refused with 400).
  const auto profile_only = tool({"--config", config, "--profile", "dev", "--retries", "0", "get", "1234567"}, {});
  CHECK(profile_only.status == 5);
  CHECK(server.last_request().headers.find("svc-api-version")->second == "9.9");

  // The environment beats the profile; the flag beats the environment.
  const Env env = {{"STUDENTSVC_API_VERSION", "2.0"}};
  CHECK(tool({"--config", config, "--profile", "dev", "get", "1234567"}, env).status == 0);
  CHECK(server.last_request().headers.find("svc-api-version")->second == "2.0");
  CHECK(tool({"--config", config, "--profile", "dev", "--api-version", "9.9", "--retries", "0", "get", "1234567"}, env)
            .status == 5);

  const auto report = tool({"--config", config, "--profile", "dev", "--api-key", "wrong", "config"},
                           {{"STUDENTSVC_API_VERSION", "2.0"}});
  CHECK_THAT(report.out, Catch::Contains("STUDENTSVC_API_KEY"));
  CHECK(report.out.find("wrong") == std::string::npos);  // masked
  for (const std::string& line : std::vector<std::string>{"STUDENTSVC_API_KEY                  ****                              --api-key",
                                 "STUDENTSVC_API_VERSION              2.0                               STUDENTSVC_API_VERSION",
                                 "STUDENTSVC_PASSWORD                 ****                              profile dev (" + config + ")",
                                 "STUDENTSVC_CA_BUNDLE                (not set)                         default"}) {
    CHECK_THAT(report.out, Catch::Contains(line));
  }
  CHECK(report.out.find(server.client_options().auth.basic->password.reveal()) == std::string::npos);
}

TEST_CASE("tool --profile: each mistake is one line and exit 3, before anything is sent", "[tool][profile]") {
  MockServer server;
  const studentsvc::test::TempDir dir;
  const auto config = write_config(dir, server);
  struct Case {
    std::string config;
    std::string profile;
    const char* message;
  };
  const auto open_secret = dir.write("open.key", "k", fs::perms::owner_read | fs::perms::group_read);
  const std::vector<Case> cases = {
      {(dir.path() / "none.json").string(), "dev", "cannot open the config file"},
      {config, "staging", "no profile 'staging'"},
      {dir.write("bad.json", "{"), "dev", "not a JSON object"},
      {dir.write("noprof.json", "{}"), "dev", "no \"profiles\" object"},
      {dir.write("open.json", R"({"profiles": {"dev": {"api_key_file": "open.key"}}})"), "dev",
       "is accessible by other users: chmod 600"},
      {dir.write("inline.json", R"({"profiles": {"dev": {"api_key": "k"}}})"), "dev", "secrets go in files"},
      {dir.write("unknown.json", R"({"profiles": {"dev": {"base_ur1": "x"}}})"), "dev", "unknown key \"base_ur1\""},
      {dir.write("missing.json", R"({"profiles": {"dev": {"password_file": "nope"}}})"), "dev", "cannot read the file"},
      {dir.write("type.json", R"({"profiles": {"dev": {"allow_insecure_loopback": "yes"}}})"), "dev", "true or false"},
  };
  (void)open_secret;
  for (const auto& c : cases) {
    INFO(c.message);
    const auto r = tool({"--config", c.config, "--profile", c.profile, "get", "1234567"}, {});
    CHECK(r.status == 3);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(c.message));
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  CHECK(server.request_count() == 0);
}

TEST_CASE("read_secret_file drops one line break and refuses group or other access", "[tool][profile]") {
  const studentsvc::test::TempDir dir;
  CHECK(studentsvc_cli::read_secret_file("k", dir.write("a", "secret\r\n")).value() == "secret");
  CHECK(studentsvc_cli::read_secret_file("k", dir.write("b", "two\nlines\n")).value() == "two\nlines");
  CHECK_FALSE(studentsvc_cli::read_secret_file("k", dir.write("c", "\n")));
  CHECK_FALSE(studentsvc_cli::read_secret_file(
      "k", dir.write("d", "s", fs::perms::owner_read | fs::perms::others_read)));
  CHECK_FALSE(studentsvc_cli::read_secret_file(
      "k", dir.write("e", "s", fs::perms::owner_read | fs::perms::group_write)));
}

TEST_CASE("tool: the TLS settings come from a flag, the environment or a profile, and the key password is never shown",
          "[tool][profile][tls]") {
  MockServer server;
  const studentsvc::test::TempDir dir;
  dir.write("client.pem", "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
  dir.write("client.key", "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n");
  const std::string password = "key-password-canary-7781";
  dir.write("client.pass", password + "\n");
  const std::string pin = "sha256//" + std::string(43, 'A') + "=";
  const auto config = write_config(dir, server,
                                   R"(, "client_cert": "client.pem", "client_key": "client.key",
                                       "client_key_password_file": "client.pass", "pinned_public_key": ")" +
                                       pin + R"(")");

  // `config` prints every setting, then checks them as a call would: client TLS
  // settings over the mock's plain http:// fail that check (exit 3, the reason on stderr).
  const auto report = tool({"--config", config, "--profile", "dev", "config"}, {});
  CHECK(report.status == 3);
  CHECK_THAT(report.out, Catch::Contains("check: failed"));
  CHECK_THAT(report.err, Catch::Contains("https:// only"));
  CHECK(report.err.find(password) == std::string::npos);
  const std::string from_profile = "profile dev (" + config + ")";
  for (const std::string& line :
       std::vector<std::string>{"STUDENTSVC_CLIENT_CERT              " + (dir.path() / "client.pem").string(),
                                "STUDENTSVC_CLIENT_KEY               " + (dir.path() / "client.key").string(),
                                "STUDENTSVC_CLIENT_KEY_PASSWORD      ****                              " + from_profile,
                                "STUDENTSVC_PINNED_PUBLIC_KEY        " + pin + "  " + from_profile,
                                "STUDENTSVC_CA_PEM                   (not set)                         default"}) {
    CHECK_THAT(report.out, Catch::Contains(line));
  }
  CHECK(report.out.find(password) == std::string::npos);

  // A flag beats the profile, and is masked the same way; the CA as PEM text shows as its size only.
  const std::string flag_password = "flag-password-canary-3319";
  const auto flagged = tool({"--config", config, "--profile", "dev", "--client-key-password", flag_password,
                             "--ca-pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "config"},
                            {});
  CHECK_THAT(flagged.out, Catch::Contains("STUDENTSVC_CLIENT_KEY_PASSWORD      ****                              "
                                          "--client-key-password"));
  CHECK_THAT(flagged.out, Catch::Contains("STUDENTSVC_CA_PEM                   (PEM text, "));
  CHECK(flagged.out.find(flag_password) == std::string::npos);

  // Client TLS settings cannot work over the mock's plain http://: refused before anything is sent.
  const auto refused = tool({"--config", config, "--profile", "dev", "get", "1234567"},
                            {{"STUDENTSVC_CLIENT_KEY_PASSWORD", password}});
  CHECK(refused.status == 3);
  CHECK_THAT(refused.err, Catch::Contains("https:// only"));
  CHECK(refused.err.find(password) == std::string::npos);
  CHECK(server.request_count() == 0);
}

}  // namespace tool_profiles_test

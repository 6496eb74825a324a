// `studentsvc --profile NAME`: named profiles in a JSON config file, secrets as
// files that other users cannot read, and the precedence flag > environment >
// profile > default, as `studentsvc config` reports it and as requests show it.

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/testing/mock_server.hpp>

#include "profiles.hpp"
#include "support/process.hpp"
#include "support/skip.hpp"
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

TEST_CASE("tool --profile: perm_syntax in a profile", "[tool][profile][perm_syntax]") {
  MockServer server(studentsvc::testing::with_alphanumeric_perms());
  const studentsvc::test::TempDir dir;
  const auto config = write_config(dir, server, R"(, "perm_syntax": "alphanumeric")");
  const auto r = tool({"--config", config, "--profile", "dev", "get", "A1B2C3D"}, {});
  CHECK(r.status == 0);
  CHECK(nlohmann::json::parse(r.out).at("lastName") == "Quispe");
  const auto flag = tool({"--config", config, "--profile", "dev", "--perm-syntax", "digits", "get", "A1B2C3D"}, {});
  CHECK(flag.status == 3);
  CHECK(server.request_count() == 1);
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

TEST_CASE("tool --profile: a config file others can write is refused, as ssh refuses one", "[tool][profile]") {
  MockServer server;
  const studentsvc::test::TempDir dir;
  const auto config = write_config(dir, server);
  const Args args{"--config", config, "--profile", "dev", "get", "1234567"};
  REQUIRE(tool(args, {}).status == 0);
  const auto before = server.request_count();
  const auto refused = [&](const std::string& what) {
    const auto r = tool(args, {});
    CHECK(r.status == 3);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(what));
    CHECK(r.err.find('\n') == r.err.size() - 1);
  };
  const auto private_file = fs::perms::owner_read | fs::perms::owner_write;

  // Anyone who can rewrite it could point base_url at their own listener and receive the keys.
  for (const auto writable : {fs::perms::others_write, fs::perms::group_write}) {
    fs::permissions(config, private_file | writable);
    refused("config file " + config + " is writable by group or others, who could rewrite it: chmod go-w " + config);
    fs::permissions(config, private_file);
  }
  // Its folder: the file could be replaced.
  fs::permissions(dir.path(), fs::perms::group_write, fs::perm_options::add);
  refused("the folder of config file " + dir.path().string() + " is writable by group or others");
  fs::permissions(dir.path(), fs::perms::group_write, fs::perm_options::remove);
  // A file the profile names: a CA bundle others can write lets them add their own CA.
  dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\n", private_file | fs::perms::others_write);
  const auto with_ca = write_config(dir, server, R"(, "ca_bundle": "ca.pem")");
  refused("ca_bundle " + (dir.path() / "ca.pem").string() + " is writable by group or others");
  fs::permissions(dir.path() / "ca.pem", private_file);
  (void)with_ca;
  CHECK(server.request_count() == before);  // nothing sent
  CHECK(tool(args, {}).status == 0);        // put right, it works again
}

TEST_CASE("tool --profile: a secret file in a folder others can write is refused, though the file is 0600",
          "[tool][profile]") {
  // Whoever can write the folder can replace the file: the key the tool sends would be theirs.
  MockServer server;
  const studentsvc::test::TempDir dir;
  const auto o = server.client_options();
  fs::create_directory(dir.path() / "keys");
  fs::permissions(dir.path() / "keys", fs::perms::owner_all);
  dir.write("keys/api.key", std::string(o.auth.api_key.reveal()) + "\n");
  const auto config = dir.write("config.json", R"({"profiles": {"dev": {"base_url": ")" + server.base_url() +
                                                   R"(", "allow_insecure_loopback": true, "api_key_file": "keys/api.key"}}})");
  const Args args{"--config", config, "--profile", "dev", "config"};
  REQUIRE(tool(args, {}).status == 0);  // the control: private folder, private file
  for (const auto writable : {fs::perms::group_write, fs::perms::others_write}) {
    fs::permissions(dir.path() / "keys", writable, fs::perm_options::add);
    const auto r = tool(args, {});
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Catch::Contains("the folder of api_key_file " + (dir.path() / "keys").string() +
                                      " is writable by group or others"));
    CHECK(r.err.find(std::string(o.auth.api_key.reveal())) == std::string::npos);
    fs::permissions(dir.path() / "keys", writable, fs::perm_options::remove);
  }
  CHECK(tool(args, {}).status == 0);  // put right, it works again
  CHECK(server.request_count() == 0);
}

TEST_CASE("tool --profile: a config file another user owns is refused", "[tool][profile]") {
  // Root may own it (a file installed by the system); anyone else may not.
  if (::geteuid() != 0) STUDENTSVC_SKIP("not root: the other-owner case needs chown");
  MockServer server;
  const studentsvc::test::TempDir dir;
  const auto config = write_config(dir, server);
  const Args args{"--config", config, "--profile", "dev", "get", "1234567"};
  REQUIRE(tool(args, {}).status == 0);
  const auto before = server.request_count();
  REQUIRE(::chown(config.c_str(), 65534, 65534) == 0);
  const auto r = tool(args, {});
  CHECK(r.status == 3);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("config file " + config + " is owned by another user (uid 65534)"));
  // A secret file owned by another user, in a folder that is not.
  REQUIRE(::chown(config.c_str(), 0, 0) == 0);
  const auto key = (dir.path() / "api.key").string();
  REQUIRE(::chown(key.c_str(), 65534, 65534) == 0);
  const auto secret = tool(args, {});
  CHECK(secret.status == 3);
  CHECK_THAT(secret.err, Catch::Contains("api_key_file " + key + " is owned by another user (uid 65534)"));
  REQUIRE(::chown(key.c_str(), 0, 0) == 0);
  CHECK(server.request_count() == before);  // nothing sent
  CHECK(tool(args, {}).status == 0);
}

TEST_CASE("tool --profile: a FIFO as a secret file or CA bundle is refused, never waited on", "[tool][profile]") {
  MockServer server;
  const studentsvc::test::TempDir dir;
  const auto fifo = (dir.path() / "key.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto as_secret = dir.write("fifo.json", R"({"profiles": {"dev": {"api_key_file": "key.fifo"}}})");
  const auto r = tool({"--config", as_secret, "--profile", "dev", "get", "1234567"}, {});  // a hang fails after 60 s
  CHECK(r.status == 3);
  CHECK_THAT(r.err, Catch::Contains("api_key_file " + fifo + " is not a regular file"));
  const auto as_ca = tool({"--base-url", "https://127.0.0.1:1", "--api-key", "k", "--ca-bundle", fifo, "get", "1234567"}, {});
  CHECK(as_ca.status == 3);
  CHECK_THAT(as_ca.err, Catch::Contains("is not a regular file"));
  const auto as_config = tool({"--config", fifo, "--profile", "dev", "get", "1234567"}, {});
  CHECK(as_config.status == 3);
  CHECK_THAT(as_config.err, Catch::Contains("is not a regular file"));
  CHECK(server.request_count() == 0);
}

TEST_CASE("read_secret_file drops every trailing line break and refuses group or other access", "[tool][profile]") {
  const studentsvc::test::TempDir dir;
  CHECK(studentsvc_cli::read_secret_file("k", dir.write("a", "secret\r\n")).value() == "secret");
  CHECK(studentsvc_cli::read_secret_file("k", dir.write("a2", "secret\n\n")).value() == "secret");
  CHECK(studentsvc_cli::read_secret_file("k", dir.write("a3", "secret\r\n\r\n\r")).value() == "secret");
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

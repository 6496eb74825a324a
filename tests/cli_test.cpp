// The studentsvc tool and the example programs, run as a user runs them: a
// child process with a controlled environment, its stdout, stderr and exit
// status captured separately. Servers are MockServers on 127.0.0.1 that these
// tests start themselves (or the tool's own --mock).

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
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <studentsvc/detail/text/base64.hpp>
#include <studentsvc/json.hpp>
#include <studentsvc/version.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "cli_json.hpp"
#include "support/process.hpp"
#include "support/raw_server.hpp"
#include "support/temp_dir.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace cli_test {

namespace {

using studentsvc::test::RefusingPort;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;
using Env = studentsvc::test::Env;
using Args = studentsvc::test::Args;

const std::string cli = STUDENTSVC_CLI_PATH;

using Run = studentsvc::test::ProcessResult;

Run run(const std::string& program, const Args& args, const Env& env = {}) {
  return studentsvc::test::run_process(program, args, env);
}

Run tool(const Args& args, const Env& env = {}) { return run(cli, args, env); }

/// Options that point the tool at `server` (plain HTTP on loopback) with its default credentials.
Args flags_for(const MockServer& server) {
  const auto o = server.client_options();
  Args a{"--base-url", server.base_url(), "--insecure-loopback", "--api-key", std::string(o.auth.api_key.reveal()),
         "--network-id", "svc-registrar-app", "--password", "mock-password", "--retries", "0"};
  if (o.auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom) {
    a.insert(a.end(), {"--svc-api-key", std::string(o.auth.svc_api_key.reveal())});  // the mock's own svc-api-key
  }
  return a;
}

Args concat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool one_line(const std::string& s) {
  return !s.empty() && s.back() == '\n' && s.find('\n') == s.size() - 1;
}

nlohmann::json expected_student_json(const std::string& perm) {
  auto decoded = studentsvc::decode_student_json(MockServerOptions::default_students().at(perm));
  REQUIRE(decoded);
  return nlohmann::json(*decoded);
}

}  // namespace

TEST_CASE("cli help on every command exits 0 and prints usage") {
  for (const Args& args : {Args{"--help"}, Args{"-h"}, Args{"help"}, Args{"help", "--help"}}) {
    INFO(args.front());
    const auto r = tool(args);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Catch::Contains("Usage: studentsvc [OPTIONS] COMMAND"));
    CHECK_THAT(r.out, Catch::Contains("get PERM"));
    CHECK_THAT(r.out, Catch::Contains("--insecure-loopback"));
    CHECK_THAT(r.out, Catch::Contains("STUDENTSVC_PASSWORD"));
    CHECK_THAT(r.out, Catch::Contains("Exit status:"));
    for (const char* line : {"  2  usage error", "  3  invalid_argument", "  4  transport", "  5  bad_request",
                             "  6  unauthorized", "  7  not_found", "  8  http_status", "  9  decode"}) {
      CHECK_THAT(r.out, Catch::Contains(line));
    }
  }
  for (const std::string command : {"get", "current", "conversation"}) {
    for (const Args& args : {Args{command, "--help"}, Args{"--help", command}, Args{command, "-h"},
                             Args{"help", command}, Args{"--mock", command, "--bogus", "--help"}}) {
      INFO(args.at(0) << ' ' << args.at(1));
      const auto r = tool(args);
      CHECK(r.status == 0);
      CHECK(r.err.empty());
      CHECK_THAT(r.out, Catch::Contains("Usage: studentsvc [OPTIONS] " + command));
      CHECK_THAT(r.out, Catch::Contains("  7  not_found"));
    }
  }
  CHECK_THAT(tool({"get", "--help"}).out, Catch::Contains("--jwt TOKEN"));
  CHECK_THAT(tool({"current", "--help"}).out, Catch::Contains("STUDENTSVC_USER_JWT"));
  CHECK_THAT(tool({"conversation", "--help"}).out, Catch::Contains("--data BODY"));

  const auto v = tool({"--version"});
  CHECK(v.status == 0);
  CHECK_THAT(v.out, Catch::StartsWith("studentsvc "));
}

TEST_CASE("cli usage errors exit 2 with one line on stderr") {
  const std::vector<Args> cases = {
      {},
      {"frobnicate"},
      {"get"},
      {"get", "1234567", "--column", "perm"},
      {"--format", "csv", "current"},
      {"mock", "--tls-cert", "only.pem"},
      {"--bogus", "get", "1234567"},
      {"get", "1234567", "--timeout"},
      {"--timeout", "abc", "get", "1234567"},
      {"--timeout", "0", "get", "1234567"},
      {"--retries", "99", "get", "1234567"},
      {"--format", "xml", "get", "1234567"},
      {"current", "extra"},
      {"conversation", "a", "b"},
      {"get", "1234567", "--method", "POST"},
      {"conversation", "--jwt", "x"},
      {"--jwt", "x"},
      {"--mock", "--base-url", "https://example.edu", "get", "1234567"},
      {"--insecure-loopback=yes", "get", "1234567"},
      {"conversation", "--query", "novalue"},
      {"help", "frobnicate"},
      {"-x"},
  };
  for (const auto& args : cases) {
    std::string joined;
    for (const auto& a : args) joined += a + ' ';
    INFO("args: " << joined);
    const auto r = tool(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(one_line(r.err));
    CHECK_THAT(r.err, Catch::StartsWith("studentsvc: "));
  }
}

TEST_CASE("cli get --mock prints the student as JSON with the interface keys") {
  const auto r = tool({"--mock", "get", "1234567"});
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j == expected_student_json("1234567"));
  CHECK(j.at("firstName") == "Ana");
  CHECK(j.at("internationalStudentCode").is_null());
  CHECK_THAT(r.out, Catch::StartsWith("{\n  \"perm\": \"1234567\",\n  \"firstName\": \"Ana\",\n"));  // interface order

  // Options after the command, and --format=json spelled out, give the same answer.
  const auto again = tool({"get", "--format=json", "1234567", "--mock"});
  CHECK(again.status == 0);
  CHECK(again.out == r.out);

  // '--' ends the options.
  CHECK(tool({"--mock", "get", "--", "1234567"}).out == r.out);

  const auto other = tool({"--mock", "get", "5678901"});
  REQUIRE(other.status == 0);
  CHECK(nlohmann::json::parse(other.out) == expected_student_json("5678901"));
  CHECK_THAT(other.out, Catch::Contains("Zoë 🌟"));
}

TEST_CASE("cli --perm-syntax alphanumeric: flag, environment and the mock agree", "[perm_syntax]") {
  const auto avery = tool({"--mock", "--perm-syntax", "alphanumeric", "get", "A1B2C3D"});
  REQUIRE(avery.status == 0);
  CHECK(nlohmann::json::parse(avery.out).at("firstName") == "Avery");
  // A roster mixing both kinds of perm, through the batch path.
  const auto roster = tool({"--mock", "--perm-syntax", "alphanumeric", "get", "A1B2C3D", "1234567", "Z9y8X7w", "-o", "ndjson"});
  REQUIRE(roster.status == 0);
  CHECK_THAT(roster.out, Catch::Contains("\"Avery\"") && Catch::Contains("\"Ana\"") && Catch::Contains("\"Lindqvist\""));

  // The default is the interface's 7 digits: refused before sending, naming the option.
  const auto digits = tool({"--mock", "get", "A1B2C3D"});
  CHECK(digits.status == 3);
  CHECK_THAT(digits.err, Catch::Contains("perm_syntax") && Catch::Contains("alphanumeric"));
  const auto hostile = tool({"--mock", "--perm-syntax", "alphanumeric", "get", "A1B2C3/"});
  CHECK(hostile.status == 3);
  const auto unknown = tool({"--mock", "--perm-syntax", "letters", "get", "A1B2C3D"});
  CHECK(unknown.status == 3);
  CHECK_THAT(unknown.err, Catch::Contains("digits or alphanumeric"));

  // Against a server the test runs: the environment variable, and the flag beating it.
  MockServer server(studentsvc::testing::with_alphanumeric_perms());
  const auto by_env = tool(concat(flags_for(server), {"get", "A1B2C3D"}), {{"STUDENTSVC_PERM_SYNTAX", "alphanumeric"}});
  CHECK(by_env.status == 0);
  const auto flag_beats_env =
      tool(concat(flags_for(server), {"--perm-syntax", "digits", "get", "A1B2C3D"}), {{"STUDENTSVC_PERM_SYNTAX", "alphanumeric"}});
  CHECK(flag_beats_env.status == 3);
  CHECK(server.request_count() == 1);

  // `studentsvc mock` says the syntax in its exports, for the programs it serves.
  CHECK_THAT(tool({"mock", "--perm-syntax", "letters"}).err, Catch::Contains("digits or alphanumeric"));
}

TEST_CASE("cli get --format table shows the fields and the typed views") {
  const auto r = tool({"--mock", "--format", "table", "get", "1234567"});
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  for (const char* s : {"FIELD", "perm                      1234567", "firstName                 Ana",
                        "lastName                  Núñez", "suffix                    \"\"",
                        "internationalStudentCode  null", "birthDate                 20040315",
                        "TYPED VIEW", "gender                    female",
                        "international status      domestic", "admit level               freshman",
                        "birth date                2004-03-15", "release status            releasable"}) {
    CHECK_THAT(r.out, Catch::Contains(s));
  }
  const auto li = tool({"--mock", "--format=table", "get", "2345678"});
  REQUIRE(li.status == 0);
  for (const char* s : {"gender                    male", "international status      foreign",
                        "admit level               transfer", "birth date                2001-11-30",
                        "release status            not_for_release", "middleName                null"}) {
    CHECK_THAT(li.out, Catch::Contains(s));
  }
  const auto sam = tool({"--mock", "--format", "table", "get", "4567890"});
  REQUIRE(sam.status == 0);
  for (const char* s : {"gender                    unrecognized", "birth date                not a valid date",
                        "release status            unknown", "international status      unrecognized"}) {
    CHECK_THAT(sam.out, Catch::Contains(s));
  }
}

TEST_CASE("cli current takes the JWT from --jwt, then STUDENTSVC_USER_JWT, then the mock's demo token") {
  const auto demo = tool({"--mock", "current"});
  REQUIRE(demo.status == 0);
  CHECK(demo.err.empty());
  const auto j = nlohmann::json::parse(demo.out);
  CHECK(j.at("perm") == "1234567");
  CHECK(j.size() == 5);  // StudentMinimal: perm, firstName, lastName, suffix, email
  CHECK_FALSE(j.contains("gender"));

  const auto flag = tool({"--mock", "current", "--jwt", "mock-jwt-li"});
  REQUIRE(flag.status == 0);
  CHECK(nlohmann::json::parse(flag.out).at("perm") == "2345678");

  const auto env = tool({"--mock", "current"}, {{"STUDENTSVC_USER_JWT", "mock-jwt-li"}});
  REQUIRE(env.status == 0);
  CHECK(nlohmann::json::parse(env.out).at("lastName") == "Wei");

  const auto both = tool({"--mock", "current", "--jwt", "mock-jwt-ana"}, {{"STUDENTSVC_USER_JWT", "mock-jwt-li"}});
  REQUIRE(both.status == 0);
  CHECK(nlohmann::json::parse(both.out).at("perm") == "1234567");

  const auto table = tool({"--mock", "current", "--format", "table"});
  REQUIRE(table.status == 0);
  CHECK_THAT(table.out, Catch::Contains("email                     ana.nunez@example.edu"));
  CHECK_THAT(table.out, Catch::Contains("perm                      1234567"));

  // Against a server the test runs, configured by flags; no JWT anywhere is an error.
  MockServer server;
  const auto real = tool(concat(flags_for(server), {"current", "--jwt", "mock-jwt-li"}));
  REQUIRE(real.status == 0);
  CHECK(nlohmann::json::parse(real.out).at("perm") == "2345678");
  CHECK(server.last_request().header("svc-user-jwt") == "mock-jwt-li");

  const auto none = tool(concat(flags_for(server), {"current"}));
  CHECK(none.status == 3);
  CHECK(none.out.empty());
  CHECK(one_line(none.err));
  CHECK_THAT(none.err, Catch::Contains("STUDENTSVC_USER_JWT"));

  // get --jwt restricts the answer to the token's own student.
  const auto restricted = tool({"--mock", "get", "2345678", "--jwt", "mock-jwt-ana"});
  CHECK(restricted.status == 7);
}

TEST_CASE("cli conversation passes method, data, query and sub-path through") {
  const auto r = tool({"--mock", "conversation", "--method", "PUT", "--data", R"({"text":"hi"})", "--query",
                       "lang=en", "--query", "q=a b", "threads/42"});
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("method") == "PUT");
  CHECK(j.at("subPath") == "/threads/42");
  CHECK(j.at("body") == R"({"text":"hi"})");
  CHECK(j.at("contentType") == "application/json");
  CHECK(j.at("query") == nlohmann::json{{"lang", "en"}, {"q", "a b"}});

  const auto get = tool({"--mock", "conversation"});
  REQUIRE(get.status == 0);
  CHECK(nlohmann::json::parse(get.out).at("method") == "GET");

  const auto post = tool({"--mock", "conversation", "--data", "x=1", "--content-type", "text/plain"});
  REQUIRE(post.status == 0);
  const auto pj = nlohmann::json::parse(post.out);
  CHECK(pj.at("method") == "POST");  // --data without --method
  CHECK(pj.at("contentType") == "text/plain");

  const auto table = tool({"--mock", "--format", "table", "conversation", "--method", "DELETE", "a/b"});
  REQUIRE(table.status == 0);
  CHECK_THAT(table.out, Catch::Contains("status                    200"));
  CHECK_THAT(table.out, Catch::Contains("content-type              application/json"));
  CHECK_THAT(table.out, Catch::Contains("\"subPath\": \"/a/b\""));

  // A body that is not JSON comes out as it came.
  MockServerOptions o;
  o.conversation = [](const httplib::Request&, httplib::Response& res) {
    res.status = 200;
    res.set_content("plain words", "text/plain");
  };
  MockServer server(o);
  const auto plain = tool(concat(flags_for(server), {"conversation"}));
  REQUIRE(plain.status == 0);
  CHECK(plain.out == "plain words");

  // A JSON body keeps the server's key order.
  server.update([](MockServerOptions& opts) {
    opts.conversation = [](const httplib::Request&, httplib::Response& res) {
      res.status = 201;
      res.set_content(R"({"zeta":1,"alpha":{"b":2,"a":1}})", "application/json");
    };
  });
  const auto ordered = tool(concat(flags_for(server), {"conversation", "--method", "POST"}));
  REQUIRE(ordered.status == 0);
  CHECK(ordered.out == "{\n  \"zeta\": 1,\n  \"alpha\": {\n    \"b\": 2,\n    \"a\": 1\n  }\n}\n");
}

TEST_CASE("cli reads the STUDENTSVC environment and flags beat it") {
  MockServerOptions mo;
  mo.svc_api_key = "mock-api-key";  // the tool's default: svc-api-key is the API key
  MockServer server(mo);
  const Env env = {{"STUDENTSVC_BASE_URL", server.base_url()},
                   {"STUDENTSVC_API_KEY", "mock-api-key"},
                   {"STUDENTSVC_NETWORK_ID", "svc-registrar-app"},
                   {"STUDENTSVC_PASSWORD", "mock-password"}};
  const auto r = tool({"--insecure-loopback", "get", "2345678"}, env);
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.out) == expected_student_json("2345678"));
  const auto sent = server.last_request();
  CHECK(sent.header("x-api-key") == "mock-api-key");
  CHECK(sent.header("svc-api-key") == "mock-api-key");
  CHECK(sent.header("svc-api-version") == "2.0");

  // The environment's wrong key is overridden by the flag.
  Env wrong = env;
  wrong["STUDENTSVC_API_KEY"] = "wrong-key";
  CHECK(tool({"--insecure-loopback", "get", "2345678"}, wrong).status == 6);
  CHECK(tool({"--insecure-loopback", "--api-key", "mock-api-key", "get", "2345678"}, wrong).status == 0);

  // --svc-api-key off drops the header; the mock then refuses.
  const auto off = tool({"--insecure-loopback", "--svc-api-key", "off", "--retries", "0", "get", "2345678"}, env);
  CHECK(off.status == 6);
  CHECK_FALSE(server.last_request().header("svc-api-key").has_value());

  // The second (not approved) account gets the extended-only fields as null.
  const auto roster = tool({"--insecure-loopback", "--network-id", "svc-roster-app", "--password", "mock-password-2",
                            "get", "1234567"},
                           env);
  REQUIRE(roster.status == 0);
  CHECK(nlohmann::json::parse(roster.out).at("gender").is_null());
  CHECK(nlohmann::json::parse(roster.out).at("email") == "ana.nunez@example.edu");

  // The --mock run ignores the environment's connection settings.
  CHECK(tool({"--mock", "get", "1234567"}, wrong).status == 0);
}

TEST_CASE("cli gives each ErrorKind its own exit status") {
  struct Case {
    const char* name;
    Args args;
    Env env;
    int status;
    const char* message;
  };
  MockServer server;
  const Args flags = flags_for(server);
  const RefusingPort refusing;
  const std::string closed = "http://127.0.0.1:" + std::to_string(refusing.port());

  std::vector<Case> cases = {
      {"bad perm", {"--mock", "get", "12345"}, {}, 3, "get: invalid_argument: perm must be exactly 7"},
      {"empty JWT", {"--mock", "current", "--jwt", ""}, {}, 3, "current: invalid_argument"},
      {"no configuration", {"get", "1234567"}, {}, 3, "no base URL"},
      {"no API key", {"--base-url", "https://api.example.edu", "get", "1234567"}, {}, 3, "no API key"},
      {"network id without password",
       {"--base-url", "https://api.example.edu", "--api-key", "k", "--network-id", "n", "get", "1234567"},
       {},
       3,
       "go together"},
      {"http without opt-in",
       {"--base-url", server.base_url(), "--api-key", "k", "get", "1234567"},
       {},
       3,
       "base URL uses http://"},
      {"dot-dot sub-path", {"--mock", "conversation", "a/../b"}, {}, 3, "invalid_argument"},
      {"closed port",
       {"--base-url", closed, "--insecure-loopback", "--api-key", "k", "--retries", "0", "get", "1234567"},
       {},
       4,
       "get: transport: connect failed"},
      {"bad api version", {"--mock", "--api-version", "9.9", "get", "1234567"}, {}, 5, "bad_request (400)"},
      {"wrong API key", {"--mock", "--api-key", "wrong", "get", "1234567"}, {}, 6, "unauthorized (401)"},
      {"wrong password", {"--mock", "--password", "wrong", "get", "1234567"}, {}, 6, "unauthorized (401)"},
      {"unknown JWT", {"--mock", "current", "--jwt", "nope"}, {}, 6, "unauthorized (401)"},
      {"unknown perm", {"--mock", "get", "7654321"}, {}, 7, "get: not_found (404): Student not found."},
  };
  SECTION("bad input and configuration, an unreachable server, and the mock's refusals") {
    for (const auto& c : cases) {
      INFO(c.name);
      const auto r = tool(c.args, c.env);
      CHECK(r.status == c.status);
      CHECK(r.out.empty());
      CHECK(one_line(r.err));
      CHECK_THAT(r.err, Catch::StartsWith("studentsvc: "));
      CHECK_THAT(r.err, Catch::Contains(c.message));
    }
  }

  SECTION("http_status and decode come from a misbehaving server") {
    server.update([](MockServerOptions& o) {
      o.intercept = [](const httplib::Request& req, httplib::Response& res) {
        if (req.path.ends_with("/1111111")) {
          res.status = 503;
          res.set_content("<html>down for maintenance</html>", "text/html");
          return true;
        }
        if (req.path.ends_with("/2222222")) {
          res.status = 418;
          res.set_content(R"({"message":"I'm a teapot"})", "application/json");
          return true;
        }
        if (req.path.ends_with("/3333333")) {
          res.status = 200;
          res.set_content(R"({"perm":3333333})", "application/json");
          return true;
        }
        if (req.path.ends_with("/4444444")) {
          res.status = 200;
          res.set_content("<html>login page</html>", "text/html");
          return true;
        }
        return false;
      };
    });
    const auto unavailable = tool(concat(flags, {"get", "1111111"}));
    CHECK(unavailable.status == 8);
    CHECK(one_line(unavailable.err));
    CHECK_THAT(unavailable.err, Catch::Contains("http_status (503)"));
    CHECK_THAT(unavailable.err, Catch::Contains("(retryable)"));

    const auto teapot = tool(concat(flags, {"get", "2222222"}));
    CHECK(teapot.status == 8);
    CHECK_THAT(teapot.err, Catch::Contains("http_status (418): I'm a teapot"));

    const auto wrong_type = tool(concat(flags, {"get", "3333333"}));
    CHECK(wrong_type.status == 9);
    CHECK(wrong_type.out.empty());
    CHECK_THAT(wrong_type.err, Catch::Contains("decode (200): field 'perm'"));

    const auto html = tool(concat(flags, {"get", "4444444"}));
    CHECK(html.status == 9);
    CHECK(one_line(html.err));
  }

  SECTION("a timeout is a transport error") {
    server.update([](MockServerOptions& o) { o.latency = std::chrono::milliseconds(1500); });
    const auto r = tool(concat(flags, {"--timeout", "300", "get", "1234567"}));
    CHECK(r.status == 4);
    CHECK_THAT(r.err, Catch::Contains("transport: timed out"));
  }
}

TEST_CASE("cli --verbose logs to stderr through the SDK logger and leaves stdout alone") {
  const auto quiet = tool({"--mock", "get", "1234567"});
  const auto verbose = tool({"--mock", "--verbose", "get", "1234567"});
  REQUIRE(verbose.status == 0);
  CHECK(verbose.out == quiet.out);
  // One perm runs asynchronously, so that SIGINT and SIGTERM can cancel it (the log line says so).
  CHECK_THAT(verbose.err, Catch::Contains("studentsvc: debug: get_student (async): status 200 after 1 attempt(s)"));
  CHECK_THAT(verbose.err, Catch::Contains("config: base URL from the mock server"));
  CHECK_THAT(verbose.err, Catch::Contains("Basic credential from the mock server"));

  const auto trace = tool({"--mock", "-v", "-v", "get", "1234567"});
  REQUIRE(trace.status == 0);
  CHECK_THAT(trace.err, Catch::Contains("x-api-key: REDACTED"));
  CHECK_THAT(trace.err, Catch::Contains("Authorization: REDACTED"));
  CHECK_THAT(trace.err, Catch::Contains("svc-api-version: 2.0"));
}

TEST_CASE("cli never prints a canary secret, with --verbose and in error cases") {
  const std::string key = "CANARY-KEY-123";
  const std::string password = "CANARY-PW-456";
  const std::string jwt = "CANARY-JWT-789";
  const std::string network_id = "svc-canary";

  MockServerOptions o;
  o.api_key = key;
  o.svc_api_key = key;
  o.accounts = {{network_id, password, true}};
  o.jwts = {{jwt, "1234567"}};
  MockServer server(o);
  MockServer other;  // expects its own defaults: every canary credential is refused
  const RefusingPort refusing;
  const std::string closed = "http://127.0.0.1:" + std::to_string(refusing.port());

  const Args secret_flags = {"--api-key", key, "--network-id", network_id, "--password", password};
  const Env secret_env = {{"STUDENTSVC_API_KEY", key},
                          {"STUDENTSVC_NETWORK_ID", network_id},
                          {"STUDENTSVC_PASSWORD", password},
                          {"STUDENTSVC_USER_JWT", jwt}};
  auto at = [&](const MockServer& s) { return Args{"--base-url", s.base_url(), "--insecure-loopback"}; };
  auto env_at = [&](const std::string& base_url) {
    Env e = secret_env;
    e["STUDENTSVC_BASE_URL"] = base_url;
    return e;
  };

  struct Case {
    Args args;
    Env env;
    int status;
  };
  const std::vector<Case> cases = {
      // Successes, by flags and by environment.
      {concat(concat(at(server), secret_flags), {"-v", "-v", "get", "1234567", "--jwt", jwt}), {}, 0},
      {concat(concat(at(server), secret_flags), {"-v", "-v", "current", "--jwt", jwt}), {}, 0},
      {concat(concat(at(server), secret_flags), {"-v", "-v", "--format", "table", "get", "1234567"}), {}, 0},
      {concat(concat(at(server), secret_flags), {"-v", "-v", "conversation", "--data", "{}"}), {}, 0},
      {{"--insecure-loopback", "-v", "-v", "current"}, env_at(server.base_url()), 0},
      {{"--insecure-loopback", "-v", "-v", "get", "1234567"}, env_at(server.base_url()), 0},
      // Refused credentials.
      {concat(concat(at(other), secret_flags), {"-v", "-v", "get", "1234567"}), {}, 6},
      {concat(concat(at(other), secret_flags), {"-v", "-v", "conversation"}), {}, 6},
      {{"-v", "-v", "--insecure-loopback", "--api-key", "mock-api-key", "current"},
       [&] {
         Env e = env_at(other.base_url());
         e["STUDENTSVC_NETWORK_ID"] = "svc-registrar-app";
         e["STUDENTSVC_PASSWORD"] = "mock-password";
         return e;
       }(),
       6},
      {{"-v", "-v", "--mock", "--api-key", key, "--password", password, "current", "--jwt", jwt}, {}, 6},
      // Caught before sending.
      {concat(concat(at(server), secret_flags), {"-v", "-v", "get", key}), {}, 3},
      {concat(concat(at(server), secret_flags), {"-v", "-v", "current", "--jwt", jwt + "\r\nX-Injected: 1"}), {}, 3},
      {concat(at(server), {"-v", "-v", "--api-key", key + "\n", "get", "1234567"}), {}, 3},
      {{"-v", "-v", "--base-url", "https://" + key + ":" + password + "@api.example.edu", "--api-key", key, "get",
        "1234567"},
       {},
       3},
      {{"-v", "-v", "--base-url", server.base_url(), "--password", password, "--api-key", key, "get", "1234567"},
       {},
       3},
      // Transport failure.
      {concat(concat({"--base-url", closed, "--insecure-loopback", "--retries", "0"}, secret_flags),
              {"-v", "-v", "current", "--jwt", jwt}),
       {},
       4},
      // Usage errors that hold a secret.
      {{"--api-kye=" + key, "get", "1234567"}, {}, 2},
      {{"--timeout", password, "get", "1234567"}, {}, 2},
      {{"--format", jwt, "get", "1234567"}, {}, 2},
      {{key, "1234567"}, {}, 2},
      {{"current", jwt}, {}, 2},
      {{"--mock", "get", "1234567", password}, {}, 10},  // a batch: the second lookup fails, shown as "#2"
      {{"--verbose=" + key, "get", "1234567"}, {}, 2},
      {{"--query", password, "conversation"}, {}, 2},
  };
  const std::vector<std::string> secrets = {
      key,
      password,
      jwt,
      studentsvc::detail::base64_encode(network_id + ":" + password),
      studentsvc::detail::base64_encode("svc-registrar-app:" + password),
  };
  int index = 0;
  for (const auto& c : cases) {
    INFO("case " << index++);
    const auto r = tool(c.args, c.env);
    INFO("stdout: " << r.out);
    INFO("stderr: " << r.err);
    CHECK(r.status == c.status);
    for (const auto& secret : secrets) {
      CHECK(r.out.find(secret) == std::string::npos);
      CHECK(r.err.find(secret) == std::string::npos);
    }
    if (c.status == 0 && !c.env.empty()) CHECK_THAT(r.err, Catch::Contains("REDACTED"));  // trace ran
  }
}

// The examples, where the build has them (STUDENTSVC_BUILD_EXAMPLES).
#ifdef STUDENTSVC_EXAMPLE_GET_STUDENT
TEST_CASE("example get_student --mock prints the student, and the error for an unknown perm") {
  const auto r = run(STUDENTSVC_EXAMPLE_GET_STUDENT, {"--mock", "2345678"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out ==
        "2345678: Li Wei <li.wei@example.edu>\n"
        "admit level: transfer, international status: foreign, release status: not_for_release\n");

  const auto missing = run(STUDENTSVC_EXAMPLE_GET_STUDENT, {"--mock", "7654321"});
  CHECK(missing.status == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err == "get_student: not_found (404): Student not found.\n");

  const auto no_perm = run(STUDENTSVC_EXAMPLE_GET_STUDENT, {"--mock"});
  CHECK(no_perm.status == 2);
  CHECK(no_perm.err == "usage: get_student [--mock] PERM\n");

  const auto unconfigured = run(STUDENTSVC_EXAMPLE_GET_STUDENT, {"1234567"});
  CHECK(unconfigured.status == 1);
  CHECK_THAT(unconfigured.err, Catch::Contains("STUDENTSVC_BASE_URL is not set"));
}

TEST_CASE("example current_student --mock prints the signed-in student") {
  const auto demo = run(STUDENTSVC_EXAMPLE_CURRENT_STUDENT, {"--mock"});
  CHECK(demo.status == 0);
  CHECK(demo.err.empty());
  CHECK(demo.out == "signed in as Ana Núñez (perm 1234567, ana.nunez@example.edu)\n");

  const auto li = run(STUDENTSVC_EXAMPLE_CURRENT_STUDENT, {"--mock", "mock-jwt-li"});
  CHECK(li.status == 0);
  CHECK_THAT(li.out, Catch::Contains("Li Wei (perm 2345678"));

  const auto env = run(STUDENTSVC_EXAMPLE_CURRENT_STUDENT, {"--mock"}, {{"STUDENTSVC_USER_JWT", "mock-jwt-li"}});
  CHECK(env.status == 0);
  CHECK_THAT(env.out, Catch::Contains("perm 2345678"));

  const auto bad = run(STUDENTSVC_EXAMPLE_CURRENT_STUDENT, {"--mock", "not-a-token"});
  CHECK(bad.status == 1);
  CHECK(bad.err == "current_student: unauthorized (401): The user token is not valid.\n");
}

TEST_CASE("example conversation --mock prints the echoed request") {
  const auto r = run(STUDENTSVC_EXAMPLE_CONVERSATION, {"--mock"});
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
  REQUIRE_THAT(r.out, Catch::StartsWith("status 200\n"));
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('\n') + 1));
  CHECK(j.at("method") == "POST");
  CHECK(j.at("subPath") == "/threads/42");
  CHECK(j.at("query") == nlohmann::json{{"lang", "en"}});
  CHECK(j.at("body") == R"({"text":"When does registration open?"})");
}

TEST_CASE("example readme_example runs and reports a missing configuration or an unreachable service") {
  const auto unconfigured = run(STUDENTSVC_EXAMPLE_README, {});
  CHECK(unconfigured.status == 1);
  CHECK(unconfigured.out.empty());
  CHECK(unconfigured.err == "invalid_argument: STUDENTSVC_BASE_URL is not set\n");

  // from_env() has no loopback opt-in, so point it at an https port nobody listens on.
  const RefusingPort refusing;
  const Env env = {{"STUDENTSVC_BASE_URL", "https://127.0.0.1:" + std::to_string(refusing.port())},
                   {"STUDENTSVC_API_KEY", "k"}};
  const auto unreachable = run(STUDENTSVC_EXAMPLE_README, {}, env);
  CHECK(unreachable.status == 1);
  CHECK_THAT(unreachable.err, Catch::StartsWith("transport: connect failed"));
}
#endif  // STUDENTSVC_EXAMPLE_GET_STUDENT

TEST_CASE("cli pretty-prints within bounds only: bounded_pretty_json", "[cli][json]") {
  using studentsvc_cli::bounded_pretty_json;
  const auto small = bounded_pretty_json(R"({"b":1,"a":[1,2]})");
  REQUIRE(small);
  CHECK(*small == "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2\n  ]\n}");  // the server's key order kept
  CHECK_FALSE(bounded_pretty_json("not json"));
  CHECK_FALSE(bounded_pretty_json(""));
  const std::string at_limit = std::string(64, '[') + std::string(64, ']');
  CHECK(bounded_pretty_json(at_limit));
  CHECK_FALSE(bounded_pretty_json("[" + at_limit + "]"));  // 65 deep
  CHECK_FALSE(bounded_pretty_json(std::string(1'000'000, '[') + std::string(1'000'000, ']')));
  CHECK_FALSE(bounded_pretty_json(std::string(1'000'000, '{')));  // and truncated
  // Size: just over the cap is printed raw, whatever its shape.
  std::string big = "[";
  while (big.size() <= studentsvc_cli::max_pretty_bytes) big += "1,";
  big += "1]";
  CHECK_FALSE(bounded_pretty_json(big));
  CHECK(bounded_pretty_json(big, studentsvc_cli::max_pretty_depth, big.size()));
  // Bytes that are not UTF-8 are not JSON to nlohmann: printed raw, never thrown on.
  CHECK_FALSE(bounded_pretty_json("[\"\xff\xfe\"]"));
}

TEST_CASE("cli conversation survives any body: a million deep, or large, is printed as it came", "[cli][json]") {
  using studentsvc::test::RawServer;
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  std::string large = "[";
  while (large.size() < 3U * 1024U * 1024U) large += R"({"k":"v"},)";
  large += "1]";
  std::string body;
  int status = 200;
  RawServer raw([&](int fd, int) {
    (void)RawServer::read_request(fd);
    (void)RawServer::write_all(fd, RawServer::response(status, body));
  });
  REQUIRE(raw.port() > 0);
  const Args base{"--base-url", raw.base_url(), "--insecure-loopback", "--api-key", "k", "--retries", "0"};
  SECTION("a 1,000,000-deep array") {
    body = deep;
    const auto r = tool(concat(base, {"conversation"}));
    CHECK(r.status == 0);
    CHECK(r.out == deep);
    const auto t = tool(concat(base, {"--format", "table", "conversation"}));
    CHECK(t.status == 0);
    CHECK_THAT(t.out, Catch::EndsWith(deep + "\n"));
  }
  SECTION("a 3 MiB body") {
    body = large;
    const auto r = tool(concat(base, {"conversation"}));
    CHECK(r.status == 0);
    CHECK(r.out == large);
  }
  SECTION("an error body a million deep") {
    body = deep;
    status = 503;
    const auto r = tool(concat(base, {"conversation"}));
    CHECK(r.status == 8);
    CHECK(one_line(r.err));
    CHECK(r.out.empty());
  }
  SECTION("a small JSON body is still pretty-printed") {
    body = R"({"z":1,"a":{"b":[true]}})";
    const auto r = tool(concat(base, {"conversation"}));
    CHECK(r.status == 0);
    CHECK(r.out == "{\n  \"z\": 1,\n  \"a\": {\n    \"b\": [\n      true\n    ]\n  }\n}\n");
  }
}

TEST_CASE("cli never prints a URL's user:password (proxy flag, proxy environment, base URL)", "[cli]") {
  const std::string proxy_password = "PROXYPW-canary-31";
  const std::string base_password = "BASEPW-canary-32";
  MockServer server;
  const RefusingPort no_proxy;
  const RefusingPort no_service;
  const std::string proxy = "http://proxyuser:" + proxy_password + "@127.0.0.1:" + std::to_string(no_proxy.port());
  // https:// goes through the proxy (plain http:// to loopback never does); the proxy is not there.
  const Args base{"--base-url", "https://127.0.0.1:" + std::to_string(no_service.port()), "--api-key", "k",
                  "--network-id", "n", "--password", "p", "--retries", "0"};
  auto check_clean = [&](const Run& r) {
    CHECK_THAT(r.out + r.err, !Catch::Contains(proxy_password));
    CHECK_THAT(r.out + r.err, !Catch::Contains(base_password));
    CHECK_THAT(r.out + r.err, !Catch::Contains("proxyuser:"));
  };
  SECTION("--proxy, with -v -v") {
    const auto r = tool(concat(base, {"--proxy", proxy, "-v", "-v", "get", "1234567"}));
    CHECK(r.status == 4);  // a transport error
    CHECK_THAT(r.err, Catch::Contains("transport"));
    check_clean(r);
  }
  SECTION("the proxy environment libcurl reads, with -v") {
    for (const char* var : {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
      CAPTURE(var);
      const auto r = tool(concat(base, {"-v", "get", "1234567"}), Env{{var, proxy}});
      CHECK(r.status == 4);
      check_clean(r);
    }
  }
  SECTION("a base URL with userinfo is refused without echoing it") {
    const auto r = tool({"--base-url", "http://baseuser:" + base_password + "@127.0.0.1:" + std::to_string(server.port()),
                         "--insecure-loopback", "--api-key", "k", "-v", "get", "1234567"});
    CHECK(r.status == 3);
    CHECK_THAT(r.err, Catch::Contains("user information"));
    check_clean(r);
  }
}

TEST_CASE("cli version and --version agree, and help covers config and mock", "[cli]") {
  const auto word = tool({"version"});
  const auto flag = tool({"--version"});
  CHECK(word.status == 0);
  CHECK(word.out == flag.out);
  CHECK_THAT(word.out, Catch::StartsWith("studentsvc " + std::string(studentsvc::version)));
  for (const std::string command : {"config", "mock"}) {
    for (const Args& args : {Args{command, "--help"}, Args{"help", command}}) {
      const auto r = tool(args);
      CHECK(r.status == 0);
      CHECK(r.err.empty());
      CHECK_THAT(r.out, Catch::Contains("studentsvc " + (command == "mock" ? command : "[OPTIONS] " + command)));
    }
  }
  CHECK_THAT(tool({"--help"}).out, Catch::Contains("--profile NAME"));
  CHECK(tool({"help", "version", "extra"}).status == 2);
}

TEST_CASE("cli a closed stdout is a write error, never another file", "[cli]") {
  const studentsvc::test::TempDir dir;
  studentsvc::test::ProcessControl closed;
  closed.close_stdout = true;
  const auto closed_run = [&](const Args& args) { return studentsvc::test::run_process(cli, args, {}, closed); };

  // `studentsvc get 1234567 >&-`: the record once went to descriptor 1, libcurl's socketpair by then; exit 0.
  const auto one = closed_run({"--mock", "get", "1234567"});
  CHECK(one.status == 1);
  CHECK(one.err == "studentsvc: could not write the output\n");  // one message

  // With --failed-to the records once went into that file: it holds only the perms whose record was lost.
  const auto single = (dir.path() / "ft.txt").string();
  CHECK(closed_run({"--mock", "get", "1234567", "--failed-to", single}).status == 1);
  CHECK(studentsvc::test::run_process("/bin/cat", {single}).out == "1234567\n");
  const auto batch = (dir.path() / "ft2.txt").string();
  const auto several = closed_run({"--mock", "get", "1234567", "2345678", "--failed-to", batch, "-q"});
  CHECK(several.status == 1);
  CHECK(several.err == "studentsvc: could not write the output\n");
  const auto listed = studentsvc::test::run_process("/bin/cat", {batch}).out;
  CHECK((listed == "1234567\n2345678\n" || listed == "2345678\n1234567\n"));

  // Every command: config and help too.
  for (const Args& args : {Args{"--mock", "config"}, Args{"--help"}, Args{"version"}}) {
    INFO(args.back());
    const auto r = closed_run(args);
    CHECK(r.status == 1);
    CHECK(r.err == "studentsvc: could not write the output\n");
  }
}

TEST_CASE("cli --stats: doctor prints its metrics, config and mock say they have none", "[cli]") {
  const auto doctor = tool({"--mock", "--stats", "doctor"});
  CHECK(doctor.status == 0);
  CHECK_THAT(doctor.err, Catch::Contains("studentsvc_attempts_total{operation=\"get_student\""));
  for (const std::string command : {"config", "mock"}) {
    const auto r = tool({"--stats", command});
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains("--stats applies to get, current, conversation and doctor"));
  }
  CHECK_THAT(tool({"--help"}).out, Catch::Contains("--stats (get, current, conversation, doctor)"));
}

TEST_CASE("cli get --jwt and --api-version refuse a blank value, nothing sent", "[cli]") {
  // Before: `get 2345678 --jwt ' '` printed Sam's full record; libcurl had
  // dropped the blank svc-user-jwt, lifting the "only the token's own student" rule.
  MockServer server;
  const Args flags = flags_for(server);
  for (const std::string blank : {" ", "\t", "  "}) {
    INFO("[" << blank << "]");
    const auto jwt = tool(concat(flags, {"get", "2345678", "--jwt", blank}));
    CHECK(jwt.status == 3);  // invalid_argument
    CHECK(jwt.out.empty());
    CHECK(one_line(jwt.err));
    CHECK_THAT(jwt.err, Catch::StartsWith("studentsvc: get: invalid_argument: ") && Catch::Contains("JWT") &&
                            Catch::Contains("nothing was sent"));
    const auto batch = tool(concat(flags, {"get", "2345678", "1234567", "-o", "csv", "-q", "--jwt", blank}));
    CHECK(batch.status != 0);
    CHECK(batch.out.find("li.wei@example.edu") == std::string::npos);
    const auto current = tool(concat(flags, {"current", "--jwt", blank}));
    CHECK(current.status == 3);
    CHECK_THAT(current.err, Catch::Contains("JWT"));
    const auto version = tool(concat(flags, {"--api-version", blank, "get", "2345678"}));
    CHECK(version.status == 3);
    CHECK(version.out.empty());
    CHECK_THAT(version.err, Catch::Contains("svc-api-version"));
    const auto padded = tool(concat(flags, {"--api-version", " 2.0", "get", "2345678"}));
    CHECK(padded.status == 3);
    CHECK_THAT(padded.err, Catch::Contains("svc-api-version") && Catch::Contains("space or tab"));
  }
  CHECK(server.request_count() == 0);
  CHECK(tool(concat(flags, {"get", "2345678"})).status == 0);  // the control: the same command without them works
  CHECK(server.request_count() == 1);
}

TEST_CASE("cli config refuses a base URL host libcurl cannot use", "[cli]") {
  const std::string idn = "https://b\xC3\xBC" "cher.example";
  const auto config = tool({"--base-url", idn, "--api-key", "k", "config"});
  CHECK(config.status == 3);
  CHECK_THAT(config.out, Catch::Contains("check: failed"));
  CHECK_THAT(config.err, Catch::Contains("host is not ASCII") && Catch::Contains("xn--"));
  // A lookup is refused up front the same way: one line, no retries of a "transport" error.
  const auto get = tool({"--base-url", idn, "--api-key", "k", "get", "1234567"});
  CHECK(get.status == 3);
  CHECK(one_line(get.err));
  CHECK_THAT(get.err, Catch::Contains("xn--"));
  const auto ascii = tool({"--base-url", "https://xn--bcher-kva.example", "--api-key", "k", "config"});
  CHECK(ascii.status == 0);
  CHECK_THAT(ascii.out, Catch::Contains("check: ok"));
}

}  // namespace cli_test

// Secrets and student data: known canary values for the API key, the password
// (and so the Basic value) and the JWT go through every kind of call and
// failure, with a logger at trace level that keeps every line. No canary may
// appear in a log line, in any ApiError text, or in what the `studentsvc` tool
// prints (stdout and stderr, --verbose twice); no student field value may
// appear in a log line. A hostile server that echoes the credentials back in
// its error bodies is part of the run: the SDK scrubs them (detail/call/redact.hpp).
// The client key's password (mutual TLS) has its own case at the end.

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <httplib.h>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/fake_transport.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/fast_retry.hpp"
#include "support/log_capture.hpp"
#include "support/process.hpp"
#include "support/raw_server.hpp"
#include "support/temp_dir.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace canary_test {

using namespace std::chrono_literals;
using studentsvc::ErrorKind;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;

namespace {

const std::string canary_key = "CANARY-APIKEY-5f1d2c9e8b7a";
const std::string canary_wrong_key = "CANARY-WRONGKEY-0b3e66d1";
const std::string canary_password = "CANARY-PASSWORD-a93e71c0";
const std::string canary_wrong_password = "CANARY-WRONGPASS-19cd2e";
const std::string canary_jwt = "eyJhbGciOiJIUzI1NiJ9.CANARY-JWT-PAYLOAD-4c2d.CANARY-JWT-SIG-77e1";
const std::string canary_unknown_jwt = "eyJhbGciOiJub25lIn0.CANARY-UNKNOWN-JWT-8a8a.";
const std::string network_id = "svc-canary-app";

/// Every string that must never be printed, logged or returned.
std::vector<std::string> canaries() {
  std::vector<std::string> out = {canary_key, canary_wrong_key, canary_password, canary_wrong_password,
                                  canary_jwt, canary_unknown_jwt};
  for (const auto& password : {canary_password, canary_wrong_password}) {
    const std::string basic = studentsvc::basic_authorization_value({network_id, password});
    out.push_back(basic);
    out.push_back(basic.substr(6));  // the base64 token alone
  }
  // JWT pieces that are secret on their own (the header part is a constant).
  out.emplace_back("CANARY-JWT-PAYLOAD-4c2d");
  out.emplace_back("CANARY-UNKNOWN-JWT-8a8a");
  return out;
}

/// Student field values a log line must not hold: every string value of the
/// mock's students, except codes shorter than 3 characters ("F", "FR", ...) and
/// numbers shorter than 7 digits (quarters), which any log line could hold by chance.
std::vector<std::string> student_values() {
  std::vector<std::string> out;
  for (const auto& [perm, student] : MockServerOptions::default_students()) {
    for (const auto& [key, value] : student.items()) {
      if (!value.is_string()) continue;
      const auto v = value.get<std::string>();
      const bool numeric = v.find_first_not_of("0123456789") == std::string::npos;
      if (v.size() < 3 || (numeric && v.size() < 7)) continue;
      out.push_back(v);
    }
  }
  return out;
}

MockServerOptions canary_mock() {
  MockServerOptions o;
  o.api_key = canary_key;
  o.svc_api_key = canary_key;
  o.accounts = {{network_id, canary_password, true}};
  o.jwts = {{canary_jwt, "1234567"}};
  return o;
}

/// Every text an ApiError exposes.
std::string all_text(const studentsvc::ApiError& e) {
  std::string out = to_string(e) + "\n" + e.message + "\n" + e.detail + "\n" + e.body_excerpt;
  for (const auto& [name, messages] : e.model_state) {
    out += "\n" + name;
    for (const auto& m : messages) out += "\n" + m;
  }
  return out;
}

void check_clean(const std::string& where, const std::string& text) {
  for (const auto& canary : canaries()) {
    INFO(where << " holds a canary: " << text);
    CHECK(text.find(canary) == std::string::npos);
  }
}

/// Runs the client calls of one scenario and checks every error on the way.
struct Run {
  studentsvc::test::LogCapture logs;
  std::vector<studentsvc::ApiError> errors;
  int successes = 0;

  template <class R>
  void keep(const R& r) {
    if (r) {
      ++successes;
    } else {
      errors.push_back(r.error());
    }
  }
};

/// A server that echoes every credential it receives in its error bodies, the
/// way a careless gateway might.
MockServerOptions echoing_mock() {
  MockServerOptions o = canary_mock();
  o.intercept = [](const httplib::Request& req, httplib::Response& res) {
    const std::string key = req.get_header_value("x-api-key");
    const std::string auth = req.get_header_value("Authorization");
    const std::string jwt = req.get_header_value("svc-user-jwt");
    const std::string path = req.path;
    if (path.ends_with("/1234567")) {
      res.status = 401;
      res.set_content(nlohmann::json{{"detail", "Invalid API key '" + key + "'"},
                                     {"message", "denied for " + auth + " with token " + jwt}}
                          .dump(),
                      "application/json");
    } else if (path.ends_with("/2345678")) {
      res.status = 400;
      res.set_content(nlohmann::json{{"message", "bad " + key},
                                     {"modelState", {{"x-api-key " + key, {"value " + key, "auth " + auth}}}}}
                          .dump(),
                      "application/json");
    } else if (path.ends_with("/3456789")) {
      // An HTML page, cut by the excerpt limit in the middle of the key.
      res.status = 502;
      res.set_content(std::string(244, '.') + key + " " + auth, "text/html");
    } else if (path.ends_with("/current")) {
      res.status = 503;
      res.set_content("<html>upstream said: " + jwt + " / " + auth + "</html>", "text/html");
    } else {
      res.status = 500;
      res.set_content("{\"message\":\"" + key + auth + jwt + "\"}", "application/json");
    }
    return true;
  };
  return o;
}

void exercise(const studentsvc::ClientOptions& base, Run& run) {
  auto options = base;
  options.logger = run.logs.logger();
  options.retry = studentsvc::test::fast_retry(3, 10ms);
  const studentsvc::Client client(options);

  run.keep(client.get_student("1234567"));
  studentsvc::CallOptions with_jwt;
  with_jwt.user_jwt = canary_jwt;
  run.keep(client.get_student("1234567", with_jwt));
  run.keep(client.get_student("2345678", with_jwt));  // 404: the token names another student
  run.keep(client.get_student("3456789"));
  run.keep(client.get_student("7654321"));  // 404
  run.keep(client.current_student(canary_jwt));
  run.keep(client.current_student(canary_unknown_jwt));  // 401
  studentsvc::CallOptions bad_version;
  bad_version.api_version = "9.9";
  run.keep(client.get_student("1234567", bad_version));  // 400
  studentsvc::ConversationRequest conversation;
  conversation.method = "POST";
  conversation.body = R"({"text":"hello"})";
  run.keep(client.conversation(conversation));

  // Input refused before sending, with a canary inside.
  studentsvc::CallOptions injected;
  injected.user_jwt = canary_jwt + "\r\nX-Injected: 1";
  run.keep(client.get_student("1234567", injected));
  run.keep(client.current_student(canary_jwt + "\n"));
  run.keep(client.get_student("12345", with_jwt));

  // Wrong credentials: 401s.
  auto wrong_key = options;
  wrong_key.auth.api_key = canary_wrong_key;
  run.keep(studentsvc::Client(wrong_key).get_student("1234567"));
  auto wrong_password = options;
  wrong_password.auth.basic = studentsvc::BasicCredential{network_id, canary_wrong_password};
  run.keep(studentsvc::Client(wrong_password).current_student(canary_jwt));
  auto bad_key = options;
  bad_key.auth.api_key = canary_key + "\r\n";
  run.keep(studentsvc::Client(bad_key).get_student("1234567"));
}

}  // namespace

TEST_CASE("canaries never reach a log line or an ApiError, and student values never reach a log line",
          "[canary]") {
  std::vector<Run> runs(5);

  SECTION("an honest server, and the faults around it") {
    {
      MockServer server(canary_mock());
      exercise(server.client_options(), runs[0]);
      CHECK(runs[0].successes >= 4);
      CHECK(server.request_count() >= 10);
    }
    {
      // Retries and a 503 with Retry-After.
      MockServerOptions flaky = canary_mock();
      auto count = std::make_shared<std::atomic<int>>(0);
      flaky.intercept = [count](const httplib::Request&, httplib::Response& res) {
        if (++*count % 2 == 0) return false;
        res.status = 503;
        res.set_header("Retry-After", "0");
        res.set_content(R"({"message":"busy"})", "application/json");
        return true;
      };
      MockServer server(flaky);
      exercise(server.client_options(), runs[1]);
      CHECK(runs[1].successes >= 4);
    }
    {
      // Transport failures: a slow server and a stopped one.
      MockServerOptions slow = canary_mock();
      slow.latency = 400ms;
      MockServer server(slow);
      auto options = server.client_options();
      options.timeout = 100ms;
      options.retry.max_attempts = 2;
      Run& run = runs[2];
      auto logged = options;
      logged.logger = run.logs.logger();
      run.keep(studentsvc::Client(logged).get_student("1234567"));
      run.keep(studentsvc::Client(logged).current_student(canary_jwt));
      server.stop();
      run.keep(studentsvc::Client(logged).get_student("1234567"));
      REQUIRE(run.errors.size() == 3);
      for (const auto& e : run.errors) CHECK(e.kind == ErrorKind::transport);
    }
  }
  SECTION("a server that echoes the credentials in its error bodies") {
    MockServer server(echoing_mock());
    exercise(server.client_options(), runs[3]);
    CHECK(runs[3].successes == 0);
    bool saw_excerpt = false;
    for (const auto& e : runs[3].errors) {
      if (e.status == 502) {
        saw_excerpt = true;
        CHECK(e.body_excerpt.find("CANARY-API") == std::string::npos);  // no prefix survives the cut
        CHECK_THAT(e.body_excerpt, Catch::EndsWith("[REDACTED]..."));
      }
      if (e.status == 401 && e.detail.starts_with("Invalid API key")) {
        CHECK(e.detail == "Invalid API key '[REDACTED]'");
      }
    }
    CHECK(saw_excerpt);
  }

  SECTION("issue 20: hedges, coalesced failures and circuit breaker messages against the echoing server") {
    MockServerOptions mo = echoing_mock();
    mo.latency = 60ms;  // slower than the hedge delay: every lookup is hedged
    MockServer server(mo);
    auto options = server.client_options();
    options.hedging = studentsvc::HedgingOptions{10ms};
    options.coalesce_lookups = true;
    Run& run = runs[4];
    options.logger = run.logs.logger();
    {
      const studentsvc::Client client(options);
      studentsvc::CallOptions with_jwt;
      with_jwt.user_jwt = canary_jwt;
      std::vector<std::future<studentsvc::Result<studentsvc::StudentExtended>>> shared;
      for (int i = 0; i < 4; ++i) {
        shared.push_back(client.current_student_async(canary_jwt));            // 503 echoing the JWT, shared
        shared.push_back(client.get_student_async("1234567", with_jwt));       // 401 echoing every credential
      }
      for (auto& f : shared) run.keep(f.get());
    }
    auto breaker = options;
    breaker.circuit_breaker = studentsvc::CircuitBreakerOptions{2, 60s};
    exercise(breaker, run);
    bool refused = false;
    for (const auto& e : run.errors) refused = refused || e.kind == ErrorKind::circuit_open;
    CHECK(refused);
    CHECK(run.successes == 0);
  }

  const auto students = student_values();
  REQUIRE(students.size() > 20);
  std::size_t lines = 0;
  for (auto& run : runs) {
    for (const auto& e : run.errors) check_clean("ApiError", all_text(e));
    for (const auto& line : run.logs.lines()) {
      ++lines;
      check_clean("log line", line);
      for (const auto& value : students) {
        INFO("log line holds student value '" << value << "': " << line);
        CHECK(line.find(value) == std::string::npos);
      }
    }
  }
  CHECK(lines > 0);
}

TEST_CASE("the logger's header redaction is an allow-list", "[canary]") {
  studentsvc::Headers headers{{"x-api-key", canary_key},
                              {"svc-api-key", canary_key},
                              {"Authorization", studentsvc::basic_authorization_value({network_id, canary_password})},
                              {"svc-user-jwt", canary_jwt},
                              {"X-Some-New-Header", "CANARY-UNKNOWN-HEADER"},
                              {"svc-api-version", "2.0"},
                              {"User-Agent", "studentsvc-cpp/test"}};
  const std::string line = studentsvc::redacted_headers(headers);
  check_clean("redacted headers", line);
  CHECK(line.find("CANARY-UNKNOWN-HEADER") == std::string::npos);  // unknown names are redacted too
  CHECK_THAT(line, Catch::Contains("svc-api-version: 2.0"));
  CHECK_THAT(line, Catch::Contains("User-Agent: studentsvc-cpp/test"));
  CHECK_THAT(line, Catch::Contains("x-api-key: REDACTED"));

  // Levels: a threshold above trace drops the header line.
  MockServer server(canary_mock());
  studentsvc::test::LogCapture logs;
  auto options = server.client_options();
  options.logger = logs.logger();
  options.logger.level = studentsvc::LogLevel::info;
  REQUIRE(studentsvc::Client(options).get_student("1234567"));
  CHECK(logs.entries().empty());
  options.logger.level = studentsvc::LogLevel::trace;
  REQUIRE(studentsvc::Client(options).get_student("1234567"));
  REQUIRE(logs.entries().size() >= 2);
  CHECK_THAT(logs.lines().front(), Catch::StartsWith("trace ") && Catch::Contains("x-api-key: REDACTED"));
}

#ifdef STUDENTSVC_CLI_PATH
namespace {

/// Runs the tool with an empty environment (no STUDENTSVC_* from the caller).
studentsvc::test::ProcessResult run_cli(const std::vector<std::string>& args) {
  return studentsvc::test::run_process(STUDENTSVC_CLI_PATH, args, {{"PATH", "/usr/bin:/bin"}});
}

}  // namespace

TEST_CASE("the studentsvc tool never prints a canary, --verbose included", "[canary][cli]") {
  const bool echoing = GENERATE(false, true);
  MockServer server(echoing ? echoing_mock() : canary_mock());
  const std::vector<std::string> connection = {"--base-url",   server.base_url(), "--api-key",  canary_key,
                                               "--network-id", network_id,        "--password", canary_password,
                                               "--insecure-loopback", "--verbose", "--verbose"};
  struct Case {
    std::vector<std::string> args;
    bool succeeds;
  };
  const std::vector<Case> cases = {
      {{"get", "1234567"}, true},
      {{"get", "7654321"}, false},
      {{"get", "1234567", "--jwt", canary_jwt}, true},
      {{"get", "2345678"}, true},
      {{"current", "--jwt", canary_jwt}, true},
      {{"current", "--jwt", canary_unknown_jwt}, false},
      {{"conversation", "--data", R"({"text":"hello"})"}, true},
      {{"--api-key", canary_wrong_key, "get", "1234567"}, false},
      {{"--password", canary_wrong_password, "current", "--jwt", canary_jwt}, false},
      {{"--retries", "0", "--api-version", "9.9", "get", "3456789"}, false},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = connection;
    args.insert(args.end(), c.args.begin(), c.args.end());
    const std::size_t before = server.request_count();
    const auto r = run_cli(args);
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    INFO("studentsvc " << shown << "-> exit " << r.status << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(server.request_count() > before);  // the tool really made the call
    CHECK((r.status == 0) == (c.succeeds && !echoing));
    CHECK_FALSE(r.err.empty());  // --verbose logged something
    check_clean("studentsvc stdout", r.out);
    check_clean("studentsvc stderr", r.err);
  }

  // doctor, each check and each failure it names (the echoing mock sends the secrets back in every answer).
  const std::vector<std::vector<std::string>> doctor_cases = {
      {"doctor", "--jwt", canary_jwt, "--perm", "1234567"},
      {"doctor", "--json", "--jwt", canary_jwt, "--perm", "7654321", "--show-perms"},
      {"--api-key", canary_wrong_key, "doctor", "--jwt", canary_jwt},
      {"--password", canary_wrong_password, "doctor", "--json"},
      {"--api-version", "9.9", "doctor", "--jwt", canary_jwt},
      {"--proxy", "http://user:" + canary_password + "@127.0.0.1:9", "doctor"},
  };
  for (const auto& extra : doctor_cases) {
    std::vector<std::string> args = connection;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    std::string shown;
    for (const auto& a : extra) shown += a + " ";
    INFO("studentsvc " << shown << "-> exit " << r.status << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK_FALSE(r.out.empty());
    check_clean("studentsvc doctor stdout", r.out);
    check_clean("studentsvc doctor stderr", r.err);
  }

  // A server that is not there: a transport error, still clean.
  const std::string dead = server.base_url();
  server.stop();
  std::vector<std::string> args = connection;
  args[1] = dead;
  args.insert(args.end(), {"current", "--jwt", canary_jwt});
  const auto r = run_cli(args);
  CHECK(r.status == 4);
  check_clean("studentsvc stdout", r.out);
  check_clean("studentsvc stderr", r.err);
}
#endif  // without the tool (STUDENTSVC_BUILD_TOOLS=OFF) its canary check is not registered

TEST_CASE("a control character in any header value stops the call before a byte is sent", "[canary][headers]") {
  using studentsvc::test::RawServer;
  RawServer raw([](int fd, int) {
    (void)RawServer::read_request(fd);
    (void)RawServer::write_all(fd, RawServer::response(200, R"({"perm":"1234567"})"));
  });
  const char control = GENERATE('\x01', '\x08', '\x0b', '\x1b', '\x1f', '\x7f');
  CAPTURE(static_cast<int>(control));
  const std::string bad = "CANARY-CTRL-" + std::string(1, control) + "-value";
  studentsvc::ClientOptions options;
  options.base_url = raw.base_url();
  options.allow_insecure_loopback = true;
  options.auth.api_key = "good-key";
  studentsvc::CallOptions call;
  SECTION("API key") { options.auth.api_key = bad; }
  SECTION("per-call JWT") { call.user_jwt = bad; }
  SECTION("API version") { call.api_version = bad; }
  const studentsvc::Client client(options);
  const auto r = client.get_student("1234567", call);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::invalid_argument);
  CHECK_THAT(r.error().message, !Catch::Contains("CANARY-CTRL"));
  const std::vector<std::string> perms{"1234567"};
  studentsvc::BatchOptions batch;
  batch.call = call;
  const auto rs = client.get_students(perms, batch);
  REQUIRE_FALSE(rs.at(0));
  CHECK(rs[0].error().kind == ErrorKind::invalid_argument);
  raw.stop();
  CHECK(raw.connections() == 0);
}

TEST_CASE("a proxy's user:password never reaches an ApiError or a log line (CurlTransport)", "[canary][proxy]") {
  const std::string proxy_password = "CANARY-PROXYPASS-6d1f";
  // A proxy that is not there: libcurl fails to connect to it and says so.
  int port = 0;
  {
    MockServer gone;
    port = gone.port();
    gone.stop();
  }
  // https:// goes through the proxy (plain http:// to loopback never does).
  studentsvc::ClientOptions options;
  options.base_url = "https://127.0.0.1:" + std::to_string(port);
  options.auth.api_key = canary_key;
  options.proxy = "http://canaryuser:" + proxy_password + "@127.0.0.1:" + std::to_string(port);
  options.retry = studentsvc::RetryPolicy::none();
  const studentsvc::test::LogCapture logs;
  options.logger = logs.logger();
  const studentsvc::Client client(options);
  const auto r = client.get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  const std::string text = studentsvc::to_string(r.error()) + r.error().detail + r.error().body_excerpt;
  CHECK_THAT(text, !Catch::Contains(proxy_password));
  CHECK_THAT(text, !Catch::Contains("canaryuser:"));
  const std::vector<std::string> perms{"1234567"};
  const auto rs = client.get_students(perms);
  REQUIRE_FALSE(rs.at(0));
  CHECK_THAT(studentsvc::to_string(rs[0].error()), !Catch::Contains(proxy_password));
  const auto lines = logs.texts();
  REQUIRE_FALSE(lines.empty());
  for (const auto& line : lines) CHECK_THAT(line, !Catch::Contains(proxy_password));
}

TEST_CASE("the client key's password never reaches an ApiError, a log line or to_string", "[canary][tls]") {
  const std::string key_password = "CANARY-KEYPASS-3b7e90";
  studentsvc::test::TempDir dir;
  const std::string cert = dir.write("client.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  const std::string key = dir.write("client.key", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
  const studentsvc::test::LogCapture logs;
  std::vector<std::string> texts;
  auto keep = [&texts](const studentsvc::ApiError& e) {
    texts.push_back(studentsvc::to_string(e) + "\n" + all_text(e));
  };

  // Refused before any request: every check's message, by option and by variable.
  auto options = [&] {
    studentsvc::ClientOptions o;
    o.base_url = "https://registrar.example.edu";
    o.auth.api_key = canary_key;
    o.logger = logs.logger();
    o.retry = studentsvc::RetryPolicy::none();
    return o;
  };
  for (const auto& [c, k] : std::vector<std::pair<std::string, std::string>>{
           {cert, ""}, {"", key}, {cert, dir.path() / "missing.key"}, {key, key}, {cert, cert}}) {
    auto o = options();
    o.client_certificate = studentsvc::ClientCertificate{c, k, key_password};
    auto client = studentsvc::Client::create(o);
    REQUIRE_FALSE(client);
    keep(client.error());
    const auto r = studentsvc::Client(o).get_student("1234567");
    REQUIRE_FALSE(r);
    keep(r.error());
  }
  auto with_http = options();
  with_http.base_url = "http://127.0.0.1:9";
  with_http.allow_insecure_loopback = true;
  with_http.client_certificate = studentsvc::ClientCertificate{cert, key, key_password};
  keep(studentsvc::Client::create(with_http).error());
  std::map<std::string, std::string, std::less<>> env = {{"STUDENTSVC_BASE_URL", "https://registrar.example.edu"},
                                                         {"STUDENTSVC_API_KEY", canary_key},
                                                         {"STUDENTSVC_CLIENT_KEY_PASSWORD", key_password}};
  auto lookup = [&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  keep(studentsvc::ClientOptions::from_env(lookup).error());
  env["STUDENTSVC_CLIENT_CERT"] = cert;
  keep(studentsvc::ClientOptions::from_env(lookup).error());
  env["STUDENTSVC_CLIENT_KEY"] = (dir.path() / "missing.key").string();
  keep(studentsvc::ClientOptions::from_env(lookup).error());

  // A server (or a TLS library) that quotes the password back: scrubbed, on
  // the blocking and the asynchronous path alike.
  auto echo = options();
  echo.client_certificate = studentsvc::ClientCertificate{cert, key, key_password};
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  fake->set_handler([&key_password](const studentsvc::HttpRequest&) -> studentsvc::Result<studentsvc::HttpResponse> {
    return studentsvc::make_error(ErrorKind::transport, "could not load key with pass phrase " + key_password);
  });
  echo.transport = fake;
  const studentsvc::Client client(echo);
  const auto blocking = client.get_student("1234567");
  REQUIRE_FALSE(blocking);
  keep(blocking.error());
  const auto async = client.get_student_async("1234567").get();
  REQUIRE_FALSE(async);
  keep(async.error());
  fake->set_handler([&key_password](const studentsvc::HttpRequest&) -> studentsvc::Result<studentsvc::HttpResponse> {
    studentsvc::HttpResponse response;
    response.status = 500;
    response.body = R"({"message":"bad pass phrase )" + key_password + R"("})";
    return response;
  });
  const auto echoed = client.get_student("1234567");
  REQUIRE_FALSE(echoed);
  keep(echoed.error());

  REQUIRE(texts.size() >= 15);
  for (const auto& text : texts) {
    INFO(text);
    CHECK_THAT(text, !Catch::Contains(key_password));
  }
  const auto lines = logs.texts();
  REQUIRE_FALSE(lines.empty());
  for (const auto& line : lines) CHECK_THAT(line, !Catch::Contains(key_password));
}

}  // namespace canary_test

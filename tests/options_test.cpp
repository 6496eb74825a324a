// Unit tests for options.hpp: ClientOptions::from_env(lookup) and how
// CallOptions override ClientOptions (seen in the requests that get built and sent).

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <unistd.h>  // geteuid

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/requests.hpp>
#include <studentsvc/testing/fake_transport.hpp>

#include "support/skip.hpp"
#include "support/temp_dir.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace options_test {

using namespace std::chrono_literals;
using studentsvc::CallOptions;
using studentsvc::ClientOptions;
using studentsvc::ErrorKind;
using studentsvc::SvcApiKeyMode;

namespace {

using Env = std::map<std::string, std::string, std::less<>>;

studentsvc::Result<ClientOptions> from(const Env& env) {
  return ClientOptions::from_env([&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

Env minimal_env() {
  return {{"STUDENTSVC_BASE_URL", "https://api.example.edu"}, {"STUDENTSVC_API_KEY", "KEY-canary-1"}};
}

studentsvc::detail::BaseUrl base() {
  auto b = studentsvc::detail::parse_base_url("https://api.example.edu", false);
  REQUIRE(b);
  return *b;
}

ClientOptions client_options() {
  ClientOptions o;
  o.base_url = "https://api.example.edu";
  o.auth.api_key = "test-key";  // not a one-character literal: GCC 12 -O3 -Wrestrict false positive (bug 105329)
  return o;
}

}  // namespace

TEST_CASE("from_env with only the required variables", "[options]") {
  auto o = from(minimal_env());
  REQUIRE(o);
  CHECK(o->base_url == "https://api.example.edu");
  CHECK(o->auth.api_key == "KEY-canary-1");
  CHECK(o->auth.svc_api_key_mode == SvcApiKeyMode::same_as_api_key);
  CHECK(o->auth.svc_api_key.empty());
  CHECK_FALSE(o->auth.basic);
  CHECK(o->api_version == "2.0");
  CHECK(o->ca_bundle.empty());
  CHECK_FALSE(o->allow_insecure_loopback);
  CHECK(o->transport == nullptr);
}

TEST_CASE("from_env with every STUDENTSVC_* variable", "[options]") {
  auto env = minimal_env();
  env["STUDENTSVC_SVC_API_KEY"] = "SVC-canary-2";
  env["STUDENTSVC_NETWORK_ID"] = "svc-acct";
  env["STUDENTSVC_PASSWORD"] = "PW-canary-3";
  env["STUDENTSVC_API_VERSION"] = "2.1";
  const studentsvc::test::TempDir dir;
  const std::string ca = dir.write("campus-ca.pem", "-----BEGIN CERTIFICATE-----\n");
  env["STUDENTSVC_CA_BUNDLE"] = ca;
  env["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = "1";
  env["STUDENTSVC_LOG"] = "debug";
  auto o = from(env);
  REQUIRE(o);
  CHECK(o->allow_insecure_loopback);
  CHECK(o->logger.level == studentsvc::LogLevel::debug);
  CHECK(o->logger.sink);
  CHECK(o->auth.svc_api_key_mode == SvcApiKeyMode::custom);
  CHECK(o->auth.svc_api_key == "SVC-canary-2");
  REQUIRE(o->auth.basic);
  CHECK(o->auth.basic->network_id == "svc-acct");
  CHECK(o->auth.basic->password == "PW-canary-3");
  CHECK(o->api_version == "2.1");
  CHECK(o->ca_bundle == ca);
}

TEST_CASE("from_env: required variables missing or empty", "[options]") {
  const std::string missing = GENERATE(as<std::string>{}, "STUDENTSVC_BASE_URL", "STUDENTSVC_API_KEY");
  const bool set_but_empty = GENERATE(false, true);
  CAPTURE(missing, set_but_empty);
  auto env = minimal_env();
  if (set_but_empty) {
    env[missing] = "";
  } else {
    env.erase(missing);
  }
  auto o = from(env);
  REQUIRE_FALSE(o);
  CHECK(o.error().kind == ErrorKind::invalid_argument);
  CHECK_THAT(o.error().message, Catch::Contains(missing));
  CHECK_THAT(o.error().message, !Catch::Contains("KEY-canary-1"));
}

TEST_CASE("from_env: an empty environment", "[options]") {
  auto o = from({});
  REQUIRE_FALSE(o);
  CHECK(o.error().kind == ErrorKind::invalid_argument);
  CHECK_THAT(o.error().message, Catch::Contains("STUDENTSVC_BASE_URL"));
}

TEST_CASE("from_env: STUDENTSVC_SVC_API_KEY", "[options]") {
  auto env = minimal_env();
  SECTION("unset: same as the API key") {
    auto o = from(env);
    REQUIRE(o);
    CHECK(o->auth.svc_api_key_mode == SvcApiKeyMode::same_as_api_key);
    auto r = studentsvc::build_get_student_request(base(), *o, "1234567");
    REQUIRE(r);
    CHECK(r->headers.find("svc-api-key") == std::optional<std::string_view>("KEY-canary-1"));
  }
  SECTION("empty counts as unset") {
    env["STUDENTSVC_SVC_API_KEY"] = "";
    auto o = from(env);
    REQUIRE(o);
    CHECK(o->auth.svc_api_key_mode == SvcApiKeyMode::same_as_api_key);
  }
  SECTION("a value: custom") {
    env["STUDENTSVC_SVC_API_KEY"] = "other";
    auto o = from(env);
    REQUIRE(o);
    CHECK(o->auth.svc_api_key_mode == SvcApiKeyMode::custom);
    auto r = studentsvc::build_get_student_request(base(), *o, "1234567");
    REQUIRE(r);
    CHECK(r->headers.find("svc-api-key") == std::optional<std::string_view>("other"));
    CHECK(r->headers.find("x-api-key") == std::optional<std::string_view>("KEY-canary-1"));
  }
  SECTION("\"off\": the header is not sent") {
    env["STUDENTSVC_SVC_API_KEY"] = "off";
    auto o = from(env);
    REQUIRE(o);
    CHECK(o->auth.svc_api_key_mode == SvcApiKeyMode::off);
    auto r = studentsvc::build_get_student_request(base(), *o, "1234567");
    REQUIRE(r);
    CHECK_FALSE(r->headers.contains("svc-api-key"));
  }
}

TEST_CASE("from_env: network id and password go together", "[options]") {
  auto env = minimal_env();
  SECTION("network id without password") {
    env["STUDENTSVC_NETWORK_ID"] = "svc-acct";
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK(o.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(o.error().message, Catch::Contains("STUDENTSVC_PASSWORD"));
  }
  SECTION("password without network id") {
    env["STUDENTSVC_PASSWORD"] = "PW-canary-3";
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK(o.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(o.error().message, !Catch::Contains("PW-canary-3"));
  }
  SECTION("both: Authorization is sent") {
    env["STUDENTSVC_NETWORK_ID"] = "Aladdin";
    env["STUDENTSVC_PASSWORD"] = "open sesame";
    auto o = from(env);
    REQUIRE(o);
    auto r = studentsvc::build_get_student_request(base(), *o, "1234567");
    REQUIRE(r);
    CHECK(r->headers.find("Authorization") == std::optional<std::string_view>("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="));
  }
}

TEST_CASE("from_env: API version and CA bundle", "[options]") {
  auto env = minimal_env();
  env["STUDENTSVC_API_VERSION"] = "3.0";
  const studentsvc::test::TempDir dir;
  const std::string ca = dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\n");
  env["STUDENTSVC_CA_BUNDLE"] = ca;
  auto o = from(env);
  REQUIRE(o);
  CHECK(o->ca_bundle == ca);
  auto r = studentsvc::build_get_student_request(base(), *o, "1234567");
  REQUIRE(r);
  CHECK(r->headers.find("svc-api-version") == std::optional<std::string_view>("3.0"));
}

TEST_CASE("from_env: a base URL the Client would refuse is refused here, naming the variable", "[options]") {
  struct Case {
    std::string url;
    std::string says;
  };
  const auto c = GENERATE(Case{"api.example.edu", "no scheme"}, Case{"ftp://api.example.edu", "https://"},
                          Case{"https://", "no host"}, Case{"https://api.example.edu:99999", "invalid port"},
                          Case{"https://api.example.edu:", "invalid port"},
                          Case{"https://user:PW-canary-4@api.example.edu", "user information"},
                          Case{"https://api.example.edu/students?x=1", "query"},
                          Case{"http://api.example.edu", "only https:// is allowed"},
                          Case{"http://127.0.0.1:8080", "STUDENTSVC_ALLOW_INSECURE_LOOPBACK=1"},
                          Case{"https://b\xC3\xBC" "cher.example", "ASCII (punycode, xn--) form"},
                          Case{"https://a,b.example", "cannot hold"});
  CAPTURE(c.url);
  auto env = minimal_env();
  env["STUDENTSVC_BASE_URL"] = c.url;
  auto o = from(env);
  REQUIRE_FALSE(o);
  CHECK(o.error().kind == ErrorKind::invalid_argument);
  CHECK_THAT(o.error().message, Catch::StartsWith("STUDENTSVC_BASE_URL: base URL"));
  CHECK_THAT(o.error().message, Catch::Contains(c.says));
  CHECK_THAT(o.error().message, !Catch::Contains("PW-canary-4"));
}

TEST_CASE("from_env: STUDENTSVC_ALLOW_INSECURE_LOOPBACK is the loopback opt-in", "[options]") {
  auto env = minimal_env();
  env["STUDENTSVC_BASE_URL"] = "http://127.0.0.1:8080";
  SECTION("yes: http:// to loopback is accepted") {
    env["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = GENERATE("1", "true", "YES", "on");
    auto o = from(env);
    REQUIRE(o);
    CHECK(o->allow_insecure_loopback);
  }
  SECTION("yes, but to a host that is not loopback: still refused") {
    env["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = "1";
    env["STUDENTSVC_BASE_URL"] = "http://api.example.edu";
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK_THAT(o.error().message, Catch::Contains("not loopback"));
  }
  SECTION("no: refused") {
    env["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = GENERATE("0", "false", "No", "off");
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK_THAT(o.error().message, Catch::Contains("STUDENTSVC_BASE_URL"));
  }
  SECTION("a value that means neither") {
    env["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = GENERATE("2", "yess", " 1");
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK(o.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(o.error().message, Catch::StartsWith("STUDENTSVC_ALLOW_INSECURE_LOOPBACK: "));
  }
  SECTION("the opt-in with https:// changes nothing") {
    env["STUDENTSVC_BASE_URL"] = "https://api.example.edu";
    env["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = "1";
    auto o = from(env);
    REQUIRE(o);
  }
}

TEST_CASE("from_env: a CA bundle that cannot be read is refused before any request", "[options]") {
  const studentsvc::test::TempDir dir;
  auto env = minimal_env();
  SECTION("missing") {
    env["STUDENTSVC_CA_BUNDLE"] = (dir.path() / "nope.pem").string();
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK(o.error().kind == ErrorKind::invalid_argument);
    CHECK(o.error().message == "STUDENTSVC_CA_BUNDLE: the file does not exist");
  }
  SECTION("a folder") {
    env["STUDENTSVC_CA_BUNDLE"] = dir.path().string();
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK(o.error().message == "STUDENTSVC_CA_BUNDLE: the file is a directory");
  }
  SECTION("a FIFO: refused at once, never waited on for a writer") {
    const auto fifo = (dir.path() / "ca.fifo").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    env["STUDENTSVC_CA_BUNDLE"] = fifo;
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK_THAT(o.error().message, Catch::StartsWith("STUDENTSVC_CA_BUNDLE: the file is not a regular file"));
  }
  SECTION("empty") {
    env["STUDENTSVC_CA_BUNDLE"] = dir.write("empty.pem", "");
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK(o.error().message == "STUDENTSVC_CA_BUNDLE: the file is empty");
  }
}

TEST_CASE("from_env: a CA bundle this process may not read is refused", "[options]") {
  if (::geteuid() == 0) STUDENTSVC_SKIP("running as root, which reads any file: the refusal cannot happen");
  const studentsvc::test::TempDir dir;
  auto env = minimal_env();
  env["STUDENTSVC_CA_BUNDLE"] = dir.write("locked.pem", "x", std::filesystem::perms::none);
  auto o = from(env);
  REQUIRE_FALSE(o);
  CHECK_THAT(o.error().message, Catch::Contains("STUDENTSVC_CA_BUNDLE") && Catch::Contains("not readable"));
}

TEST_CASE("from_env: STUDENTSVC_LOG turns on the stderr logger at that level", "[options]") {
  auto env = minimal_env();
  SECTION("unset: off") {
    auto o = from(env);
    REQUIRE(o);
    CHECK_FALSE(o->logger.enabled(studentsvc::LogLevel::error));
  }
  SECTION("each level") {
    const std::string name = GENERATE("trace", "debug", "info", "warning", "error", "off", "DEBUG");
    env["STUDENTSVC_LOG"] = name;
    auto o = from(env);
    REQUIRE(o);
    CHECK(o->logger.level == studentsvc::parse_log_level(name));
  }
  SECTION("an unknown level") {
    env["STUDENTSVC_LOG"] = "verbose";
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK(o.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(o.error().message, Catch::StartsWith("STUDENTSVC_LOG: ") && Catch::Contains("debug"));
  }
}

TEST_CASE("from_env: STUDENTSVC_PERM_SYNTAX sets the perms a Client accepts", "[options][perm_syntax]") {
  auto env = minimal_env();
  SECTION("unset: digits, as the interface says") {
    auto o = from(env);
    REQUIRE(o);
    CHECK(o->perm_syntax == studentsvc::PermSyntax::digits);
  }
  SECTION("each value") {
    env["STUDENTSVC_PERM_SYNTAX"] = "alphanumeric";
    auto a = from(env);
    REQUIRE(a);
    CHECK(a->perm_syntax == studentsvc::PermSyntax::alphanumeric);
    env["STUDENTSVC_PERM_SYNTAX"] = "digits";
    auto d = from(env);
    REQUIRE(d);
    CHECK(d->perm_syntax == studentsvc::PermSyntax::digits);
  }
  SECTION("another value") {
    env["STUDENTSVC_PERM_SYNTAX"] = "letters";
    auto o = from(env);
    REQUIRE_FALSE(o);
    CHECK(o.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(o.error().message, Catch::StartsWith("STUDENTSVC_PERM_SYNTAX: ") && Catch::Contains("alphanumeric"));
  }
}

TEST_CASE("from_env() without a lookup reads the process environment", "[options]") {
  // Only checks the overload works; the variables are normally unset in the test environment.
  const auto o = ClientOptions::from_env();
  if (o) {
    CHECK_FALSE(o->base_url.empty());
    CHECK_FALSE(o->auth.api_key.empty());
  } else {
    CHECK(o.error().kind == ErrorKind::invalid_argument);
  }
}

TEST_CASE("ClientOptions and RetryPolicy defaults", "[options]") {
  const ClientOptions o;
  CHECK(o.api_version == "2.0");
  CHECK(o.connect_timeout == studentsvc::default_connect_timeout);
  CHECK(o.timeout == studentsvc::default_request_timeout);
  CHECK(o.max_response_bytes == studentsvc::default_max_response_bytes);
  CHECK(o.max_response_header_bytes == studentsvc::default_max_response_header_bytes);
  CHECK(o.retry.max_attempts == 3);
  CHECK(o.retry.initial_backoff == 200ms);
  CHECK(o.retry.max_backoff == 5s);
  CHECK(o.retry.max_retry_after == 30s);
  CHECK(o.retry.max_total_time == 60s);
  CHECK_FALSE(o.retry.jitter_seed);
  CHECK(studentsvc::RetryPolicy::none().max_attempts == 1);
  const CallOptions c;
  CHECK_FALSE(c.user_jwt);
  CHECK_FALSE(c.api_version);
  CHECK_FALSE(c.timeout);
  CHECK_FALSE(c.max_response_header_bytes);
  CHECK_FALSE(c.retry);
}

TEST_CASE("without CallOptions the request carries the ClientOptions values", "[options]") {
  auto o = client_options();
  o.connect_timeout = 1111ms;
  o.timeout = 2222ms;
  o.max_response_bytes = 3333;
  o.api_version = "2.5";
  auto r = studentsvc::build_get_student_request(base(), o, "1234567");
  REQUIRE(r);
  CHECK(r->connect_timeout == 1111ms);
  CHECK(r->timeout == 2222ms);
  CHECK(r->max_response_bytes == 3333);
  CHECK(r->headers.find("svc-api-version") == std::optional<std::string_view>("2.5"));
}

TEST_CASE("CallOptions override ClientOptions", "[options]") {
  auto o = client_options();
  o.connect_timeout = 1111ms;
  o.timeout = 2222ms;
  o.max_response_bytes = 3333;
  CallOptions call;
  call.connect_timeout = 11ms;
  call.timeout = 22ms;
  call.max_response_bytes = 33;
  call.api_version = "9.9";
  SECTION("get_student") {
    auto r = studentsvc::build_get_student_request(base(), o, "1234567", call);
    REQUIRE(r);
    CHECK(r->connect_timeout == 11ms);
    CHECK(r->timeout == 22ms);
    CHECK(r->max_response_bytes == 33);
    CHECK(r->headers.find("svc-api-version") == std::optional<std::string_view>("9.9"));
  }
  SECTION("current_student") {
    auto r = studentsvc::build_current_student_request(base(), o, "jwt", call);
    REQUIRE(r);
    CHECK(r->timeout == 22ms);
    CHECK(r->max_response_bytes == 33);
    CHECK(r->headers.find("svc-api-version") == std::optional<std::string_view>("9.9"));
  }
  SECTION("conversation") {
    studentsvc::ConversationRequest conv;
    conv.call = call;
    auto r = studentsvc::build_conversation_request(base(), o, conv);
    REQUIRE(r);
    CHECK(r->connect_timeout == 11ms);
    CHECK(r->timeout == 22ms);
    CHECK(r->max_response_bytes == 33);
  }
  SECTION("only the fields that are set override") {
    CallOptions partial;
    partial.timeout = 5ms;
    auto r = studentsvc::build_get_student_request(base(), o, "1234567", partial);
    REQUIRE(r);
    CHECK(r->timeout == 5ms);
    CHECK(r->connect_timeout == 1111ms);
    CHECK(r->max_response_bytes == 3333);
    CHECK(r->headers.find("svc-api-version") == std::optional<std::string_view>("2.0"));
  }
}

TEST_CASE("CallOptions::retry overrides ClientOptions::retry in the Client", "[options]") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  auto o = client_options();
  o.transport = fake;
  o.retry.max_attempts = 4;
  o.retry.initial_backoff = 0ms;
  o.retry.max_backoff = 0ms;
  const studentsvc::Client client(o);

  SECTION("client policy: 4 attempts") {
    for (int i = 0; i < 4; ++i) fake->respond(503);
    auto r = client.get_student("1234567");
    REQUIRE_FALSE(r);
    CHECK(r.error().attempts == 4);
    CHECK(fake->request_count() == 4);
  }
  SECTION("call policy: 2 attempts") {
    for (int i = 0; i < 4; ++i) fake->respond(503);
    CallOptions call;
    call.retry = o.retry;
    call.retry->max_attempts = 2;
    auto r = client.get_student("1234567", call);
    REQUIRE_FALSE(r);
    CHECK(r.error().attempts == 2);
    CHECK(fake->request_count() == 2);
  }
  SECTION("call policy: none") {
    fake->respond(503);
    CallOptions call;
    call.retry = studentsvc::RetryPolicy::none();
    auto r = client.current_student("jwt", call);
    REQUIRE_FALSE(r);
    CHECK(r.error().attempts == 1);
    CHECK(fake->request_count() == 1);
  }
  SECTION("call timeouts reach the transport") {
    fake->respond(200, R"({"perm":"1234567"})");
    CallOptions call;
    call.timeout = 777ms;
    call.connect_timeout = 77ms;
    call.max_response_bytes = 7;
    auto r = client.get_student("1234567", call);
    REQUIRE(r);
    const auto sent = fake->last_request();
    CHECK(sent.timeout == 777ms);
    CHECK(sent.connect_timeout == 77ms);
    CHECK(sent.max_response_bytes == 7);
  }
}

TEST_CASE("CallOptions::max_response_header_bytes beats the client's", "[options]") {
  auto o = client_options();
  o.max_response_header_bytes = 8000;
  CallOptions call;
  auto r = studentsvc::build_get_student_request(base(), o, "1234567", call);
  REQUIRE(r);
  CHECK(r->max_response_header_bytes == 8000);
  call.max_response_header_bytes = 800;
  r = studentsvc::build_get_student_request(base(), o, "1234567", call);
  REQUIRE(r);
  CHECK(r->max_response_header_bytes == 800);
}

TEST_CASE("invalid time bounds and a zero header cap are refused by the Client with nothing sent", "[options]") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  auto o = client_options();
  o.transport = fake;
  fake->respond(200, R"({"perm":"1234567"})");
  CallOptions call;
  SECTION("timeout 0 (libcurl's 'no timeout')") { call.timeout = 0ms; }
  SECTION("negative connect_timeout") { call.connect_timeout = -1ms; }
  SECTION("max_total_time 0") {
    call.retry = studentsvc::RetryPolicy{};
    call.retry->max_total_time = 0ms;
  }
  SECTION("max_response_header_bytes 0") { call.max_response_header_bytes = 0; }
  const studentsvc::Client client(o);
  const auto r = client.get_student("1234567", call);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == studentsvc::ErrorKind::invalid_argument);
  CHECK(r.error().attempts == 0);
  const std::vector<std::string> one{"1234567"};
  studentsvc::BatchOptions batch;
  batch.call = call;
  const auto rs = client.get_students(one, batch);
  REQUIRE(rs.size() == 1);
  REQUIRE_FALSE(rs[0]);
  CHECK(rs[0].error().kind == studentsvc::ErrorKind::invalid_argument);
  studentsvc::ConversationRequest conv;
  conv.call = call;
  CHECK_FALSE(client.conversation(conv));
  CHECK(fake->request_count() == 0);
}

TEST_CASE("bad client-level limits are refused once, by Client::create and by every call, with nothing sent",
          "[options]") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  auto o = client_options();
  o.transport = fake;
  const int which = GENERATE(0, 1, 2, 3, 4);
  CAPTURE(which);
  if (which == 0) o.timeout = 0ms;
  if (which == 1) o.connect_timeout = -1ms;
  if (which == 2) o.retry.max_total_time = 0ms;
  if (which == 3) o.retry.max_total_time = std::chrono::milliseconds::min();
  if (which == 4) o.max_response_header_bytes = 0;
  const auto created = studentsvc::Client::create(o);
  REQUIRE_FALSE(created);
  CHECK(created.error().kind == studentsvc::ErrorKind::invalid_argument);
  const studentsvc::Client client(o);
  const auto r = client.get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == studentsvc::ErrorKind::invalid_argument);
  CHECK(r.error().message == created.error().message);
  CHECK_FALSE(client.current_student("jwt"));
  CHECK_FALSE(client.conversation({}));
  const std::vector<std::string> one{"1234567"};
  const auto rs = client.get_students(one);
  REQUIRE(rs.size() == 1);
  REQUIRE_FALSE(rs[0]);
  CHECK(rs[0].error().kind == studentsvc::ErrorKind::invalid_argument);
  // The Client refuses its own bad options even where a call would override the value.
  CallOptions call;
  call.timeout = 1s;
  call.connect_timeout = 1s;
  call.max_response_header_bytes = 100;
  call.retry = studentsvc::RetryPolicy{};
  CHECK_FALSE(client.get_student("1234567", call));
  CHECK(fake->request_count() == 0);
}

TEST_CASE("Client::create refuses a CA bundle that cannot be read, naming the setting", "[options]") {
  const studentsvc::test::TempDir dir;
  auto o = client_options();
  o.transport = std::make_shared<studentsvc::testing::FakeTransport>();
  o.ca_bundle = (dir.path() / "missing.pem").string();
  auto created = studentsvc::Client::create(o);
  REQUIRE_FALSE(created);
  CHECK(created.error().kind == ErrorKind::invalid_argument);
  CHECK(created.error().message == "ca_bundle: the file does not exist");
  o.ca_bundle = dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\n");
  CHECK(studentsvc::Client::create(o));
}

}  // namespace options_test

// End to end: studentsvc::Client with its default CurlTransport against
// MockServer on 127.0.0.1 — every endpoint, every header of DESIGN.md's
// table as the server saw it, every error row, text/json, nulls and absent
// fields, unknown codes, UTF-8, connection reuse; then CurlTransport::send
// directly for methods, response headers, the body cap and redirects.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <studentsvc/json.hpp>  // RawResponse::json() (left out of the umbrella in compiled mode)
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/loopback.hpp"
#include "support/raw_server.hpp"
#include "support/wait.hpp"

using nlohmann::json;
using studentsvc::ApiError;
using studentsvc::CallOptions;
using studentsvc::Client;
using studentsvc::ClientOptions;
using studentsvc::ConversationRequest;
using studentsvc::CurlTransport;
using studentsvc::CurlTransportOptions;
using studentsvc::ErrorKind;
using studentsvc::HttpRequest;
using studentsvc::HttpResponse;
using studentsvc::RetryPolicy;
using studentsvc::StudentExtended;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;
using studentsvc::test::plain_http;
using studentsvc::test::RawServer;

namespace Catch {
template <>
struct StringMaker<ErrorKind> {
  static std::string convert(ErrorKind k) { return std::string(studentsvc::to_string(k)); }
};
}  // namespace Catch

namespace {

// base64("svc-registrar-app:mock-password") and base64("svc-roster-app:mock-password-2"),
// computed outside the SDK.
const std::string basic_registrar = "Basic c3ZjLXJlZ2lzdHJhci1hcHA6bW9jay1wYXNzd29yZA==";
const std::string basic_roster = "Basic c3ZjLXJvc3Rlci1hcHA6bW9jay1wYXNzd29yZC0y";
const std::string user_agent = "studentsvc-cpp/" STUDENTSVC_VERSION_STRING;

/// The client options the mock accepts, with one attempt only so failures come back at once.
ClientOptions options_for(const MockServer& server) {
  ClientOptions o = server.client_options();
  o.retry = RetryPolicy::none();
  return o;
}

Client client_for(const MockServer& server) { return Client(options_for(server)); }

/// The value (a copy: callers often pass a temporary), or a test failure that prints the ApiError.
template <class T>
T value_of(const studentsvc::Result<T>& r) {
  if (!r) FAIL("unexpected error: " << studentsvc::to_string(r.error()));
  return *r;
}

/// The error (a copy), or a test failure when the call succeeded.
template <class T>
ApiError error_of(const studentsvc::Result<T>& r) {
  if (r) FAIL("expected an error, the call succeeded");
  return r.error();
}

std::string opt(const std::optional<std::string>& v) { return v ? "\"" + *v + "\"" : std::string("<nullopt>"); }

std::string seen(const MockServer& server, std::string_view name) {
  return server.last_request().header(name).value_or("<absent>");
}

void require_extended_empty(const StudentExtended& s) {
  CHECK(opt(s.first_name_legal) == "<nullopt>");
  CHECK(opt(s.middle_name) == "<nullopt>");
  CHECK(opt(s.gender) == "<nullopt>");
  CHECK(opt(s.birth_date) == "<nullopt>");
  CHECK(opt(s.international_student_code) == "<nullopt>");
  CHECK(opt(s.first_census_quarter) == "<nullopt>");
  CHECK(opt(s.last_census_quarter) == "<nullopt>");
  CHECK(opt(s.last_registered_quarter) == "<nullopt>");
  CHECK(opt(s.admit_level) == "<nullopt>");
  CHECK(opt(s.admit_quarter) == "<nullopt>");
  CHECK(opt(s.pronoun_code) == "<nullopt>");
  CHECK_FALSE(s.nfr.has_value());
}

}  // namespace

// ---------------------------------------------------------------------------
// The three calls
// ---------------------------------------------------------------------------

TEST_CASE("e2e: the default transport of a Client is a CurlTransport", "[e2e]") {
  MockServer server;
  const Client client = client_for(server);
  CHECK(dynamic_cast<CurlTransport*>(client.transport().get()) != nullptr);
  CHECK(value_of(client.get_student("1234567")).perm == "1234567");
}

TEST_CASE("e2e: get_student gives an approved account every field", "[e2e]") {
  MockServer server;
  const auto s = value_of(client_for(server).get_student("1234567"));
  CHECK(s.perm == "1234567");
  CHECK(s.first_name == "Ana");
  CHECK(s.last_name == "N\xC3\xBA\xC3\xB1" "ez");
  CHECK(s.suffix.empty());
  CHECK(s.email == "ana.nunez@example.edu");
  CHECK(opt(s.first_name_legal) == "\"Ana Mar\xC3\xAD" "a\"");
  CHECK(opt(s.middle_name) == "\"Luc\xC3\xAD" "a\"");
  CHECK(opt(s.gender) == "\"F\"");
  CHECK(opt(s.birth_date) == "\"20040315\"");
  CHECK(opt(s.international_student_code) == "<nullopt>");
  CHECK(opt(s.first_census_quarter) == "\"20224\"");
  CHECK(opt(s.last_census_quarter) == "\"20252\"");
  CHECK(opt(s.last_registered_quarter) == "\"20252\"");
  CHECK(opt(s.admit_level) == "\"FR\"");
  CHECK(opt(s.admit_quarter) == "\"20224\"");
  CHECK(opt(s.pronoun_code) == "\"SH\"");
  REQUIRE(s.nfr.has_value());
  CHECK_FALSE(*s.nfr);

  CHECK(s.gender_kind() == studentsvc::Gender::female);
  CHECK(s.international_status() == studentsvc::InternationalStatus::domestic);
  CHECK(s.admit_level_kind() == studentsvc::AdmitLevel::freshman);
  CHECK(s.release_status() == studentsvc::ReleaseStatus::releasable);
  const auto ymd = s.birth_date_ymd();
  REQUIRE(ymd.has_value());
  CHECK(*ymd == std::chrono::year_month_day{std::chrono::year{2004}, std::chrono::March, std::chrono::day{15}});

  CHECK(server.last_request().method == "GET");
  CHECK(server.last_request().path == "/students/v2/students/1234567");
}

TEST_CASE("e2e: get_student gives the non-approved svc-roster-app the extended-only fields as nullopt", "[e2e]") {
  MockServer server;
  ClientOptions o = options_for(server);
  o.auth.basic = studentsvc::BasicCredential{"svc-roster-app", "mock-password-2"};
  const auto s = value_of(Client(o).get_student("2345678"));
  CHECK(seen(server, "authorization") == basic_roster);
  CHECK(s.first_name == "Li");
  CHECK(s.last_name == "Wei");
  CHECK(opt(s.first_name_legal) == "<nullopt>");
  CHECK(opt(s.middle_name) == "<nullopt>");
  CHECK(opt(s.gender) == "<nullopt>");
  CHECK(s.gender_kind() == studentsvc::Gender::not_provided);
  // The other extended fields need no approval.
  CHECK(opt(s.birth_date) == "\"20011130\"");
  CHECK(opt(s.international_student_code) == "\"F\"");
  CHECK(s.international_status() == studentsvc::InternationalStatus::foreign);
  CHECK(s.admit_level_kind() == studentsvc::AdmitLevel::transfer);
  CHECK(s.release_status() == studentsvc::ReleaseStatus::not_for_release);

  // The approved account sees them for the same student.
  const auto full = value_of(client_for(server).get_student("2345678"));
  CHECK(opt(full.first_name_legal) == "\"Wei\"");
  CHECK(opt(full.gender) == "\"M\"");
}

TEST_CASE("e2e: current_student returns the StudentMinimal fields only", "[e2e]") {
  MockServer server;
  const Client client = client_for(server);
  const auto s = value_of(client.current_student("mock-jwt-ana"));
  CHECK(s.perm == "1234567");
  CHECK(s.first_name == "Ana");
  CHECK(s.last_name == "N\xC3\xBA\xC3\xB1" "ez");
  CHECK(s.suffix.empty());
  CHECK(s.email == "ana.nunez@example.edu");
  require_extended_empty(s);

  const auto req = server.last_request();
  CHECK(req.method == "GET");
  CHECK(req.path == "/students/v2/students/current");
  CHECK(req.header("svc-user-jwt") == "mock-jwt-ana");

  const auto li = value_of(client.current_student("mock-jwt-li"));
  CHECK(li.perm == "2345678");
  CHECK(li.suffix.empty());  // null in the record

  const auto& bad = error_of(client.current_student("mock-jwt-unknown"));
  CHECK(bad.kind == ErrorKind::unauthorized);
  CHECK(bad.status == 401);
  CHECK_FALSE(bad.message.empty());
}

TEST_CASE("e2e: get_student with CallOptions::user_jwt is restricted to the token's student", "[e2e]") {
  MockServer server;
  const Client client = client_for(server);
  CallOptions call;
  call.user_jwt = "mock-jwt-ana";

  const auto own = value_of(client.get_student("1234567", call));
  CHECK(own.first_name == "Ana");
  CHECK(seen(server, "svc-user-jwt") == "mock-jwt-ana");

  const auto& other = error_of(client.get_student("2345678", call));
  CHECK(other.kind == ErrorKind::not_found);
  CHECK(other.status == 404);
  CHECK(other.message == "Student not found.");

  call.user_jwt = "not-a-valid-token";
  const auto& bad = error_of(client.get_student("1234567", call));
  CHECK(bad.kind == ErrorKind::unauthorized);
  CHECK(bad.status == 401);
  CHECK(bad.detail.empty());  // SimpleMessageModel, not AuthErrorBody
  CHECK(bad.message == "The user token is not valid.");
  // The token never ends up in the error.
  CHECK(studentsvc::to_string(bad).find("not-a-valid-token") == std::string::npos);

  // Without a token the same perm is readable.
  CHECK(value_of(client.get_student("2345678")).first_name == "Li");
  CHECK(seen(server, "svc-user-jwt") == "<absent>");
}

TEST_CASE("e2e: conversation passes method, sub-path, query, body and content type through", "[e2e]") {
  MockServer server;
  const Client client = client_for(server);

  SECTION("GET with sub-path and query") {
    ConversationRequest r;
    r.sub_path = "threads/42/my messages";
    r.query = {{"q", "a b&c=d"}, {"page", "2"}, {"name", "Zo\xC3\xAB"}};
    const auto raw = value_of(client.conversation(r));
    CHECK(raw.status == 200);
    CHECK(raw.headers.find("content-type").value_or("").starts_with("application/json"));
    const json echo = value_of(raw.json());
    CHECK(echo["method"] == "GET");
    CHECK(echo["subPath"] == "/threads/42/my messages");
    CHECK(echo["query"] == json{{"q", "a b&c=d"}, {"page", "2"}, {"name", "Zo\xC3\xAB"}});
    CHECK(echo["body"] == "");
    CHECK(echo["contentType"] == "");
    const auto req = server.last_request();
    CHECK(req.target == "/conversation/threads/42/my%20messages?q=a%20b%26c%3Dd&page=2&name=Zo%C3%AB");
  }
  SECTION("POST with a JSON body: Content-Type defaults to application/json") {
    ConversationRequest r;
    r.method = "POST";
    r.body = R"({"text":"hello"})";
    const json echo = value_of(value_of(client.conversation(r)).json());
    CHECK(echo["method"] == "POST");
    CHECK(echo["subPath"] == "");
    CHECK(echo["body"] == R"({"text":"hello"})");
    CHECK(echo["contentType"] == "application/json");
    CHECK(server.last_request().body == R"({"text":"hello"})");
  }
  SECTION("PUT with an explicit content type") {
    ConversationRequest r;
    r.method = "PUT";
    r.sub_path = "/notes/7/";
    r.body = "plain words";
    r.content_type = "text/plain; charset=utf-8";
    const json echo = value_of(value_of(client.conversation(r)).json());
    CHECK(echo["method"] == "PUT");
    CHECK(echo["subPath"] == "/notes/7");
    CHECK(echo["body"] == "plain words");
    CHECK(echo["contentType"] == "text/plain; charset=utf-8");
  }
  SECTION("DELETE, with and without a body") {
    ConversationRequest r;
    r.method = "DELETE";
    r.sub_path = "threads/42";
    json echo = value_of(value_of(client.conversation(r)).json());
    CHECK(echo["method"] == "DELETE");
    CHECK(echo["subPath"] == "/threads/42");
    CHECK(echo["body"] == "");
    r.body = R"({"reason":"spam"})";
    echo = value_of(value_of(client.conversation(r)).json());
    CHECK(echo["method"] == "DELETE");
    CHECK(echo["body"] == R"({"reason":"spam"})");
  }
  SECTION("PATCH and OPTIONS") {
    ConversationRequest r;
    r.method = "PATCH";
    r.body = "{}";
    CHECK(value_of(value_of(client.conversation(r)).json())["method"] == "PATCH");
    r.method = "OPTIONS";
    r.body.clear();
    CHECK(value_of(value_of(client.conversation(r)).json())["method"] == "OPTIONS");
  }
}

TEST_CASE("e2e: conversation surfaces a custom handler's non-2xx answer", "[e2e]") {
  MockServerOptions options;
  options.conversation = [](const httplib::Request& req, httplib::Response& res) {
    if (req.path.ends_with("/missing")) {
      res.status = 404;
      res.set_content(R"({"message":"No such conversation."})", "application/json");
    } else if (req.method == "POST") {
      res.status = 201;
      res.set_header("Location", "/conversation/99");
      res.set_content(R"({"id":99})", "application/json");
    } else {
      res.status = 409;
      res.set_content(R"({"message":"Conversation is closed."})", "application/json");
    }
  };
  MockServer server(options);
  const Client client = client_for(server);

  ConversationRequest post;
  post.method = "POST";
  post.body = "{}";
  const auto created = value_of(client.conversation(post));
  CHECK(created.status == 201);
  CHECK(created.headers.find("location") == "/conversation/99");
  CHECK(value_of(created.json())["id"] == 99);

  const auto& conflict = error_of(client.conversation({}));
  CHECK(conflict.kind == ErrorKind::http_status);
  CHECK(conflict.status == 409);
  CHECK(conflict.message == "Conversation is closed.");
  CHECK(conflict.body_excerpt == R"({"message":"Conversation is closed."})");
  CHECK(conflict.attempts == 1);

  ConversationRequest missing;
  missing.sub_path = "missing";
  const auto& not_found = error_of(client.conversation(missing));
  CHECK(not_found.kind == ErrorKind::not_found);
  CHECK(not_found.message == "No such conversation.");
}

TEST_CASE("e2e: conversation surfaces the 401 AuthErrorBody detail", "[e2e]") {
  MockServer server;
  ClientOptions o = options_for(server);
  o.auth.api_key = "wrong-key";
  const auto& e = error_of(Client(o).conversation({}));
  CHECK(e.kind == ErrorKind::unauthorized);
  CHECK(e.status == 401);
  CHECK(e.detail == "Invalid API key. Supply a valid API key in the x-api-key header.");
  CHECK_FALSE(e.message.empty());
  CHECK(studentsvc::to_string(e).find("wrong-key") == std::string::npos);
  CHECK(seen(server, "x-api-key") == "wrong-key");
}

// ---------------------------------------------------------------------------
// Headers on the wire (DESIGN.md's table)
// ---------------------------------------------------------------------------

TEST_CASE("e2e: every header of the table, as the server saw it", "[e2e][headers]") {
  MockServer server;
  const Client client = client_for(server);

  SECTION("get_student") {
    value_of(client.get_student("3456789"));
    const auto r = server.last_request();
    CHECK(r.header("x-api-key") == "mock-api-key");
    CHECK(r.header("svc-api-key") == "mock-svc-api-key");
    CHECK(r.header("authorization") == basic_registrar);
    CHECK_FALSE(r.header("svc-user-jwt").has_value());
    CHECK(r.header("svc-api-version") == "2.0");
    CHECK(r.header("accept") == "application/json, text/json");
    CHECK(r.header("user-agent") == user_agent);
    CHECK_FALSE(r.header("content-type").has_value());
    CHECK(r.body.empty());
  }
  SECTION("current_student") {
    value_of(client.current_student("mock-jwt-li"));
    const auto r = server.last_request();
    CHECK(r.header("x-api-key") == "mock-api-key");
    CHECK(r.header("svc-api-key") == "mock-svc-api-key");
    CHECK(r.header("authorization") == basic_registrar);
    CHECK(r.header("svc-user-jwt") == "mock-jwt-li");
    CHECK(r.header("svc-api-version") == "2.0");
    CHECK(r.header("accept") == "application/json, text/json");
    CHECK(r.header("user-agent") == user_agent);
  }
  SECTION("conversation") {
    value_of(client.conversation({}));
    const auto r = server.last_request();
    CHECK(r.header("x-api-key") == "mock-api-key");
    CHECK_FALSE(r.header("svc-api-key").has_value());
    CHECK_FALSE(r.header("authorization").has_value());
    CHECK_FALSE(r.header("svc-user-jwt").has_value());
    CHECK_FALSE(r.header("svc-api-version").has_value());
    CHECK(r.header("accept") == "application/json");
    CHECK(r.header("user-agent") == user_agent);
  }
}

TEST_CASE("e2e: svc-api-key is the API key, a custom value, or off", "[e2e][headers]") {
  SECTION("same as the API key (default)") {
    MockServer server;
    server.update([](MockServerOptions& o) { o.svc_api_key = "mock-api-key"; });  // the mock's default differs
    value_of(client_for(server).get_student("1234567"));
    CHECK(seen(server, "svc-api-key") == "mock-api-key");
  }
  SECTION("custom") {
    MockServerOptions options;
    options.svc_api_key = "svc-other-key";
    MockServer server(options);
    const ClientOptions o = options_for(server);
    CHECK(o.auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom);
    value_of(Client(o).get_student("1234567"));
    CHECK(seen(server, "svc-api-key") == "svc-other-key");
    CHECK(seen(server, "x-api-key") == "mock-api-key");

    // The default (same key) is refused by this server: 401 SimpleMessageModel.
    ClientOptions same = o;
    same.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::same_as_api_key;
    const auto& e = error_of(Client(same).get_student("1234567"));
    CHECK(e.kind == ErrorKind::unauthorized);
    CHECK(e.detail.empty());
    CHECK_FALSE(e.message.empty());
    CHECK(seen(server, "svc-api-key") == "mock-api-key");
  }
  SECTION("off") {
    MockServerOptions options;
    options.svc_api_key.reset();
    MockServer server(options);
    ClientOptions o = options_for(server);
    o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::off;
    const Client client(o);
    value_of(client.get_student("1234567"));
    CHECK(seen(server, "svc-api-key") == "<absent>");
    value_of(client.current_student("mock-jwt-ana"));
    CHECK(seen(server, "svc-api-key") == "<absent>");
  }
}

TEST_CASE("e2e: Authorization is sent only when Basic is configured", "[e2e][headers]") {
  MockServerOptions options;
  options.require_basic = false;
  MockServer server(options);
  ClientOptions o = options_for(server);
  o.auth.basic.reset();
  const Client client(o);
  value_of(client.get_student("1234567"));
  CHECK(seen(server, "authorization") == "<absent>");
  value_of(client.current_student("mock-jwt-ana"));
  CHECK(seen(server, "authorization") == "<absent>");

  o.auth.basic = studentsvc::BasicCredential{"svc-registrar-app", "mock-password"};
  value_of(Client(o).get_student("1234567"));
  CHECK(seen(server, "authorization") == basic_registrar);
}

TEST_CASE("e2e: svc-api-version: 2.0 by default, client-wide, per call, and unsupported → 400", "[e2e][headers]") {
  MockServerOptions options;
  options.api_versions = {"2.0", "2.1", "3.0"};
  MockServer server(options);
  ClientOptions o = options_for(server);
  value_of(Client(o).get_student("1234567"));
  CHECK(seen(server, "svc-api-version") == "2.0");

  o.api_version = "2.1";
  const Client client(o);
  value_of(client.get_student("1234567"));
  CHECK(seen(server, "svc-api-version") == "2.1");
  value_of(client.current_student("mock-jwt-ana"));
  CHECK(seen(server, "svc-api-version") == "2.1");

  CallOptions call;
  call.api_version = "3.0";
  value_of(client.get_student("1234567", call));
  CHECK(seen(server, "svc-api-version") == "3.0");
  value_of(client.current_student("mock-jwt-ana", call));
  CHECK(seen(server, "svc-api-version") == "3.0");

  call.api_version = "9.9";
  const auto& e = error_of(client.get_student("1234567", call));
  CHECK(e.kind == ErrorKind::bad_request);
  CHECK(e.status == 400);
  CHECK(e.message == "The request is invalid.");
  REQUIRE(e.model_state.count("svc-api-version") == 1);
  CHECK(e.model_state.at("svc-api-version") ==
        std::vector<std::string>{"The API version requested is not supported."});
}

// ---------------------------------------------------------------------------
// Error rows
// ---------------------------------------------------------------------------

TEST_CASE("e2e: invalid_argument: bad input is refused and nothing is sent", "[e2e][errors]") {
  MockServer server;
  const Client client = client_for(server);
  value_of(client.get_student("1234567"));
  const std::size_t before = server.request_count();

  auto check_refused = [&](const ApiError& e) {
    CHECK(e.kind == ErrorKind::invalid_argument);
    CHECK(e.status == 0);
    CHECK(e.attempts == 0);
    CHECK_FALSE(e.message.empty());
    CHECK_FALSE(e.retryable);
  };
  for (const std::string perm : {"", "123456", "12345678", "12a4567", "123 567", "1234567\n", "-123456",
                                 "\xEF\xBC\x91" "234567", "current"}) {
    INFO("perm " << perm);
    check_refused(error_of(client.get_student(perm)));
  }
  check_refused(error_of(client.current_student("")));

  CallOptions call;
  call.user_jwt = "token\r\nx-injected: 1";
  check_refused(error_of(client.get_student("1234567", call)));
  check_refused(error_of(client.current_student("token\nx-injected: 1")));
  check_refused(error_of(client.current_student(std::string("tok\0en", 6))));
  CallOptions version;
  version.api_version = "2.0\r\nx-injected: 1";
  check_refused(error_of(client.get_student("1234567", version)));

  ClientOptions crlf_key = options_for(server);
  crlf_key.auth.api_key = "key\r\nx-injected: 1";
  check_refused(error_of(Client(crlf_key).get_student("1234567")));
  check_refused(error_of(Client(crlf_key).conversation({})));

  ConversationRequest bad_method;
  bad_method.method = "GE T";
  check_refused(error_of(client.conversation(bad_method)));
  ConversationRequest climb;
  climb.sub_path = "../students/v2/students/1234567";
  check_refused(error_of(client.conversation(climb)));
  ConversationRequest bad_type;
  bad_type.body = "{}";
  bad_type.content_type = "application/json\r\nx-injected: 1";
  check_refused(error_of(client.conversation(bad_type)));

  ClientOptions no_opt_in = options_for(server);
  no_opt_in.allow_insecure_loopback = false;  // http:// to 127.0.0.1 without the opt-in
  check_refused(error_of(Client(no_opt_in).get_student("1234567")));
  CHECK_FALSE(Client::create(no_opt_in).has_value());
  ClientOptions not_loopback = options_for(server);
  not_loopback.base_url = "http://example.edu";  // refused before any lookup
  check_refused(error_of(Client(not_loopback).get_student("1234567")));

  CHECK(server.request_count() == before);
}

TEST_CASE("e2e: transport: a closed port gives ErrorKind::transport with status 0", "[e2e][errors]") {
  ClientOptions o;
  {
    MockServer gone;
    o = options_for(gone);
  }  // stopped: nothing listens on its port now
  o.connect_timeout = std::chrono::milliseconds(2'000);
  const auto& e = error_of(Client(o).get_student("1234567"));
  CHECK(e.kind == ErrorKind::transport);
  CHECK(e.status == 0);
  CHECK(e.retryable);
  CHECK(e.attempts == 1);
  CHECK(e.message.find("connect") != std::string::npos);

  // With retries, a transport failure is tried again (idempotent GET).
  o.retry = RetryPolicy{};
  o.retry.max_attempts = 3;
  o.retry.initial_backoff = std::chrono::milliseconds(1);
  o.retry.max_backoff = std::chrono::milliseconds(2);
  const auto& retried = error_of(Client(o).get_student("1234567"));
  CHECK(retried.kind == ErrorKind::transport);
  CHECK(retried.attempts == 3);
  // conversation is not idempotent unless marked so.
  CHECK(error_of(Client(o).conversation({})).attempts == 1);
}

TEST_CASE("e2e: 400 decodes WebApiInvalidModel with model_state", "[e2e][errors]") {
  MockServer server;
  server.update([](MockServerOptions& o) {
    o.intercept = [](const httplib::Request&, httplib::Response& res) {
      res.status = 400;
      res.set_content(R"({"message":"The request is invalid.","modelState":{"perm":["Bad perm.","Really bad."],)"
                      R"("svc-user-jwt":["Malformed."]}})",
                      "application/json; charset=utf-8");
      return true;
    };
  });
  const auto& e = error_of(client_for(server).get_student("1234567"));
  CHECK(e.kind == ErrorKind::bad_request);
  CHECK(e.status == 400);
  CHECK(e.message == "The request is invalid.");
  CHECK(e.model_state.size() == 2);
  CHECK(e.model_state.at("perm") == std::vector<std::string>{"Bad perm.", "Really bad."});
  CHECK(e.model_state.at("svc-user-jwt") == std::vector<std::string>{"Malformed."});
  CHECK_FALSE(e.retryable);
}

TEST_CASE("e2e: 401 with either body: AuthErrorBody detail or SimpleMessageModel message", "[e2e][errors]") {
  MockServer server;
  SECTION("wrong API key: AuthErrorBody") {
    ClientOptions o = options_for(server);
    o.auth.api_key = "not-the-key";
    o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
    o.auth.svc_api_key = "mock-api-key";
    const Client client(o);
    for (const auto& result : {client.get_student("1234567"), client.current_student("mock-jwt-ana")}) {
      const auto& e = error_of(result);
      CHECK(e.kind == ErrorKind::unauthorized);
      CHECK(e.status == 401);
      CHECK(e.detail == "Invalid API key. Supply a valid API key in the x-api-key header.");
      CHECK_FALSE(e.message.empty());
      CHECK_FALSE(e.retryable);
    }
  }
  SECTION("wrong Basic password: SimpleMessageModel") {
    ClientOptions o = options_for(server);
    o.auth.basic = studentsvc::BasicCredential{"svc-registrar-app", "wrong-password"};
    const auto& e = error_of(Client(o).get_student("1234567"));
    CHECK(e.kind == ErrorKind::unauthorized);
    CHECK(e.status == 401);
    CHECK(e.detail.empty());
    CHECK(e.message == "Authorization has been denied for this request.");
    CHECK(studentsvc::to_string(e).find("wrong-password") == std::string::npos);
  }
}

TEST_CASE("e2e: 404 for an unknown perm", "[e2e][errors]") {
  MockServer server;
  const auto& e = error_of(client_for(server).get_student("7654321"));
  CHECK(e.kind == ErrorKind::not_found);
  CHECK(e.status == 404);
  CHECK(e.message == "Student not found.");
  CHECK_FALSE(e.retryable);
  CHECK(e.attempts == 1);
}

TEST_CASE("e2e: any other status maps to http_status with a body excerpt", "[e2e][errors]") {
  MockServer server;
  server.update([](MockServerOptions& o) {
    o.intercept = [](const httplib::Request& req, httplib::Response& res) {
      if (req.path.ends_with("/2345678")) {
        res.status = 418;
        res.set_content("I'm a teapot", "text/plain");
      } else {
        res.status = 503;
        res.set_header("Retry-After", "7");
        res.set_content("<html>\r\n<body><h1>503 Service Unavailable</h1></body>\r\n</html>", "text/html");
      }
      return true;
    };
  });
  const Client client = client_for(server);
  const auto& unavailable = error_of(client.get_student("1234567"));
  CHECK(unavailable.kind == ErrorKind::http_status);
  CHECK(unavailable.status == 503);
  CHECK(unavailable.retryable);
  CHECK(unavailable.retry_after_ms == 7000);
  CHECK(unavailable.body_excerpt.find("503 Service Unavailable") != std::string::npos);
  CHECK(unavailable.body_excerpt.find('\n') == std::string::npos);  // one printable line
  CHECK_FALSE(unavailable.message.empty());

  const auto& teapot = error_of(client.get_student("2345678"));
  CHECK(teapot.kind == ErrorKind::http_status);
  CHECK(teapot.status == 418);
  CHECK_FALSE(teapot.retryable);
  CHECK(teapot.body_excerpt == "I'm a teapot");

  const auto& conversation = error_of(client.conversation({}));
  CHECK(conversation.kind == ErrorKind::http_status);
  CHECK(conversation.status == 503);

  // A long HTML page is cut to an excerpt.
  server.update([](MockServerOptions& o) {
    o.intercept = [](const httplib::Request&, httplib::Response& res) {
      res.status = 502;
      res.set_content("<html>" + std::string(10'000, 'x') + "</html>", "text/html");
      return true;
    };
  });
  const auto& gateway = error_of(client.get_student("1234567"));
  CHECK(gateway.status == 502);
  CHECK(gateway.body_excerpt.size() < 1'000);
  CHECK(gateway.body_excerpt.starts_with("<html>xxx"));
}

TEST_CASE("e2e: a 2xx that is not the documented JSON is a decode error naming the field", "[e2e][errors]") {
  MockServer server;
  const Client client = client_for(server);

  SECTION("not JSON") {
    server.update([](MockServerOptions& o) {
      o.intercept = [](const httplib::Request&, httplib::Response& res) {
        res.status = 200;
        res.set_content("<html>welcome to the captive portal</html>", "text/html");
        return true;
      };
    });
    for (const auto& result : {client.get_student("1234567"), client.current_student("mock-jwt-ana")}) {
      const auto& e = error_of(result);
      CHECK(e.kind == ErrorKind::decode);
      CHECK(e.status == 200);
      CHECK(e.message.find("JSON") != std::string::npos);
    }
  }
  SECTION("JSON but not an object") {
    server.update([](MockServerOptions& o) {
      o.intercept = [](const httplib::Request&, httplib::Response& res) {
        res.status = 200;
        res.set_content(R"([{"perm":"1234567"}])", "application/json");
        return true;
      };
    });
    const auto& e = error_of(client.get_student("1234567"));
    CHECK(e.kind == ErrorKind::decode);
    CHECK(e.status == 200);
  }
  SECTION("wrong types") {
    server.update([](MockServerOptions& o) {
      o.students["1234567"]["firstName"] = 42;
      o.students["2345678"]["nfr"] = "yes";
      o.students["3456789"]["middleName"] = json::array({"A"});
      o.students["5678901"]["email"] = false;
      o.jwts["mock-jwt-zoe"] = "5678901";
    });
    const auto& first = error_of(client.get_student("1234567"));
    CHECK(first.kind == ErrorKind::decode);
    CHECK(first.status == 200);
    CHECK(first.message.find("firstName") != std::string::npos);
    CHECK(error_of(client.get_student("2345678")).message.find("nfr") != std::string::npos);
    CHECK(error_of(client.get_student("3456789")).message.find("middleName") != std::string::npos);
    const auto& current = error_of(client.current_student("mock-jwt-zoe"));
    CHECK(current.kind == ErrorKind::decode);
    CHECK(current.message.find("email") != std::string::npos);
  }
}

// ---------------------------------------------------------------------------
// Payloads
// ---------------------------------------------------------------------------

TEST_CASE("e2e: text/json answers decode like application/json", "[e2e][payload]") {
  MockServerOptions options;
  options.content_type = "text/json";
  MockServer server(options);
  const Client client = client_for(server);
  const auto s = value_of(client.get_student("1234567"));
  CHECK(s.first_name == "Ana");
  CHECK(opt(s.pronoun_code) == "\"SH\"");
  CHECK(value_of(client.current_student("mock-jwt-li")).last_name == "Wei");
  const auto e = error_of(client.get_student("7654321"));
  CHECK(e.kind == ErrorKind::not_found);
}

TEST_CASE("e2e: null and absent fields", "[e2e][payload]") {
  MockServer server;
  const Client client = client_for(server);

  SECTION("nulls: basic → \"\", extended → nullopt") {
    const auto s = value_of(client.get_student("2345678"));
    CHECK(s.suffix.empty());                           // "suffix": null
    CHECK(opt(s.middle_name) == "<nullopt>");          // "middleName": null
    CHECK(opt(s.first_name_legal) == "\"Wei\"");
  }
  SECTION("absent extended fields → nullopt") {
    const auto s = value_of(client.get_student("3456789"));
    CHECK(s.first_name == "Jordan");
    CHECK(s.last_name == "Okafor");
    CHECK(s.suffix == "JR");
    CHECK(s.email == "jordan.okafor@example.edu");
    require_extended_empty(s);
    CHECK(s.release_status() == studentsvc::ReleaseStatus::unknown);
    CHECK(s.international_status() == studentsvc::InternationalStatus::domestic);
    CHECK(s.admit_level_kind() == studentsvc::AdmitLevel::none);
    CHECK_FALSE(s.birth_date_ymd().has_value());
  }
  SECTION("absent and null basic fields, and every field null") {
    server.update([](MockServerOptions& o) {
      o.students["7000001"] = json{{"perm", "7000001"}, {"lastName", nullptr}};
      json all_null = json::object();
      for (const char* key : {"perm", "firstName", "lastName", "suffix", "email", "firstNameLegal", "middleName",
                              "gender", "birthDate", "nfr", "internationalStudentCode", "firstCensusQuarter",
                              "lastCensusQuarter", "lastRegisteredQuarter", "admitLevel", "admitQuarter",
                              "pronounCode"}) {
        all_null[key] = nullptr;
      }
      o.students["7000002"] = all_null;
      o.students["7000003"] = json::object();
    });
    const auto sparse = value_of(client.get_student("7000001"));
    CHECK(sparse.perm == "7000001");
    CHECK(sparse.first_name.empty());
    CHECK(sparse.last_name.empty());
    require_extended_empty(sparse);
    // An answer whose perm is null or absent does not say whose record it is:
    // get_student refuses it as a decode error naming the field.
    for (const std::string perm : {"7000002", "7000003"}) {
      const auto e = error_of(client.get_student(perm));
      CHECK(e.kind == ErrorKind::decode);
      CHECK_THAT(e.message, Catch::Contains("perm"));
    }
  }
}

TEST_CASE("e2e: unknown codes are kept raw and never fail decoding", "[e2e][payload]") {
  MockServer server;
  const auto s = value_of(client_for(server).get_student("4567890"));
  CHECK(s.first_name == "Sam");
  CHECK(opt(s.gender) == "\"X\"");
  CHECK(s.gender_kind() == studentsvc::Gender::unrecognized);
  CHECK(opt(s.international_student_code) == "\"Q\"");
  CHECK(s.international_status() == studentsvc::InternationalStatus::unrecognized);
  CHECK(opt(s.admit_level) == "\"GR\"");
  CHECK(s.admit_level_kind() == studentsvc::AdmitLevel::unrecognized);
  CHECK(opt(s.birth_date) == "\"20230230\"");  // not a real date: kept, no typed view
  CHECK_FALSE(s.birth_date_ymd().has_value());
  CHECK_FALSE(s.nfr.has_value());
  CHECK(s.release_status() == studentsvc::ReleaseStatus::unknown);
}

TEST_CASE("e2e: UTF-8 comes through byte for byte", "[e2e][payload]") {
  MockServer server;
  const Client client = client_for(server);
  const auto s = value_of(client.get_student("5678901"));
  CHECK(s.first_name == "Zo\xC3\xAB \xF0\x9F\x8C\x9F");  // 4-byte sequence (U+1F31F)
  CHECK(s.last_name == "\xC3\x98rsted-\xC3\x87" "elik");
  CHECK(s.suffix == "III");
  CHECK(opt(s.international_student_code) == "\"R\"");
  CHECK(s.international_status() == studentsvc::InternationalStatus::resident_alien);
  CHECK(opt(s.admit_level) == "\"\"");
  CHECK(s.admit_level_kind() == studentsvc::AdmitLevel::none);
  // The same bytes as seeded.
  const auto seeded = MockServerOptions::default_students().at("5678901");
  CHECK(s.first_name == seeded.at("firstName").get<std::string>());
  CHECK(s.last_name == seeded.at("lastName").get<std::string>());

  // Escaped on the wire (\u00e9, surrogate pair) decodes to the same UTF-8.
  server.update([](MockServerOptions& o) {
    o.intercept = [](const httplib::Request&, httplib::Response& res) {
      res.status = 200;
      res.set_content(R"({"perm":"5678901","firstName":"Zo\u00eb \ud83c\udf1f","lastName":"\u00d8rsted-\u00c7elik"})",
                      "application/json");
      return true;
    };
  });
  const auto escaped = value_of(client.get_student("5678901"));
  CHECK(escaped.first_name == s.first_name);
  CHECK(escaped.last_name == s.last_name);
}

TEST_CASE("e2e: sequential calls reuse one connection", "[e2e][transport]") {
  MockServer server;
  const Client client = client_for(server);
  for (int i = 0; i < 10; ++i) {
    value_of(client.get_student("1234567"));
    value_of(client.current_student("mock-jwt-ana"));
    value_of(client.conversation({}));
  }
  (void)client.get_student("7654321");  // an error answer keeps the connection too
  value_of(client.get_student("2345678"));
  CHECK(server.request_count() == 32);
  CHECK(server.connection_count() == 1);

  // Copies of a Client share its transport and so its connections.
  const Client copy = client;  // NOLINT(performance-unnecessary-copy-initialization)
  value_of(copy.get_student("1234567"));
  CHECK(server.connection_count() == 1);
}

TEST_CASE("e2e: a connection the server closed while idle is replaced without an error", "[e2e][transport]") {
  // The server closes its first connection once it has answered two requests,
  // and says so: the test waits for that close, not for a keep-alive timer.
  std::atomic<bool> first_closed{false};
  RawServer server([&](int fd, int connection) {
    server.serve(fd, [](const std::string&, int) { return RawServer::response(200, studentsvc::test::student_body); },
                 connection == 0 ? 2 : INT_MAX);
    if (connection == 0) {
      ::shutdown(fd, SHUT_RDWR);
      first_closed = true;
    }
  });
  const Client client(studentsvc::test::raw_options(server));  // one attempt: no retry may hide a failure
  value_of(client.get_student("1234567"));
  value_of(client.get_student("1234567"));
  CHECK(server.connections() == 1);
  REQUIRE(studentsvc::test::eventually([&] { return first_closed.load(); }));
  value_of(client.get_student("1234567"));
  CHECK(server.connections() == 2);
  CHECK(server.requests() == 3);
}

TEST_CASE("e2e: base URL with a path prefix: calls go to prefix + path, trailing slashes dropped",
          "[e2e][transport]") {
  MockServerOptions options;
  options.path_prefix = "/gateway/student-api";
  MockServer server(options);
  const std::string root = "http://127.0.0.1:" + std::to_string(server.port());
  for (const auto& base : {root + "/gateway/student-api", root + "/gateway/student-api/",
                                 root + "/gateway/student-api///"}) {
    INFO("base URL " << base);
    ClientOptions o = options_for(server);
    o.base_url = base;
    const Client client(o);
    CHECK(value_of(client.get_student("1234567")).first_name == "Ana");
    CHECK(server.last_request().target == "/gateway/student-api/students/v2/students/1234567");
    CHECK(value_of(client.current_student("mock-jwt-li")).first_name == "Li");
    CHECK(server.last_request().target == "/gateway/student-api/students/v2/students/current");
    ConversationRequest r;
    r.sub_path = "t/1";
    r.query = {{"x", "1"}};
    const json echo = value_of(value_of(client.conversation(r)).json());
    CHECK(echo["subPath"] == "/t/1");
    CHECK(server.last_request().target == "/gateway/student-api/conversation/t/1?x=1");
  }

  // Without the prefix the calls miss the routes.
  ClientOptions o = options_for(server);
  o.base_url = root + "/";
  const auto& e = error_of(Client(o).get_student("1234567"));
  CHECK(e.kind == ErrorKind::not_found);
  CHECK(server.last_request().target == "/students/v2/students/1234567");
}

// ---------------------------------------------------------------------------
// CurlTransport::send directly
// ---------------------------------------------------------------------------

namespace {

HttpRequest raw_request(const MockServer& server, const std::string& method, const std::string& path) {
  HttpRequest r;
  r.method = method;
  r.url = server.base_url() + path;
  r.headers.set("x-api-key", "mock-api-key");
  return r;
}

HttpResponse sent(CurlTransport& transport, const HttpRequest& request) {
  return value_of(transport.send(request));
}

}  // namespace

TEST_CASE("e2e: CurlTransport::send sends HEAD and the other methods", "[e2e][transport]") {
  MockServer server;
  CurlTransport transport(plain_http());

  const auto head = sent(transport, raw_request(server, "HEAD", "/conversation/x"));
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(server.last_request().method == "HEAD");

  // A pooled handle used for HEAD must not leak NOBODY into the next request.
  HttpRequest post = raw_request(server, "POST", "/conversation/x");
  post.body = R"({"after":"head"})";
  post.headers.set("Content-Type", "application/json");
  const auto posted = sent(transport, post);
  CHECK(posted.status == 200);
  CHECK(json::parse(posted.body)["body"] == R"({"after":"head"})");
  CHECK(server.last_request().body == R"({"after":"head"})");

  // And a handle used for POST must not send its old body with a GET.
  const auto get = sent(transport, raw_request(server, "GET", "/conversation/y"));
  CHECK(json::parse(get.body)["method"] == "GET");
  CHECK(server.last_request().body.empty());
  CHECK_FALSE(server.last_request().header("content-length").has_value());

  for (const std::string method : {"PUT", "PATCH", "DELETE", "OPTIONS", "POST"}) {
    INFO("method " << method);
    HttpRequest r = raw_request(server, method, "/conversation/m");
    const auto no_body = sent(transport, r);
    CHECK(json::parse(no_body.body)["method"] == method);
    CHECK(server.last_request().method == method);
    if (method != "OPTIONS") {
      r.body = "payload-" + method;
      r.headers.set("Content-Type", "text/plain");
      const auto with_body = sent(transport, r);
      CHECK(json::parse(with_body.body)["body"] == "payload-" + method);
      CHECK(server.last_request().body == "payload-" + method);
    }
    CHECK(sent(transport, raw_request(server, "HEAD", "/conversation/x")).body.empty());
  }
  CHECK(server.connection_count() == 1);
}

TEST_CASE("e2e: CurlTransport captures response headers, looked up case-insensitively", "[e2e][transport]") {
  MockServer server;
  server.update([](MockServerOptions& o) {
    o.intercept = [](const httplib::Request&, httplib::Response& res) {
      res.status = 200;
      res.set_header("X-Request-Id", "req-123");
      res.set_header("Cache-Control", "no-store");
      res.set_content("{}", "application/json");
      return true;
    };
  });
  CurlTransport transport(plain_http());
  const auto r = sent(transport, raw_request(server, "GET", "/anything"));
  CHECK(r.status == 200);
  CHECK(r.headers.find("x-request-id") == "req-123");
  CHECK(r.headers.find("X-REQUEST-ID") == "req-123");
  CHECK(r.headers.find("X-Request-Id") == "req-123");
  CHECK(r.headers.find("cache-control") == "no-store");
  CHECK(r.headers.find("Content-Type") == "application/json");
  CHECK(r.headers.find("content-length") == "2");
  CHECK_FALSE(r.headers.contains("x-not-sent"));
  CHECK(r.body == "{}");

  // Headers belong to this response only.
  server.update([](MockServerOptions& o) { o.intercept = nullptr; });
  const auto next = sent(transport, raw_request(server, "GET", "/conversation"));
  CHECK_FALSE(next.headers.contains("x-request-id"));
}

TEST_CASE("e2e: a response body over the cap is ErrorKind::transport", "[e2e][transport]") {
  MockServer server;
  server.update([](MockServerOptions& o) {
    o.intercept = [](const httplib::Request& req, httplib::Response& res) {
      res.status = 200;
      if (req.path.ends_with("/chunked")) {
        res.set_chunked_content_provider("application/json", [](std::size_t offset, httplib::DataSink& sink) {
          if (offset >= 256U * 1024U) {
            sink.done();
            return true;
          }
          const std::string chunk(16U * 1024U, 'c');
          return sink.write(chunk.data(), chunk.size());
        });
      } else {
        res.set_content(std::string(20'000, 'x'), "text/plain");
      }
      return true;
    };
  });
  CurlTransport transport(plain_http());

  HttpRequest r = raw_request(server, "GET", "/big");
  r.max_response_bytes = 20'000;  // exactly the size: fine
  CHECK(sent(transport, r).body.size() == 20'000);

  r.max_response_bytes = 19'999;  // declared Content-Length over the cap
  auto over = transport.send(r);
  REQUIRE_FALSE(over.has_value());
  CHECK(over.error().kind == ErrorKind::transport);
  CHECK(over.error().status == 0);
  CHECK_FALSE(over.error().retryable);
  CHECK(over.error().message.find("19999-byte limit") != std::string::npos);

  HttpRequest chunked = raw_request(server, "GET", "/chunked");
  chunked.max_response_bytes = 100'000;  // no Content-Length: cut while reading
  auto cut = transport.send(chunked);
  REQUIRE_FALSE(cut.has_value());
  CHECK(cut.error().kind == ErrorKind::transport);
  CHECK(cut.error().message.find("100000-byte limit") != std::string::npos);
  chunked.max_response_bytes = 1'000'000;
  CHECK(sent(transport, chunked).body.size() == 256U * 1024U);

  // Through the Client, per call.
  const Client client = client_for(server);
  CallOptions call;
  call.max_response_bytes = 1'000;
  const auto& e = error_of(client.get_student("1234567", call));
  CHECK(e.kind == ErrorKind::transport);
  CHECK(e.status == 0);
  CHECK(e.message.find("limit") != std::string::npos);
}

TEST_CASE("e2e: redirects are not followed", "[e2e][transport]") {
  MockServer elsewhere;
  MockServer server;
  const std::string target = elsewhere.base_url() + "/students/v2/students/1234567";
  server.update([target](MockServerOptions& o) {
    o.intercept = [target](const httplib::Request&, httplib::Response& res) {
      res.status = 302;
      res.set_header("Location", target);
      res.set_content("moved", "text/plain");
      return true;
    };
  });

  ClientOptions o = options_for(server);
  o.retry = RetryPolicy{};  // even with retries on: a 302 is final
  const auto& e = error_of(Client(o).get_student("1234567"));
  CHECK(e.kind == ErrorKind::http_status);
  CHECK(e.status == 302);
  CHECK(e.attempts == 1);
  CHECK(e.body_excerpt == "moved");

  CurlTransport transport(plain_http());
  const auto r = sent(transport, raw_request(server, "GET", "/students/v2/students/1234567"));
  CHECK(r.status == 302);
  CHECK(r.headers.find("location") == target);
  CHECK(r.body == "moved");

  CHECK(server.request_count() == 2);
  CHECK(elsewhere.request_count() == 0);
  CHECK(elsewhere.connection_count() == 0);
}

TEST_CASE("curl_transport_options carries every connection setting of ClientOptions", "[curl][options]") {
  studentsvc::ClientOptions o;
  o.ca_bundle = "/etc/campus/ca.pem";
  o.proxy = "http://proxy.example.edu:3128";
  o.allow_insecure_loopback = true;
  o.ca_pem = "-----BEGIN CERTIFICATE-----\n";
  o.client_certificate = studentsvc::ClientCertificate{"client.pem", "client.key", {}};
  o.pinned_public_key = "sha256//AAAA";
  const auto curl = studentsvc::curl_transport_options(o);
  CHECK(curl.ca_bundle == o.ca_bundle);
  CHECK(curl.proxy == o.proxy);
  CHECK(curl.allow_http);
  CHECK(curl.ca_pem == o.ca_pem);
  REQUIRE(curl.client_certificate);
  CHECK(curl.client_certificate->cert_file == "client.pem");
  CHECK(curl.client_certificate->key_file == "client.key");
  CHECK(curl.pinned_public_key == o.pinned_public_key);
  CHECK(curl.max_connections == studentsvc::CurlTransportOptions{}.max_connections);
}

// MockServer on its own: each behaviour the issue asks of the fake service,
// driven by a plain HTTP client (CurlTransport + HttpRequest, and
// httplib::Client for an independent Basic encoding). No SDK Client here.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/loopback.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace mock_server_test {

using nlohmann::json;
using studentsvc::CurlTransport;
using studentsvc::CurlTransportOptions;
using studentsvc::HttpRequest;
using studentsvc::HttpResponse;
using studentsvc::testing::MockAccount;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;
using studentsvc::test::plain_http;

namespace {

// base64("svc-registrar-app:mock-password") and base64("svc-roster-app:mock-password-2"),
// computed outside the SDK.
const std::string basic_registrar = "Basic c3ZjLXJlZ2lzdHJhci1hcHA6bW9jay1wYXNzd29yZA==";
const std::string basic_roster = "Basic c3ZjLXJvc3Rlci1hcHA6bW9jay1wYXNzd29yZC0y";

/// A request to `path` below the server's base URL, with the headers the mock
/// accepts on the student endpoints (x-api-key, svc-api-key, Basic of the approved account).
HttpRequest student_request(const MockServer& server, const std::string& path) {
  HttpRequest r;
  r.url = server.base_url() + path;
  r.headers.set("x-api-key", "mock-api-key");
  r.headers.set("svc-api-key", "mock-svc-api-key");
  r.headers.set("Authorization", basic_registrar);
  r.timeout = std::chrono::milliseconds(10'000);
  return r;
}

HttpRequest conversation_request(const MockServer& server, const std::string& method, const std::string& path_and_query) {
  HttpRequest r;
  r.method = method;
  r.url = server.base_url() + "/conversation" + path_and_query;
  r.headers.set("x-api-key", "mock-api-key");
  return r;
}

HttpResponse send(CurlTransport& transport, const HttpRequest& request) {
  auto r = transport.send(request);
  INFO("transport error: " << (r ? std::string() : r.error().message));
  REQUIRE(r.has_value());
  return std::move(*r);
}

json body_json(const HttpResponse& response) {
  auto j = json::parse(response.body, nullptr, false);
  INFO("body: " << response.body);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

std::string header(const HttpResponse& response, std::string_view name) {
  const auto v = response.headers.find(name);
  return v ? std::string(*v) : std::string("<absent>");
}

/// SimpleMessageModel: exactly one string `message`.
void require_simple_message(const HttpResponse& response, int status) {
  CHECK(response.status == status);
  const json j = body_json(response);
  REQUIRE(j.is_object());
  CHECK(j.size() == 1);
  REQUIRE(j.contains("message"));
  CHECK(j["message"].is_string());
  CHECK_FALSE(j["message"].get<std::string>().empty());
}

/// AuthErrorBody: exactly one string `detail`.
void require_auth_error_body(const HttpResponse& response) {
  CHECK(response.status == 401);
  const json j = body_json(response);
  REQUIRE(j.is_object());
  CHECK(j.size() == 1);
  REQUIRE(j.contains("detail"));
  CHECK(j["detail"].get<std::string>().find("API key") != std::string::npos);
}

/// WebApiInvalidModel: `message` and `modelState` naming `field` with an array of strings.
void require_invalid_model(const HttpResponse& response, const std::string& field) {
  CHECK(response.status == 400);
  const json j = body_json(response);
  REQUIRE(j.is_object());
  CHECK(j["message"].is_string());
  REQUIRE(j.contains("modelState"));
  REQUIRE(j["modelState"].contains(field));
  const json& messages = j["modelState"][field];
  REQUIRE(messages.is_array());
  REQUIRE_FALSE(messages.empty());
  for (const auto& m : messages) CHECK(m.is_string());
}

}  // namespace

TEST_CASE("MockServer listens on 127.0.0.1 on a free port, and two servers get different ports", "[mock_server]") {
  MockServer a;
  MockServer b;
  REQUIRE(a.running());
  REQUIRE(b.running());
  CHECK(a.port() > 0);
  CHECK(b.port() > 0);
  CHECK(a.port() != b.port());
  CHECK(a.base_url() == "http://127.0.0.1:" + std::to_string(a.port()));
  CHECK(b.base_url() == "http://127.0.0.1:" + std::to_string(b.port()));

  CurlTransport transport(plain_http());
  CHECK(send(transport, student_request(a, "/students/v2/students/1234567")).status == 200);
  CHECK(send(transport, student_request(b, "/students/v2/students/2345678")).status == 200);
  CHECK(a.request_count() == 1);
  CHECK(b.request_count() == 1);
  CHECK(a.last_request().remote.rfind("127.0.0.1:", 0) == 0);
}

TEST_CASE("MockServer keeps the latest max_recorded_requests and counts every request", "[mock_server]") {
  // The tool's mock serves a million-perm roster: a copy of each request made it grow 2.3 KB a lookup.
  for (const std::size_t kept : {std::size_t{0}, std::size_t{2}}) {
    INFO("kept " << kept);
    MockServerOptions options;
    options.max_recorded_requests = kept;
    MockServer server(options);
    const studentsvc::Client client(server.client_options());
    for (const char* perm : {"1234567", "2345678", "7654321", "1234567", "3456789"}) (void)client.get_student(perm);
    CHECK(server.request_count() == 5);
    const auto recorded = server.requests();
    REQUIRE(recorded.size() == kept);
    if (kept > 0) {
      CHECK(recorded.front().path == "/students/v2/students/1234567");  // the 4th
      CHECK(recorded.back().path == "/students/v2/students/3456789");
      CHECK(server.last_request().path == "/students/v2/students/3456789");
    } else {
      CHECK(server.last_request().path.empty());
    }
    server.clear_requests();
    CHECK(server.request_count() == 0);
  }
  CHECK(MockServerOptions{}.max_recorded_requests == std::numeric_limits<std::size_t>::max());  // every one by default
}

TEST_CASE("MockServer is seeded with five realistic fake students", "[mock_server]") {
  const auto students = MockServerOptions::default_students();
  REQUIRE(students.size() == 5);
  for (const auto& [perm, s] : students) {
    CHECK(studentsvc::is_valid_perm(perm));
    CHECK(s.at("perm") == perm);
    const auto email = s.at("email").get<std::string>();
    CHECK(email.ends_with("@example.edu"));  // reserved domain: no real people
  }

  MockServer server;
  CurlTransport transport(plain_http());
  for (const auto& [perm, s] : students) {
    const auto response = send(transport, student_request(server, "/students/v2/students/" + perm));
    CHECK(response.status == 200);
    CHECK(header(response, "Content-Type").rfind("application/json", 0) == 0);
    CHECK(body_json(response) == s);  // the approved account sees the record as seeded
  }
}

TEST_CASE("MockServer checks x-api-key on every endpoint: 401 AuthErrorBody", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  for (const std::string path : {"/students/v2/students/1234567", "/students/v2/students/current"}) {
    HttpRequest missing = student_request(server, path);
    missing.headers.erase("x-api-key");
    require_auth_error_body(send(transport, missing));

    HttpRequest wrong = student_request(server, path);
    wrong.headers.set("x-api-key", "not-the-key");
    require_auth_error_body(send(transport, wrong));
  }
  HttpRequest conversation = conversation_request(server, "GET", "");
  conversation.headers.erase("x-api-key");
  require_auth_error_body(send(transport, conversation));
  conversation.headers.set("x-api-key", "MOCK-API-KEY");  // exact match only
  require_auth_error_body(send(transport, conversation));
}

TEST_CASE("MockServer checks svc-api-key on the student endpoints: 401 SimpleMessageModel", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  HttpRequest missing = student_request(server, "/students/v2/students/1234567");
  missing.headers.erase("svc-api-key");
  require_simple_message(send(transport, missing), 401);

  HttpRequest wrong = student_request(server, "/students/v2/students/1234567");
  wrong.headers.set("svc-api-key", "other");
  require_simple_message(send(transport, wrong), 401);

  SECTION("a custom expected value") {
    server.update([](MockServerOptions& o) { o.svc_api_key = "svc-secret"; });
    require_simple_message(send(transport, wrong), 401);
    wrong.headers.set("svc-api-key", "svc-secret");
    CHECK(send(transport, wrong).status == 200);
  }
  SECTION("std::nullopt: the header is not checked") {
    server.update([](MockServerOptions& o) { o.svc_api_key.reset(); });
    CHECK(send(transport, missing).status == 200);
    CHECK(send(transport, wrong).status == 200);
  }
}

TEST_CASE("MockServer checks HTTP Basic on the student endpoints: 401 SimpleMessageModel", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  HttpRequest request = student_request(server, "/students/v2/students/1234567");

  request.headers.erase("Authorization");
  require_simple_message(send(transport, request), 401);
  request.headers.set("Authorization", "Basic " + std::string("bm9ib2R5OnNlY3JldA=="));  // nobody:secret
  require_simple_message(send(transport, request), 401);
  request.headers.set("Authorization", "Bearer c3ZjLXJlZ2lzdHJhci1hcHA6bW9jay1wYXNzd29yZA==");
  require_simple_message(send(transport, request), 401);
  request.headers.set("Authorization", basic_roster);
  CHECK(send(transport, request).status == 200);

  SECTION("an independent client's Basic encoding is accepted") {
    httplib::Client client("127.0.0.1", server.port());
    client.set_basic_auth("svc-registrar-app", "mock-password");
    const httplib::Headers headers = {{"x-api-key", "mock-api-key"}, {"svc-api-key", "mock-svc-api-key"}};
    const auto res = client.Get("/students/v2/students/1234567", headers);
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(json::parse(res->body)["firstName"] == "Ana");
    CHECK(server.last_request().header("authorization") == basic_registrar);
  }
  SECTION("require_basic = false: no Authorization needed") {
    server.update([](MockServerOptions& o) { o.require_basic = false; });
    request.headers.erase("Authorization");
    CHECK(send(transport, request).status == 200);
  }
  SECTION("accounts are configurable") {
    server.update([](MockServerOptions& o) { o.accounts = {MockAccount{"svc-new-app", "pw", true}}; });
    CHECK(send(transport, student_request(server, "/students/v2/students/1234567")).status == 401);
    request.headers.set("Authorization", studentsvc::basic_authorization_value({"svc-new-app", "pw"}));
    CHECK(send(transport, request).status == 200);
  }
  SECTION("the conversation endpoint needs only the API key") {
    CHECK(send(transport, conversation_request(server, "GET", "")).status == 200);
  }
}

TEST_CASE("MockServer checks the perm format (400 WebApiInvalidModel) and answers 404 for unknown perms",
          "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  for (const std::string perm : {"123456", "12345678", "12a4567", "abcdefg", "%20234567"}) {
    INFO("perm " << perm);
    require_invalid_model(send(transport, student_request(server, "/students/v2/students/" + perm)), "perm");
  }
  require_simple_message(send(transport, student_request(server, "/students/v2/students/")), 404);
  require_simple_message(send(transport, student_request(server, "/students/v2/students/7654321")), 404);
  require_simple_message(send(transport, student_request(server, "/students/v2/students/1234567/extra")), 404);
  require_simple_message(send(transport, student_request(server, "/no/such/path")), 404);
}

TEST_CASE("MockServer checks svc-api-version: 2.0 by default, configurable set, else 400", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  HttpRequest request = student_request(server, "/students/v2/students/1234567");
  CHECK(send(transport, request).status == 200);  // absent means 2.0
  request.headers.set("svc-api-version", "2.0");
  CHECK(send(transport, request).status == 200);
  request.headers.set("svc-api-version", "2.1");
  require_invalid_model(send(transport, request), "svc-api-version");

  server.update([](MockServerOptions& o) { o.api_versions = {"2.0", "2.1"}; });
  CHECK(send(transport, request).status == 200);
  HttpRequest current = student_request(server, "/students/v2/students/current");
  current.headers.set("svc-user-jwt", "mock-jwt-ana");
  current.headers.set("svc-api-version", "1.0");
  require_invalid_model(send(transport, current), "svc-api-version");
}

TEST_CASE("MockServer /current needs svc-user-jwt and answers the token's StudentMinimal", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  HttpRequest request = student_request(server, "/students/v2/students/current");

  require_invalid_model(send(transport, request), "svc-user-jwt");
  request.headers.set("svc-user-jwt", "not-a-known-token");
  require_simple_message(send(transport, request), 401);

  request.headers.set("svc-user-jwt", "mock-jwt-li");
  const auto response = send(transport, request);
  CHECK(response.status == 200);
  const json j = body_json(response);
  CHECK(j == json{{"perm", "2345678"},
                  {"firstName", "Li"},
                  {"lastName", "Wei"},
                  {"suffix", nullptr},
                  {"email", "li.wei@example.edu"}});

  server.update([](MockServerOptions& o) { o.jwts["mock-jwt-gone"] = "7654321"; });
  request.headers.set("svc-user-jwt", "mock-jwt-gone");
  require_simple_message(send(transport, request), 404);

  // The service-account checks still apply on /current.
  request.headers.set("svc-user-jwt", "mock-jwt-li");
  request.headers.erase("Authorization");
  require_simple_message(send(transport, request), 401);
}

TEST_CASE("MockServer: a JWT on the per-perm endpoint restricts the answer to that token's student",
          "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  HttpRequest own = student_request(server, "/students/v2/students/1234567");
  own.headers.set("svc-user-jwt", "mock-jwt-ana");
  const auto ok = send(transport, own);
  CHECK(ok.status == 200);
  CHECK(body_json(ok)["perm"] == "1234567");

  HttpRequest other = student_request(server, "/students/v2/students/2345678");
  CHECK(send(transport, other).status == 200);  // exists without a token
  other.headers.set("svc-user-jwt", "mock-jwt-ana");
  require_simple_message(send(transport, other), 404);

  other.headers.set("svc-user-jwt", "forged");
  require_simple_message(send(transport, other), 401);
}

TEST_CASE("MockServer gives extended-only fields only to approved service accounts", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  HttpRequest request = student_request(server, "/students/v2/students/1234567");
  const json full = body_json(send(transport, request));
  CHECK(full["firstNameLegal"] == "Ana María");
  CHECK(full["middleName"] == "Lucía");
  CHECK(full["gender"] == "F");

  request.headers.set("Authorization", basic_roster);
  const json limited = body_json(send(transport, request));
  CHECK_FALSE(limited.contains("firstNameLegal"));  // withheld: absent, not null
  CHECK_FALSE(limited.contains("middleName"));
  CHECK_FALSE(limited.contains("gender"));
  // Everything else is as approved accounts see it.
  json expected = full;
  expected.erase("firstNameLegal");
  expected.erase("middleName");
  expected.erase("gender");
  CHECK(limited == expected);

  // With require_basic off there is no account to judge, so the mock serves everything.
  server.update([](MockServerOptions& o) { o.require_basic = false; });
  request.headers.erase("Authorization");
  CHECK(body_json(send(transport, request)) == full);
}

TEST_CASE("MockServer answers with text/json when the content_type test option forces it", "[mock_server]") {
  MockServerOptions options;
  options.content_type = "text/json";
  MockServer server(options);
  CurlTransport transport(plain_http());
  const auto student = send(transport, student_request(server, "/students/v2/students/3456789"));
  CHECK(student.status == 200);
  CHECK(header(student, "Content-Type").rfind("text/json", 0) == 0);
  CHECK(body_json(student)["firstName"] == "Jordan");

  HttpRequest current = student_request(server, "/students/v2/students/current");
  current.headers.set("svc-user-jwt", "mock-jwt-ana");
  CHECK(header(send(transport, current), "content-type").rfind("text/json", 0) == 0);

  // Error bodies of the student endpoints too; the API key's 401 stays application/json.
  const auto missing = send(transport, student_request(server, "/students/v2/students/7654321"));
  CHECK(header(missing, "Content-Type").rfind("text/json", 0) == 0);
  HttpRequest no_key = student_request(server, "/students/v2/students/3456789");
  no_key.headers.erase("x-api-key");
  CHECK(header(send(transport, no_key), "Content-Type").rfind("application/json", 0) == 0);

  server.update([](MockServerOptions& o) { o.content_type = "application/json"; });
  CHECK(header(send(transport, student_request(server, "/students/v2/students/3456789")), "Content-Type")
            .rfind("application/json", 0) == 0);
}

TEST_CASE("MockServer serves /conversation for every method and echoes what it got", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  for (const std::string method : {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    INFO("method " << method);
    HttpRequest r = conversation_request(server, method, "/threads/42?page=2&q=a%20b");
    if (method != "GET" && method != "OPTIONS") {
      r.body = R"({"text":"hi"})";
      r.headers.set("Content-Type", "application/json");
    }
    const auto response = send(transport, r);
    CHECK(response.status == 200);
    const json echo = body_json(response);
    CHECK(echo["method"] == method);
    CHECK(echo["subPath"] == "/threads/42");
    CHECK(echo["query"] == json{{"page", "2"}, {"q", "a b"}});
    CHECK(echo["body"] == r.body);
    CHECK(echo["contentType"] == (r.body.empty() ? "" : "application/json"));
  }

  // Bare /conversation, and a form-encoded body that must not leak into the query.
  HttpRequest form = conversation_request(server, "POST", "");
  form.body = "a=1&b=2";
  form.headers.set("Content-Type", "application/x-www-form-urlencoded");
  const json echo = body_json(send(transport, form));
  CHECK(echo["subPath"] == "");
  CHECK(echo["query"] == json::object());
  CHECK(echo["body"] == "a=1&b=2");
  CHECK(server.last_request().query.empty());

  // HEAD is answered like GET, without a body.
  const auto head = send(transport, conversation_request(server, "HEAD", "/x"));
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(server.last_request().method == "HEAD");
}

TEST_CASE("MockServer: a custom conversation handler answers after the API key check", "[mock_server]") {
  MockServerOptions options;
  options.conversation = [](const httplib::Request& req, httplib::Response& res) {
    res.status = req.method == "POST" ? 201 : 409;
    res.set_content(R"({"message":"handled )" + req.method + R"("})", "application/json");
  };
  MockServer server(options);
  CurlTransport transport(plain_http());
  const auto created = send(transport, conversation_request(server, "POST", "/m"));
  CHECK(created.status == 201);
  CHECK(body_json(created)["message"] == "handled POST");
  CHECK(send(transport, conversation_request(server, "GET", "")).status == 409);

  HttpRequest no_key = conversation_request(server, "POST", "/m");
  no_key.headers.erase("x-api-key");
  require_auth_error_body(send(transport, no_key));
}

TEST_CASE("MockServer records every request: method, path, target, query, headers, body, remote",
          "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  HttpRequest get = student_request(server, "/students/v2/students/1234567");
  get.headers.set("X-Custom-Header", "Value");
  send(transport, get);
  HttpRequest post = conversation_request(server, "POST", "/a%20b?x=1&x=2&y=%C3%A9");
  post.body = R"({"k":"v"})";
  post.headers.set("Content-Type", "application/json");
  send(transport, post);

  const auto all = server.requests();
  REQUIRE(all.size() == 2);
  CHECK(server.request_count() == 2);
  const auto& first = all[0];
  CHECK(first.method == "GET");
  CHECK(first.path == "/students/v2/students/1234567");
  CHECK(first.target == "/students/v2/students/1234567");
  CHECK(first.body.empty());
  CHECK(first.header("x-custom-header") == "Value");  // names lower-cased
  CHECK(first.header("x-api-key") == "mock-api-key");
  CHECK(first.header("authorization") == basic_registrar);
  CHECK_FALSE(first.header("X-Custom-Header").has_value());  // lookups take lower case
  CHECK_FALSE(first.header("remote_addr").has_value());      // no pseudo-headers
  CHECK_FALSE(first.header("local_port").has_value());

  const auto& second = all[1];
  CHECK(second.method == "POST");
  CHECK(second.path == "/conversation/a b");
  CHECK(second.target == "/conversation/a%20b?x=1&x=2&y=%C3%A9");
  CHECK(second.query.count("x") == 2);
  REQUIRE(second.query.count("y") == 1);
  CHECK(second.query.find("y")->second == "\xC3\xA9");
  CHECK(second.body == R"({"k":"v"})");
  CHECK(second.header("content-type") == "application/json");
  CHECK(second.header("content-length") == "9");
  CHECK(second.remote == first.remote);  // same keep-alive connection
  CHECK(server.last_request().method == "POST");

  server.clear_requests();
  CHECK(server.request_count() == 0);
  CHECK(server.connection_count() == 0);
  CHECK(server.last_request().method.empty());
}

TEST_CASE("MockServer counts client connections", "[mock_server]") {
  MockServer server;
  {
    CurlTransport one(plain_http());
    for (int i = 0; i < 5; ++i) send(one, student_request(server, "/students/v2/students/1234567"));
    CHECK(server.request_count() == 5);
    CHECK(server.connection_count() == 1);
  }
  CurlTransport two(plain_http());
  send(two, student_request(server, "/students/v2/students/1234567"));
  CHECK(server.connection_count() == 2);

  HttpRequest close = student_request(server, "/students/v2/students/1234567");
  close.headers.set("Connection", "close");
  send(two, close);
  send(two, student_request(server, "/students/v2/students/1234567"));
  CHECK(server.connection_count() == 3);
}

TEST_CASE("MockServer::update changes accounts, keys and students while it runs", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  const HttpRequest request = student_request(server, "/students/v2/students/7000001");
  CHECK(send(transport, request).status == 404);

  server.update([](MockServerOptions& o) {
    o.students["7000001"] = json{{"perm", "7000001"}, {"firstName", "Test"}, {"lastName", "Added"}};
  });
  const auto added = send(transport, request);
  CHECK(added.status == 200);
  CHECK(body_json(added)["lastName"] == "Added");

  server.update([](MockServerOptions& o) { o.students.erase("1234567"); });
  CHECK(send(transport, student_request(server, "/students/v2/students/1234567")).status == 404);

  server.update([](MockServerOptions& o) { o.api_key = "rotated"; });
  require_auth_error_body(send(transport, request));
  HttpRequest rotated = request;
  rotated.headers.set("x-api-key", "rotated");
  CHECK(send(transport, rotated).status == 200);

  // client_options() follows the live configuration.
  CHECK(server.client_options().auth.api_key == "rotated");
}

TEST_CASE("MockServer intercept runs first on every request and can answer it", "[mock_server]") {
  MockServer server;
  CurlTransport transport(plain_http());
  std::atomic<int> seen{0};
  std::mutex body_mutex;
  std::string seen_body;
  server.update([&](MockServerOptions& o) {
    o.intercept = [&](const httplib::Request& req, httplib::Response& res) {
      ++seen;
      if (req.method == "POST") {
        const std::lock_guard lock(body_mutex);
        seen_body = req.body;
      }
      if (req.path.ends_with("/2345678") || req.method == "PUT") {
        res.status = 503;
        res.set_content("<html><body>maintenance</body></html>", "text/html");
        return true;
      }
      return false;  // fall through to the normal routes
    };
  });

  // Answered by intercept before any auth check: no headers needed.
  HttpRequest bare;
  bare.url = server.base_url() + "/students/v2/students/2345678";
  const auto down = send(transport, bare);
  CHECK(down.status == 503);
  CHECK(down.body == "<html><body>maintenance</body></html>");
  CHECK(header(down, "Content-Type") == "text/html");

  // Not answered: the normal route runs.
  CHECK(send(transport, student_request(server, "/students/v2/students/1234567")).status == 200);

  // Bodies are read before intercept runs, and an intercepted body does not
  // leave the keep-alive connection unusable.
  HttpRequest post = conversation_request(server, "POST", "/x");
  post.body = R"({"hello":"world"})";
  CHECK(send(transport, post).status == 200);
  {
    const std::lock_guard lock(body_mutex);
    CHECK(seen_body == R"({"hello":"world"})");
  }
  HttpRequest put = conversation_request(server, "PUT", "/x");
  put.body = std::string(5000, 'p');
  CHECK(send(transport, put).status == 503);
  CHECK(server.last_request().body.size() == 5000);
  CHECK(send(transport, student_request(server, "/students/v2/students/1234567")).status == 200);
  CHECK(server.connection_count() == 1);

  CHECK(seen == 5);
  CHECK(server.request_count() == 5);  // intercepted requests are recorded too

  server.update([](MockServerOptions& o) { o.intercept = nullptr; });
  CHECK(send(transport, student_request(server, "/students/v2/students/2345678")).status == 200);
  CHECK(seen == 5);
}

TEST_CASE("MockServer latency delays every answer and requests overlap", "[mock_server]") {
  // One second of latency: each bound below keeps a second or more of slack
  // for a loaded machine, and still tells once from twice and overlap from turns.
  constexpr auto latency = std::chrono::milliseconds(1000);
  MockServerOptions options;
  options.latency = latency;
  MockServer server(options);
  CurlTransport transport(plain_http());

  auto start = std::chrono::steady_clock::now();
  CHECK(send(transport, student_request(server, "/students/v2/students/1234567")).status == 200);
  CHECK(std::chrono::steady_clock::now() - start >= latency);

  // Once per request, even when intercept declines it (not twice).
  server.update([](MockServerOptions& o) {
    o.intercept = [](const httplib::Request&, httplib::Response&) { return false; };
  });
  start = std::chrono::steady_clock::now();
  CHECK(send(transport, conversation_request(server, "GET", "")).status == 200);
  const auto once = std::chrono::steady_clock::now() - start;
  CHECK(once >= latency);
  CHECK(once < 2 * latency);  // twice would take at least 2 s

  // Concurrent requests are served concurrently.
  server.clear_requests();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      CurlTransport own(plain_http());
      auto r = own.send(student_request(server, "/students/v2/students/1234567"));
      if (r && r->status == 200) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(ok == 4);
  CHECK(server.max_in_flight() >= 2);
  CHECK(std::chrono::steady_clock::now() - start < 4 * latency);  // in turns: at least 4 s

  server.update([](MockServerOptions& o) { o.latency = std::chrono::milliseconds(0); });
  start = std::chrono::steady_clock::now();
  send(transport, student_request(server, "/students/v2/students/1234567"));
  CHECK(std::chrono::steady_clock::now() - start < latency);
}

TEST_CASE("MockServer::stop is safe twice, and a stopped server refuses connections", "[mock_server]") {
  MockServerOptions options;
  options.keep_alive_timeout = std::chrono::seconds(1);
  MockServer server(options);
  CurlTransport transport(plain_http());
  CHECK(send(transport, student_request(server, "/students/v2/students/1234567")).status == 200);
  const HttpRequest request = student_request(server, "/students/v2/students/1234567");
  // The transport still holds its idle keep-alive connection: stop() waits at
  // most keep_alive_timeout for it, not forever.
  const auto start = std::chrono::steady_clock::now();
  server.stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2'500));
  CHECK_FALSE(server.running());
  server.stop();
  CHECK_FALSE(server.running());
  const auto refused = transport.send(request);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == studentsvc::ErrorKind::transport);
  CHECK(server.request_count() == 1);
}  // the destructor stops a third time

TEST_CASE("MockServer::stop over plain HTTP does not wait out an idle keep-alive connection", "[mock_server]") {
  MockServerOptions options;
  options.keep_alive_timeout = std::chrono::seconds(60);
  MockServer server(options);
  CurlTransport transport(plain_http());
  CHECK(send(transport, student_request(server, "/students/v2/students/1234567")).status == 200);
  // The transport keeps its connection open; the bound is far below the 60 s keep-alive.
  const auto start = std::chrono::steady_clock::now();
  server.stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  CHECK_FALSE(server.running());
}

TEST_CASE("MockServer path_prefix: routes live under it, trailing slashes dropped, taken literally",
          "[mock_server]") {
  MockServerOptions options;
  options.path_prefix = "/api.v1//";
  MockServer server(options);
  CurlTransport transport(plain_http());
  CHECK(server.base_url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/api.v1");

  CHECK(send(transport, student_request(server, "/students/v2/students/1234567")).status == 200);
  CHECK(server.last_request().path == "/api.v1/students/v2/students/1234567");

  HttpRequest current = student_request(server, "/students/v2/students/current");
  current.headers.set("svc-user-jwt", "mock-jwt-ana");
  CHECK(body_json(send(transport, current))["perm"] == "1234567");

  const json echo = body_json(send(transport, conversation_request(server, "GET", "/t/1")));
  CHECK(echo["subPath"] == "/t/1");

  // Outside the prefix, or with the '.' taken as a regex wildcard: not found.
  HttpRequest outside = student_request(server, "");
  outside.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/students/v2/students/1234567";
  require_simple_message(send(transport, outside), 404);
  outside.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/apiXv1/students/v2/students/1234567";
  require_simple_message(send(transport, outside), 404);

  SECTION("a prefix without its leading slash") {
    MockServerOptions bare;
    bare.path_prefix = "gw";
    MockServer other(bare);
    CurlTransport other_transport(plain_http());  // closed before `other` stops
    CHECK(other.base_url().ends_with(":" + std::to_string(other.port()) + "/gw"));
    CHECK(send(other_transport, student_request(other, "/students/v2/students/1234567")).status == 200);
    CHECK(other.last_request().path == "/gw/students/v2/students/1234567");
  }
}

TEST_CASE("MockServer::client_options sets both keys by default", "[mock_server]") {
  MockServer server;
  const auto c = server.client_options();
  CHECK(c.auth.api_key == "mock-api-key");
  CHECK(c.auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom);
  CHECK(c.auth.svc_api_key == "mock-svc-api-key");
  const auto student = studentsvc::Client(c).get_student("1234567");
  REQUIRE(student.has_value());
  CHECK(server.last_request().header("svc-api-key") == "mock-svc-api-key");

  // An app that sends its API key as svc-api-key (the SDK's default) is refused.
  auto same = c;
  same.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::same_as_api_key;
  const auto refused = studentsvc::Client(same).get_student("1234567");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == studentsvc::ErrorKind::unauthorized);
}

TEST_CASE("MockServer::client_options is accepted by the mock as it is", "[mock_server]") {
  MockServerOptions options;
  options.svc_api_key = "svc-secret";
  MockServer server(options);
  const auto c = server.client_options();
  CHECK(c.base_url == server.base_url());
  CHECK(c.allow_insecure_loopback);
  CHECK(c.auth.api_key == "mock-api-key");
  CHECK(c.auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom);
  CHECK(c.auth.svc_api_key == "svc-secret");
  REQUIRE(c.auth.basic.has_value());
  CHECK(c.auth.basic->network_id == "svc-registrar-app");

  const studentsvc::Client client(c);
  const auto student = client.get_student("1234567");
  INFO((student ? std::string() : studentsvc::to_string(student.error())));
  REQUIRE(student.has_value());
  CHECK(student->first_name == "Ana");
  CHECK(server.last_request().header("svc-api-key") == "svc-secret");
}

}  // namespace mock_server_test

// MockServer's rules, one test case per row of the table "What
// MockServer checks" (docs/testing.md), driven by raw HTTP/1.1 over a socket: no SDK and no HTTP
// client library, so empty and repeated header fields reach the mock exactly
// as written here.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/testing/detail/content_negotiation.hpp>
#include <studentsvc/testing/detail/content_negotiation.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/raw_server.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace mock_rules_test {

using nlohmann::json;
using studentsvc::testing::EmptyPermAnswer;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// base64("svc-registrar-app:mock-password") and base64("svc-roster-app:mock-password-2"),
// computed outside the SDK.
const std::string basic_registrar = "Basic c3ZjLXJlZ2lzdHJhci1hcHA6bW9jay1wYXNzd29yZA==";
const std::string basic_roster = "Basic c3ZjLXJvc3Rlci1hcHA6bW9jay1wYXNzd29yZC0y";
const std::string realm = "Basic realm=\"studentsvc-mock\"";

struct RawResponse {
  int status = 0;
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;

  [[nodiscard]] std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string("<absent>") : it->second;
  }
  [[nodiscard]] json body_json() const {
    auto j = json::parse(body, nullptr, false);
    INFO("body: " << body);
    REQUIRE_FALSE(j.is_discarded());
    return j;
  }
};

/// Sends `method target` with exactly these header fields (plus Host and
/// Connection: close) on a new connection and reads the answer to EOF.
RawResponse exchange(const MockServer& server, const std::string& method, const std::string& target,
                     const Fields& fields) {
  std::string text = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [name, value] : fields) text += name + ":" + (value.empty() ? "" : " " + value) + "\r\n";
  // cpp-httplib 0.11 reads these methods' bodies to EOF without a length.
  if (method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE") text += "Content-Length: 0\r\n";
  text += "Connection: close\r\n\r\n";

  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(server.port()));
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  const bool sent = connected && studentsvc::test::RawServer::write_all(fd, text);
  std::string data;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (sent && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) < 0) break;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n > 0) data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  REQUIRE(connected);
  REQUIRE(sent);

  RawResponse r;
  const auto head_end = data.find("\r\n\r\n");
  INFO("answer: " << data);
  REQUIRE(head_end != std::string::npos);
  REQUIRE(data.rfind("HTTP/1.1 ", 0) == 0);
  r.status = std::stoi(data.substr(9, 3));
  std::string_view head = std::string_view(data).substr(0, head_end);
  for (auto pos = head.find("\r\n"); pos != std::string_view::npos;) {
    const auto next = head.find("\r\n", pos + 2);
    const auto line = head.substr(pos + 2, next == std::string_view::npos ? head.npos : next - pos - 2);
    const auto colon = line.find(':');
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    r.headers.emplace(std::move(name), std::string(value));
    pos = next;
  }
  r.body = data.substr(head_end + 4);
  return r;
}

/// The fields the mock accepts on the student endpoints by default.
Fields good() {
  return {{"x-api-key", "mock-api-key"}, {"svc-api-key", "mock-svc-api-key"}, {"Authorization", basic_registrar}};
}
Fields with(Fields f, const std::string& name, const std::string& value) {  // replaces every copy
  std::erase_if(f, [&](const auto& p) { return p.first == name; });
  f.emplace_back(name, value);
  return f;
}
Fields without(Fields f, const std::string& name) {
  std::erase_if(f, [&](const auto& p) { return p.first == name; });
  return f;
}
Fields plus(Fields f, const std::string& name, const std::string& value) {  // adds a copy
  f.emplace_back(name, value);
  return f;
}

const std::string ana = "/students/v2/students/1234567";
const std::string li = "/students/v2/students/2345678";
const std::string current = "/students/v2/students/current";

void require_auth_error_body(const RawResponse& r) {
  CHECK(r.status == 401);
  const json j = r.body_json();
  CHECK(j == json{{"detail", "Invalid API key. Supply a valid API key in the x-api-key header."}});
  CHECK(r.header("content-type") == "application/json; charset=utf-8");
}

void require_message(const RawResponse& r, int status) {
  CHECK(r.status == status);
  const json j = r.body_json();
  REQUIRE(j.is_object());
  CHECK(j.size() == 1);
  REQUIRE(j.contains("message"));
  CHECK(j["message"].is_string());
}

/// 401 SimpleMessageModel with the Basic challenge (RFC 9110 §11.6.1).
void require_challenge(const RawResponse& r, const std::string& message) {
  require_message(r, 401);
  CHECK(r.body_json()["message"] == message);
  CHECK(r.header("www-authenticate") == realm);
}

void require_invalid_model(const RawResponse& r, const std::string& name) {
  CHECK(r.status == 400);
  const json j = r.body_json();
  REQUIRE(j.is_object());
  CHECK(j.value("message", "") == "The request is invalid.");
  REQUIRE(j.contains("modelState"));
  CHECK(j["modelState"].size() == 1);
  REQUIRE(j["modelState"].contains(name));
  REQUIRE(j["modelState"][name].is_array());
  CHECK(j["modelState"][name].size() == 1);
  CHECK(j["modelState"][name][0].is_string());
}

const std::string svc_key_denied = "Authorization has been denied for this request: invalid svc-api-key.";
const std::string basic_denied = "Authorization has been denied for this request.";
const std::string token_denied = "The user token is not valid.";

}  // namespace

TEST_CASE("mock rule 1: x-api-key on every path and method before routing, else 401 AuthErrorBody",
          "[mock_rules]") {
  MockServer server;
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"GET", ana},           {"GET", current},        {"GET", "/conversation"}, {"POST", "/conversation/x"},
      {"GET", "/no/such/path"}, {"DELETE", ana},       {"OPTIONS", current},     {"HEAD", ana},
      {"GET", "/students/v2/students/"}, {"PATCH", "/nowhere"}};
  for (const auto& [method, target] : requests) {
    INFO(method << " " << target);
    const Fields rest = without(good(), "x-api-key");
    if (method == "HEAD") {  // no body comes back; the status and type still say it
      const auto r = exchange(server, method, target, rest);
      CHECK(r.status == 401);
      CHECK(r.body.empty());
      continue;
    }
    require_auth_error_body(exchange(server, method, target, rest));
    require_auth_error_body(exchange(server, method, target, with(good(), "x-api-key", "not-the-key")));
    require_auth_error_body(exchange(server, method, target, with(good(), "x-api-key", "")));
  }
  // Exact, as sent: no case folding, no percent-decoding (cpp-httplib decodes values).
  require_auth_error_body(exchange(server, "GET", ana, with(good(), "x-api-key", "MOCK-API-KEY")));
  require_auth_error_body(exchange(server, "GET", ana, with(good(), "x-api-key", "mock%2Dapi-key")));
  CHECK(exchange(server, "GET", ana, good()).status == 200);
}

TEST_CASE("mock rule 2: a repeated or empty x-api-key is 401 even when one copy is right", "[mock_rules]") {
  MockServer server;
  require_auth_error_body(exchange(server, "GET", ana, plus(good(), "x-api-key", "wrong")));
  require_auth_error_body(exchange(server, "GET", ana, plus(with(good(), "x-api-key", "wrong"), "x-api-key",
                                                             "mock-api-key")));
  require_auth_error_body(exchange(server, "GET", ana, plus(good(), "x-api-key", "mock-api-key")));
  require_auth_error_body(exchange(server, "GET", ana, plus(good(), "X-Api-Key", "")));
  require_auth_error_body(exchange(server, "GET", "/conversation", plus(good(), "x-api-key", "wrong")));
  // The recording shows both copies and the empty value, as sent.
  const auto recorded = server.last_request();
  CHECK(recorded.fields.count("x-api-key") == 2);
  exchange(server, "GET", ana, plus(good(), "X-Empty", ""));
  CHECK(server.last_request().header("x-empty") == "");
}

TEST_CASE("mock rule 3: routing after the API key: unknown path 404, non-GET on a student path 405 with Allow",
          "[mock_rules]") {
  MockServer server;
  // Routing comes before svc-api-key and Basic: only the API key is sent.
  const Fields key_only = {{"x-api-key", "mock-api-key"}};
  for (const std::string target : {"/no/such/path", "/students/v2/students/1234567/extra", "/students/v2/students",
                                   "/conversationx"}) {
    INFO(target);
    const auto r = exchange(server, "GET", target, key_only);
    require_message(r, 404);
    CHECK(r.body_json()["message"] == "No HTTP resource was found that matches the request URI.");
  }
  for (const std::string method : {"POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    for (const std::string& target : {ana, current}) {
      INFO(method << " " << target);
      const auto r = exchange(server, method, target, key_only);
      require_message(r, 405);
      CHECK(r.header("allow") == "GET");
      CHECK(r.body_json()["message"] == "The requested resource does not support this HTTP method.");
    }
  }
  const auto head = exchange(server, "HEAD", ana, good());
  CHECK(head.status == 405);
  CHECK(head.header("allow") == "GET");
}

TEST_CASE("mock rule 4: an empty perm segment is 404 at routing, or 400 at validation when configured",
          "[mock_rules]") {
  MockServer server;
  const std::string empty = "/students/v2/students/";
  require_message(exchange(server, "GET", empty, {{"x-api-key", "mock-api-key"}}), 404);
  server.update([](MockServerOptions& o) { o.empty_perm = EmptyPermAnswer::invalid_model; });
  require_challenge(exchange(server, "GET", empty, {{"x-api-key", "mock-api-key"}}), svc_key_denied);
  require_invalid_model(exchange(server, "GET", empty, good()), "perm");
}

TEST_CASE("mock rule 5: svc-api-key on the student endpoints: one field, its own value, else 401 with a challenge",
          "[mock_rules]") {
  MockServer server;
  for (const std::string& target : {ana, current}) {
    INFO(target);
    const Fields base = with(good(), "svc-user-jwt", "mock-jwt-ana");
    require_challenge(exchange(server, "GET", target, without(base, "svc-api-key")), svc_key_denied);
    require_challenge(exchange(server, "GET", target, with(base, "svc-api-key", "")), svc_key_denied);
    require_challenge(exchange(server, "GET", target, with(base, "svc-api-key", "wrong")), svc_key_denied);
    // The default expects a value other than the API key: an app must configure both.
    require_challenge(exchange(server, "GET", target, with(base, "svc-api-key", "mock-api-key")), svc_key_denied);
    require_challenge(exchange(server, "GET", target, plus(base, "svc-api-key", "wrong")), svc_key_denied);
    require_challenge(exchange(server, "GET", target, plus(base, "svc-api-key", "mock-svc-api-key")),
                      svc_key_denied);
    CHECK(exchange(server, "GET", target, base).status == 200);
  }
  // svc-api-key is checked before Basic.
  require_challenge(exchange(server, "GET", ana, without(without(good(), "svc-api-key"), "Authorization")),
                    svc_key_denied);
  // The conversation endpoint needs only the API key.
  CHECK(exchange(server, "GET", "/conversation", {{"x-api-key", "mock-api-key"}}).status == 200);

  SECTION("lenient: std::nullopt does not check it") {
    server.update([](MockServerOptions& o) { o.svc_api_key.reset(); });
    CHECK(exchange(server, "GET", ana, without(good(), "svc-api-key")).status == 200);
    CHECK(exchange(server, "GET", ana, with(good(), "svc-api-key", "anything")).status == 200);
  }
}

TEST_CASE("mock rule 6: HTTP Basic on the student endpoints: one known account, else 401 with a challenge",
          "[mock_rules]") {
  MockServer server;
  require_challenge(exchange(server, "GET", ana, without(good(), "Authorization")), basic_denied);
  require_challenge(exchange(server, "GET", ana, with(good(), "Authorization", "")), basic_denied);
  require_challenge(exchange(server, "GET", ana, with(good(), "Authorization", "Basic bm9ib2R5OnNlY3JldA==")),
                    basic_denied);  // nobody:secret
  require_challenge(exchange(server, "GET", ana,
                             with(good(), "Authorization", "Bearer c3ZjLXJlZ2lzdHJhci1hcHA6bW9jay1wYXNzd29yZA==")),
                    basic_denied);
  require_challenge(exchange(server, "GET", ana, plus(good(), "Authorization", "Basic bm9ib2R5OnNlY3JldA==")),
                    basic_denied);
  require_challenge(exchange(server, "GET", ana, plus(good(), "Authorization", basic_roster)), basic_denied);
  CHECK(exchange(server, "GET", ana, with(good(), "Authorization", basic_roster)).status == 200);
  // The scheme name is case-insensitive (RFC 9110 §11.1); the credentials are not.
  CHECK(exchange(server, "GET", ana, with(good(), "Authorization", "bASIC " + basic_registrar.substr(6))).status ==
        200);
  require_challenge(exchange(server, "GET", ana,
                             with(good(), "Authorization", "Basic " + std::string("C3ZjLXJlZ2lzdHJhci1hcHA6bW9jay1wYXNzd29yZA=="))),
                    basic_denied);
  require_challenge(exchange(server, "GET", ana, with(good(), "Authorization", "Basic")), basic_denied);

  SECTION("lenient: require_basic = false") {
    server.update([](MockServerOptions& o) { o.require_basic = false; });
    CHECK(exchange(server, "GET", ana, without(good(), "Authorization")).status == 200);
  }
}

TEST_CASE("mock rule 7: svc-api-version after auth: absent means 2.0, an empty, repeated or unknown one is 400",
          "[mock_rules]") {
  MockServer server;
  CHECK(exchange(server, "GET", ana, good()).status == 200);
  CHECK(exchange(server, "GET", ana, with(good(), "svc-api-version", "2.0")).status == 200);
  require_invalid_model(exchange(server, "GET", ana, with(good(), "svc-api-version", "")), "svc-api-version");
  require_invalid_model(exchange(server, "GET", ana, with(good(), "svc-api-version", "2.1")), "svc-api-version");
  require_invalid_model(exchange(server, "GET", ana, plus(with(good(), "svc-api-version", "2.0"), "svc-api-version",
                                                          "2.0")),
                        "svc-api-version");
  require_invalid_model(exchange(server, "GET", current, with(with(good(), "svc-user-jwt", "mock-jwt-ana"),
                                                                "svc-api-version", "1.0")),
                        "svc-api-version");
  // After svc-api-key and Basic, before validation.
  require_challenge(exchange(server, "GET", ana, without(with(good(), "svc-api-version", "9"), "Authorization")),
                    basic_denied);
  require_invalid_model(exchange(server, "GET", "/students/v2/students/12", with(good(), "svc-api-version", "9")),
                        "svc-api-version");
  server.update([](MockServerOptions& o) { o.api_versions = {"2.0", "2.1"}; });
  CHECK(exchange(server, "GET", ana, with(good(), "svc-api-version", "2.1")).status == 200);
}

TEST_CASE("mock rule 8: validation: the perm is 7 digits and /current needs svc-user-jwt, else 400 modelState",
          "[mock_rules]") {
  MockServer server;
  for (const std::string perm : {"123456", "12345678", "12a4567", "abcdefg", "%20234567", "123456%0A"}) {
    INFO(perm);
    require_invalid_model(exchange(server, "GET", "/students/v2/students/" + perm, good()), "perm");
  }
  require_invalid_model(exchange(server, "GET", current, good()), "svc-user-jwt");
  // Validation before the token: a bad perm with a forged token is 400.
  require_invalid_model(exchange(server, "GET", "/students/v2/students/12", with(good(), "svc-user-jwt", "forged")),
                        "perm");
}

TEST_CASE("mock rule 9: svc-user-jwt: an empty, repeated or unknown token is 401, and on a perm it names that perm",
          "[mock_rules]") {
  MockServer server;
  for (const std::string& target : {ana, li, current}) {
    INFO(target);
    require_challenge(exchange(server, "GET", target, with(good(), "svc-user-jwt", "")), token_denied);
    require_challenge(exchange(server, "GET", target, with(good(), "svc-user-jwt", "forged")), token_denied);
    require_challenge(
        exchange(server, "GET", target, plus(with(good(), "svc-user-jwt", "mock-jwt-ana"), "svc-user-jwt", "")),
        token_denied);
    require_challenge(exchange(server, "GET", target,
                               plus(with(good(), "svc-user-jwt", "mock-jwt-ana"), "svc-user-jwt", "mock-jwt-li")),
                      token_denied);
  }
  // The token's own student, and no other.
  const auto own = exchange(server, "GET", ana, with(good(), "svc-user-jwt", "mock-jwt-ana"));
  CHECK(own.status == 200);
  CHECK(own.body_json()["perm"] == "1234567");
  require_message(exchange(server, "GET", li, with(good(), "svc-user-jwt", "mock-jwt-ana")), 404);
  CHECK(exchange(server, "GET", li, good()).status == 200);  // without a token: any student
  // /current answers the token's StudentMinimal.
  const auto me = exchange(server, "GET", current, with(good(), "svc-user-jwt", "mock-jwt-li"));
  CHECK(me.status == 200);
  CHECK(me.body_json() == json{{"perm", "2345678"},
                               {"firstName", "Li"},
                               {"lastName", "Wei"},
                               {"suffix", nullptr},
                               {"email", "li.wei@example.edu"}});
}

TEST_CASE("mock rule 10: the lookup: 404 SimpleMessageModel for an unknown student, else 200", "[mock_rules]") {
  MockServer server;
  const auto missing = exchange(server, "GET", "/students/v2/students/7654321", good());
  require_message(missing, 404);
  CHECK(missing.body_json()["message"] == "Student not found.");
  server.update([](MockServerOptions& o) { o.jwts["mock-jwt-gone"] = "7654321"; });
  require_message(exchange(server, "GET", current, with(good(), "svc-user-jwt", "mock-jwt-gone")), 404);
  const auto found = exchange(server, "GET", ana, good());
  CHECK(found.status == 200);
  CHECK(found.body_json() == MockServerOptions::default_students().at("1234567"));
}

TEST_CASE("mock rule 11: extended-only fields withheld from an unapproved account are absent, and stored nulls stay",
          "[mock_rules]") {
  MockServer server;
  const json roster_ana = exchange(server, "GET", ana, with(good(), "Authorization", basic_roster)).body_json();
  for (const char* key : {"firstNameLegal", "middleName", "gender"}) CHECK_FALSE(roster_ana.contains(key));
  json expected = MockServerOptions::default_students().at("1234567");
  for (const char* key : {"firstNameLegal", "middleName", "gender"}) expected.erase(key);
  CHECK(roster_ana == expected);

  // Stored nulls: Li's suffix for both accounts, Li's middleName for the approved one.
  const json roster_li = exchange(server, "GET", li, with(good(), "Authorization", basic_roster)).body_json();
  CHECK(roster_li.at("suffix").is_null());
  CHECK_FALSE(roster_li.contains("middleName"));
  const json approved_li = exchange(server, "GET", li, good()).body_json();
  CHECK(approved_li.at("middleName").is_null());
  CHECK(approved_li == MockServerOptions::default_students().at("2345678"));
}

TEST_CASE("mock rule 12: Accept chooses text/json or application/json on the student endpoints", "[mock_rules]") {
  MockServer server;
  const std::string app = "application/json; charset=utf-8";
  const std::string text = "text/json; charset=utf-8";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", app},
      {"application/json", app},
      {"application/json, text/json", app},  // equal q: the first listed wins
      {"text/json, application/json", text},
      {"text/json", text},
      {"TEXT/JSON", text},
      {"application/json;q=0.5, text/json", text},
      {"text/json;q=0.4, application/json;q=0.8", app},
      {"application/json;q=0, text/json;q=0.1", text},
      {"*/*", app},
      {"text/*", text},
      {"text/*, application/json", text},
      {"*/*;q=0.1, text/json;q=0.1", app},  // equal q: */* comes first
      {"text/html", app},                   // neither acceptable: the default, never 406
      {"text/json;q=2", app},               // a malformed q drops the range
  };
  for (const auto& [accept, type] : cases) {
    INFO("Accept: " << accept);
    const Fields fields = accept.empty() ? good() : with(good(), "Accept", accept);
    CHECK(exchange(server, "GET", ana, fields).header("content-type") == type);
  }
  // Repeated Accept fields are one list, in order.
  CHECK(exchange(server, "GET", ana, plus(with(good(), "Accept", "text/json"), "Accept", "application/json"))
            .header("content-type") == text);
  // Every student-endpoint answer is negotiated: errors and /current too.
  const Fields wants_text = with(good(), "Accept", "text/json");
  CHECK(exchange(server, "GET", "/students/v2/students/7654321", wants_text).header("content-type") == text);
  CHECK(exchange(server, "GET", current, with(wants_text, "svc-user-jwt", "mock-jwt-ana")).header("content-type") ==
        text);
  CHECK(exchange(server, "GET", ana, without(wants_text, "Authorization")).header("content-type") == text);
  // The API key's 401 and routing answers stay application/json.
  CHECK(exchange(server, "GET", ana, without(wants_text, "x-api-key")).header("content-type") == app);
  CHECK(exchange(server, "GET", "/nowhere", wants_text).header("content-type") == app);

  SECTION("test option: content_type forces one type") {
    server.update([](MockServerOptions& o) { o.content_type = "text/json"; });
    CHECK(exchange(server, "GET", ana, good()).header("content-type") == text);
    CHECK(exchange(server, "GET", ana, with(good(), "Accept", "application/json")).header("content-type") == text);
  }
}

TEST_CASE("mock rule 12: prefers_text_json ranks like the table", "[mock_rules]") {
  using studentsvc::testing::detail::prefers_text_json;
  CHECK_FALSE(prefers_text_json(""));
  CHECK(prefers_text_json("text/json"));
  CHECK(prefers_text_json(" text/json ; charset=utf-8 ; Q=1.0 , application/json;q=0.999"));
  CHECK_FALSE(prefers_text_json("text/json;q=0"));
  CHECK_FALSE(prefers_text_json("text/json;q=1.0001"));
  CHECK_FALSE(prefers_text_json(", ,"));
  CHECK(prefers_text_json("application/*;q=0.2, text/*;q=0.3"));
}

TEST_CASE("mock rule 13: the message texts are configurable", "[mock_rules]") {
  MockServerOptions options;
  options.messages.student_not_found = "No such student.";
  options.messages.invalid_api_key = "Forbidden key.";
  options.messages.invalid_basic = "Who are you?";
  options.basic_realm = "registrar";
  MockServer server(options);
  CHECK(exchange(server, "GET", "/students/v2/students/7654321", good()).body_json()["message"] ==
        "No such student.");
  CHECK(exchange(server, "GET", ana, without(good(), "x-api-key")).body_json()["detail"] == "Forbidden key.");
  const auto denied = exchange(server, "GET", ana, without(good(), "Authorization"));
  CHECK(denied.body_json()["message"] == "Who are you?");
  CHECK(denied.header("www-authenticate") == "Basic realm=\"registrar\"");
}

TEST_CASE("mock rule 14: /conversation takes any method with the API key alone", "[mock_rules]") {
  MockServer server;
  for (const std::string method : {"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}) {
    INFO(method);
    const auto r = exchange(server, method, "/conversation/t?a=1", {{"x-api-key", "mock-api-key"}});
    CHECK(r.status == 200);
    CHECK(r.body_json()["method"] == method);
    CHECK(r.body_json()["query"] == json{{"a", "1"}});
  }
}

}  // namespace mock_rules_test

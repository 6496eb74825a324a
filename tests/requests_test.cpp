// Unit tests for requests.hpp: the URL, method, headers and limits of each
// call's HttpRequest, and the input checks that run before anything is built.
//
// URL rule under test: the calls' paths (/students/v2/students/... and
// /conversation) are appended to whatever path prefix the base URL has; the
// base URL's trailing slashes are dropped first. The SDK does not add or
// remove the interface's declared base path `/students` on its own.

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/credential_provider.hpp>
#include <studentsvc/requests.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace requests_test {

using namespace std::chrono_literals;
using studentsvc::CallOptions;
using studentsvc::ClientOptions;
using studentsvc::ConversationRequest;
using studentsvc::ErrorKind;
using studentsvc::HttpRequest;

namespace {

constexpr const char* api_key = "KEY-canary-4e1f";

studentsvc::detail::BaseUrl parse(std::string_view url) {
  auto b = studentsvc::detail::parse_base_url(url, true);
  if (!b) FAIL("base URL " << url << ": " << b.error().message);
  return *b;
}

ClientOptions options() {
  ClientOptions o;
  o.base_url = "https://api.example.edu";
  o.auth.api_key = api_key;
  return o;
}

HttpRequest get_ok(std::string_view base, std::string_view perm = "1234567", const ClientOptions& o = options(),
                   const CallOptions& call = {}) {
  auto r = studentsvc::build_get_student_request(parse(base), o, perm, call);
  if (!r) FAIL("build_get_student_request: " << r.error().message);
  return *r;
}

HttpRequest current_ok(std::string_view base, std::string_view jwt = "jwt", const ClientOptions& o = options(),
                       const CallOptions& call = {}) {
  auto r = studentsvc::build_current_student_request(parse(base), o, jwt, call);
  if (!r) FAIL("build_current_student_request: " << r.error().message);
  return *r;
}

HttpRequest conversation_ok(std::string_view base, const ConversationRequest& c = {},
                            const ClientOptions& o = options()) {
  auto r = studentsvc::build_conversation_request(parse(base), o, c);
  if (!r) FAIL("build_conversation_request: " << r.error().message);
  return *r;
}

std::string header(const HttpRequest& r, std::string_view name) {
  const auto v = r.headers.find(name);
  return v ? std::string(*v) : std::string("<absent>");
}

void check_invalid(const studentsvc::Result<HttpRequest>& r, std::string_view must_not_contain = {}) {
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::invalid_argument);
  CHECK(r.error().status == 0);
  CHECK(r.error().attempts == 0);
  CHECK_THAT(r.error().message, !Catch::Contains(api_key));
  if (!must_not_contain.empty()) CHECK_THAT(r.error().message, !Catch::Contains(std::string(must_not_contain)));
}

}  // namespace

TEST_CASE("get_student URL for base URLs with and without a prefix", "[requests]") {
  struct Case {
    const char* base;
    const char* url;
  };
  const auto c = GENERATE(
      Case{"https://api.example.edu", "https://api.example.edu/students/v2/students/1234567"},
      Case{"https://api.example.edu/", "https://api.example.edu/students/v2/students/1234567"},
      Case{"https://api.example.edu///", "https://api.example.edu/students/v2/students/1234567"},
      Case{"https://api.example.edu/students", "https://api.example.edu/students/students/v2/students/1234567"},
      Case{"https://api.example.edu/students/", "https://api.example.edu/students/students/v2/students/1234567"},
      Case{"https://api.example.edu/gw/v1//", "https://api.example.edu/gw/v1/students/v2/students/1234567"},
      Case{"https://api.example.edu:8443", "https://api.example.edu:8443/students/v2/students/1234567"},
      Case{"HTTPS://api.example.edu/Api", "https://api.example.edu/Api/students/v2/students/1234567"},
      Case{"http://127.0.0.1:8080", "http://127.0.0.1:8080/students/v2/students/1234567"},
      Case{"http://[::1]:9000/x/", "http://[::1]:9000/x/students/v2/students/1234567"});
  CAPTURE(c.base);
  CHECK(get_ok(c.base).url == c.url);
  CHECK(get_ok(c.base).method == "GET");
  CHECK(get_ok(c.base).body.empty());
}

TEST_CASE("current_student URL", "[requests]") {
  CHECK(current_ok("https://api.example.edu").url == "https://api.example.edu/students/v2/students/current");
  CHECK(current_ok("https://api.example.edu/students/").url ==
        "https://api.example.edu/students/students/v2/students/current");
  CHECK(current_ok("https://api.example.edu/").method == "GET");
}

TEST_CASE("conversation URL, method, query and body", "[requests]") {
  SECTION("defaults: GET /conversation, no body, no Content-Type") {
    const auto r = conversation_ok("https://api.example.edu");
    CHECK(r.url == "https://api.example.edu/conversation");
    CHECK(r.method == "GET");
    CHECK(r.body.empty());
    CHECK_FALSE(r.headers.contains("Content-Type"));
  }
  SECTION("prefix") {
    CHECK(conversation_ok("https://api.example.edu/students/").url == "https://api.example.edu/students/conversation");
  }
  SECTION("sub-path and query are encoded") {
    ConversationRequest c;
    c.method = "POST";
    c.sub_path = "/threads/a b/";
    c.query = {{"page", "2"}, {"q", "x&y=z"}};
    c.body = R"({"text":"hi"})";
    const auto r = conversation_ok("https://api.example.edu", c);
    CHECK(r.url == "https://api.example.edu/conversation/threads/a%20b?page=2&q=x%26y%3Dz");
    CHECK(r.method == "POST");
    CHECK(r.body == R"({"text":"hi"})");
    CHECK(header(r, "Content-Type") == "application/json");
  }
  SECTION("an explicit content type is kept") {
    ConversationRequest c;
    c.method = "PUT";
    c.body = "a=1";
    c.content_type = "application/x-www-form-urlencoded";
    CHECK(header(conversation_ok("https://api.example.edu", c), "Content-Type") ==
          "application/x-www-form-urlencoded");
  }
  SECTION("a content type without a body is still sent") {
    ConversationRequest c;
    c.content_type = "text/plain";
    CHECK(header(conversation_ok("https://api.example.edu", c), "Content-Type") == "text/plain");
  }
  SECTION("any method token") {
    for (const char* m : {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "X-CUSTOM"}) {
      ConversationRequest c;
      c.method = m;
      CHECK(conversation_ok("https://api.example.edu", c).method == m);
    }
  }
}

TEST_CASE("get_student headers, exactly the table's", "[requests]") {
  auto o = options();
  o.auth.basic = studentsvc::BasicCredential{"Aladdin", "open sesame"};
  CallOptions call;
  call.user_jwt = "JWT.opaque.value";
  const auto r = get_ok("https://api.example.edu", "1234567", o, call);
  CHECK(header(r, "x-api-key") == api_key);
  CHECK(header(r, "svc-api-key") == api_key);
  CHECK(header(r, "Authorization") == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  CHECK(header(r, "svc-user-jwt") == "JWT.opaque.value");
  CHECK(header(r, "svc-api-version") == "2.0");
  CHECK(header(r, "Accept") == "application/json, text/json");
  CHECK(header(r, "User-Agent") == "studentsvc-cpp/" STUDENTSVC_VERSION_STRING);
  CHECK(r.headers.size() == 7);
  CHECK_FALSE(r.headers.contains("Content-Type"));
}

TEST_CASE("get_student without optional credentials", "[requests]") {
  const auto r = get_ok("https://api.example.edu");
  CHECK(header(r, "x-api-key") == api_key);
  CHECK(header(r, "svc-api-key") == api_key);
  CHECK_FALSE(r.headers.contains("Authorization"));
  CHECK_FALSE(r.headers.contains("svc-user-jwt"));
  CHECK(header(r, "svc-api-version") == "2.0");
  CHECK(header(r, "Accept") == "application/json, text/json");
  CHECK(header(r, "User-Agent") == std::string(studentsvc::user_agent));
  CHECK(r.headers.size() == 5);
}

TEST_CASE("svc-api-key modes on the student calls", "[requests]") {
  auto o = options();
  SECTION("custom") {
    o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
    o.auth.svc_api_key = "svc-other";
    CHECK(header(get_ok("https://h", "1234567", o), "svc-api-key") == "svc-other");
    CHECK(header(current_ok("https://h", "jwt", o), "svc-api-key") == "svc-other");
  }
  SECTION("off") {
    o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::off;
    CHECK_FALSE(get_ok("https://h", "1234567", o).headers.contains("svc-api-key"));
    CHECK_FALSE(current_ok("https://h", "jwt", o).headers.contains("svc-api-key"));
  }
}

TEST_CASE("current_student headers", "[requests]") {
  auto o = options();
  o.auth.basic = studentsvc::BasicCredential{"test", "123\xC2\xA3"};
  const auto r = current_ok("https://api.example.edu", "header.payload.sig", o);
  CHECK(header(r, "x-api-key") == api_key);
  CHECK(header(r, "svc-api-key") == api_key);
  CHECK(header(r, "Authorization") == "Basic dGVzdDoxMjPCow==");
  CHECK(header(r, "svc-user-jwt") == "header.payload.sig");
  CHECK(header(r, "svc-api-version") == "2.0");
  CHECK(header(r, "Accept") == "application/json, text/json");
  CHECK(header(r, "User-Agent") == std::string(studentsvc::user_agent));
  CHECK(r.headers.size() == 7);
}

TEST_CASE("conversation headers: x-api-key, Accept application/json, User-Agent only", "[requests]") {
  auto o = options();
  o.auth.basic = studentsvc::BasicCredential{"id", "pw"};
  o.api_version = "2.3";
  ConversationRequest c;
  c.call.user_jwt = "jwt-not-for-conversation";
  c.call.api_version = "7.0";
  const auto r = conversation_ok("https://api.example.edu", c, o);
  CHECK(header(r, "x-api-key") == api_key);
  CHECK(header(r, "Accept") == "application/json");
  CHECK(header(r, "User-Agent") == std::string(studentsvc::user_agent));
  CHECK(r.headers.size() == 3);
  CHECK_FALSE(r.headers.contains("svc-api-key"));
  CHECK_FALSE(r.headers.contains("Authorization"));
  CHECK_FALSE(r.headers.contains("svc-user-jwt"));
  CHECK_FALSE(r.headers.contains("svc-api-version"));
}

TEST_CASE("svc-api-version: default, configured, per-call override", "[requests]") {
  auto o = options();
  CHECK(header(get_ok("https://h"), "svc-api-version") == "2.0");
  o.api_version = "2.1";
  CHECK(header(get_ok("https://h", "1234567", o), "svc-api-version") == "2.1");
  CHECK(header(current_ok("https://h", "jwt", o), "svc-api-version") == "2.1");
  CallOptions call;
  call.api_version = "1.0";
  CHECK(header(get_ok("https://h", "1234567", o, call), "svc-api-version") == "1.0");
  CHECK(header(current_ok("https://h", "jwt", o, call), "svc-api-version") == "1.0");
}

TEST_CASE("the perm is checked before anything is built", "[requests]") {
  const auto base = parse("https://api.example.edu");
  for (const std::string& perm :
       {std::string(""), std::string("123456"), std::string("12345678"), std::string("12345a7"),
        std::string("../../x"), std::string("123%2F5"), std::string("current"), std::string(" 123456"),
        std::string("\xD9\xA1\xD9\xA2\xD9\xA3\xD9\xA4\xD9\xA5\xD9\xA6\xD9\xA7"), std::string("123456\n"),
        std::string("1234567\r\nX: y")}) {
    CAPTURE(perm);
    check_invalid(studentsvc::build_get_student_request(base, options(), perm), perm.empty() ? "" : perm);
  }
}

TEST_CASE("the current-student JWT is required", "[requests]") {
  check_invalid(studentsvc::build_current_student_request(parse("https://h"), options(), ""));
}

TEST_CASE("an empty per-call JWT on get_student is refused, not silently dropped", "[requests]") {
  CallOptions call;
  call.user_jwt = "";
  check_invalid(studentsvc::build_get_student_request(parse("https://h"), options(), "1234567", call));
}

TEST_CASE("control characters (CR, LF, NUL, ESC, DEL, ...) in any header value are refused and never echoed", "[requests]") {
  const std::string injected = GENERATE(as<std::string>{}, "a\rb", "a\nb", "a\r\nX-Evil: 1", std::string("a\0b", 3),
                                        "a\x01" "b", "a\x1b[31mb", "a\x1f" "b", "a\x7f" "b", "a\vb", "a\fb");
  const std::string canary = "INJ-canary-" + injected;
  const auto base = parse("https://h");
  SECTION("API key") {
    auto o = options();
    o.auth.api_key = canary;
    check_invalid(studentsvc::build_get_student_request(base, o, "1234567"), "INJ-canary");
    check_invalid(studentsvc::build_current_student_request(base, o, "jwt"), "INJ-canary");
    check_invalid(studentsvc::build_conversation_request(base, o, {}), "INJ-canary");
  }
  SECTION("custom svc-api-key") {
    auto o = options();
    o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
    o.auth.svc_api_key = canary;
    check_invalid(studentsvc::build_get_student_request(base, o, "1234567"), "INJ-canary");
  }
  SECTION("JWT, per call and for current") {
    CallOptions call;
    call.user_jwt = canary;
    check_invalid(studentsvc::build_get_student_request(base, options(), "1234567", call), "INJ-canary");
    check_invalid(studentsvc::build_current_student_request(base, options(), canary), "INJ-canary");
  }
  SECTION("API version, client-wide and per call") {
    auto o = options();
    o.api_version = canary;
    check_invalid(studentsvc::build_get_student_request(base, o, "1234567"), "INJ-canary");
    CallOptions call;
    call.api_version = canary;
    check_invalid(studentsvc::build_current_student_request(base, options(), "jwt", call), "INJ-canary");
  }
  SECTION("conversation content type") {
    ConversationRequest c;
    c.body = "{}";
    c.content_type = canary;
    check_invalid(studentsvc::build_conversation_request(base, options(), c), "INJ-canary");
  }
}

TEST_CASE("an empty API version or API key is refused", "[requests]") {
  const auto base = parse("https://h");
  auto o = options();
  o.api_version = "";
  check_invalid(studentsvc::build_get_student_request(base, o, "1234567"));
  CallOptions call;
  call.api_version = "";
  check_invalid(studentsvc::build_current_student_request(base, options(), "jwt", call));
  auto no_key = options();
  no_key.auth.api_key = "";
  check_invalid(studentsvc::build_get_student_request(base, no_key, "1234567"));
  check_invalid(studentsvc::build_conversation_request(base, no_key, {}));
}

TEST_CASE("a blank or whitespace-padded JWT, API key or credential is refused, never dropped", "[requests]") {
  const auto base = parse("https://h");
  for (const std::string bad : {" ", "\t", " \t ", " jwt", "jwt\t"}) {
    CAPTURE(bad);
    CallOptions call;
    call.user_jwt = bad;
    check_invalid(studentsvc::build_get_student_request(base, options(), "1234567", call));
    check_invalid(studentsvc::build_current_student_request(base, options(), bad));
    auto key = options();
    key.auth.api_key = bad;
    check_invalid(studentsvc::build_get_student_request(base, key, "1234567"));
    check_invalid(studentsvc::build_conversation_request(base, key, {}));
    auto version = options();
    version.api_version = bad;
    check_invalid(studentsvc::build_get_student_request(base, version, "1234567"));
  }
  auto basic = options();
  basic.auth.basic = studentsvc::BasicCredential{"netid", " \t"};
  check_invalid(studentsvc::build_get_student_request(base, basic, "1234567"));
  basic.auth.basic = studentsvc::BasicCredential{"netid", ""};
  check_invalid(studentsvc::build_get_student_request(base, basic, "1234567"));
  basic.auth.basic = studentsvc::BasicCredential{" ", "pw"};
  check_invalid(studentsvc::build_get_student_request(base, basic, "1234567"));
  // Inside a value, spaces and tabs are content, sent as they are.
  basic.auth.basic = studentsvc::BasicCredential{"net id", " pass word "};
  CallOptions call;
  call.user_jwt = "a b\tc";
  const auto ok = get_ok("https://h", "1234567", basic, call);
  CHECK(ok.headers.find("svc-user-jwt") == "a b\tc");
  CHECK(ok.headers.find("Authorization") == studentsvc::basic_authorization_value("net id", " pass word "));
}

TEST_CASE("a value over its cap is invalid_argument naming it and saying nothing was sent", "[requests][limits]") {
  const auto base = parse("https://h");
  const std::string huge(1024 * 1024, 'x');
  const auto refused = [](const studentsvc::Result<HttpRequest>& r, std::string_view names) {
    check_invalid(r);
    CHECK_THAT(r.error().message, Catch::Contains(std::string(names)) && Catch::Contains("nothing was sent") &&
                                      Catch::Contains("16384-byte cap"));
    CHECK(r.error().message.size() < 200);  // the value is never in it
  };
  SECTION("API key") {
    auto o = options();
    o.auth.api_key = huge;
    refused(studentsvc::build_get_student_request(base, o, "1234567"), "API key");
    refused(studentsvc::build_conversation_request(base, o, {}), "API key");
  }
  SECTION("svc-api-key") {
    auto o = options();
    o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
    o.auth.svc_api_key = huge;
    refused(studentsvc::build_get_student_request(base, o, "1234567"), "svc-api-key");
  }
  SECTION("JWT") {
    CallOptions call;
    call.user_jwt = huge;
    refused(studentsvc::build_get_student_request(base, options(), "1234567", call), "JWT");
    refused(studentsvc::build_current_student_request(base, options(), huge), "JWT");
  }
  SECTION("password") {
    auto o = options();
    o.auth.basic = studentsvc::BasicCredential{"netid", huge};
    refused(studentsvc::build_get_student_request(base, o, "1234567"), "password");
  }
  SECTION("api_version") {
    auto o = options();
    o.api_version = huge;
    refused(studentsvc::build_get_student_request(base, o, "1234567"), "api_version");
    CallOptions call;
    call.api_version = huge;
    refused(studentsvc::build_get_student_request(base, options(), "1234567", call), "api_version");
  }
  SECTION("content_type") {
    ConversationRequest c;
    c.body = "{}";
    c.content_type = huge;
    refused(studentsvc::build_conversation_request(base, options(), c), "content_type");
  }
  SECTION("sub_path and query: the URL cap") {
    ConversationRequest c;
    c.sub_path = huge;
    const auto r = studentsvc::build_conversation_request(base, options(), c);
    check_invalid(r);
    CHECK_THAT(r.error().message, Catch::Contains("sub_path") && Catch::Contains("8192-byte cap") &&
                                      Catch::Contains("nothing was sent"));
    ConversationRequest q;
    q.query = {{"q", huge}};
    check_invalid(studentsvc::build_conversation_request(base, options(), q));
    // Just under the cap is built.
    ConversationRequest fits;
    fits.sub_path = std::string(studentsvc::max_request_url_bytes - std::string("https://h/conversation/").size(), 's');
    CHECK(studentsvc::build_conversation_request(base, options(), fits));
  }
  SECTION("exactly at the cap is sent") {
    auto o = options();
    o.auth.api_key = std::string(studentsvc::max_header_value_bytes, 'k');
    CHECK(studentsvc::build_get_student_request(base, o, "1234567"));
  }
}

TEST_CASE("conversation input checks", "[requests]") {
  const auto base = parse("https://h");
  SECTION("method must be a token") {
    for (const char* m : {"", "GET /x", "GE\rT", "P\nOST", "G(E)T"}) {
      CAPTURE(m);
      ConversationRequest c;
      c.method = m;
      check_invalid(studentsvc::build_conversation_request(base, options(), c));
    }
  }
  SECTION("'.' and '..' segments cannot climb out of /conversation") {
    for (const char* p : {"..", "../students/v2/students/1234567", "a/../../x", "./a"}) {
      CAPTURE(p);
      ConversationRequest c;
      c.sub_path = p;
      check_invalid(studentsvc::build_conversation_request(base, options(), c));
    }
  }
}

TEST_CASE("limits: client values, then per-call overrides", "[requests]") {
  auto o = options();
  o.connect_timeout = 1500ms;
  o.timeout = 2500ms;
  o.max_response_bytes = 1000;
  const auto r = get_ok("https://h", "1234567", o);
  CHECK(r.connect_timeout == 1500ms);
  CHECK(r.timeout == 2500ms);
  CHECK(r.max_response_bytes == 1000);
  CallOptions call;
  call.timeout = 100ms;
  const auto c = current_ok("https://h", "jwt", o, call);
  CHECK(c.timeout == 100ms);
  CHECK(c.connect_timeout == 1500ms);
}

TEST_CASE("zero or negative timeouts and max_total_time are refused before anything is built", "[requests]") {
  using std::chrono::milliseconds;
  const auto base = parse("https://h");
  const milliseconds bad = GENERATE(milliseconds{0}, milliseconds{-1}, milliseconds::min());
  CAPTURE(bad.count());
  auto check_all = [&](const ClientOptions& o, const CallOptions& call, std::string_view names) {
    ConversationRequest c;
    c.call = call;
    for (const auto& r : {studentsvc::build_get_student_request(base, o, "1234567", call),
                          studentsvc::build_current_student_request(base, o, "jwt", call),
                          studentsvc::build_conversation_request(base, o, c)}) {
      check_invalid(r);
      if (!r) CHECK_THAT(r.error().message, Catch::Contains(std::string(names)));
    }
  };
  SECTION("ClientOptions::connect_timeout") {
    auto o = options();
    o.connect_timeout = bad;
    check_all(o, {}, "connect_timeout");
  }
  SECTION("ClientOptions::timeout") {
    auto o = options();
    o.timeout = bad;
    check_all(o, {}, "timeout");
  }
  SECTION("CallOptions::connect_timeout") {
    CallOptions call;
    call.connect_timeout = bad;
    check_all(options(), call, "connect_timeout");
  }
  SECTION("CallOptions::timeout") {
    CallOptions call;
    call.timeout = bad;
    check_all(options(), call, "timeout");
  }
  SECTION("ClientOptions::retry.max_total_time") {
    auto o = options();
    o.retry.max_total_time = bad;
    check_all(o, {}, "max_total_time");
  }
  SECTION("CallOptions::retry max_total_time") {
    CallOptions call;
    call.retry = studentsvc::RetryPolicy{};
    call.retry->max_total_time = bad;
    check_all(options(), call, "max_total_time");
  }
  SECTION("a good per-call value does not excuse a bad client value it does not replace") {
    auto o = options();
    o.connect_timeout = bad;
    CallOptions call;
    call.timeout = 5s;
    check_all(o, call, "connect_timeout");
  }
}

TEST_CASE("a bad client timeout is fine when the call replaces it", "[requests]") {
  auto o = options();
  o.timeout = std::chrono::milliseconds{0};
  o.retry.max_total_time = std::chrono::milliseconds{0};
  CallOptions call;
  call.timeout = 700ms;
  call.retry = studentsvc::RetryPolicy{};
  const auto r = get_ok("https://h", "1234567", o, call);
  CHECK(r.timeout == 700ms);
  // milliseconds::max() is "no bound", a valid value.
  call.retry->max_total_time = std::chrono::milliseconds::max();
  CHECK(get_ok("https://h", "1234567", o, call).timeout == 700ms);
}

TEST_CASE("max_response_header_bytes: client value, per-call override, zero refused", "[requests]") {
  auto o = options();
  CHECK(get_ok("https://h", "1234567", o).max_response_header_bytes == studentsvc::default_max_response_header_bytes);
  o.max_response_header_bytes = 4096;
  CHECK(get_ok("https://h", "1234567", o).max_response_header_bytes == 4096);
  CHECK(current_ok("https://h", "jwt", o).max_response_header_bytes == 4096);
  CHECK(conversation_ok("https://h", {}, o).max_response_header_bytes == 4096);
  CallOptions call;
  call.max_response_header_bytes = 512;
  CHECK(get_ok("https://h", "1234567", o, call).max_response_header_bytes == 512);
  CHECK(current_ok("https://h", "jwt", o, call).max_response_header_bytes == 512);
  ConversationRequest c;
  c.call = call;
  CHECK(conversation_ok("https://h", c, o).max_response_header_bytes == 512);

  const auto base = parse("https://h");
  SECTION("zero in ClientOptions") {
    o.max_response_header_bytes = 0;
    check_invalid(studentsvc::build_get_student_request(base, o, "1234567"));
    check_invalid(studentsvc::build_conversation_request(base, o, {}));
  }
  SECTION("zero in CallOptions") {
    call.max_response_header_bytes = 0;
    check_invalid(studentsvc::build_current_student_request(base, o, "jwt", call));
    c.call = call;
    check_invalid(studentsvc::build_conversation_request(base, o, c));
  }
}

TEST_CASE("the conversation's idempotent flag reaches the HttpRequest, and student lookups are idempotent",
          "[requests]") {
  ConversationRequest c;
  c.method = "POST";
  c.body = "{}";
  CHECK_FALSE(c.idempotent);
  CHECK_FALSE(conversation_ok("https://h", c).idempotent);  // never replayed by the transport
  c.idempotent = true;
  CHECK(conversation_ok("https://h", c).idempotent);
  CHECK(get_ok("https://h").idempotent);
  CHECK(current_ok("https://h").idempotent);
}

TEST_CASE("traceparent: off by default, nothing is sent", "[requests][trace]") {
  CHECK_FALSE(get_ok("https://h").headers.contains("traceparent"));
  CHECK_FALSE(current_ok("https://h").headers.contains("traceparent"));
  CHECK_FALSE(conversation_ok("https://h").headers.contains("traceparent"));
}

TEST_CASE("traceparent: with send_traceparent every request gets a fresh valid one", "[requests][trace]") {
  auto o = options();
  o.send_traceparent = true;
  const auto a = get_ok("https://h", "1234567", o);
  const auto b = current_ok("https://h", "jwt", o);
  const auto c = conversation_ok("https://h", {}, o);
  std::vector<std::string> seen;
  for (const auto* r : {&a, &b, &c}) {
    const auto v = r->headers.find("traceparent");
    REQUIRE(v);
    CAPTURE(*v);
    CHECK(studentsvc::detail::is_valid_traceparent(*v));
    CHECK(v->starts_with("00-"));
    CHECK(v->ends_with("-01"));  // sampled
    seen.emplace_back(*v);
  }
  CHECK(seen[0].substr(3, 32) != seen[1].substr(3, 32));  // a new trace per request
  CHECK(seen[1] != seen[2]);
}

TEST_CASE("traceparent: the caller's value joins the caller's trace, checked first", "[requests][trace]") {
  const std::string theirs = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  CallOptions call;
  call.traceparent = theirs;
  CHECK(get_ok("https://h", "1234567", options(), call).headers.find("traceparent") ==
        std::optional<std::string_view>(theirs));
  ConversationRequest conv;
  conv.call.traceparent = theirs;
  CHECK(conversation_ok("https://h", conv).headers.find("traceparent") == std::optional<std::string_view>(theirs));

  const std::string bad = GENERATE(std::string(""), std::string("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                                   std::string("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
                                   std::string("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"),
                                   std::string("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"),
                                   std::string("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nX: y"),
                                   std::string("00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  CAPTURE(bad);
  call.traceparent = bad;
  auto r = studentsvc::build_get_student_request(parse("https://h"), options(), "1234567", call);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::invalid_argument);
  CHECK_THAT(r.error().message, Catch::Contains("traceparent"));
}

TEST_CASE("a Client's prebuilt student headers give the same request, or the same error, as building them anew",
          "[requests]") {
  using studentsvc::detail::build_get_student;
  using studentsvc::detail::build_student_request;
  using studentsvc::detail::ClientLimits;
  auto o = options();
  SECTION("API key only") {}
  SECTION("Basic") { o.auth.basic = studentsvc::BasicCredential{"Aladdin", "open sesame"}; }
  SECTION("custom svc-api-key") {
    o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
    o.auth.svc_api_key = "svc-other";
  }
  SECTION("no svc-api-key, trace context on") {
    o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::off;
    o.send_traceparent = true;
  }
  const auto prebuilt = studentsvc::detail::prebuild_student_headers(o);
  REQUIRE(prebuilt);
  const auto base = parse("https://api.example.edu/prefix");
  const auto same = [&](const studentsvc::Result<HttpRequest>& fresh, const studentsvc::Result<HttpRequest>& fast) {
    REQUIRE(fresh.has_value() == fast.has_value());
    if (!fresh) {
      CHECK(fast.error().kind == fresh.error().kind);
      CHECK(fast.error().message == fresh.error().message);
      return;
    }
    CHECK(fast->url == fresh->url);
    CHECK(fast->timeout == fresh->timeout);
    CHECK(fast->max_response_bytes == fresh->max_response_bytes);
    std::vector<std::pair<std::string, std::string>> a(fresh->headers.begin(), fresh->headers.end());
    std::vector<std::pair<std::string, std::string>> b(fast->headers.begin(), fast->headers.end());
    if (o.send_traceparent) {  // a fresh one each time: compare its presence, then the rest in order
      CHECK(fast->headers.contains("traceparent"));
      std::erase_if(a, [](const auto& f) { return f.first == "traceparent"; });
      std::erase_if(b, [](const auto& f) { return f.first == "traceparent"; });
    }
    CHECK(b == a);  // the same fields in the same order
  };
  CallOptions call;
  const std::string jwt = GENERATE(as<std::string>{}, "", "header.payload.sig", "bad\r\nX-Evil: 1");
  CAPTURE(jwt);
  if (!jwt.empty()) call.user_jwt = jwt;
  SECTION("the client's version and limits") {}
  SECTION("a call's own version, timeout and trace context") {
    call.api_version = "3.1";
    call.timeout = 5s;
    call.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  }
  same(build_get_student(base, o, "1234567", call, ClientLimits::check),
       build_get_student(base, o, "1234567", call, ClientLimits::check, &*prebuilt));
  same(build_student_request(base, o, studentsvc::Endpoint::current_student, "/students/v2/students/current", jwt,
                             call, ClientLimits::check),
       build_student_request(base, o, studentsvc::Endpoint::current_student, "/students/v2/students/current", jwt,
                             call, ClientLimits::check, &*prebuilt));
}

TEST_CASE("no prebuilt student headers when they change per call or cannot be built", "[requests]") {
  auto o = options();
  SECTION("a credential provider is asked on every request") {
    struct Fixed final : studentsvc::CredentialProvider {
      studentsvc::Result<studentsvc::Credentials> credentials() override {
        return studentsvc::Credentials{.api_key = api_key, .svc_api_key = {}, .network_id = {}, .password = {}};
      }
    };
    o.auth.provider = std::make_shared<Fixed>();
  }
  SECTION("no API key") { o.auth.api_key = ""; }
  SECTION("a ':' in the network id") { o.auth.basic = studentsvc::BasicCredential{"a:b", "pw"}; }
  SECTION("a control character in the API key") { o.auth.api_key = "key\r\nX: 1"; }
  SECTION("an empty version") { o.api_version = ""; }
  CHECK_FALSE(studentsvc::detail::prebuild_student_headers(o));
}

}  // namespace requests_test

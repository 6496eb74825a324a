// Unit tests for client.hpp: Client on FakeTransport, end to end without a network.

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/json.hpp>  // RawResponse::json()
#include <studentsvc/version.hpp>
#include <studentsvc/testing/fake_transport.hpp>

using namespace std::chrono_literals;
using studentsvc::CallOptions;
using studentsvc::Client;
using studentsvc::ClientOptions;
using studentsvc::ConversationRequest;
using studentsvc::ErrorKind;
using studentsvc::Headers;
using studentsvc::testing::FakeTransport;

#include "support/log_capture.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace client_test {

namespace {

using studentsvc::test::LogCapture;

// Canary values: none of them may ever show up in a log line.
constexpr const char* api_key = "APIKEY-canary-a1b2c3";
constexpr const char* svc_key = "SVCKEY-canary-d4e5f6";
constexpr const char* network_id = "NETID-canary";
constexpr const char* password = "PASSWORD-canary-778899";
constexpr const char* jwt = "JWT-canary.eyJzdWIiOiJ4In0.sig";
constexpr const char* perm = "8675309";

constexpr const char* student_body = R"({"perm":"8675309","firstName":"FIRST-canary","lastName":"LAST-canary",
  "suffix":"SUFFIX-canary","email":"EMAIL-canary@example.edu","firstNameLegal":"LEGAL-canary",
  "middleName":"MIDDLE-canary","gender":"GENDER-canary","birthDate":"19990101","nfr":true,
  "internationalStudentCode":"INTL-canary","firstCensusQuarter":"FCQ-canary","lastCensusQuarter":"LCQ-canary",
  "lastRegisteredQuarter":"LRQ-canary","admitLevel":"ADMIT-canary","admitQuarter":"AQ-canary",
  "pronounCode":"PRONOUN-canary"})";

struct Setup {
  std::shared_ptr<FakeTransport> fake = std::make_shared<FakeTransport>();
  ClientOptions options;
  Setup() {
    options.base_url = "https://api.example.edu";
    options.auth.api_key = api_key;
    options.transport = fake;
    options.retry.initial_backoff = 0ms;
    options.retry.max_backoff = 0ms;
    options.retry.jitter_seed = 3;
  }
  [[nodiscard]] Client client() const { return Client(options); }
};

void check_invalid_and_unsent(const studentsvc::ApiError& e, const FakeTransport& fake) {
  CHECK(e.kind == ErrorKind::invalid_argument);
  CHECK(e.status == 0);
  CHECK(e.attempts == 0);
  CHECK(fake.request_count() == 0);
}

}  // namespace

TEST_CASE("get_student: the straight path", "[client]") {
  Setup s;
  s.fake->respond(200, student_body);
  auto r = s.client().get_student(perm);
  REQUIRE(r);
  CHECK(r->perm == perm);
  CHECK(r->first_name == "FIRST-canary");
  CHECK(r->release_status() == studentsvc::ReleaseStatus::not_for_release);
  REQUIRE(s.fake->request_count() == 1);
  const auto sent = s.fake->last_request();
  CHECK(sent.method == "GET");
  CHECK(sent.url == "https://api.example.edu/students/v2/students/8675309");
  CHECK(sent.headers.find("x-api-key") == std::optional<std::string_view>(api_key));
  CHECK(sent.headers.find("svc-api-key") == std::optional<std::string_view>(api_key));
  CHECK(sent.headers.find("svc-api-version") == std::optional<std::string_view>("2.0"));
  CHECK(sent.headers.find("Accept") == std::optional<std::string_view>("application/json, text/json"));
  CHECK(sent.headers.find("User-Agent") == std::optional<std::string_view>(studentsvc::user_agent));
  CHECK_FALSE(sent.headers.contains("svc-user-jwt"));
}

TEST_CASE("get_student with a per-call JWT", "[client]") {
  Setup s;
  s.fake->respond(200, student_body);
  CallOptions call;
  call.user_jwt = jwt;
  auto r = s.client().get_student(perm, call);
  REQUIRE(r);
  CHECK(s.fake->last_request().headers.find("svc-user-jwt") == std::optional<std::string_view>(jwt));
}

TEST_CASE("a Client sends exactly the headers build_*_request builds, in order, with each credential setting",
          "[client]") {
  Setup s;
  SECTION("API key") {}
  SECTION("Basic, custom svc-api-key") {
    s.options.auth.basic = studentsvc::BasicCredential{"NETID-canary", password};
    s.options.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
    s.options.auth.svc_api_key = "SVC-canary";
  }
  CallOptions call;
  SECTION("the client's version") {}
  SECTION("a call's own version and JWT") {
    call.api_version = "3.0";
    call.user_jwt = jwt;
  }
  const auto base = studentsvc::detail::parse_base_url(s.options.base_url, false);
  REQUIRE(base);
  s.fake->respond(200, student_body);
  s.fake->respond(200, student_body);
  const auto client = s.client();
  REQUIRE(client.get_student(perm, call));
  const auto built = studentsvc::build_get_student_request(*base, s.options, perm, call);
  REQUIRE(built);
  CHECK(s.fake->last_request().headers == built->headers);
  REQUIRE(client.current_student(jwt, call));
  const auto built_current = studentsvc::build_current_student_request(*base, s.options, jwt, call);
  REQUIRE(built_current);
  CHECK(s.fake->last_request().headers == built_current->headers);
}

TEST_CASE("current_student: the straight path, minimal fields only", "[client]") {
  Setup s;
  s.fake->respond(200, student_body);
  auto r = s.client().current_student(jwt);
  REQUIRE(r);
  CHECK(r->perm == perm);
  CHECK(r->email == "EMAIL-canary@example.edu");
  CHECK_FALSE(r->first_name_legal);
  CHECK_FALSE(r->nfr);
  const auto sent = s.fake->last_request();
  CHECK(sent.url == "https://api.example.edu/students/v2/students/current");
  CHECK(sent.headers.find("svc-user-jwt") == std::optional<std::string_view>(jwt));
}

TEST_CASE("conversation: the straight path", "[client]") {
  Setup s;
  s.fake->respond(200, R"({"reply":"hello"})", Headers{{"Content-Type", "application/json"}});
  ConversationRequest c;
  c.method = "POST";
  c.sub_path = "threads";
  c.query = {{"x", "1"}};
  c.body = R"({"text":"hi"})";
  auto r = s.client().conversation(c);
  REQUIRE(r);
  CHECK(r->status == 200);
  auto j = r->json();
  REQUIRE(j);
  CHECK(j->at("reply") == "hello");
  const auto sent = s.fake->last_request();
  CHECK(sent.method == "POST");
  CHECK(sent.url == "https://api.example.edu/conversation/threads?x=1");
  CHECK(sent.body == R"({"text":"hi"})");
  CHECK(sent.headers.find("Accept") == std::optional<std::string_view>("application/json"));
  CHECK_FALSE(sent.headers.contains("svc-api-key"));
}

TEST_CASE("error responses come back as ApiError with attempts", "[client]") {
  Setup s;
  SECTION("404, not retried") {
    s.fake->respond(404, R"({"message":"Student not found"})");
    auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::not_found);
    CHECK(r.error().attempts == 1);
  }
  SECTION("503 three times: retried, attempts counted") {
    for (int i = 0; i < 3; ++i) s.fake->respond(503, "", Headers{{"Retry-After", "0"}});
    auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::http_status);
    CHECK(r.error().status == 503);
    CHECK(r.error().retryable);
    CHECK(r.error().attempts == 3);
    CHECK(r.error().retry_after_ms == 0);
    CHECK(s.fake->request_count() == 3);
  }
  SECTION("transport error, then success") {
    s.fake->fail("connection reset by peer");
    s.fake->respond(200, student_body);
    auto r = s.client().current_student(jwt);
    REQUIRE(r);
    CHECK(s.fake->request_count() == 2);
  }
  SECTION("transport errors to the end") {
    for (int i = 0; i < 3; ++i) s.fake->fail("timeout");
    auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::transport);
    CHECK(r.error().attempts == 3);
  }
  SECTION("conversation is not retried unless marked idempotent") {
    s.fake->respond(503);
    s.fake->respond(200);
    auto r = s.client().conversation({});
    REQUIRE_FALSE(r);
    CHECK(r.error().attempts == 1);
    ConversationRequest idem;
    idem.idempotent = true;
    auto again = s.client().conversation(idem);  // the queued 200 answers
    REQUIRE(again);
    s.fake->clear();
    s.fake->respond(503);
    s.fake->respond(200);
    auto retried = s.client().conversation(idem);
    REQUIRE(retried);
    CHECK(s.fake->request_count() == 2);
  }
  SECTION("2xx that does not decode") {
    s.fake->respond(200, R"({"perm":8675309})");
    auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::decode);
    CHECK(r.error().status == 200);
    CHECK(r.error().attempts == 1);
  }
}

TEST_CASE("nothing is sent on bad input", "[client]") {
  Setup s;
  s.fake->respond(200, student_body);  // would answer, if anything were sent
  SECTION("perm not 7 ASCII digits") {
    for (const char* bad : {"", "123456", "12345678", "12a4567", "../1234", "\xD9\xA1\xD9\xA2\xD9\xA3"}) {
      auto r = s.client().get_student(bad);
      REQUIRE_FALSE(r);
      check_invalid_and_unsent(r.error(), *s.fake);
    }
  }
  SECTION("empty JWT for current_student") {
    auto r = s.client().current_student("");
    REQUIRE_FALSE(r);
    check_invalid_and_unsent(r.error(), *s.fake);
  }
  SECTION("empty per-call JWT for get_student") {
    CallOptions call;
    call.user_jwt = "";
    auto r = s.client().get_student(perm, call);
    REQUIRE_FALSE(r);
    check_invalid_and_unsent(r.error(), *s.fake);
  }
  SECTION("a control character (CR, LF, NUL, other C0, DEL) in a header value") {
    const std::string bad = GENERATE(as<std::string>{}, "x\ry", "x\ny", std::string("x\0y", 3), "x\x01y", "x\x1by",
                                     "x\x1fy", "x\x7fy", "x\vy");
    SECTION("API key") {
      s.options.auth.api_key = bad;
      auto r = s.client().get_student(perm);
      REQUIRE_FALSE(r);
      check_invalid_and_unsent(r.error(), *s.fake);
      auto c = s.client().conversation({});
      REQUIRE_FALSE(c);
      check_invalid_and_unsent(c.error(), *s.fake);
    }
    SECTION("custom svc-api-key") {
      s.options.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
      s.options.auth.svc_api_key = bad;
      auto r = s.client().get_student(perm);
      REQUIRE_FALSE(r);
      check_invalid_and_unsent(r.error(), *s.fake);
    }
    SECTION("JWT") {
      auto r = s.client().current_student(bad);
      REQUIRE_FALSE(r);
      check_invalid_and_unsent(r.error(), *s.fake);
    }
    SECTION("API version") {
      CallOptions call;
      call.api_version = bad;
      auto r = s.client().get_student(perm, call);
      REQUIRE_FALSE(r);
      check_invalid_and_unsent(r.error(), *s.fake);
    }
    SECTION("conversation content type") {
      ConversationRequest c;
      c.content_type = bad;
      auto r = s.client().conversation(c);
      REQUIRE_FALSE(r);
      check_invalid_and_unsent(r.error(), *s.fake);
    }
  }
  SECTION("missing API key") {
    s.options.auth.api_key = studentsvc::Secret{};
    auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    check_invalid_and_unsent(r.error(), *s.fake);
  }
  SECTION("network id with ':'") {
    s.options.auth.basic = studentsvc::BasicCredential{"a:b", password};
    auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    check_invalid_and_unsent(r.error(), *s.fake);
  }
  SECTION("http:// base URL without the loopback opt-in") {
    s.options.base_url = "http://127.0.0.1:8080";
    auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    check_invalid_and_unsent(r.error(), *s.fake);
    auto c = s.client().current_student(jwt);
    REQUIRE_FALSE(c);
    check_invalid_and_unsent(c.error(), *s.fake);
    auto v = s.client().conversation({});
    REQUIRE_FALSE(v);
    check_invalid_and_unsent(v.error(), *s.fake);
  }
  SECTION("http:// to a non-loopback host even with the opt-in") {
    s.options.base_url = "http://api.example.edu";
    s.options.allow_insecure_loopback = true;
    auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    check_invalid_and_unsent(r.error(), *s.fake);
  }
  SECTION("conversation: bad method or dot segments") {
    ConversationRequest c;
    c.method = "GET /evil";
    auto r = s.client().conversation(c);
    REQUIRE_FALSE(r);
    check_invalid_and_unsent(r.error(), *s.fake);
    c.method = "GET";
    c.sub_path = "../students/v2/students/8675309";
    auto p = s.client().conversation(c);
    REQUIRE_FALSE(p);
    check_invalid_and_unsent(p.error(), *s.fake);
  }
  CHECK(s.fake->pending() == 1);
}

TEST_CASE("http:// loopback works with the opt-in", "[client]") {
  Setup s;
  s.options.base_url = "http://127.0.0.1:8080/api/";
  s.options.allow_insecure_loopback = true;
  s.fake->respond(200, student_body);
  auto r = s.client().get_student(perm);
  REQUIRE(r);
  CHECK(s.fake->last_request().url == "http://127.0.0.1:8080/api/students/v2/students/8675309");
}

TEST_CASE("Client::create rejects a bad base URL", "[client]") {
  Setup s;
  for (const char* bad : {"", "api.example.edu", "ftp://h", "http://api.example.edu", "https://u:p@h",
                          "https://h?x=1", "https://h:99999", "https://h/p q"}) {
    CAPTURE(bad);
    s.options.base_url = bad;
    auto c = Client::create(s.options);
    REQUIRE_FALSE(c);
    CHECK(c.error().kind == ErrorKind::invalid_argument);
  }
  SECTION("a good one is accepted and uses the given transport") {
    s.options.base_url = "https://api.example.edu/";
    auto c = Client::create(s.options);
    REQUIRE(c);
    CHECK(c->transport() == s.fake);
    CHECK(c->options().base_url == "https://api.example.edu/");
  }
  CHECK(s.fake->request_count() == 0);
}

TEST_CASE("log lines never contain secrets, the perm or student fields", "[client][logging]") {
  Setup s;
  LogCapture cap;
  s.options.logger = cap.logger();
  s.options.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
  s.options.auth.svc_api_key = svc_key;
  s.options.auth.basic = studentsvc::BasicCredential{network_id, password};
  const std::string basic_value = studentsvc::basic_authorization_value({network_id, password});
  const std::string basic_b64 = basic_value.substr(6);

  const auto client = s.client();
  CallOptions call;
  call.user_jwt = jwt;

  // Success, retries, every error kind, and refused input, on every call.
  s.fake->respond(200, student_body);
  CHECK(client.get_student(perm, call));
  s.fake->fail("connection reset");
  s.fake->respond(200, student_body);
  CHECK(client.current_student(jwt));
  s.fake->respond(503, student_body);
  s.fake->respond(404, R"({"message":"no student 8675309 FIRST-canary"})");
  CHECK_FALSE(client.get_student(perm, call));
  s.fake->respond(400, R"({"message":"bad","modelState":{"perm":["8675309 is bad"]}})");
  CHECK_FALSE(client.get_student(perm));
  s.fake->respond(200, R"({"perm":"8675309","firstName":42})");
  CHECK_FALSE(client.get_student(perm));
  s.fake->respond(200, student_body);
  ConversationRequest conv;
  conv.body = R"({"perm":"8675309"})";
  conv.sub_path = "8675309";
  CHECK(client.conversation(conv));
  CHECK_FALSE(client.get_student("867530"));  // refused input is logged too
  CHECK_FALSE(client.current_student(""));

  const auto lines = cap.lines();
  REQUIRE_FALSE(lines.empty());
  bool saw_trace = false;
  bool saw_redacted = false;
  for (const auto& line : lines) {
    CAPTURE(line);
    for (const std::string& secret : {std::string(api_key), std::string(svc_key), std::string(password), basic_value,
                                      basic_b64, std::string(jwt), std::string("JWT-canary"), std::string(perm),
                                      std::string("867530"), std::string("canary")}) {
      CHECK_THAT(line, !Catch::Contains(secret));
    }
    CHECK(line.find('\n') == std::string::npos);
    if (line.rfind("trace ", 0) == 0) saw_trace = true;
    if (line.find("REDACTED") != std::string::npos) saw_redacted = true;
  }
  CHECK(saw_trace);
  CHECK(saw_redacted);
}

TEST_CASE("Client is copyable and copies share the transport", "[client]") {
  Setup s;
  const Client original = s.client();
  const Client copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
  Client assigned(s.options);
  assigned = original;
  CHECK(copy.transport() == original.transport());
  CHECK(assigned.transport() == original.transport());
  CHECK(copy.transport().get() == s.fake.get());
  s.fake->respond(200, student_body);
  s.fake->respond(200, student_body);
  s.fake->respond(200, student_body);
  CHECK(original.get_student(perm));
  CHECK(copy.get_student(perm));
  CHECK(assigned.current_student(jwt));
  CHECK(s.fake->request_count() == 3);
  CHECK(copy.options().auth.api_key == api_key);
  static_assert(std::is_copy_constructible_v<Client>);
  static_assert(std::is_copy_assignable_v<Client>);
  static_assert(std::is_nothrow_move_constructible_v<Client>);
}

TEST_CASE("one Client from many threads", "[client][threads]") {
  Setup s;
  s.fake->set_handler([](const studentsvc::HttpRequest&) -> studentsvc::Result<studentsvc::HttpResponse> {
    return studentsvc::HttpResponse{200, {}, student_body};
  });
  const Client client = s.client();
  std::atomic<int> ok{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 6; ++t) {
    pool.emplace_back([&client, &ok] {
      for (int i = 0; i < 50; ++i) {
        if (client.get_student(perm) && client.current_student(jwt)) ++ok;
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(ok.load() == 300);
  CHECK(s.fake->request_count() == 600);
}

TEST_CASE("get_student and get_students return only the student asked for", "[client]") {
  Setup s;
  LogCapture log;
  s.options.logger = log.logger();
  constexpr const char* other = R"({"perm":"1111111","firstName":"OTHER-canary","nfr":false})";
  SECTION("get_student: another perm") {
    s.fake->respond(200, other);
    const auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::decode);
    CHECK(r.error().attempts == 1);
    CHECK_THAT(r.error().message, Catch::Contains("'perm'"));
    CHECK_THAT(studentsvc::to_string(r.error()), !Catch::Contains("1111111"));
    CHECK_THAT(studentsvc::to_string(r.error()), !Catch::Contains(perm));
    CHECK_THAT(studentsvc::to_string(r.error()), !Catch::Contains("OTHER-canary"));
  }
  SECTION("get_student: no perm at all") {
    s.fake->respond(200, R"({"firstName":"OTHER-canary"})");
    const auto r = s.client().get_student(perm);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::decode);
    CHECK_THAT(r.error().message, Catch::Contains("'perm'"));
  }
  SECTION("get_students: each lookup is checked against its own perm") {
    // The fake answers in order: the first lookup gets the second's record and vice versa.
    s.fake->respond(200, R"({"perm":"2222222","firstName":"B"})");
    s.fake->respond(200, R"({"perm":"1111111","firstName":"A"})");
    s.fake->respond(200, R"({"perm":"3333333","firstName":"C"})");
    const std::vector<std::string> perms{"1111111", "2222222", "3333333"};
    const auto rs = s.client().get_students(perms);
    REQUIRE(rs.size() == 3);
    for (std::size_t i = 0; i < 2; ++i) {
      REQUIRE_FALSE(rs[i]);
      CHECK(rs[i].error().kind == ErrorKind::decode);
      CHECK_THAT(rs[i].error().message, Catch::Contains("'perm'"));
      CHECK_THAT(rs[i].error().message, !Catch::Contains("1111111"));
      CHECK_THAT(rs[i].error().message, !Catch::Contains("2222222"));
    }
    REQUIRE(rs[2]);
    CHECK(rs[2]->first_name == "C");
  }
  for (const auto& line : log.lines()) {
    CHECK_THAT(line, !Catch::Contains("OTHER-canary"));
    CHECK_THAT(line, !Catch::Contains("1111111"));
  }
}

TEST_CASE("an unbounded max_total_time keeps each request's own timeout, in get_student and get_students",
          "[client][timeouts]") {
  Setup s;
  s.options.timeout = 2500ms;
  s.options.retry.max_total_time = std::chrono::milliseconds::max();
  s.options.retry.max_backoff = std::chrono::milliseconds::max();
  s.options.retry.max_retry_after = std::chrono::milliseconds::max();
  s.fake->set_handler([](const studentsvc::HttpRequest& r) -> studentsvc::Result<studentsvc::HttpResponse> {
    const std::string p = r.url.substr(r.url.size() - 7);
    return studentsvc::HttpResponse{200, {}, R"({"perm":")" + p + R"("})"};
  });
  const auto one = s.client().get_student(perm);
  REQUIRE(one);
  CHECK(s.fake->last_request().timeout == 2500ms);
  const std::vector<std::string> perms{"1111111", "2222222"};
  const auto rs = s.client().get_students(perms);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0]);
  CHECK(rs[1]);
  for (const auto& r : s.fake->requests()) CHECK(r.timeout == 2500ms);  // not 1 ms from an overflowed deadline
}

TEST_CASE("a bounded max_total_time cuts each request's timeout in both loops", "[client][timeouts]") {
  Setup s;
  s.options.timeout = 30s;
  s.options.retry.max_total_time = 2s;
  s.fake->set_handler([](const studentsvc::HttpRequest& r) -> studentsvc::Result<studentsvc::HttpResponse> {
    return studentsvc::HttpResponse{200, {}, R"({"perm":")" + r.url.substr(r.url.size() - 7) + R"("})"};
  });
  REQUIRE(s.client().get_student(perm));
  const std::vector<std::string> perms{"1111111", "2222222"};
  (void)s.client().get_students(perms);
  const auto sent = s.fake->requests();
  REQUIRE(sent.size() == 3);
  for (const auto& r : sent) {
    CHECK(r.timeout <= 2s);
    CHECK(r.timeout > 1s);
  }
}

TEST_CASE("get_students gives each position a whole result, error or student", "[client][batch]") {
  // Built with libc++ before 18, a value-initialised Result<StudentExtended>
  // lost its state: no result of the batch may start as one.
  Setup s;
  s.fake->set_handler([](const studentsvc::HttpRequest& r) -> studentsvc::Result<studentsvc::HttpResponse> {
    if (r.url.ends_with("/1111111")) {
      return studentsvc::HttpResponse{400, {}, R"({"message":"bad","modelState":{"perm":["1111111 is bad"]}})"};
    }
    return studentsvc::HttpResponse{200, {}, R"({"perm":")" + r.url.substr(r.url.size() - 7) + R"("})"};
  });
  const std::vector<std::string> perms{"1111111", "2222222", "1111111"};
  const auto results = s.client().get_students(perms);
  REQUIRE(results.size() == 3);
  for (const std::size_t i : {std::size_t{0}, std::size_t{2}}) {
    REQUIRE_FALSE(results[i]);
    CHECK(results[i].error().kind == ErrorKind::bad_request);
    REQUIRE(results[i].error().model_state.size() == 1);
    CHECK(results[i].error().model_state.at("perm") == std::vector<std::string>{"1111111 is bad"});
    CHECK(studentsvc::to_string(results[i].error()).find("1111111 is bad") != std::string::npos);
  }
  REQUIRE(results[1]);
  CHECK(results[1]->perm == "2222222");
  CHECK(s.fake->requests().size() == 2);  // the repeated perm is looked up once
}

TEST_CASE("a proxy's user:password never reaches an ApiError or a log line", "[client][logging]") {
  constexpr const char* proxy_password = "PROXYPASS-canary-42";
  Setup s;
  LogCapture log;
  s.options.logger = log.logger();
  s.options.proxy = std::string("http://proxyuser:") + proxy_password + "@proxy.example:3128";
  // A transport (or libcurl) that quotes the proxy URL in its error text.
  s.fake->set_handler([&](const studentsvc::HttpRequest&) -> studentsvc::Result<studentsvc::HttpResponse> {
    return studentsvc::make_error(ErrorKind::transport,
                                  "could not connect to proxy " + s.options.proxy + " (password " + proxy_password +
                                      ", encoded PROXYPASS%2Dcanary%2D42)");
  });
  auto check_clean = [&](const studentsvc::ApiError& e) {
    const std::string text = studentsvc::to_string(e) + e.detail + e.body_excerpt;
    CHECK_THAT(text, !Catch::Contains(proxy_password));
    CHECK_THAT(text, !Catch::Contains("proxyuser:"));
    CHECK_THAT(text, Catch::Contains("proxy.example:3128"));  // still says which proxy
  };
  const auto r = s.client().get_student(perm);
  REQUIRE_FALSE(r);
  check_clean(r.error());
  const std::vector<std::string> perms{perm};
  const auto rs = s.client().get_students(perms);
  REQUIRE_FALSE(rs[0]);
  check_clean(rs[0].error());
  const auto c = s.client().conversation({});
  REQUIRE_FALSE(c);
  check_clean(c.error());
  REQUIRE_FALSE(log.lines().empty());
  for (const auto& line : log.lines()) CHECK_THAT(line, !Catch::Contains(proxy_password));
}

#if !STUDENTSVC_WITH_CURL
// Built without libcurl there is no default transport: the client says so,
// up front and on every call, and sends nothing.
TEST_CASE("without curl, a Client with no transport says so and sends nothing", "[client]") {
  ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "key";
  const auto created = Client::create(options);
  REQUIRE_FALSE(created);
  CHECK(created.error().kind == ErrorKind::invalid_argument);
  CHECK(created.error().message.find("no transport") != std::string::npos);

  const Client client(options);
  for (const auto& result : {client.get_student("1234567"), client.current_student("jwt")}) {
    REQUIRE_FALSE(result);
    CHECK(result.error().kind == ErrorKind::invalid_argument);
    CHECK(result.error().message.find("set ClientOptions::transport") != std::string::npos);
  }
  const auto conversation = client.conversation();
  REQUIRE_FALSE(conversation);
  CHECK(conversation.error().kind == ErrorKind::invalid_argument);
  const std::vector<std::string> perms{"1234567", "2345678"};
  for (const auto& r : client.get_students(perms)) {
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::invalid_argument);
  }
}
#endif

}  // namespace client_test

// Tests for instrumentation.hpp: every attempt of every call gives one start
// and one end event with the documented fields, on the single and the batch
// path, after a 401 refresh too; an event never carries a secret, a perm or
// a student field; a throwing hook fails nothing.

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/instrumentation.hpp>
#include <studentsvc/testing/fake_transport.hpp>

#include "support/fast_retry.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace instrumentation_test {

using studentsvc::AttemptEvent;
using studentsvc::AttemptPhase;
using studentsvc::ErrorKind;
using studentsvc::Headers;
using studentsvc::RetryReason;

namespace {

/// An event with its string_views copied out (they live only during the call).
struct Recorded {
  AttemptPhase phase;
  std::string operation, path_template, method, request_id;
  int attempt;
  RetryReason reason;
  int status;
  std::optional<ErrorKind> error;
  std::size_t bytes_sent, bytes_received;
  long long latency_us;
};

class Recorder final : public studentsvc::Instrumentation {
 public:
  void on_attempt(const AttemptEvent& e) override {
    const std::lock_guard lock(mutex_);
    events_.push_back(Recorded{e.phase, std::string(e.operation), std::string(e.path_template),
                               std::string(e.method), std::string(e.request_id), e.attempt, e.retry_reason,
                               e.status, e.error, e.bytes_sent, e.bytes_received,
                               static_cast<long long>(e.latency.count())});
  }
  std::vector<Recorded> events() const {
    const std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Recorded> events_;
};

struct Setup {
  std::shared_ptr<studentsvc::testing::FakeTransport> fake = std::make_shared<studentsvc::testing::FakeTransport>();
  std::shared_ptr<Recorder> hooks = std::make_shared<Recorder>();
  studentsvc::ClientOptions options;
  Setup() {
    options.base_url = "https://api.example.edu/prefix";
    options.auth.api_key = "KEY-canary-hooks";
    options.auth.basic = studentsvc::BasicCredential{"svc-acct", "PW-canary-hooks"};
    options.transport = fake;
    options.instrumentation = hooks;
    options.retry = studentsvc::test::fast_retry(3);
  }
};

}  // namespace

TEST_CASE("hooks: one start and one end per attempt, with the documented fields", "[instrumentation]") {
  Setup s;
  s.fake->respond(503, "busy", Headers{{"x-request-id", "req-1"}});
  s.fake->respond(200, R"({"perm":"1234567","firstName":"Ana"})", Headers{{"X-Request-Id", "req-2"}});
  const studentsvc::Client client(s.options);
  REQUIRE(client.get_student("1234567"));
  const auto events = s.hooks->events();
  REQUIRE(events.size() == 4);
  CHECK(events[0].phase == AttemptPhase::start);
  CHECK(events[1].phase == AttemptPhase::end);
  CHECK(events[2].phase == AttemptPhase::start);
  CHECK(events[3].phase == AttemptPhase::end);
  for (const auto& e : events) {
    CHECK(e.operation == "get_student");
    CHECK(e.path_template == "/students/v2/students/{perm}");
    CHECK(e.method == "GET");
    CHECK(e.bytes_sent > 0);
  }
  CHECK(events[0].attempt == 1);
  CHECK(events[0].reason == RetryReason::none);
  CHECK(events[1].status == 503);
  CHECK(events[1].error == ErrorKind::http_status);
  CHECK(events[1].request_id == "req-1");
  CHECK(events[1].bytes_received == std::string("x-request-id: req-1\r\n").size() + 4);
  CHECK(events[2].attempt == 2);
  CHECK(events[2].reason == RetryReason::status);
  CHECK(events[3].status == 200);
  CHECK_FALSE(events[3].error);
  CHECK(events[3].request_id == "req-2");
  CHECK(events[3].latency_us >= 0);
}

TEST_CASE("hooks: transport failures, the other calls' templates, and a custom request-id header", "[instrumentation]") {
  Setup s;
  s.options.request_id_headers = {"x-trace"};
  s.fake->fail("connection reset");
  s.fake->respond(404, R"({"message":"Student not found."})", Headers{{"x-trace", "t-9"}, {"x-request-id", "no"}});
  s.fake->respond(200, "{}");
  s.fake->respond(201, "{}");
  const studentsvc::Client client(s.options);
  const auto current = client.current_student("JWT-canary-hooks");
  REQUIRE_FALSE(current);
  CHECK(current.error().request_id == "t-9");  // the client's header list, not the default one
  CHECK(client.conversation());
  studentsvc::ConversationRequest sub;
  sub.sub_path = "threads/8675309";
  sub.method = "POST";
  CHECK(client.conversation(sub));
  const auto e = s.hooks->events();
  REQUIRE(e.size() == 8);
  CHECK(e[1].error == ErrorKind::transport);
  CHECK(e[1].status == 0);
  CHECK(e[2].reason == RetryReason::transport);
  CHECK(e[3].error == ErrorKind::not_found);
  CHECK(e[3].request_id == "t-9");
  CHECK(e[0].path_template == "/students/v2/students/current");
  CHECK(e[4].path_template == "/conversation");
  CHECK(e[6].path_template == "/conversation/{sub_path}");
  CHECK(e[6].method == "POST");
  CHECK(e[6].operation == "conversation");
}

TEST_CASE("ApiError::request_id comes from the client's request_id_headers on every path", "[instrumentation]") {
  Setup s;
  s.options.request_id_headers = {"x-trace"};
  s.options.retry = studentsvc::RetryPolicy::none();
  const Headers ids{{"x-trace", "t-1"}, {"x-request-id", "default-list-would-take-this"}};
  s.fake->respond(500, "", ids);                                // blocking call
  s.fake->respond(500, "", ids);                                // async call
  s.fake->respond(500, "", ids);                                // batch lookup
  s.fake->respond(200, R"({"perm":"7654321"})", ids);           // the wrong student: a decode error
  s.fake->respond(502, "", Headers{{"x-request-id", "other"}});  // none of the client's headers
  const studentsvc::Client client(s.options);
  const auto blocking = client.get_student("1234567");
  REQUIRE_FALSE(blocking);
  CHECK(blocking.error().request_id == "t-1");
  const auto async = client.get_student_async("1234567").get();
  REQUIRE_FALSE(async);
  CHECK(async.error().request_id == "t-1");
  const auto batch = client.get_students(std::vector<std::string>{"1234567"});
  REQUIRE_FALSE(batch[0]);
  CHECK(batch[0].error().request_id == "t-1");
  const auto wrong = client.get_student("1234567");
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().kind == ErrorKind::decode);
  CHECK(wrong.error().request_id == "t-1");  // a 2xx that fails to decode: its id still helps support
  const auto none = client.get_student("1234567");
  REQUIRE_FALSE(none);
  CHECK(none.error().request_id.empty());
}

TEST_CASE("hooks: every lookup of a batch, retried ones included", "[instrumentation]") {
  Setup s;
  s.fake = std::make_shared<studentsvc::testing::FakeTransport>([](const studentsvc::HttpRequest& r) {
    static std::mutex m;
    static int calls_of_2 = 0;
    const std::lock_guard lock(m);
    if (r.url.ends_with("2222222") && calls_of_2++ == 0) return studentsvc::HttpResponse{503, {}, "busy"};
    const std::string perm = r.url.substr(r.url.size() - 7);
    return studentsvc::HttpResponse{200, {}, R"({"perm":")" + perm + R"("})"};
  });
  s.options.transport = s.fake;
  const studentsvc::Client client(s.options);
  const std::vector<std::string> perms{"1111111", "2222222", "3333333"};
  const auto rs = client.get_students(perms);
  for (const auto& r : rs) CHECK(r);
  const auto e = s.hooks->events();
  CHECK(e.size() == 8);  // 3 first attempts + 1 retry, start and end each
  int retries = 0;
  for (const auto& x : e) {
    CHECK(x.operation == "get_student");
    if (x.attempt == 2) {
      ++retries;
      CHECK(x.reason == RetryReason::status);
    }
  }
  CHECK(retries == 2);
}

TEST_CASE("hooks: a throwing hook fails no call", "[instrumentation]") {
  struct Throwing final : studentsvc::Instrumentation {
    int calls = 0;
    void on_attempt(const AttemptEvent&) override {
      ++calls;
      throw std::runtime_error("hook failed");
    }
  };
  Setup s;
  auto throwing = std::make_shared<Throwing>();
  s.options.instrumentation = throwing;
  s.fake->respond(200, R"({"perm":"1234567"})");
  const studentsvc::Client client(s.options);
  CHECK(client.get_student("1234567"));
  CHECK(throwing->calls == 2);
}

TEST_CASE("hooks: no event carries a secret, the perm, the JWT or a student field", "[instrumentation][canary]") {
  Setup s;
  s.options.send_traceparent = true;
  s.fake->respond(200, R"({"perm":"8675309","firstName":"FIRST-canary","lastName":"LAST-canary","email":"e@canary"})",
                  Headers{{"x-request-id", "req-ok"}});
  s.fake->respond(401, R"({"message":"PW-canary-hooks rejected"})");
  s.fake->respond(404, R"({"message":"no 8675309"})");
  const studentsvc::Client client(s.options);
  studentsvc::CallOptions with_jwt;
  with_jwt.user_jwt = "JWT-canary-hooks";
  (void)client.get_student("8675309", with_jwt);
  (void)client.current_student("JWT-canary-hooks");
  (void)client.get_student("8675309");
  for (const auto& e : s.hooks->events()) {
    for (const std::string& text : {e.operation, e.path_template, e.method, e.request_id}) {
      for (const char* canary : {"8675309", "KEY-canary", "PW-canary", "JWT-canary", "FIRST-canary", "LAST-canary",
                                 "canary", "svc-acct"}) {
        CHECK(text.find(canary) == std::string::npos);
      }
    }
  }
}

TEST_CASE("a 401 with a CredentialProvider: asked afresh once, one more attempt", "[instrumentation][credentials]") {
  struct Rotating final : studentsvc::CredentialProvider {
    std::mutex m;
    std::string key = "KEY-old";
    int invalidations = 0;
    studentsvc::Result<studentsvc::Credentials> credentials() override {
      const std::lock_guard lock(m);
      return studentsvc::Credentials{key, {}, {}, {}};
    }
    void invalidate() override {
      const std::lock_guard lock(m);
      ++invalidations;
      key = "KEY-new";
    }
  };
  Setup s;
  auto provider = std::make_shared<Rotating>();
  s.options.auth = {};
  s.options.auth.provider = provider;
  const studentsvc::Client client(s.options);

  SECTION("single call: the retry carries the new key and succeeds") {
    s.fake->respond(401, R"({"detail":"Invalid API key."})");
    s.fake->respond(200, R"({"perm":"1234567"})");
    const auto r = client.get_student("1234567");
    REQUIRE(r);
    const auto sent = s.fake->requests();
    REQUIRE(sent.size() == 2);
    CHECK(sent[0].headers.find("x-api-key") == std::optional<std::string_view>("KEY-old"));
    CHECK(sent[1].headers.find("x-api-key") == std::optional<std::string_view>("KEY-new"));
    CHECK(provider->invalidations == 1);
    const auto e = s.hooks->events();
    REQUIRE(e.size() == 4);
    CHECK(e[2].attempt == 2);
    CHECK(e[2].reason == RetryReason::credentials);
  }
  SECTION("still 401: only once, and the error counts both attempts") {
    s.fake->respond(401, R"({"detail":"Invalid API key."})");
    s.fake->respond(401, R"({"detail":"Invalid API key."})");
    const auto r = client.get_student("1234567");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::unauthorized);
    CHECK(r.error().attempts == 2);
    CHECK(s.fake->requests().size() == 2);
    CHECK(provider->invalidations == 1);
  }
  SECTION("not idempotent: no second attempt") {
    s.fake->respond(401, R"({"detail":"Invalid API key."})");
    studentsvc::ConversationRequest post;
    post.method = "POST";
    const auto r = client.conversation(post);
    REQUIRE_FALSE(r);
    CHECK(s.fake->requests().size() == 1);
    CHECK(provider->invalidations == 0);
  }
  SECTION("batch: the lookup answered 401 goes once more; the next ones carry the new key") {
    auto fake = std::make_shared<studentsvc::testing::FakeTransport>([](const studentsvc::HttpRequest& r) {
      const auto key = r.headers.find("x-api-key");
      if (key != std::optional<std::string_view>("KEY-new")) return studentsvc::HttpResponse{401, {}, "{}"};
      const std::string perm = r.url.substr(r.url.size() - 7);
      return studentsvc::HttpResponse{200, {}, R"({"perm":")" + perm + R"("})"};
    });
    auto options = s.options;
    options.transport = fake;
    const studentsvc::Client batch_client(options);
    const std::vector<std::string> perms{"1111111", "2222222"};
    const auto rs = batch_client.get_students(perms);
    CHECK(rs[0]);
    CHECK(rs[1]);
    // A send-only transport runs the batch's lookups one after another on the
    // calling thread: the first meets the 401, the provider is asked once, and
    // the second lookup is sent with the new key from the start.
    const auto sent = fake->requests();
    REQUIRE(sent.size() == 3);
    CHECK(sent[0].headers.find("x-api-key") == std::optional<std::string_view>("KEY-old"));
    CHECK(sent[1].headers.find("x-api-key") == std::optional<std::string_view>("KEY-new"));
    CHECK(sent[1].url == sent[0].url);
    CHECK(sent[2].headers.find("x-api-key") == std::optional<std::string_view>("KEY-new"));
    CHECK(provider->invalidations == 1);
  }
}

}  // namespace instrumentation_test

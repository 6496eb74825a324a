// What the SDK asks to send is what arrives: every header it sets (the
// credentials, svc-user-jwt, svc-api-version, Accept, User-Agent,
// Content-Type, traceparent), read off the wire by a raw-socket server. A
// value libcurl would drop or HTTP would strip (blank, or a space or tab first
// or last) is refused as invalid_argument with nothing sent: a blank JWT once
// lifted the "only the token's own student" rule, as libcurl dropped the header.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/curl_transport.hpp>
#include <studentsvc/detail/curl/errors.hpp>
#include <studentsvc/studentsvc.hpp>

#include "support/loopback.hpp"
#include "support/raw_server.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace wire_headers_test {

using namespace std::chrono_literals;
using studentsvc::ErrorKind;
using studentsvc::test::RawServer;

namespace {

/// A header as a server reads it: name lower-cased, value without the
/// optional whitespace around it (RFC 9110 section 5.5).
using Received = std::multimap<std::string, std::string>;

Received parse_head(std::string_view head) {
  Received out;
  std::size_t at = head.find("\r\n");
  while (at != std::string_view::npos) {
    const std::size_t start = at + 2;
    const std::size_t end = head.find("\r\n", start);
    if (end == std::string_view::npos || end == start) break;
    const std::string_view line = head.substr(start, end - start);
    const std::size_t colon = line.find(':');
    if (colon != std::string_view::npos) {
      std::string name;
      for (const char c : line.substr(0, colon)) name += studentsvc::detail::ascii_lower(c);
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      out.emplace(std::move(name), std::string(value));
    }
    at = end;
  }
  return out;
}

/// A raw server that answers each request (a student for its perm, the
/// current student, `{}` for the conversation) and keeps every request head.
class RecordingServer {
 public:
  RecordingServer()
      : server_([this](int fd, int) {
          server_.serve(fd, [this](const std::string& request, int) {
            {
              const std::lock_guard lock(mutex_);
              heads_.push_back(request.substr(0, request.find("\r\n\r\n") + 2));
            }
            const std::string target = RawServer::target_of(request);
            const std::string prefix = "/students/v2/students/";
            if (target == prefix + "current") return RawServer::response(200, studentsvc::test::student_body);
            if (target.starts_with(prefix)) {
              const std::string perm = target.substr(prefix.size());
              return RawServer::response(200, R"({"perm":")" + perm +
                                                  R"(","firstName":"A","lastName":"B","suffix":"","email":"a@example.edu"})");
            }
            return RawServer::response(200, "{}");
          });
        }) {}

  [[nodiscard]] const RawServer& raw() const { return server_; }
  [[nodiscard]] std::size_t count() const {
    const std::lock_guard lock(mutex_);
    return heads_.size();
  }
  [[nodiscard]] Received last() const {
    const std::lock_guard lock(mutex_);
    REQUIRE_FALSE(heads_.empty());
    return parse_head(heads_.back());
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> heads_;
  RawServer server_;  // last: its threads stop before what they write to goes
};

/// Every header in `expected` arrived once, with exactly that value.
void require_arrived(const Received& got, const std::map<std::string, std::string>& expected) {
  for (const auto& [name, value] : expected) {
    INFO("header " << name);
    CHECK(got.count(name) == 1);
    const auto it = got.find(name);
    REQUIRE(it != got.end());
    CHECK(it->second == value);
  }
}

const std::string traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A provider whose credentials are the fixed ones of `auth` (the per-request path).
class FixedProvider : public studentsvc::CredentialProvider {
 public:
  explicit FixedProvider(studentsvc::Credentials c) : credentials_(std::move(c)) {}
  studentsvc::Result<studentsvc::Credentials> credentials() override { return credentials_; }

 private:
  studentsvc::Credentials credentials_;
};

}  // namespace

TEST_CASE("wire: every header the SDK sets arrives exactly as asked for", "[wire][headers]") {
  RecordingServer server;
  auto o = studentsvc::test::raw_options(server.raw(), "KEY wire\t1");  // a space and a tab inside are content
  o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
  o.auth.svc_api_key = "SVC key";
  o.auth.basic = studentsvc::BasicCredential{"net id", " pass word "};  // base64: its spaces survive
  o.api_version = "2.0 beta";
  const std::string basic = studentsvc::basic_authorization_value("net id", " pass word ");
  const std::string jwt = "eyJ.a b.c";

  const auto check_student_calls = [&](const studentsvc::Client& client, const std::string& version) {
    studentsvc::CallOptions call;
    call.user_jwt = jwt;
    call.traceparent = traceparent;
    REQUIRE(client.get_student("1234567", call));
    const std::map<std::string, std::string> student_headers = {
        {"x-api-key", "KEY wire\t1"},
        {"svc-api-key", "SVC key"},
        {"authorization", basic},
        {"svc-user-jwt", jwt},
        {"svc-api-version", version},
        {"accept", "application/json, text/json"},
        {"user-agent", std::string(studentsvc::user_agent)},
        {"traceparent", traceparent},
    };
    require_arrived(server.last(), student_headers);

    studentsvc::CallOptions current_call;
    current_call.traceparent = traceparent;
    REQUIRE(client.current_student(jwt, current_call));
    require_arrived(server.last(), student_headers);
  };

  SECTION("the Client's prebuilt headers") {
    const studentsvc::Client client(o);
    check_student_calls(client, "2.0 beta");
  }
  SECTION("built per request: a CredentialProvider and a per-call api_version") {
    studentsvc::Credentials c;
    c.api_key = "KEY wire\t1";
    c.svc_api_key = "SVC key";
    c.network_id = "net id";
    c.password = " pass word ";
    o.auth.provider = std::make_shared<FixedProvider>(std::move(c));
    o.api_version = "3.0";
    const studentsvc::Client client(o);
    studentsvc::CallOptions call;
    call.user_jwt = jwt;
    call.api_version = "2.0 beta";
    call.traceparent = traceparent;
    REQUIRE(client.get_student("7654321", call));
    require_arrived(server.last(), {{"x-api-key", "KEY wire\t1"},
                                    {"svc-api-key", "SVC key"},
                                    {"authorization", basic},
                                    {"svc-user-jwt", jwt},
                                    {"svc-api-version", "2.0 beta"},
                                    {"traceparent", traceparent}});
    check_student_calls(client, "3.0");
  }
  SECTION("the conversation: the API key, Accept, User-Agent, Content-Type, traceparent") {
    const studentsvc::Client client(o);
    studentsvc::ConversationRequest request;
    request.method = "POST";
    request.body = R"({"hello":1})";
    request.content_type = "application/json; charset=utf-8";
    request.call.traceparent = traceparent;
    REQUIRE(client.conversation(request));
    const auto got = server.last();
    require_arrived(got, {{"x-api-key", "KEY wire\t1"},
                          {"accept", "application/json"},
                          {"user-agent", std::string(studentsvc::user_agent)},
                          {"content-type", "application/json; charset=utf-8"},
                          {"traceparent", traceparent}});
    CHECK(got.count("svc-api-key") == 0);
    CHECK(got.count("authorization") == 0);
  }
  SECTION("a value exactly at max_header_value_bytes arrives whole") {
    const studentsvc::Client client(o);
    studentsvc::CallOptions call;
    call.user_jwt = std::string(studentsvc::max_header_value_bytes, 'j');
    REQUIRE(client.get_student("1234567", call));
    require_arrived(server.last(), {{"svc-user-jwt", *call.user_jwt}});
  }
  SECTION("a fresh traceparent when the client sends trace context") {
    o.send_traceparent = true;
    const studentsvc::Client client(o);
    REQUIRE(client.get_student("1234567"));
    const auto got = server.last();
    REQUIRE(got.count("traceparent") == 1);
    CHECK(studentsvc::detail::is_valid_traceparent(got.find("traceparent")->second));
    CHECK(got.count("svc-user-jwt") == 0);  // none asked for, none sent
  }
}

TEST_CASE("wire: a blank or whitespace-padded header value is refused and nothing is sent", "[wire][headers]") {
  RecordingServer server;
  const auto base = studentsvc::test::raw_options(server.raw());
  const std::vector<std::string> blank_or_padded = {"", " ", "\t", " \t ", " x", "x ", "\tx", "x\t"};

  const auto refused = [&](const studentsvc::ApiError& e, std::string_view names) {
    INFO(e.message);
    CHECK(e.kind == ErrorKind::invalid_argument);
    CHECK_THAT(e.message, Catch::Contains(std::string(names)));
    CHECK_THAT(e.message, Catch::Contains("nothing was sent"));
  };

  for (const auto& bad : blank_or_padded) {
    INFO("value [" << bad << "]");
    {  // the user JWT of a lookup: blank would have widened it to any student
      const studentsvc::Client client(base);
      studentsvc::CallOptions call;
      call.user_jwt = bad;
      const auto r = client.get_student("1234567", call);
      REQUIRE_FALSE(r);
      refused(r.error(), "JWT");
    }
    if (!bad.empty()) {  // the current student's JWT (empty has its own message: required)
      const studentsvc::Client client(base);
      const auto r = client.current_student(bad);
      REQUIRE_FALSE(r);
      refused(r.error(), "JWT");
    }
    {  // api_version, the Client's and a call's
      auto o = base;
      o.api_version = bad;
      const studentsvc::Client client(o);
      const auto r = client.get_student("1234567");
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == ErrorKind::invalid_argument);
      CHECK_THAT(r.error().message, Catch::Contains("svc-api-version"));
      studentsvc::CallOptions call;
      call.api_version = bad;
      const auto by_call = studentsvc::Client(base).get_student("1234567", call);
      REQUIRE_FALSE(by_call);
      CHECK(by_call.error().kind == ErrorKind::invalid_argument);
      CHECK_THAT(by_call.error().message, Catch::Contains("svc-api-version"));
    }
    if (!bad.empty()) {  // the API key ("" is "not set"), on a student endpoint and the conversation
      auto o = base;
      o.auth.api_key = bad;
      const studentsvc::Client client(o);
      const auto r = client.get_student("1234567");
      REQUIRE_FALSE(r);
      refused(r.error(), "API key");
      const auto c = client.conversation();
      REQUIRE_FALSE(c);
      refused(c.error(), "API key");
    }
    if (!bad.empty()) {  // a custom svc-api-key
      auto o = base;
      o.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
      o.auth.svc_api_key = bad;
      const auto r = studentsvc::Client(o).get_student("1234567");
      REQUIRE_FALSE(r);
      refused(r.error(), "svc-api-key");
    }
    if (bad.find_first_not_of(" \t") == std::string::npos) {  // a blank network id or password
      auto o = base;
      o.auth.basic = studentsvc::BasicCredential{bad, "pw"};
      const auto no_id = studentsvc::Client(o).get_student("1234567");
      REQUIRE_FALSE(no_id);
      refused(no_id.error(), "network id");
      o.auth.basic = studentsvc::BasicCredential{"netid", bad};
      const auto no_password = studentsvc::Client(o).get_student("1234567");
      REQUIRE_FALSE(no_password);
      refused(no_password.error(), "password");
    }
    if (!bad.empty()) {  // a conversation's content_type ("" means application/json)
      studentsvc::ConversationRequest request;
      request.method = "POST";
      request.body = "{}";
      request.content_type = bad;
      const auto r = studentsvc::Client(base).conversation(request);
      REQUIRE_FALSE(r);
      refused(r.error(), "content_type");
    }
  }
  CHECK(server.count() == 0);
  CHECK(server.raw().connections() == 0);

  // The same values are fine inside: sent as they are (the first test case reads them back).
  studentsvc::CallOptions call;
  call.user_jwt = "a\tb c";
  CHECK(studentsvc::Client(base).get_student("1234567", call));
  CHECK(server.count() == 1);
}

TEST_CASE("wire: CurlTransport sends an empty value as given and refuses one libcurl would drop or strip",
          "[wire][headers]") {
  RecordingServer server;
  studentsvc::CurlTransport transport(studentsvc::test::plain_http());
  studentsvc::HttpRequest request;
  request.url = server.raw().base_url() + "/conversation";
  request.timeout = 20s;
  request.headers.set("X-Empty", "");
  request.headers.set("X-Inner", "a \t b");
  REQUIRE(transport.send(request));
  const auto got = server.last();
  REQUIRE(got.count("x-empty") == 1);
  CHECK(got.find("x-empty")->second.empty());
  CHECK(got.find("x-inner")->second == "a \t b");

  for (const std::string bad : {" ", "\t", " x", "x "}) {
    INFO("value [" << bad << "]");
    studentsvc::HttpRequest r = request;
    r.headers.set("X-Bad", bad);
    const auto sent = transport.send(r);
    REQUIRE_FALSE(sent);
    CHECK(sent.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(sent.error().message, Catch::Contains("X-Bad"));
    CHECK_THAT(sent.error().message, Catch::Contains("nothing was sent"));
    CHECK_FALSE(sent.error().retryable);
  }
  CHECK(server.count() == 1);
}

TEST_CASE("wire: libcurl's copy of the header lines is wiped once the transfer is over", "[wire][headers][wipe]") {
  // The exchange holds "x-api-key: ..." lines for libcurl while it sends; after
  // the transfer they are overwritten in place (and on destruction).
  studentsvc::detail::CurlExchange ex;
  ex.header_text.reserve(256);
  ex.header_text = "x-api-key: KEY-canary-0123456789";
  ex.header_text.push_back('\0');
  ex.header_text += "svc-user-jwt: JWT-canary-abcdefghij";
  const char* lines = ex.header_text.data();
  const std::size_t capacity = ex.header_text.capacity();
  CURL* h = curl_easy_init();
  REQUIRE(h != nullptr);
  (void)studentsvc::detail::curl_transfer_result(h, CURLE_COULDNT_CONNECT, ex);
  curl_easy_cleanup(h);
  CHECK(ex.header_text.empty());
  CHECK(ex.header_text.data() == lines);  // wiped in place, not just freed
  CHECK(std::all_of(lines, lines + capacity, [](char c) { return c == 0; }));
}

}  // namespace wire_headers_test

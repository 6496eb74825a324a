// Unit tests for http.hpp: Headers, HttpRequest/HttpResponse defaults and the
// Transport interface's sequential send_all default.

#include <catch2/catch.hpp>

#include <span>
#include <string>
#include <vector>

#include <studentsvc/http.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace http_test {

using studentsvc::Headers;
using studentsvc::HttpRequest;
using studentsvc::HttpResponse;

namespace {

std::vector<std::string> names(const Headers& h) {
  std::vector<std::string> out;
  for (const auto& [name, value] : h) out.push_back(name);
  return out;
}

std::vector<std::string> values(const Headers& h) {
  std::vector<std::string> out;
  for (const auto& [name, value] : h) out.push_back(value);
  return out;
}

/// A transport that only implements send(): answers with the request's
/// position in the order it was called, and records the URLs it saw.
class CountingTransport : public studentsvc::Transport {
 public:
  studentsvc::Result<HttpResponse> send(const HttpRequest& request) override {
    seen.push_back(request.url);
    if (request.url.find("fail") != std::string::npos) {
      return studentsvc::make_error(studentsvc::ErrorKind::transport, "refused");
    }
    return HttpResponse{200, {}, std::to_string(seen.size()) + " " + request.url};
  }
  std::vector<std::string> seen;
};

}  // namespace

TEST_CASE("Headers find is case-insensitive and returns the first value", "[http]") {
  Headers h{{"Content-Type", "application/json"}, {"X-Dup", "one"}, {"x-dup", "two"}};
  CHECK(h.find("content-type") == std::optional<std::string_view>("application/json"));
  CHECK(h.find("CONTENT-TYPE") == std::optional<std::string_view>("application/json"));
  CHECK(h.find("X-DUP") == std::optional<std::string_view>("one"));
  CHECK_FALSE(h.find("content"));
  CHECK_FALSE(h.find("content-type-x"));
  CHECK(h.contains("x-dup"));
  CHECK_FALSE(h.contains("accept"));
  CHECK(h.size() == 3);
}

TEST_CASE("Headers set replaces every field of that name, case-insensitively", "[http]") {
  Headers h{{"Accept", "a"}, {"X-One", "1"}, {"ACCEPT", "b"}};
  h.set("accept", "c");
  CHECK(h.size() == 2);
  CHECK(h.find("Accept") == std::optional<std::string_view>("c"));
  CHECK(names(h) == std::vector<std::string>{"X-One", "accept"});  // set appends, with the new spelling
}

TEST_CASE("Headers add keeps earlier fields and order", "[http]") {
  Headers h;
  CHECK(h.empty());
  h.add("Set-Cookie", "a=1");
  h.add("X-Mid", "m");
  h.add("set-cookie", "b=2");
  CHECK(h.size() == 3);
  CHECK(names(h) == std::vector<std::string>{"Set-Cookie", "X-Mid", "set-cookie"});
  CHECK(values(h) == std::vector<std::string>{"a=1", "m", "b=2"});
  CHECK(h.find("SET-COOKIE") == std::optional<std::string_view>("a=1"));
}

TEST_CASE("Headers erase removes every field of that name and keeps the rest in order", "[http]") {
  Headers h{{"A", "1"}, {"b", "2"}, {"a", "3"}, {"C", "4"}};
  h.erase("A");
  CHECK(names(h) == std::vector<std::string>{"b", "C"});
  h.erase("missing");
  CHECK(h.size() == 2);
  h.clear();
  CHECK(h.empty());
}

TEST_CASE("Headers compare by content and order", "[http]") {
  const Headers a{{"A", "1"}, {"B", "2"}};
  const Headers b{{"A", "1"}, {"B", "2"}};
  const Headers swapped{{"B", "2"}, {"A", "1"}};
  CHECK(a == b);
  CHECK_FALSE(a == swapped);
}

TEST_CASE("Headers iequals is ASCII-only", "[http]") {
  Headers h{{"\xC3\x89tag", "x"}};  // "Étag": non-ASCII bytes are compared exactly
  CHECK_FALSE(h.find("\xC3\xA9tag"));
  CHECK(h.find("\xC3\x89TAG"));
}

TEST_CASE("HttpResponse::ok is true for 2xx only", "[http]") {
  for (const int s : {200, 201, 204, 299}) {
    CAPTURE(s);
    CHECK(HttpResponse{s, {}, {}}.ok());
  }
  for (const int s : {0, 100, 199, 300, 301, 304, 400, 404, 500}) {
    CAPTURE(s);
    CHECK_FALSE(HttpResponse{s, {}, {}}.ok());
  }
}

TEST_CASE("HttpRequest defaults", "[http]") {
  const HttpRequest r;
  CHECK(r.method == "GET");
  CHECK(r.connect_timeout == studentsvc::default_connect_timeout);
  CHECK(r.timeout == studentsvc::default_request_timeout);
  CHECK(r.max_response_bytes == studentsvc::default_max_response_bytes);
  CHECK(studentsvc::default_connect_timeout == std::chrono::seconds(10));
  CHECK(studentsvc::default_request_timeout == std::chrono::seconds(30));
  CHECK(studentsvc::default_max_response_bytes == 4U * 1024U * 1024U);
}

TEST_CASE("Transport::send_all default is sequential and in input order", "[http]") {
  CountingTransport t;
  std::vector<HttpRequest> batch(4);
  batch[0].url = "https://h/a";
  batch[1].url = "https://h/b";
  batch[2].url = "https://h/fail";
  batch[3].url = "https://h/d";
  studentsvc::Transport& base = t;
  const auto results = base.send_all(std::span<const HttpRequest>(batch), 8);
  REQUIRE(results.size() == 4);
  CHECK(t.seen == std::vector<std::string>{"https://h/a", "https://h/b", "https://h/fail", "https://h/d"});
  REQUIRE(results[0]);
  CHECK(results[0]->body == "1 https://h/a");
  REQUIRE(results[1]);
  CHECK(results[1]->body == "2 https://h/b");
  REQUIRE_FALSE(results[2]);  // a failure stays in its slot and does not stop the batch
  CHECK(results[2].error().kind == studentsvc::ErrorKind::transport);
  REQUIRE(results[3]);
  CHECK(results[3]->body == "4 https://h/d");
}

TEST_CASE("Transport::send_all of an empty batch sends nothing", "[http]") {
  CountingTransport t;
  const auto results = t.send_all({}, 1);
  CHECK(results.empty());
  CHECK(t.seen.empty());
}

}  // namespace http_test

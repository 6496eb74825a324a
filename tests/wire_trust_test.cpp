// Wire trust: the real CurlTransport (and Client) against raw-socket servers
// that misbehave on kept-alive connections. An answer always belongs to its
// request (bytes left on an idle connection never answer the next call), a
// non-idempotent request is sent at most once (libcurl's own "retrying a fresh
// connect" is refused), and connection rules libcurl should keep (HEAD/204
// bodies, Connection: close) hold, for `send` and the `send_all` batch engine.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <studentsvc/studentsvc.hpp>

#include "support/loopback.hpp"
#include "support/raw_server.hpp"
#include "support/wait.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace wire_trust_test {

using namespace std::chrono_literals;
using studentsvc::CurlTransport;
using studentsvc::CurlTransportOptions;
using studentsvc::ErrorKind;
using studentsvc::HttpRequest;
using studentsvc::HttpResponse;
using studentsvc::Result;
using studentsvc::test::RawServer;
using studentsvc::test::plain_http;
using studentsvc::test::eventually;

namespace {

const std::string may_or_may_not = "(the request may or may not have been processed)";

HttpRequest get(const RawServer& server, std::string_view path) {
  HttpRequest r;
  r.url = server.base_url() + std::string(path);
  r.timeout = 20s;
  return r;
}

HttpRequest post_once(const RawServer& server, std::string_view path) {
  HttpRequest r = get(server, path);
  r.method = "POST";
  r.body = R"({"create":"thing"})";
  r.headers.set("Content-Type", "application/json");
  r.idempotent = false;
  return r;
}

/// The JSON body that names the request it answers.
std::string answer_body(std::string_view target) { return R"({"for":")" + std::string(target) + R"("})"; }

/// What the call got: "200 {body}" or "error: message".
std::string outcome(const Result<HttpResponse>& r) {
  if (!r) return "error: " + r.error().message;
  return std::to_string(r->status) + " " + r->body;
}

std::string student(std::string_view perm) {
  return R"({"perm":")" + std::string(perm) + R"(","firstName":"A","lastName":"B","suffix":"","email":"a@example.edu"})";
}

enum class Extra { same_write, later_write, late_408 };

const char* name_of(Extra e) {
  switch (e) {
    case Extra::same_write: return "a second response in the same write";
    case Extra::later_write: return "a second response in a later write";
    case Extra::late_408: return "a late 408 on the idle connection";
  }
  return "";
}

/// Serves a connection: every request gets a response naming it; on the
/// first `junk_connections` connections the first response is followed by
/// `extra` (which a client reusing the connection would take for its next
/// answer); `written` counts those.
void serve_with_junk(RawServer& server, int fd, int connection, int junk_connections, Extra extra,
                     std::atomic<int>& written) {
  server.serve(fd, [&](const std::string& request, int n) {
    std::string out = RawServer::response(200, answer_body(RawServer::target_of(request)));
    if (n > 0 || connection >= junk_connections) return out;
    // The first answers wait until every junk connection is open, so a batch's
    // first requests are in flight together on their own connections however
    // late the client gets to the later ones (on a loaded machine, one could
    // otherwise go out on the first connection, idle by then).
    (void)server.wait_for_connections(junk_connections);
    const std::string bogus = extra == Extra::late_408 ? "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n"
                                                       : RawServer::response(200, answer_body("bogus"));
    if (extra == Extra::same_write) {
      out += bogus;
    } else if (RawServer::write_all(fd, out) && server.write_later(fd, 20ms, bogus)) {
      out.clear();
    }
    ++written;
    return out;
  });
}

}  // namespace

TEST_CASE("wire: bytes left on an idle connection never answer the next send", "[wire][reuse]") {
  const Extra extra = GENERATE(Extra::same_write, Extra::later_write, Extra::late_408);
  DYNAMIC_SECTION(name_of(extra)) {
    std::atomic<int> written{0};
    RawServer server([&](int fd, int connection) { serve_with_junk(server, fd, connection, 1, extra, written); });
    CurlTransport transport(plain_http());
    CHECK(outcome(transport.send(get(server, "/first"))) == "200 " + answer_body("/first"));
    REQUIRE(eventually([&] { return written.load() == 1; }));  // on loopback: in our socket by now
    CHECK(outcome(transport.send(get(server, "/second"))) == "200 " + answer_body("/second"));
    CHECK(server.connections() == 2);
    // The new connection is clean, so it is kept.
    CHECK(outcome(transport.send(get(server, "/third"))) == "200 " + answer_body("/third"));
    CHECK(server.connections() == 2);
  }
}

TEST_CASE("wire: a Client never gets another student's record from a reused connection", "[wire][reuse]") {
  std::atomic<int> written{0};
  RawServer server([&](int fd, int) {
    server.serve(fd, [&](const std::string& request, int n) {
      const std::string target = RawServer::target_of(request);
      std::string out = RawServer::response(200, student(target.substr(target.rfind('/') + 1)));
      if (n == 0 && RawServer::write_all(fd, out) && server.write_later(fd, 20ms, RawServer::response(200, student("7654321")))) {
        out.clear();
        ++written;
      }
      return out;
    });
  });
  studentsvc::ClientOptions options;
  options.base_url = server.base_url();
  options.auth.api_key = "wire-test-key";
  options.allow_insecure_loopback = true;
  options.retry = studentsvc::RetryPolicy::none();
  const studentsvc::Client client(options);
  const auto first = client.get_student("1234567");
  REQUIRE(first);
  CHECK(first->perm == "1234567");
  REQUIRE(eventually([&] { return written.load() == 1; }));
  const auto second = client.get_student("2345678");
  REQUIRE(second);
  CHECK(second->perm == "2345678");
  CHECK(server.connections() == 2);
}

TEST_CASE("wire: bytes left on an idle connection never answer the next batch", "[wire][reuse][batch]") {
  const Extra extra = GENERATE(Extra::same_write, Extra::later_write, Extra::late_408);
  DYNAMIC_SECTION(name_of(extra)) {
    std::atomic<int> written{0};
    RawServer server([&](int fd, int connection) { serve_with_junk(server, fd, connection, 2, extra, written); });
    CurlTransport transport(plain_http());
    const std::vector<HttpRequest> first{get(server, "/a1"), get(server, "/a2")};
    const auto a = transport.send_all(first, 2);
    REQUIRE(a.size() == 2);
    CHECK(outcome(a[0]) == "200 " + answer_body("/a1"));
    CHECK(outcome(a[1]) == "200 " + answer_body("/a2"));
    const int opened = server.connections();
    REQUIRE(opened == 2);
    REQUIRE(eventually([&] { return written.load() == opened; }));

    const std::vector<HttpRequest> second{get(server, "/b1"), get(server, "/b2"), get(server, "/b3")};
    const auto b = transport.send_all(second, 2);
    REQUIRE(b.size() == 3);
    CHECK(outcome(b[0]) == "200 " + answer_body("/b1"));
    CHECK(outcome(b[1]) == "200 " + answer_body("/b2"));
    CHECK(outcome(b[2]) == "200 " + answer_body("/b3"));
    CHECK(server.connections() > opened);  // none of the first batch's connections carried the second
  }
}

namespace {

/// Serves one request on connection 0, then reads the next one and closes
/// without answering (a server that dies, or drops the idle connection as the
/// request arrives); other connections answer every request.
void die_after_taking_second(RawServer& server, int fd, int connection) {
  const auto answer = [](const std::string& request, int) {
    return RawServer::response(200, answer_body(RawServer::target_of(request)));
  };
  if (connection > 0) {
    server.serve(fd, answer);
    return;
  }
  if (server.serve(fd, answer, 1) == 1) (void)server.next_request(fd);
}

}  // namespace

TEST_CASE("wire: a non-idempotent request is sent at most once when its kept-alive connection dies",
          "[wire][at-most-once]") {
  RawServer server([&](int fd, int connection) { die_after_taking_second(server, fd, connection); });
  CurlTransport transport(plain_http());
  CHECK(outcome(transport.send(post_once(server, "/p1"))) == "200 " + answer_body("/p1"));
  const auto second = transport.send(post_once(server, "/p2"));
  CHECK(server.requests() == 2);  // libcurl alone would have sent /p2 again on a new connection
  REQUIRE_FALSE(second);
  CHECK(second.error().kind == ErrorKind::transport);
  CHECK_FALSE(second.error().retryable);
  CHECK_THAT(second.error().message, Catch::EndsWith(may_or_may_not));
  // The transport still works.
  CHECK(outcome(transport.send(post_once(server, "/p3"))) == "200 " + answer_body("/p3"));
}

TEST_CASE("wire: an idempotent GET whose kept-alive connection dies is sent again and succeeds",
          "[wire][at-most-once]") {
  RawServer server([&](int fd, int connection) { die_after_taking_second(server, fd, connection); });
  CurlTransport transport(plain_http());
  CHECK(outcome(transport.send(get(server, "/g1"))) == "200 " + answer_body("/g1"));
  CHECK(outcome(transport.send(get(server, "/g2"))) == "200 " + answer_body("/g2"));
  CHECK(server.requests() == 3);
  CHECK(server.connections() == 2);
}

TEST_CASE("wire: a batch sends each non-idempotent request at most once", "[wire][at-most-once][batch]") {
  // Every connection answers one request, then takes the next and closes. The
  // first two wait until both are open, so the first batch's requests overlap on
  // them however late the client gets to the second (on a loaded machine it could
  // otherwise go out on the first connection, and die with it).
  RawServer server([&](int fd, int connection) {
    if (connection < 2) (void)server.wait_for_connections(2);
    if (server.serve(fd, [](const std::string& request, int) {
          return RawServer::response(200, answer_body(RawServer::target_of(request)));
        }, 1) == 1) {
      (void)server.next_request(fd);
    }
  });
  CurlTransport transport(plain_http());
  const std::vector<HttpRequest> first{post_once(server, "/p1"), post_once(server, "/p2")};
  const auto a = transport.send_all(first, 2);
  CHECK(outcome(a[0]) == "200 " + answer_body("/p1"));
  CHECK(outcome(a[1]) == "200 " + answer_body("/p2"));
  const int before = server.requests();
  const std::vector<HttpRequest> second{post_once(server, "/p3"), post_once(server, "/p4")};
  const auto b = transport.send_all(second, 2);
  // Each went out once; whatever came back, none went out twice.
  CHECK(server.requests() - before <= 2);
  for (const auto& r : b) {
    if (r) continue;  // a fresh connection's answer is fine
    CHECK(r.error().kind == ErrorKind::transport);
    CHECK_FALSE(r.error().retryable);
    CHECK_THAT(r.error().message, Catch::EndsWith(may_or_may_not));
  }
  // At least one rode a kept-alive connection that died under it (the other
  // may have found a new connection, libcurl's retry having taken its own).
  CHECK((!b[0] || !b[1]));
}

TEST_CASE("wire: Client::conversation sends a non-idempotent POST at most once", "[wire][at-most-once]") {
  RawServer server([&](int fd, int connection) { die_after_taking_second(server, fd, connection); });
  studentsvc::ClientOptions options;
  options.base_url = server.base_url();
  options.auth.api_key = "wire-test-key";
  options.allow_insecure_loopback = true;
  const studentsvc::Client client(options);  // default retry policy: still one attempt
  studentsvc::ConversationRequest request;
  request.method = "POST";
  request.body = R"({"say":"hello"})";
  REQUIRE(client.conversation(request));
  const auto second = client.conversation(request);
  CHECK(server.requests() == 2);
  REQUIRE_FALSE(second);
  CHECK(second.error().kind == ErrorKind::transport);
  CHECK_THAT(second.error().message, Catch::Contains(may_or_may_not));
}

TEST_CASE("wire: a non-idempotent request that never left does not claim it may have", "[wire][at-most-once]") {
  int port = 0;
  {
    const RawServer closed(nullptr);  // bound, then closed: nothing listens there
    port = closed.port();
  }
  HttpRequest r;
  r.method = "POST";
  r.url = "http://127.0.0.1:" + std::to_string(port) + "/p";
  r.body = "{}";
  r.idempotent = false;
  CurlTransport transport(plain_http());
  const auto result = transport.send(r);
  REQUIRE_FALSE(result);
  CHECK(result.error().kind == ErrorKind::transport);
  CHECK(result.error().retryable);
  CHECK_THAT(result.error().message, !Catch::Contains("may or may not"));
}

namespace {

enum class NoBody { head, status_204, status_304 };

const char* name_of(NoBody k) {
  switch (k) {
    case NoBody::head: return "HEAD";
    case NoBody::status_204: return "204";
    case NoBody::status_304: return "304";
  }
  return "";
}

}  // namespace

TEST_CASE("wire: a body where none may come (HEAD, 204, 304) never answers the next request", "[wire][reuse]") {
  // The "body" is a whole response: a client that left it on the connection
  // and reused it would read it as the next call's answer.
  const NoBody kind = GENERATE(NoBody::head, NoBody::status_204, NoBody::status_304);
  const bool later = GENERATE(false, true);
  DYNAMIC_SECTION(name_of(kind) << (later ? ", body in a later write" : ", body in the same write")) {
    const std::string bogus = RawServer::response(200, answer_body("bogus"));
    std::atomic<int> written{0};
    RawServer server([&](int fd, int connection) {
      server.serve(fd, [&](const std::string& request, int n) {
        if (n > 0 || connection > 0) return RawServer::response(200, answer_body(RawServer::target_of(request)));
        std::string head;
        switch (kind) {
          case NoBody::head: head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(bogus.size()) + "\r\n\r\n"; break;
          case NoBody::status_204: head = "HTTP/1.1 204 No Content\r\n\r\n"; break;
          case NoBody::status_304: head = "HTTP/1.1 304 Not Modified\r\n\r\n"; break;
        }
        if (!later) {
          ++written;
          return head + bogus;
        }
        if (RawServer::write_all(fd, head) && server.write_later(fd, 20ms, bogus)) ++written;
        return std::string();
      });
    });
    CurlTransport transport(plain_http());
    HttpRequest first = get(server, "/first");
    if (kind == NoBody::head) first.method = "HEAD";
    const auto a = transport.send(first);
    REQUIRE(a);
    CHECK(a->status == (kind == NoBody::status_204 ? 204 : kind == NoBody::status_304 ? 304 : 200));
    CHECK(a->body.empty());
    REQUIRE(eventually([&] { return written.load() == 1; }));
    CHECK(outcome(transport.send(get(server, "/next"))) == "200 " + answer_body("/next"));
  }
}

TEST_CASE("wire: Connection: close and HTTP/1.0 answers are not reused, even if the server keeps the socket open",
          "[wire][reuse]") {
  const std::string extra = GENERATE(std::string("Connection: close\r\n"), std::string("HTTP/1.0"));
  DYNAMIC_SECTION(extra) {
    RawServer server([&](int fd, int) {
      server.serve(fd, [&](const std::string& request, int) {
        std::string out = RawServer::response(200, answer_body(RawServer::target_of(request)),
                                              extra.starts_with("HTTP") ? "" : extra);
        if (extra.starts_with("HTTP")) out.replace(0, 8, "HTTP/1.0");
        return out;
      });
    });
    CurlTransport transport(plain_http());
    CHECK(outcome(transport.send(get(server, "/1"))) == "200 " + answer_body("/1"));
    CHECK(outcome(transport.send(get(server, "/2"))) == "200 " + answer_body("/2"));
    const std::vector<HttpRequest> batch{get(server, "/3"), get(server, "/4")};
    const auto b = transport.send_all(batch, 2);
    CHECK(outcome(b[0]) == "200 " + answer_body("/3"));
    CHECK(outcome(b[1]) == "200 " + answer_body("/4"));
    CHECK(server.connections() == 4);
    CHECK(server.requests() == 4);
  }
}

TEST_CASE("wire: any failure after a non-idempotent request went out says it may have been processed",
          "[wire][at-most-once]") {
  // The server takes the request, then stalls (timeout) or hangs up (no answer).
  const bool stall = GENERATE(true, false);
  DYNAMIC_SECTION((stall ? "timed out" : "closed with no response")) {
    RawServer server([&](int fd, int) {
      if (server.next_request(fd).empty()) return;
      if (stall) (void)server.sleep_unless_stopped(10s);
    });
    CurlTransport transport(plain_http());
    HttpRequest request = post_once(server, "/p");
    request.timeout = 1s;
    const auto r = transport.send(request);
    server.stop();
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::transport);
    CHECK_FALSE(r.error().retryable);
    CHECK_THAT(r.error().message, Catch::StartsWith(stall ? "timed out" : "connection closed with no response") &&
                                      Catch::EndsWith(may_or_may_not));
    CHECK(server.requests() == 1);

    request.idempotent = true;  // the same failure of an idempotent request may be retried
    RawServer again([&](int fd, int) {
      if (again.next_request(fd).empty()) return;
      if (stall) (void)again.sleep_unless_stopped(10s);
    });
    request.url = again.base_url() + "/p";
    const auto idem = transport.send(request);
    again.stop();
    REQUIRE_FALSE(idem);
    CHECK(idem.error().retryable);
    CHECK_THAT(idem.error().message, !Catch::Contains("may or may not"));
  }
}

}  // namespace wire_trust_test

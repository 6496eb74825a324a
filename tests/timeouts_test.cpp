// Timeouts: documented defaults, connect and whole-request timeouts, and the
// per-call override, against raw-socket servers on 127.0.0.1 that stall.

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>

#include "support/fast_retry.hpp"
#include "support/loopback.hpp"
#include "support/raw_server.hpp"
#include "support/wait.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace timeouts_test {

using namespace std::chrono_literals;
using studentsvc::test::RawServer;
using studentsvc::test::raw_options;
using studentsvc::test::seconds_since;
using studentsvc::test::student_body;

TEST_CASE("timeout defaults are the documented ones and CallOptions overrides them", "[timeouts]") {
  const studentsvc::ClientOptions options;
  CHECK(options.connect_timeout == 10s);
  CHECK(options.timeout == 30s);
  CHECK(studentsvc::default_connect_timeout == 10s);
  CHECK(studentsvc::default_request_timeout == 30s);

  studentsvc::ClientOptions client;
  client.connect_timeout = 2s;
  client.timeout = 7s;
  studentsvc::detail::BaseUrl base{"https", "svc.example.edu", "svc.example.edu", ""};
  client.auth.api_key = "k";
  auto plain = studentsvc::build_get_student_request(base, client, "1234567");
  REQUIRE(plain);
  CHECK(plain->connect_timeout == 2s);
  CHECK(plain->timeout == 7s);
  studentsvc::CallOptions call;
  call.connect_timeout = 150ms;
  call.timeout = 900ms;
  auto overridden = studentsvc::build_get_student_request(base, client, "1234567", call);
  REQUIRE(overridden);
  CHECK(overridden->connect_timeout == 150ms);
  CHECK(overridden->timeout == 900ms);
}

TEST_CASE("a server that stalls mid-body gives a transport timeout, not a hang",
          "[timeouts]") {
  RawServer server([&](int fd, int) {
    if (RawServer::read_request(fd).empty()) return;
    RawServer::write_all(fd,
                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
                         R"({"perm":"1234567","firstName":")");
    server.sleep_unless_stopped(30s);  // never finishes the body
  });
  REQUIRE(server.port() > 0);
  auto options = raw_options(server);
  options.timeout = 600ms;
  const studentsvc::Client client(options);

  const auto start = std::chrono::steady_clock::now();
  const auto result = client.get_student("1234567");
  const double took = seconds_since(start);

  REQUIRE_FALSE(result);
  CHECK(result.error().kind == studentsvc::ErrorKind::transport);
  CHECK(result.error().status == 0);
  CHECK(result.error().retryable);
  CHECK_THAT(result.error().message, Catch::Contains("timed out"));
  CHECK(took >= 0.5);
  CHECK(took < 0.6 + 5.0);  // generous: a loaded 2-core box
}

TEST_CASE("a server that accepts and never answers times out", "[timeouts]") {
  RawServer server([&](int fd, int) {
    (void)RawServer::read_request(fd);
    server.sleep_unless_stopped(30s);
  });
  auto options = raw_options(server);
  options.timeout = 400ms;
  const studentsvc::Client client(options);
  const auto start = std::chrono::steady_clock::now();
  const auto result = client.current_student("some-jwt");
  const double took = seconds_since(start);
  REQUIRE_FALSE(result);
  CHECK(result.error().kind == studentsvc::ErrorKind::transport);
  CHECK_THAT(result.error().message, Catch::Contains("timed out"));
  CHECK(took < 0.4 + 5.0);
}

TEST_CASE("the per-call timeout beats the client's, both ways", "[timeouts]") {
  // Answers after 700 ms.
  RawServer server([&](int fd, int) {
    while (!RawServer::read_request(fd).empty()) {
      if (!server.sleep_unless_stopped(700ms)) return;
      if (!RawServer::write_all(fd, RawServer::response(200, student_body))) return;
    }
  });

  SECTION("a short call timeout under a long client timeout") {
    auto options = raw_options(server);
    options.timeout = 20s;
    const studentsvc::Client client(options);
    studentsvc::CallOptions call;
    call.timeout = 300ms;
    const auto start = std::chrono::steady_clock::now();
    const auto result = client.get_student("1234567", call);
    REQUIRE_FALSE(result);
    CHECK_THAT(result.error().message, Catch::Contains("timed out"));
    CHECK(seconds_since(start) < 0.3 + 5.0);  // the timeout error itself proves it: the client's 20 s would succeed
  }
  SECTION("a long call timeout over a short client timeout") {
    auto options = raw_options(server);
    options.timeout = 300ms;
    const studentsvc::Client client(options);
    CHECK_FALSE(client.get_student("1234567"));  // the client's own timeout is too short
    studentsvc::CallOptions call;
    call.timeout = 5s;
    const auto result = client.get_student("1234567", call);
    REQUIRE(result);
    CHECK(result->first_name == "Ana");
    // The same pooled handle, back to the client's 300 ms: the call's 5 s did not stay on it.
    CHECK_FALSE(client.get_student("1234567"));
  }
}

TEST_CASE("a connect that never completes hits the connect timeout", "[timeouts]") {
  // A listener with a full accept queue: Linux drops further SYNs, so connect()
  // hangs exactly like a black-holed host, without leaving 127.0.0.1.
  RawServer listener(nullptr, /*backlog=*/0);
  REQUIRE(listener.port() > 0);
  std::vector<int> fillers;
  for (int i = 0; i < 3; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(listener.port()));
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    fillers.push_back(fd);
  }
  std::this_thread::sleep_for(100ms);  // let the first handshakes fill the queue

  auto options = raw_options(listener);
  options.timeout = 20s;
  const studentsvc::Client client(options);

  SECTION("the client's connect timeout") {
    auto short_connect = options;
    short_connect.connect_timeout = 500ms;
    const studentsvc::Client c(short_connect);
    const auto start = std::chrono::steady_clock::now();
    const auto result = c.get_student("1234567");
    const double took = seconds_since(start);
    REQUIRE_FALSE(result);
    CHECK(result.error().kind == studentsvc::ErrorKind::transport);
    CHECK_THAT(result.error().message, Catch::Contains("timed out"));
    CHECK(took >= 0.4);
    CHECK(took < 0.5 + 5.0);
  }
  SECTION("the per-call connect timeout") {
    studentsvc::CallOptions call;
    call.connect_timeout = 300ms;
    const auto start = std::chrono::steady_clock::now();
    const auto result = client.get_student("1234567", call);
    REQUIRE_FALSE(result);
    CHECK_THAT(result.error().message, Catch::Contains("timed out"));
    CHECK(seconds_since(start) < 0.3 + 5.0);  // the client's connect timeout is 10 s
  }
  for (const int fd : fillers) ::close(fd);
}

TEST_CASE("max_total_time cuts a stalled attempt short, in get_student and get_students", "[timeouts][total]") {
  // The server never answers; the request timeout (30 s) would wait far longer.
  RawServer server([&](int fd, int) {
    (void)RawServer::read_request(fd);
    server.sleep_unless_stopped(60s);
  });
  auto options = raw_options(server);
  options.timeout = 30s;
  options.retry = studentsvc::test::fast_retry(5);
  options.retry.max_total_time = 800ms;
  const studentsvc::Client client(options);
  SECTION("get_student") {
    const auto start = std::chrono::steady_clock::now();
    const auto result = client.get_student("1234567");
    const double took = seconds_since(start);
    REQUIRE_FALSE(result);
    CHECK(result.error().kind == studentsvc::ErrorKind::transport);
    CHECK(took >= 0.7);        // it did wait for the answer, about the bound...
    CHECK(took < 0.8 + 5.0);   // ...and not the 30 s request timeout (+ slack for a loaded box)
  }
  SECTION("get_students") {
    const std::vector<std::string> perms{"1234567", "2345678"};
    const auto start = std::chrono::steady_clock::now();
    const auto results = client.get_students(perms);
    const double took = seconds_since(start);
    REQUIRE(results.size() == 2);
    for (const auto& r : results) {
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == studentsvc::ErrorKind::transport);
    }
    CHECK(took >= 0.7);
    CHECK(took < 0.8 + 5.0);
  }
}

TEST_CASE("an unbounded max_total_time lets a slow answer arrive, in get_student and get_students",
          "[timeouts][total]") {
  // milliseconds::max() once overflowed the batch deadline, giving every lookup a 1 ms timeout.
  RawServer server([&](int fd, int) {
    const std::string request = RawServer::read_request(fd);
    if (!server.sleep_unless_stopped(300ms)) return;
    const auto at = request.find("/students/v2/students/");
    const std::string perm = at == std::string::npos ? "" : request.substr(at + 22, 7);
    (void)RawServer::write_all(fd, RawServer::response(200, R"({"perm":")" + perm + R"("})"));
  });
  auto options = raw_options(server);
  options.timeout = 10s;
  options.retry.max_total_time = std::chrono::milliseconds::max();
  const studentsvc::Client client(options);
  const auto one = client.get_student("1234567");
  REQUIRE(one);
  CHECK(one->perm == "1234567");
  const std::vector<std::string> perms{"1234567", "2345678", "3456789"};
  const auto results = client.get_students(perms);
  REQUIRE(results.size() == 3);
  for (std::size_t i = 0; i < perms.size(); ++i) {
    REQUIRE(results[i]);
    CHECK(results[i]->perm == perms[i]);
  }
}

TEST_CASE("a zero or negative timeout or max_total_time is refused and nothing reaches the server",
          "[timeouts]") {
  RawServer server([&](int fd, int) {
    (void)RawServer::read_request(fd);
    (void)RawServer::write_all(fd, RawServer::response(200, student_body));
  });
  const studentsvc::Client client(raw_options(server));
  const auto bad = GENERATE(0ms, -1ms);
  const int which = GENERATE(0, 1, 2);
  CAPTURE(bad.count(), which);
  studentsvc::CallOptions call;
  if (which == 0) call.timeout = bad;
  if (which == 1) call.connect_timeout = bad;
  if (which == 2) {
    call.retry = studentsvc::RetryPolicy{};
    call.retry->max_total_time = bad;
  }
  const auto r = client.get_student("1234567", call);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == studentsvc::ErrorKind::invalid_argument);
  const std::vector<std::string> perms{"1234567"};
  studentsvc::BatchOptions batch;
  batch.call = call;
  const auto rs = client.get_students(perms, batch);
  REQUIRE_FALSE(rs.at(0));
  CHECK(rs[0].error().kind == studentsvc::ErrorKind::invalid_argument);
  server.stop();
  CHECK(server.connections() == 0);
}

}  // namespace timeouts_test

// Limits and broken answers: the body cap (default and configured) against a
// 50 MB body with memory bounded, truncated bodies, connections closed mid-body
// or with no response, resets, garbage, header floods, invalid JSON, and
// redirects (never followed). Raw-socket servers on 127.0.0.1 play the faults.

#include <sys/resource.h>

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include <httplib.h>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/loopback.hpp"
#include "support/raw_server.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace limits_test {

using namespace std::chrono_literals;
using studentsvc::ErrorKind;
using studentsvc::test::RawServer;
using studentsvc::test::raw_options;
using studentsvc::test::student_body;

namespace {

constexpr std::size_t fifty_mb = 50U * 1024U * 1024U;

/// Peak resident set size of this process so far, in KiB (Linux: ru_maxrss).
long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

/// Streams `total` bytes of JSON-ish filler in 64 KiB writes, counting what the
/// kernel accepted, until done (true) or the client goes away (false).
bool stream_filler(int fd, std::size_t total, std::atomic<std::size_t>& sent, bool chunked) {
  static const std::string block(64U * 1024U, 'x');
  std::size_t left = total;
  while (left > 0) {
    const std::size_t n = std::min(left, block.size());
    std::size_t wrote = 0;
    bool ok = true;
    if (chunked) {
      char size_line[32];
      std::snprintf(size_line, sizeof size_line, "%zx\r\n", n);
      ok = RawServer::write_all(fd, size_line) && RawServer::write_all(fd, std::string_view(block).substr(0, n), &wrote) &&
           RawServer::write_all(fd, "\r\n");
    } else {
      ok = RawServer::write_all(fd, std::string_view(block).substr(0, n), &wrote);
    }
    sent += wrote;
    if (!ok) return false;
    left -= n;
  }
  return !chunked || RawServer::write_all(fd, "0\r\n\r\n");
}

enum class Framing { content_length, chunked, until_close };

}  // namespace

TEST_CASE("the body cap has a documented default and is configurable per client and per call", "[limits]") {
  CHECK(studentsvc::default_max_response_bytes == 4U * 1024U * 1024U);
  const studentsvc::ClientOptions defaults;
  CHECK(defaults.max_response_bytes == studentsvc::default_max_response_bytes);

  const std::string body(1000, ' ');
  const std::string answer = std::string(student_body) + body.substr(std::string(student_body).size());
  REQUIRE(answer.size() == 1000);
  RawServer server([&](int fd, int) {
    while (!RawServer::read_request(fd).empty()) {
      if (!RawServer::write_all(fd, RawServer::response(200, answer))) return;
    }
  });
  auto options = raw_options(server);
  options.max_response_bytes = 1000;  // exactly the body: accepted
  const studentsvc::Client client(options);
  CHECK(client.get_student("1234567"));

  studentsvc::CallOptions call;
  call.max_response_bytes = 999;  // one byte short: refused
  const auto refused = client.get_student("1234567", call);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == ErrorKind::transport);
  CHECK_FALSE(refused.error().retryable);
  CHECK_THAT(refused.error().message, Catch::Contains("999-byte limit"));
  // The next call on the same pooled handle has the client's cap again, libcurl's own size check too.
  CHECK(client.get_student("1234567"));

  auto small = options;
  small.max_response_bytes = 100;
  const studentsvc::Client small_client(small);
  CHECK_FALSE(small_client.get_student("1234567"));
  call.max_response_bytes = 4096;  // the call raises the client's cap
  CHECK(small_client.get_student("1234567", call));
}

TEST_CASE("a 50 MB body yields a transport error with memory bounded", "[limits]") {
  // Memory: ru_maxrss is the process's peak RSS. Each ctest case runs in its
  // own process, so the delta over a warm-up call is what this transfer cost.
  // Buffering the 50 MB would raise the peak by >= 50 MB; the cap (4 MiB
  // default) keeps it to a few MiB (an ASan build's quarantine adds a little).
  // Independently, the server counts the bytes the kernel took before the
  // client hung up: well under 50 MB shows the transfer was cut off early.
  const Framing framing = GENERATE(Framing::content_length, Framing::chunked, Framing::until_close);
  std::atomic<std::size_t> sent{0};
  std::atomic<bool> finished{false};
  RawServer server([&](int fd, int connection) {
    if (RawServer::read_request(fd).empty()) return;
    if (connection == 0) {  // warm-up
      RawServer::write_all(fd, RawServer::response(200, student_body, "Connection: close\r\n"));
      return;
    }
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
    switch (framing) {
      case Framing::content_length: head += "Content-Length: " + std::to_string(fifty_mb) + "\r\n\r\n"; break;
      case Framing::chunked: head += "Transfer-Encoding: chunked\r\n\r\n"; break;
      case Framing::until_close: head += "Connection: close\r\n\r\n"; break;
    }
    if (!RawServer::write_all(fd, head)) return;
    finished = stream_filler(fd, fifty_mb, sent, framing == Framing::chunked);
  });
  auto options = raw_options(server);
  const studentsvc::Client client(options);
  REQUIRE(client.get_student("1234567"));  // warm-up: libcurl and the handle pool are allocated

  const long before = peak_rss_kib();
  const auto start = std::chrono::steady_clock::now();
  const auto result = client.get_student("1234567");
  const auto took = std::chrono::steady_clock::now() - start;
  const long grown_kib = peak_rss_kib() - before;
  server.stop();

  REQUIRE_FALSE(result);
  CHECK(result.error().kind == ErrorKind::transport);
  CHECK_FALSE(result.error().retryable);
  CHECK_THAT(result.error().message, Catch::Contains("exceeds the 4194304-byte limit"));
  INFO("peak RSS grew by " << grown_kib << " KiB; the server wrote " << sent.load() << " bytes");
  CHECK(grown_kib < 32 * 1024);
  CHECK_FALSE(finished);
  CHECK(sent.load() < 24U * 1024U * 1024U);  // the cap plus socket buffers, not 50 MB
  CHECK(took < 10s);
}

TEST_CASE("an oversized error body is cut off too", "[limits]") {
  std::atomic<std::size_t> sent{0};
  RawServer server([&](int fd, int) {
    if (RawServer::read_request(fd).empty()) return;
    RawServer::write_all(fd, "HTTP/1.1 500 Oops\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n");
    (void)stream_filler(fd, fifty_mb, sent, true);
  });
  const auto r = studentsvc::Client(raw_options(server)).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK_THAT(r.error().message, Catch::Contains("byte limit"));
}

TEST_CASE("a flood of response headers is cut off by the transport", "[limits]") {
  std::atomic<std::size_t> sent{0};
  RawServer server([&](int fd, int) {
    if (RawServer::read_request(fd).empty()) return;
    if (!RawServer::write_all(fd, "HTTP/1.1 200 OK\r\n")) return;
    const std::string line = "X-Flood: " + std::string(1000, 'a') + "\r\n";
    for (std::size_t total = 0; total < fifty_mb; total += line.size()) {
      std::size_t wrote = 0;
      const bool ok = RawServer::write_all(fd, line, &wrote);
      sent += wrote;
      if (!ok) return;
    }
  });
  const auto r = studentsvc::Client(raw_options(server)).get_student("1234567");
  server.stop();
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK(sent.load() < 24U * 1024U * 1024U);
}

namespace {

/// A header-section flood: what comes first, then the unit it repeats.
struct HeaderFlood {
  const char* name;
  std::string prelude;
  std::string unit;
  const char* says;  ///< Whole lines: the SDK's cap; one line: libcurl's line buffer.
};

/// `line` repeated to fill 64 KiB, so the server writes fast.
std::string repeated(std::string_view line) {
  std::string out;
  while (out.size() + line.size() <= 64U * 1024U) out += line;
  return out;
}

const std::string chunked_head =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5\r\nhello\r\n0\r\n";

constexpr const char* capped = "response headers exceed the 65536-byte limit";

}  // namespace

TEST_CASE("endless headers, trailers and 1xx answers end at the header cap with memory bounded",
          "[limits][headers]") {
  // The server offers 512 MiB as fast as the client reads; buffering it would
  // grow the peak RSS by hundreds of MiB. The cap (64 KiB by default) counts
  // every status line, header, trailer and 1xx answer; a single line without
  // an end is bounded by libcurl itself (CURL_MAX_HTTP_HEADER, 100 KiB).
  // Without the cap, libcurl 7.88 stops header lines at 300 KiB but not
  // trailers: they grew the peak RSS by ~850 MiB.
  const HeaderFlood flood = GENERATE(
      HeaderFlood{"endless header lines", "HTTP/1.1 200 OK\r\n", repeated("X-Flood: " + std::string(100, 'a') + "\r\n"),
                  capped},
      HeaderFlood{"endless trailer lines", chunked_head, repeated("X-Trailer: " + std::string(100, 'b') + "\r\n"), capped},
      HeaderFlood{"one endless header line", "HTTP/1.1 200 OK\r\nX-Long: ", std::string(64U * 1024U, 'c'),
                  "a response header line exceeds libcurl's 102400-byte limit"},
      HeaderFlood{"one endless trailer line", chunked_head + "X-Long: ", std::string(64U * 1024U, 'd'),
                  "a response trailer line exceeds libcurl's limit"},
      HeaderFlood{"a storm of 100 Continue", "", repeated("HTTP/1.1 100 Continue\r\n\r\n"), capped},
      HeaderFlood{"a storm of 1xx with headers", "", repeated("HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"),
                  capped});
  DYNAMIC_SECTION(flood.name) {
    std::atomic<std::size_t> sent{0};
    std::atomic<bool> finished{false};
    RawServer server([&](int fd, int connection) {
      if (RawServer::read_request(fd).empty()) return;
      if (connection == 0) {  // warm-up
        RawServer::write_all(fd, RawServer::response(200, student_body, "Connection: close\r\n"));
        return;
      }
      if (!RawServer::write_all(fd, flood.prelude)) return;
      finished = RawServer::flood(fd, flood.unit, 512U * 1024U * 1024U, &sent);
    });
    const studentsvc::Client client(raw_options(server));
    REQUIRE(client.get_student("1234567"));  // warm-up: libcurl and the handle pool are allocated

    const long before = peak_rss_kib();
    const auto result = client.get_student("1234567");
    const long grown_kib = peak_rss_kib() - before;
    server.stop();

    REQUIRE_FALSE(result);
    CHECK(result.error().kind == ErrorKind::transport);
    CHECK_FALSE(result.error().retryable);
    CHECK_THAT(result.error().message, Catch::Contains(flood.says));
    INFO("peak RSS grew by " << grown_kib << " KiB; the server wrote " << sent.load() << " bytes");
    CHECK(grown_kib < 64 * 1024);
    CHECK_FALSE(finished);
    CHECK(sent.load() < 64U * 1024U * 1024U);
  }
}

TEST_CASE("in a batch, an endless trailer section fails at the header cap and the others succeed",
          "[limits][headers][batch]") {
  std::atomic<std::size_t> sent{0};
  RawServer server([&](int fd, int) {
    for (;;) {
      const std::string request = RawServer::read_request(fd);
      if (request.empty()) return;
      if (request.find(" /flood ") == std::string::npos) {
        if (!RawServer::write_all(fd, RawServer::response(200, student_body))) return;
        continue;
      }
      if (!RawServer::write_all(fd, chunked_head)) return;
      (void)RawServer::flood(fd, repeated("X-Trailer: " + std::string(100, 'b') + "\r\n"), 512U * 1024U * 1024U, &sent);
      return;
    }
  });
  studentsvc::CurlTransportOptions to;
  to.allow_http = true;
  studentsvc::CurlTransport transport(to);
  std::vector<studentsvc::HttpRequest> batch(4);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch[i].url = server.base_url() + (i == 1 ? "/flood" : "/ok");
    batch[i].timeout = 20s;
  }
  const long before = peak_rss_kib();
  const auto out = transport.send_all(batch, 2);
  const long grown_kib = peak_rss_kib() - before;
  server.stop();
  REQUIRE(out.size() == 4);
  CHECK(out[0]);
  REQUIRE_FALSE(out[1]);
  CHECK(out[1].error().message == capped);
  CHECK_FALSE(out[1].error().retryable);
  CHECK(out[2]);
  CHECK(out[3]);
  INFO("peak RSS grew by " << grown_kib << " KiB; the server wrote " << sent.load() << " bytes");
  CHECK(grown_kib < 64 * 1024);
}

TEST_CASE("the header cap is per request: exactly at it passes, one byte over fails", "[limits][headers]") {
  const std::string answer = RawServer::response(200, student_body, "X-Pad: " + std::string(500, 'p') + "\r\n");
  const std::size_t head_bytes = answer.size() - std::string_view(student_body).size();
  RawServer server([&](int fd, int) {
    while (!RawServer::read_request(fd).empty()) {
      if (!RawServer::write_all(fd, answer)) return;
    }
  });
  studentsvc::CurlTransportOptions to;
  to.allow_http = true;
  studentsvc::CurlTransport transport(to);
  studentsvc::HttpRequest request;
  request.url = server.base_url() + "/x";
  request.max_response_header_bytes = head_bytes;
  CHECK(transport.send(request));
  request.max_response_header_bytes = head_bytes - 1;
  const auto over = transport.send(request);
  REQUIRE_FALSE(over);
  CHECK(over.error().kind == ErrorKind::transport);
  CHECK_FALSE(over.error().retryable);
  CHECK(over.error().message == "response headers exceed the " + std::to_string(head_bytes - 1) + "-byte limit");
  CHECK(studentsvc::HttpRequest{}.max_response_header_bytes == studentsvc::default_max_response_header_bytes);
  CHECK(studentsvc::default_max_response_header_bytes == 64U * 1024U);
}

TEST_CASE("an oversized request value is invalid_argument naming it, and the server receives nothing",
          "[limits][headers]") {
  // Before: a 1 MiB value reached libcurl, which failed it as "a response
  // header line exceeds libcurl's 102400-byte limit (the request may or may
  // not have been processed)", though no byte had left.
  studentsvc::testing::MockServer server;
  const std::string huge(1024 * 1024, 'v');
  const auto refused = [&](const studentsvc::ApiError& e, std::string_view names) {
    INFO(e.message);
    CHECK(e.kind == ErrorKind::invalid_argument);
    CHECK_FALSE(e.retryable);
    CHECK_THAT(e.message, Catch::Contains(std::string(names)) && Catch::Contains("nothing was sent"));
    CHECK(e.message.size() < 200);
  };
  {
    auto o = server.client_options();
    o.auth.api_key = huge;
    const auto r = studentsvc::Client(o).get_student("1234567");
    REQUIRE_FALSE(r);
    refused(r.error(), "API key");
  }
  {
    studentsvc::CallOptions call;
    call.user_jwt = huge;
    const studentsvc::Client client(server.client_options());
    const auto r = client.get_student("1234567", call);
    REQUIRE_FALSE(r);
    refused(r.error(), "JWT");
    const auto current = client.current_student(huge);
    REQUIRE_FALSE(current);
    refused(current.error(), "JWT");
    studentsvc::BatchOptions batch_options;
    batch_options.call = call;
    const std::vector<std::string> perms = {"1234567", "7654321"};
    const auto batch = client.get_students(perms, batch_options);
    REQUIRE(batch.size() == 2);
    REQUIRE_FALSE(batch[0]);
    refused(batch[0].error(), "JWT");
  }
  {
    auto o = server.client_options();
    o.auth.basic = studentsvc::BasicCredential{"svc-registrar-app", huge};
    const auto r = studentsvc::Client(o).get_student("1234567");
    REQUIRE_FALSE(r);
    refused(r.error(), "password");
  }
  {
    auto o = server.client_options();
    o.api_version = huge;
    const auto r = studentsvc::Client(o).get_student("1234567");
    REQUIRE_FALSE(r);
    refused(r.error(), "api_version");
  }
  {
    studentsvc::ConversationRequest request;
    request.method = "POST";
    request.body = "{}";
    request.content_type = huge;
    const auto r = studentsvc::Client(server.client_options()).conversation(request);
    REQUIRE_FALSE(r);
    refused(r.error(), "content_type");
    studentsvc::ConversationRequest long_path;
    long_path.sub_path = huge;
    const auto p = studentsvc::Client(server.client_options()).conversation(long_path);
    REQUIRE_FALSE(p);
    refused(p.error(), "sub_path");
  }
  CHECK(server.request_count() == 0);
  // The control: a long key under the cap goes out (the mock refuses it, 401, but it arrived;
  // cpp-httplib answers 400 itself past 8 KiB of a header line: wire_tests sends one at the cap).
  auto o = server.client_options();
  o.auth.api_key = std::string(4096, 'k');
  const auto long_key = studentsvc::Client(o).get_student("1234567");
  REQUIRE_FALSE(long_key);
  CHECK(long_key.error().kind == ErrorKind::unauthorized);
  CHECK(server.request_count() == 1);
}

TEST_CASE("broken answers each yield a transport error", "[limits]") {
  struct Fault {
    const char* name;
    std::function<void(int fd)> play;
    const char* says;
  };
  const std::array<Fault, 7> faults{{
      {"truncated body (Content-Length 200, 60 bytes, then FIN)",
       [](int fd) {
         RawServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n");
         RawServer::write_all(fd, std::string_view(student_body).substr(0, 60));
       },
       "closed mid-body"},
      {"chunked body closed inside a chunk",
       [](int fd) {
         RawServer::write_all(fd,
                              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "100\r\n{\"perm\":\"1234567\",");
       },
       "closed mid-body"},
      {"closed with no response",
       [](int) {},
       "closed with no response"},
      {"reset after the request",
       [](int fd) { RawServer::reset(fd); },
       "reset"},
      {"reset mid-body",
       [](int fd) {
         RawServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"perm\":");
         std::this_thread::sleep_for(50ms);
         RawServer::reset(fd);
       },
       "reset"},
      {"garbage instead of HTTP",
       [](int fd) { RawServer::write_all(fd, "SSH-2.0-OpenSSH_9.2\r\n\r\n"); },
       ""},
      {"headers that never end",
       [](int fd) { RawServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-A: b"); },
       ""},
  }};
  for (const auto& fault : faults) {
    DYNAMIC_SECTION(fault.name) {
      RawServer server([&](int fd, int) {
        if (RawServer::read_request(fd).empty()) return;
        fault.play(fd);
      });
      const auto start = std::chrono::steady_clock::now();
      const auto r = studentsvc::Client(raw_options(server)).get_student("1234567");
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == ErrorKind::transport);
      CHECK(r.error().status == 0);
      CHECK_THAT(r.error().message, Catch::Contains(fault.says));
      CHECK(std::chrono::steady_clock::now() - start < 5s);
    }
  }
}

TEST_CASE("a 200 whose body is not the documented JSON yields decode", "[limits]") {
  const std::string body = GENERATE(std::string("<html>maintenance</html>"), std::string("{\"perm\":\"1234567\""),
                                    std::string("[1,2,3]"), std::string(R"({"perm":1234567})"), std::string(""));
  RawServer server([&](int fd, int) {
    if (RawServer::read_request(fd).empty()) return;
    RawServer::write_all(fd, RawServer::response(200, body));
  });
  const auto r = studentsvc::Client(raw_options(server)).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::decode);
  CHECK(r.error().status == 200);
  if (body == R"({"perm":1234567})") CHECK_THAT(r.error().message, Catch::Contains("perm"));
}

TEST_CASE("a 400 with an unknown field nested 200,000 deep keeps its message and modelState", "[limits][deep]") {
  // 400 KB, inside the body cap: the deep value is skipped where it stands,
  // before or after the documented fields, chunked or with a length.
  const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
  const std::string fields = R"("message":"The request is invalid.","modelState":{"perm":["Invalid perm"]})";
  const bool first = GENERATE(true, false);
  const bool chunked = GENERATE(false, true);
  CAPTURE(first, chunked);
  const std::string body = first ? R"({"x":)" + deep + "," + fields + "}" : "{" + fields + R"(,"x":)" + deep + "}";
  RawServer server([&](int fd, int) {
    if (RawServer::read_request(fd).empty()) return;
    RawServer::write_all(fd, chunked ? RawServer::chunked_response(400, body) : RawServer::response(400, body));
  });
  const auto r = studentsvc::Client(raw_options(server)).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::bad_request);
  CHECK(r.error().status == 400);
  CHECK(r.error().message == "The request is invalid.");
  CHECK(r.error().model_state == studentsvc::ModelState{{"perm", {"Invalid perm"}}});
  CHECK(r.error().attempts == 1);
}

TEST_CASE("redirects are never followed, so credentials never go to another host", "[limits]") {
  // The SDK turns off libcurl's redirect following: a 3xx comes back as an
  // http_status ApiError with the status and "redirect ... not followed".
  // Nothing is sent to the Location, whichever host it names.
  studentsvc::testing::MockServer elsewhere;  // would accept the same credentials
  const std::string target = GENERATE(std::string("http://localhost:"), std::string("http://127.0.0.1:"));
  const int status = GENERATE(301, 302, 307, 308);
  const std::string location = target + std::to_string(elsewhere.port()) + "/students/v2/students/1234567";
  studentsvc::testing::MockServerOptions mo;
  mo.intercept = [&](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    res.set_header("Location", location);
    res.set_content("<a href=\"" + location + "\">moved</a>", "text/html");
    return true;
  };
  studentsvc::testing::MockServer origin(mo);
  auto options = origin.client_options();
  options.retry = studentsvc::RetryPolicy::none();
  const auto r = studentsvc::Client(options).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::http_status);
  CHECK(r.error().status == status);
  CHECK_THAT(r.error().message, Catch::Contains("redirect") && Catch::Contains("not followed"));
  CHECK(origin.request_count() == 1);
  CHECK(elsewhere.request_count() == 0);
}

}  // namespace limits_test

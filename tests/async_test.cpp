// Asynchronous calls (client.hpp's *_async, Transport::send_async and
// run_after) and the streamed batch (for_each_student), end to end through
// the real CurlTransport against MockServer and the raw fault server on
// 127.0.0.1, plus the send-only fallback (FakeTransport).

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/fake_transport.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/event_threads.hpp"
#include "support/fast_retry.hpp"
#include "support/log_capture.hpp"
#include "support/loopback.hpp"
#include "support/raw_server.hpp"
#include "support/wait.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace async_test {

using namespace std::chrono_literals;
using studentsvc::Client;
using studentsvc::ErrorKind;
using studentsvc::Result;
using studentsvc::StudentExtended;
using studentsvc::test::event_threads;
using studentsvc::test::eventually;
using studentsvc::test::RawServer;
using studentsvc::test::raw_options;
using studentsvc::test::seconds_since;
using studentsvc::test::student_body;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;

namespace {

std::string ok_response(std::string_view body = student_body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + std::string(body);
}

// A one-shot latch for completions on another thread.
class Latch {
 public:
  explicit Latch(std::size_t count) : left_(count) {}
  void count_down() {
    const std::lock_guard lock(mutex_);
    if (left_ > 0 && --left_ == 0) cv_.notify_all();
  }
  bool wait_for(std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, d, [&] { return left_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t left_;
};

}  // namespace

TEST_CASE("the future forms of the three calls return what the blocking calls return", "[async]") {
  MockServerOptions options;
  options.conversation = [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(R"({"echo":")" + req.method + R"("})", "application/json");
  };
  MockServer server(options);
  REQUIRE(server.running());
  const Client client(server.client_options());

  auto student = client.get_student_async("1234567");
  auto current = client.current_student_async("mock-jwt-li");
  studentsvc::ConversationRequest talk;
  talk.method = "POST";
  talk.body = R"({"q":1})";
  auto conversation = client.conversation_async(talk);

  const auto s = student.get();
  REQUIRE(s.has_value());
  CHECK(*s == *client.get_student("1234567"));
  const auto c = current.get();
  REQUIRE(c.has_value());
  CHECK(c->perm == "2345678");
  const auto r = conversation.get();
  REQUIRE(r.has_value());
  CHECK(r->body == R"({"echo":"POST"})");

  // Errors come back the same way: an unknown perm, an invalid one (never sent).
  const auto missing = client.get_student_async("9999999").get();
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::not_found);
  const auto before = server.request_count();
  const auto invalid = client.get_student_async("12").get();
  REQUIRE_FALSE(invalid.has_value());
  CHECK(invalid.error().kind == ErrorKind::invalid_argument);
  CHECK(server.request_count() == before);
}

TEST_CASE("a completion runs once, on the transport's one event thread, for many calls in flight", "[async]") {
  MockServer server;
  REQUIRE(server.running());
  const Client client(server.client_options());
  const auto caller = std::this_thread::get_id();

  constexpr std::size_t calls = 300;
  Latch all(calls);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::atomic<std::size_t> ok{0};
  std::atomic<std::size_t> completions{0};
  const std::vector<std::string> perms = {"1234567", "2345678", "3456789", "4567890", "5678901"};
  for (std::size_t i = 0; i < calls; ++i) {
    const std::string perm = perms[i % perms.size()];
    client.get_student_async(perm, [&, perm](Result<StudentExtended> r) {
      {
        const std::lock_guard lock(mutex);
        threads.insert(std::this_thread::get_id());
      }
      if (r && r->perm == perm) ok.fetch_add(1);
      completions.fetch_add(1);
      all.count_down();
    });
  }
  REQUIRE(all.wait_for(60s));
  CHECK(ok.load() == calls);
  CHECK(completions.load() == calls);
  REQUIRE(threads.size() == 1);
  CHECK(*threads.begin() != caller);
  CHECK(event_threads() >= 1);
}

TEST_CASE("async calls retry, time out and cap the body as the blocking calls do", "[async]") {
  SECTION("a 503 then a 200: two attempts") {
    std::atomic<int> seen{0};
    RawServer server([&](int fd, int) {
      server.serve(fd, [&](const std::string&, int) {
        return seen.fetch_add(1) == 0
                   ? std::string("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}")
                   : ok_response();
      });
    });
    auto options = raw_options(server);
    options.retry = studentsvc::test::fast_retry(3);
    const Client client(options);
    const auto r = client.get_student_async("1234567").get();
    REQUIRE(r.has_value());
    CHECK(seen.load() == 2);
  }
  SECTION("no answer: a transport error at the timeout, not a hang") {
    RawServer server([&](int fd, int) {
      (void)server.next_request(fd);
      server.sleep_unless_stopped(10s);
    });
    auto options = raw_options(server);
    options.timeout = 300ms;
    const Client client(options);
    const auto start = std::chrono::steady_clock::now();
    const auto r = client.get_student_async("1234567").get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::transport);
    CHECK(seconds_since(start) < 8.0);
  }
  SECTION("a body over the cap: a transport error") {
    RawServer server([&](int fd, int) {
      (void)server.next_request(fd);
      const std::string body(64 * 1024, 'x');
      RawServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    });
    auto options = raw_options(server);
    options.max_response_bytes = 1024;
    const Client client(options);
    const auto r = client.get_student_async("1234567").get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::transport);
    CHECK_FALSE(r.error().retryable);
  }
  SECTION("a non-idempotent conversation is sent once, whatever the policy") {
    std::atomic<int> seen{0};
    RawServer server([&](int fd, int) {
      server.serve(fd, [&](const std::string&, int) {
        seen.fetch_add(1);
        return std::string("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}");
      });
    });
    auto options = raw_options(server);
    options.retry = studentsvc::test::fast_retry(4);
    const Client client(options);
    studentsvc::ConversationRequest post;
    post.method = "POST";
    post.body = "{}";
    const auto r = client.conversation_async(post).get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().status == 503);
    CHECK(r.error().attempts == 1);
    CHECK(seen.load() == 1);
  }
}

#if STUDENTSVC_HAS_STOP_TOKEN
TEST_CASE("a stop request ends an async call mid-body, or during its retry wait, as cancelled", "[async]") {
  SECTION("mid-body") {
    std::atomic<bool> body_started{false};
    RawServer server([&](int fd, int) {
      (void)server.next_request(fd);
      RawServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{\"perm\":");
      body_started = true;
      server.sleep_unless_stopped(10s);
    });
    const Client client(raw_options(server));
    std::stop_source stop;
    auto future = client.get_student_async("1234567", {}, stop.get_token());
    REQUIRE(eventually([&] { return body_started.load(); }));
    std::this_thread::sleep_for(50ms);  // most likely mid-body now; cancelled either way (the body never ends)
    const auto start = std::chrono::steady_clock::now();
    stop.request_stop();
    REQUIRE(future.wait_for(5s) == std::future_status::ready);
    const double took = seconds_since(start);
    const auto r = future.get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::cancelled);
    CHECK_FALSE(r.error().retryable);
    CHECK(took < 2.0);  // 100 ms is the target; generous on a loaded machine
  }
  SECTION("while waiting to retry after a 503 with Retry-After") {
    std::atomic<int> seen{0};
    RawServer server([&](int fd, int) {
      server.serve(fd, [&](const std::string&, int) {
        seen.fetch_add(1);
        return std::string("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 30\r\nContent-Length: 2\r\n\r\n{}");
      });
    });
    auto options = raw_options(server);
    options.retry = studentsvc::test::fast_retry(3, 60s);
    const Client client(options);
    std::stop_source stop;
    auto future = client.get_student_async("1234567", {}, stop.get_token());
    REQUIRE(eventually([&] { return seen.load() == 1; }));
    std::this_thread::sleep_for(50ms);  // most likely in its 30 s wait now; cancelled either way, sent once
    stop.request_stop();
    REQUIRE(future.wait_for(5s) == std::future_status::ready);
    const auto r = future.get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::cancelled);
    CHECK(seen.load() == 1);
  }
  SECTION("a token already stopped: nothing is sent") {
    MockServer server;
    const Client client(server.client_options());
    std::stop_source stop;
    stop.request_stop();
    const auto r = client.get_student_async("1234567", {}, stop.get_token()).get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::cancelled);
    CHECK(server.request_count() == 0);
  }
}
#endif

TEST_CASE("a completion that throws is logged and dropped, and the engine goes on", "[async]") {
  MockServer server;
  auto options = server.client_options();
  studentsvc::test::LogCapture log;
  options.logger = log.logger(studentsvc::LogLevel::error);
  const Client client(options);
  Latch thrown(1);
  client.get_student_async("1234567", [&](Result<StudentExtended>) {
    thrown.count_down();
    throw std::runtime_error("caller bug");
  });
  REQUIRE(thrown.wait_for(30s));
  const auto after = client.get_student_async("2345678").get();
  REQUIRE(after.has_value());
  bool logged = false;
  for (const auto& line : log.lines()) logged = logged || line.find("completion callback threw") != std::string::npos;
  CHECK(logged);
}

TEST_CASE("a Transport that implements only send runs async calls on the calling thread", "[async]") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  fake->respond(200, student_body);
  studentsvc::ClientOptions options;
  options.base_url = "https://registrar.example.edu/students/v2";
  options.auth.api_key = "k";
  options.transport = fake;
  const Client client(options);
  const auto caller = std::this_thread::get_id();
  std::optional<std::thread::id> ran_on;
  bool ok = false;
  client.get_student_async("1234567", [&](Result<StudentExtended> r) {
    ran_on = std::this_thread::get_id();
    ok = r.has_value() && r->perm == "1234567";
  });
  // Called before get_student_async returned.
  REQUIRE(ran_on.has_value());
  CHECK(*ran_on == caller);
  CHECK(ok);
  CHECK(fake->requests().size() == 1);
}

TEST_CASE("destroying a Client with async calls in flight cancels them and waits", "[async]") {
  RawServer server([&](int fd, int) {
    (void)server.next_request(fd);
    server.sleep_unless_stopped(20s);
  });
  std::atomic<int> cancelled{0};
  std::atomic<int> completions{0};
  const auto start = std::chrono::steady_clock::now();
  {
    const Client client(raw_options(server));
    for (int i = 0; i < 8; ++i) {
      client.get_student_async("1234567", [&](Result<StudentExtended> r) {
        if (!r && r.error().kind == ErrorKind::cancelled) cancelled.fetch_add(1);
        completions.fetch_add(1);
      });
    }
    std::this_thread::sleep_for(100ms);
  }  // cancels and waits here
  CHECK(completions.load() == 8);
#if STUDENTSVC_HAS_STOP_TOKEN
  CHECK(cancelled.load() == 8);
  CHECK(seconds_since(start) < 10.0);
#endif
}

TEST_CASE("a completion may drop the last copy of its Client (and transport) on the event thread", "[async]") {
  MockServer server;
  std::promise<bool> done;
  {
    auto client = std::make_shared<Client>(server.client_options());
    auto* raw = client.get();
    raw->get_student_async("1234567", [client = std::move(client), &done](Result<StudentExtended> r) mutable {
      client.reset();  // the last Client: its state, its CurlTransport and event loop go after this call
      done.set_value(r.has_value());
    });
  }
  auto f = done.get_future();
  REQUIRE(f.wait_for(30s) == std::future_status::ready);
  CHECK(f.get());
  std::this_thread::sleep_for(100ms);  // the event thread ends on its own
}

TEST_CASE("for_each_student streams every result with its index, perm and progress", "[async][stream]") {
  MockServer server;
  const Client client(server.client_options());
  const std::vector<std::string> known = {"1234567", "2345678", "3456789", "4567890", "5678901"};
  std::vector<std::string> perms;
  for (int i = 0; i < 40; ++i) perms.push_back(known[static_cast<std::size_t>(i) % known.size()]);
  perms.push_back("12");  // invalid: fails alone

  std::vector<int> seen(perms.size(), 0);
  std::size_t last_done = 0;
  std::optional<std::size_t> total;
  studentsvc::StreamOptions options;
  options.max_concurrency = 6;
  options.on_progress = [&](const studentsvc::BatchProgress& p) {
    CHECK(p.done == last_done + 1);
    last_done = p.done;
    total = p.total;
  };
  const auto summary = client.for_each_student(perms, [&](std::size_t i, std::string_view perm, Result<StudentExtended> r) {
    REQUIRE(i < perms.size());
    ++seen[i];
    CHECK(perm == perms[i]);
    if (perm == "12") {
      CHECK(r.error().kind == ErrorKind::invalid_argument);
    } else {
      REQUIRE(r.has_value());
      CHECK(r->perm == perm);
    }
  }, options);
  for (const int n : seen) CHECK(n == 1);
  CHECK(last_done == perms.size());
  CHECK(total == perms.size());
  CHECK(summary.sent == perms.size());
  CHECK_FALSE(summary.stopped_by.has_value());
}

TEST_CASE("for_each_student reads a lazy range (a file, line by line)", "[async][stream]") {
  MockServer server;
  const Client client(server.client_options());
  std::istringstream file("1234567\n2345678\n3456789\n");
  std::size_t ok = 0;
  client.for_each_student(std::views::istream<std::string>(file),
                          [&](std::size_t, std::string_view, Result<StudentExtended> r) { ok += r ? 1 : 0; });
  CHECK(ok == 3);
}

TEST_CASE("fail-fast: a wrong password stops a 5,000-perm stream after the first answers", "[async][stream]") {
  MockServer server;
  auto options = server.client_options();
  options.auth.basic->password = "wrong";
  const Client client(options);
  std::vector<std::string> perms;
  for (int i = 0; i < 5000; ++i) perms.push_back(std::to_string(1000000 + i));
  std::size_t cancelled = 0;
  std::size_t unauthorized = 0;
  studentsvc::StreamOptions stream;
  stream.max_concurrency = 16;
  const auto summary = client.for_each_student(perms, [&](std::size_t, std::string_view, Result<StudentExtended> r) {
    REQUIRE_FALSE(r.has_value());
    if (r.error().kind == ErrorKind::cancelled) {
      ++cancelled;
      CHECK(r.error().message.find("401") != std::string::npos);
    } else if (r.error().kind == ErrorKind::unauthorized) {
      ++unauthorized;
    }
  }, stream);
  CHECK(server.request_count() <= stream.max_concurrency);
  REQUIRE(summary.stopped_by.has_value());
  CHECK(summary.stopped_by->kind == ErrorKind::unauthorized);
  CHECK(cancelled + unauthorized == perms.size());
  CHECK(summary.not_sent == cancelled);

  SECTION("fail_fast off: every lookup is sent") {
    std::vector<std::string> few(perms.begin(), perms.begin() + 40);
    const auto before = server.request_count();
    stream.fail_fast = false;
    const auto all = client.for_each_student(few, [](std::size_t, std::string_view, Result<StudentExtended>) {}, stream);
    CHECK(server.request_count() - before == few.size());
    CHECK_FALSE(all.stopped_by.has_value());
  }
}

#if STUDENTSVC_HAS_STOP_TOKEN
TEST_CASE("a stop request ends a stream: in-flight lookups and unsent perms complete as cancelled", "[async][stream]") {
  RawServer server([&](int fd, int) {
    (void)server.next_request(fd);
    server.sleep_unless_stopped(20s);
  });
  const Client client(raw_options(server));
  std::vector<std::string> perms(200, "1234567");
  std::stop_source stop;
  studentsvc::StreamOptions options;
  options.max_concurrency = 4;
  options.stop = stop.get_token();
  std::thread stopper([&] {
    std::this_thread::sleep_for(300ms);
    stop.request_stop();
  });
  std::size_t cancelled = 0;
  std::size_t results = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto summary = client.for_each_student(perms, [&](std::size_t, std::string_view, Result<StudentExtended> r) {
    ++results;
    if (!r && r.error().kind == ErrorKind::cancelled) ++cancelled;
  }, options);
  stopper.join();
  CHECK(results == perms.size());
  CHECK(cancelled == perms.size());
  CHECK(summary.stop_requested);
  CHECK(summary.sent <= 4);
  CHECK(seconds_since(start) < 10.0);
}

TEST_CASE("an exception from the stream's callback cancels the lookups in flight and propagates", "[async][stream]") {
  RawServer server([&](int fd, int) {
    const auto request = server.next_request(fd);
    if (RawServer::target_of(request).ends_with("/1234567")) {
      RawServer::write_all(fd, ok_response());
      return;
    }
    server.sleep_unless_stopped(20s);
  });
  const Client client(raw_options(server));
  const std::vector<std::string> perms = {"1234567", "2345678", "3456789"};
  studentsvc::StreamOptions options;
  options.max_concurrency = 3;
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(client.for_each_student(perms,
                                          [](std::size_t, std::string_view, Result<StudentExtended> r) {
                                            if (r) throw std::runtime_error("caller bug");
                                          },
                                          options),
                  std::runtime_error);
  CHECK(seconds_since(start) < 10.0);
}
#endif

TEST_CASE("destroying a CurlTransport with transfers in flight cancels them, runs their completions, joins", "[async]") {
  RawServer server([&](int fd, int) {
    (void)server.next_request(fd);
    server.sleep_unless_stopped(20s);
  });
  studentsvc::CurlTransportOptions options;
  options.allow_http = true;
  auto transport = std::make_unique<studentsvc::CurlTransport>(options);
  std::atomic<int> cancelled{0};
  std::atomic<int> completions{0};
  for (int i = 0; i < 5; ++i) {
    studentsvc::HttpRequest request;
    request.url = server.base_url() + "/students/v2/students/1234567";
    transport->send_async(
        request,
        [&](Result<studentsvc::HttpResponse> r) {
          if (!r && r.error().kind == ErrorKind::cancelled) cancelled.fetch_add(1);
          completions.fetch_add(1);
        },
        studentsvc::StopToken{});
  }
  std::this_thread::sleep_for(100ms);
  const auto start = std::chrono::steady_clock::now();
  transport.reset();
  CHECK(completions.load() == 5);
  CHECK(cancelled.load() == 5);
  CHECK(seconds_since(start) < 5.0);
}

TEST_CASE("run_after: a timer on the event thread, or the calling thread's wait for a send-only transport", "[async]") {
  studentsvc::CurlTransportOptions options;
  studentsvc::CurlTransport curl(options);
  studentsvc::testing::FakeTransport fake;
  for (studentsvc::Transport* transport : {static_cast<studentsvc::Transport*>(&curl),
                                           static_cast<studentsvc::Transport*>(&fake)}) {
    std::promise<bool> fired;
    const auto start = std::chrono::steady_clock::now();
    transport->run_after(30ms, [&](bool elapsed) { fired.set_value(elapsed); }, studentsvc::StopToken{});
    auto f = fired.get_future();
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    CHECK(f.get());
    CHECK(seconds_since(start) >= 0.025);
#if STUDENTSVC_HAS_STOP_TOKEN
    std::stop_source stop;
    std::promise<bool> stopped;
    std::thread stopper([&] {
      std::this_thread::sleep_for(50ms);
      stop.request_stop();
    });
    transport->run_after(30s, [&](bool elapsed) { stopped.set_value(elapsed); }, stop.get_token());
    auto s = stopped.get_future();
    REQUIRE(s.wait_for(10s) == std::future_status::ready);
    CHECK_FALSE(s.get());
    stopper.join();
#endif
  }
}

}  // namespace async_test

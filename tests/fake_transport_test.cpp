// Unit tests for testing/fake_transport.hpp: the queue, the handler fallback,
// failures, recording, clear, and thread safety.

#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <studentsvc/testing/fake_transport.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace fake_transport_test {

using studentsvc::ErrorKind;
using studentsvc::Headers;
using studentsvc::HttpRequest;
using studentsvc::HttpResponse;
using studentsvc::testing::FakeTransport;

namespace {

HttpRequest request(std::string url, std::string method = "GET") {
  HttpRequest r;
  r.url = std::move(url);
  r.method = std::move(method);
  return r;
}

}  // namespace

TEST_CASE("FakeTransport answers from its queue in order", "[fake]") {
  FakeTransport fake;
  fake.respond(200, "first");
  fake.respond(404, "second", Headers{{"X-Id", "2"}});
  fake.enqueue(HttpResponse{503, Headers{{"Retry-After", "1"}}, "third"});
  CHECK(fake.pending() == 3);

  auto a = fake.send(request("https://h/1"));
  auto b = fake.send(request("https://h/2"));
  auto c = fake.send(request("https://h/3"));
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(a->status == 200);
  CHECK(a->body == "first");
  CHECK(b->status == 404);
  CHECK(b->headers.find("x-id") == std::optional<std::string_view>("2"));
  CHECK(c->status == 503);
  CHECK(c->body == "third");
  CHECK(fake.pending() == 0);

  SECTION("once the queue is empty and there is no handler: a transport error") {
    auto d = fake.send(request("https://h/4"));
    REQUIRE_FALSE(d);
    CHECK(d.error().kind == ErrorKind::transport);
    CHECK(fake.request_count() == 4);
  }
}

TEST_CASE("FakeTransport falls back to the handler after the queue", "[fake]") {
  FakeTransport fake([](const HttpRequest& r) -> studentsvc::Result<HttpResponse> {
    return HttpResponse{200, {}, "handler:" + r.url};
  });
  fake.respond(201, "queued");
  auto a = fake.send(request("https://h/a"));
  auto b = fake.send(request("https://h/b"));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->status == 201);
  CHECK(a->body == "queued");
  CHECK(b->body == "handler:https://h/b");

  SECTION("set_handler replaces it") {
    fake.set_handler([](const HttpRequest&) -> studentsvc::Result<HttpResponse> { return HttpResponse{418, {}, ""}; });
    auto c = fake.send(request("https://h/c"));
    REQUIRE(c);
    CHECK(c->status == 418);
  }
  SECTION("the queue still comes first after the handler has answered") {
    fake.respond(202);
    auto c = fake.send(request("https://h/c"));
    REQUIRE(c);
    CHECK(c->status == 202);
  }
}

TEST_CASE("FakeTransport fail() queues transport failures", "[fake]") {
  FakeTransport fake;
  fake.fail("connection reset");
  studentsvc::ApiError custom;
  custom.kind = ErrorKind::transport;
  custom.message = "timeout";
  custom.retryable = false;
  fake.fail(custom);
  fake.respond(200);

  auto a = fake.send(request("https://h/"));
  REQUIRE_FALSE(a);
  CHECK(a.error().kind == ErrorKind::transport);
  CHECK(a.error().message == "connection reset");
  CHECK(a.error().retryable);
  auto b = fake.send(request("https://h/"));
  REQUIRE_FALSE(b);
  CHECK(b.error() == custom);
  auto c = fake.send(request("https://h/"));
  REQUIRE(c);
  CHECK(c->status == 200);
}

TEST_CASE("FakeTransport records every request exactly", "[fake]") {
  FakeTransport fake;
  CHECK(fake.request_count() == 0);
  CHECK(fake.last_request().url.empty());
  fake.respond(200);
  fake.respond(200);
  HttpRequest posted = request("https://h/conversation", "POST");
  posted.headers.set("Content-Type", "application/json");
  posted.body = R"({"q":1})";
  posted.timeout = std::chrono::milliseconds(1234);
  (void)fake.send(request("https://h/first"));
  (void)fake.send(posted);
  REQUIRE(fake.request_count() == 2);
  const auto all = fake.requests();
  REQUIRE(all.size() == 2);
  CHECK(all[0].url == "https://h/first");
  CHECK(all[1].method == "POST");
  CHECK(all[1].body == R"({"q":1})");
  CHECK(all[1].headers == posted.headers);
  CHECK(all[1].timeout == std::chrono::milliseconds(1234));
  CHECK(fake.last_request().url == "https://h/conversation");
  CHECK(fake.last_request().body == posted.body);
}

TEST_CASE("FakeTransport clear forgets requests and queued outcomes", "[fake]") {
  FakeTransport fake;
  fake.respond(200);
  fake.respond(200);
  (void)fake.send(request("https://h/"));
  fake.clear();
  CHECK(fake.request_count() == 0);
  CHECK(fake.pending() == 0);
  CHECK(fake.requests().empty());
  auto r = fake.send(request("https://h/"));
  CHECK_FALSE(r);  // the second canned response is gone too
  CHECK(fake.request_count() == 1);
}

TEST_CASE("FakeTransport is safe to use from several threads", "[fake][threads]") {
  constexpr int threads = 8;
  constexpr int per_thread = 200;
  FakeTransport fake([](const HttpRequest& r) -> studentsvc::Result<HttpResponse> {
    return HttpResponse{200, {}, r.url};
  });
  for (int i = 0; i < threads * per_thread / 2; ++i) {
    // Appended, not `"q" + std::to_string(i)`: GCC 12 at -O2/-O3 warns falsely
    // (-Wrestrict, GCC bug 105329) on a short literal prepended to a temporary.
    std::string body = "q";
    body += std::to_string(i);
    fake.respond(201, std::move(body));
  }

  std::atomic<int> queued{0};
  std::atomic<int> handled{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        const std::string url = "https://h/" + std::to_string(t) + "/" + std::to_string(i);
        auto r = fake.send(request(url));
        if (!r) {
          ++wrong;
        } else if (r->status == 201) {
          ++queued;
        } else if (r->status == 200 && r->body == url) {
          ++handled;
        } else {
          ++wrong;
        }
        if (i % 50 == 0) (void)fake.requests();  // readers concurrent with writers
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(wrong.load() == 0);
  CHECK(queued.load() == threads * per_thread / 2);
  CHECK(handled.load() == threads * per_thread / 2);
  CHECK(fake.pending() == 0);
  REQUIRE(fake.request_count() == static_cast<std::size_t>(threads * per_thread));
  std::set<std::string> urls;
  for (const auto& r : fake.requests()) urls.insert(r.url);
  CHECK(urls.size() == static_cast<std::size_t>(threads * per_thread));  // every request recorded once

  SECTION("every queued body was served exactly once") {
    fake.clear();
    for (int i = 0; i < 100; ++i) fake.respond(200, std::to_string(i));
    std::vector<std::string> bodies[4];
    std::vector<std::thread> readers;
    for (auto& out : bodies) {
      readers.emplace_back([&fake, &out] {
        for (int i = 0; i < 25; ++i) {
          auto r = fake.send(request("https://h/"));
          if (r) out.push_back(r->body);
        }
      });
    }
    for (auto& th : readers) th.join();
    std::set<std::string> seen;
    for (const auto& out : bodies) seen.insert(out.begin(), out.end());
    CHECK(seen.size() == 100);
  }
}

TEST_CASE("FakeTransport is a Transport: send_all uses the sequential default", "[fake]") {
  FakeTransport fake;
  fake.respond(200, "a");
  fake.respond(500, "b");
  std::vector<HttpRequest> batch{request("https://h/1"), request("https://h/2"), request("https://h/3")};
  studentsvc::Transport& t = fake;
  const auto results = t.send_all(batch, 4);
  REQUIRE(results.size() == 3);
  REQUIRE(results[0]);
  CHECK(results[0]->body == "a");
  REQUIRE(results[1]);
  CHECK(results[1]->status == 500);
  CHECK_FALSE(results[2]);
  const auto recorded = fake.requests();
  REQUIRE(recorded.size() == 3);
  CHECK(recorded[2].url == "https://h/3");
}

}  // namespace fake_transport_test

// Coalesced identical lookups (ClientOptions::coalesce_lookups) and the
// batches' own dedupe, on a FakeTransport that counts requests. A handler
// held at a gate keeps the shared request in flight; the SDK's debug line
// "sharing the identical request in flight" says when a caller has joined it,
// so no test depends on how fast threads run.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/fake_transport.hpp>

#include "support/log_capture.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace coalescing_test {

using namespace std::chrono_literals;
using studentsvc::ErrorKind;
using studentsvc::HttpRequest;
using studentsvc::HttpResponse;
using studentsvc::Result;

namespace {

std::string body_for(const std::string& perm) {
  return R"({"perm":")" + perm + R"(","firstName":"F)" + perm + R"(","lastName":"L"})";
}

/// Answers each student URL with that student; the first `hold` requests wait
/// at a gate until the test opens it (or 20 s pass).
class GatedService {
 public:
  explicit GatedService(int hold = 1 << 30) : hold_(hold) {}
  Result<HttpResponse> answer(const HttpRequest& request) {
    std::unique_lock lock(mutex_);
    ++arrived_;
    arrived_cv_.notify_all();
    if (arrived_ <= hold_) cv_.wait_for(lock, 20s, [&] { return open_; });
    if (fail_status_ != 0) return HttpResponse{fail_status_, {}, {}};
    const auto slash = request.url.rfind('/');
    return HttpResponse{200, {}, body_for(request.url.substr(slash + 1))};
  }
  void open() {
    {
      const std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool wait_arrived(int n) {
    std::unique_lock lock(mutex_);
    return arrived_cv_.wait_for(lock, 20s, [&] { return arrived_ >= n; });
  }
  void fail_with(int status) {
    const std::lock_guard lock(mutex_);
    fail_status_ = status;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable arrived_cv_;
  int hold_;
  int arrived_ = 0;
  int fail_status_ = 0;
  bool open_ = false;
};

struct Fixture {
  explicit Fixture(bool coalesce = true, int hold = 1 << 30) : service(hold) {
    fake = std::make_shared<studentsvc::testing::FakeTransport>(
        [this](const HttpRequest& r) { return service.answer(r); });
    options.base_url = "https://api.example.edu";
    options.auth.api_key = "k";
    options.transport = fake;
    options.retry = studentsvc::RetryPolicy::none();
    options.coalesce_lookups = coalesce;
    options.logger = log.logger(studentsvc::LogLevel::debug);
  }
  /// Waits (up to 20 s) until `n` callers have joined a request in flight.
  bool wait_sharing(std::size_t n) const {
    for (int i = 0; i < 20'000; ++i) {
      std::size_t seen = 0;
      for (const auto& line : log.texts()) seen += line.ends_with(": sharing the identical request in flight") ? 1 : 0;
      if (seen >= n) return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  }
  GatedService service;
  std::shared_ptr<studentsvc::testing::FakeTransport> fake;
  studentsvc::test::LogCapture log;
  studentsvc::ClientOptions options;
};

}  // namespace

TEST_CASE("coalesce: concurrent identical lookups, blocking and async, share one request", "[coalesce][concurrency]") {
  Fixture f;
  const studentsvc::Client client(f.options);
  constexpr int threads = 6;
  std::vector<std::future<Result<studentsvc::StudentExtended>>> results;
  for (int t = 0; t < threads; ++t) {
    results.push_back(std::async(std::launch::async, [&client, t] {
      return t % 2 == 0 ? client.get_student("1234567") : client.get_student_async("1234567").get();
    }));
  }
  REQUIRE(f.wait_sharing(threads - 1));
  f.service.open();
  for (auto& r : results) {
    const auto student = r.get();
    REQUIRE(student);
    CHECK(student->perm == "1234567");
  }
  CHECK(f.fake->request_count() == 1);
  // Not in flight any more: the next lookup sends its own request.
  CHECK(client.get_student("1234567"));
  CHECK(f.fake->request_count() == 2);
}

TEST_CASE("coalesce: another identity (JWT) or another URL never shares a request", "[coalesce][concurrency]") {
  Fixture f(true, 4);
  const studentsvc::Client client(f.options);
  studentsvc::CallOptions as_a;
  as_a.user_jwt = "jwt-a";
  studentsvc::CallOptions as_b;
  as_b.user_jwt = "jwt-b";
  std::vector<std::future<Result<studentsvc::StudentExtended>>> results;
  results.push_back(std::async(std::launch::async, [&] { return client.get_student("1234567", as_a); }));
  results.push_back(std::async(std::launch::async, [&] { return client.get_student("1234567", as_b); }));
  results.push_back(std::async(std::launch::async, [&] { return client.get_student("1234567"); }));
  results.push_back(std::async(std::launch::async, [&] { return client.get_student("2345678", as_a); }));
  // All four must reach the service: had two shared, only three would arrive.
  CHECK(f.service.wait_arrived(4));
  f.service.open();
  for (auto& r : results) CHECK(r.get());
  CHECK(f.fake->request_count() == 4);
  std::set<std::string> jwts;
  for (const auto& r : f.fake->requests()) jwts.insert(std::string(r.headers.find("svc-user-jwt").value_or("none")));
  CHECK(jwts == std::set<std::string>{"jwt-a", "jwt-b", "none"});
}

TEST_CASE("coalesce: off by default: identical concurrent lookups each send", "[coalesce][concurrency]") {
  Fixture f(false, 2);
  const studentsvc::Client client(f.options);
  auto a = std::async(std::launch::async, [&] { return client.get_student("1234567"); });
  auto b = std::async(std::launch::async, [&] { return client.get_student("1234567"); });
  CHECK(f.service.wait_arrived(2));
  f.service.open();
  CHECK(a.get());
  CHECK(b.get());
  CHECK(f.fake->request_count() == 2);
}

TEST_CASE("coalesce: a shared failure reaches every waiter, each with the attempts made", "[coalesce][concurrency]") {
  Fixture f;
  f.service.fail_with(503);
  const studentsvc::Client client(f.options);
  auto a = std::async(std::launch::async, [&] { return client.get_student("1234567"); });
  auto b = std::async(std::launch::async, [&] { return client.get_student_async("1234567").get(); });
  REQUIRE(f.wait_sharing(1));
  f.service.open();
  for (auto* r : {&a, &b}) {
    const auto e = r->get();
    REQUIRE_FALSE(e);
    CHECK(e.error().status == 503);
    CHECK(e.error().attempts == 1);
  }
  CHECK(f.fake->request_count() == 1);
}

#if STUDENTSVC_HAS_STOP_TOKEN
TEST_CASE("coalesce: a waiter that stops waiting is cancelled, and the others still get the answer",
          "[coalesce][concurrency]") {
  Fixture f;
  const studentsvc::Client client(f.options);
  // The first caller's lookup runs the shared request on its own thread (FakeTransport sends inline).
  std::promise<Result<studentsvc::StudentExtended>> first;
  std::thread leader([&] {
    client.get_student_async("1234567", [&](Result<studentsvc::StudentExtended> r) { first.set_value(std::move(r)); });
  });
  REQUIRE(f.service.wait_arrived(1));
  std::stop_source stop;
  auto quitter = client.get_student_async("1234567", {}, stop.get_token());
  REQUIRE(f.wait_sharing(1));
  stop.request_stop();
  const auto cancelled = quitter.get();  // while the shared request is still held at the gate
  REQUIRE_FALSE(cancelled);
  CHECK(cancelled.error().kind == ErrorKind::cancelled);
  CHECK(cancelled.error().message == "cancelled (stop requested) while waiting for a shared lookup");
  f.service.open();
  leader.join();
  const auto answer = first.get_future().get();
  REQUIRE(answer);
  CHECK(answer->perm == "1234567");
  CHECK(f.fake->request_count() == 1);
}
#endif

TEST_CASE("get_students looks each distinct perm up once and fills every position", "[coalesce][batch]") {
  Fixture f(false);
  f.service.open();
  const studentsvc::Client client(f.options);
  const std::vector<std::string> perms{"1234567", "2345678", "1234567", "12", "1234567", "3456789", "2345678", "12"};
  const auto results = client.get_students(perms);
  REQUIRE(results.size() == perms.size());
  for (std::size_t i = 0; i < perms.size(); ++i) {
    if (perms[i] == "12") {
      CHECK(results[i].error().kind == ErrorKind::invalid_argument);
    } else {
      REQUIRE(results[i]);
      CHECK(results[i]->perm == perms[i]);
    }
  }
  CHECK(f.fake->request_count() == 3);
}

TEST_CASE("for_each_student looks each distinct perm of a held roster up once, and a stream shares what is in flight",
          "[coalesce][batch]") {
  Fixture f(false);
  f.service.open();
  const studentsvc::Client client(f.options);
  const std::vector<std::string> perms{"1234567", "2345678", "1234567", "12", "1234567", "3456789", "2345678", "12"};
  const auto check = [&](const auto& roster, std::string_view form) {
    for (const std::size_t width : {std::size_t{1}, std::size_t{16}}) {
      INFO(form << ", max_concurrency " << width);
      const std::size_t before = f.fake->request_count();
      studentsvc::StreamOptions stream;
      stream.max_concurrency = width;
      std::vector<std::optional<Result<studentsvc::StudentExtended>>> got(perms.size());
      const auto summary = client.for_each_student(
          roster, [&](std::size_t i, std::string_view, Result<studentsvc::StudentExtended> r) { got[i] = std::move(r); },
          stream);
      CHECK(summary.sent + summary.not_sent <= perms.size());
      for (std::size_t i = 0; i < perms.size(); ++i) {
        REQUIRE(got[i]);
        if (perms[i] == "12") {
          CHECK(got[i]->error().kind == ErrorKind::invalid_argument);
        } else {
          REQUIRE(*got[i]);
          CHECK((*got[i])->perm == perms[i]);
        }
      }
      CHECK(f.fake->request_count() - before == 3);  // the three distinct valid perms, once each
    }
  };
  // The perms are counted from views of the roster's own text where it hands
  // out references, from copies where it makes each perm anew.
  check(perms, "the stored strings");
  const std::vector<std::string_view> views(perms.begin(), perms.end());
  check(views, "views of them");
  check(std::views::iota(std::size_t{0}, perms.size()) |
            std::views::transform([&](std::size_t i) { return std::string(perms[i]); }),
        "a view that makes each perm anew");
  // A single-pass stream keeps nothing: one position after another, a repeat is looked up again.
  std::istringstream lines("1234567\n1234567\n2345678\n");
  const std::size_t before = f.fake->request_count();
  studentsvc::StreamOptions one;
  one.max_concurrency = 1;
  std::size_t delivered = 0;
  client.for_each_student(std::views::istream<std::string>(lines),
                          [&](std::size_t, std::string_view, Result<studentsvc::StudentExtended> r) {
                            CHECK(r);
                            ++delivered;
                          },
                          one);
  CHECK(delivered == 3);
  CHECK(f.fake->request_count() - before == 3);
}

}  // namespace coalescing_test

// <studentsvc/awaitable.hpp>: co_await a call in a hand-written task on a
// hand-written loop, through the real CurlTransport against MockServer and
// raw servers on 127.0.0.1 (label concurrency: ThreadSanitizer runs it too).

#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <studentsvc/awaitable.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/fake_transport.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/cancelled_attempts.hpp"
#include "support/coro_task.hpp"
#include "support/log_capture.hpp"
#include "support/loopback.hpp"
#include "support/raw_server.hpp"
#include "support/wait.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build).
namespace awaitable_test {

using namespace std::chrono_literals;
using studentsvc::Client;
using studentsvc::ErrorKind;
using studentsvc::RawResponse;
using studentsvc::Result;
using studentsvc::StudentExtended;
using studentsvc::test::CancelledAttempts;
using studentsvc::test::EventLoop;
using studentsvc::test::eventually;
using studentsvc::test::RawServer;
using studentsvc::test::Task;
using studentsvc::test::event_thread_name;
using studentsvc::test::here;
using studentsvc::test::Resumption;
using studentsvc::testing::MockServer;

namespace {


// True when the peer of `fd` has closed the connection (without reading anything).
bool peer_closed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char byte = 0;
  return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0 || (p.revents & (POLLRDHUP | POLLHUP)) != 0;
}

// A server that reads each request and never answers it (until stopped), and
// counts the connections the client closed meanwhile: a cancelled transfer.
struct HoldingServer {
  std::atomic<int> closed_by_client{0};  // before `server`: its threads use it
  RawServer server{[this](int fd, int) {
    (void)server.next_request(fd);
    while (server.sleep_unless_stopped(5ms)) {
      if (peer_closed(fd)) {
        closed_by_client.fetch_add(1);
        return;
      }
    }
  }};
};

// A Transport whose send_async completes at once on another thread, to race a
// completion against the awaiting coroutine's suspension. A worker thread,
// spinning (not sleeping: a wake-up would come long after the suspension),
// takes each request the moment send_async hands it over. Then two swept
// waits: send_async's, before it returns to the SDK (and the SDK to
// await_suspend's exchange), which moves the suspension later, and the
// worker's, before it completes, which moves the completion later. Swept from
// 0 to 256 µs on a doubling scale on either side, they put the completion
// before, at and after the suspension in any build (-O0, -O3, TSan), however
// long the SDK's own code takes there. A negative return wait waits until the
// completion has returned: the completion first, for certain.
class ImmediateTransport final : public studentsvc::Transport {
 public:
  ImmediateTransport() : worker_([this] { run(); }) {}
  ~ImmediateTransport() override {
    stopping_.store(true);
    worker_.join();
  }
  ImmediateTransport(const ImmediateTransport&) = delete;
  ImmediateTransport& operator=(const ImmediateTransport&) = delete;

  /// How long the next send_async spins after the worker took its request
  /// (negative: until its completion returned), and how long the worker spins
  /// before completing it.
  void set_delays(std::chrono::microseconds return_delay, std::chrono::microseconds complete_delay) {
    return_delay_us_.store(return_delay.count());
    complete_delay_us_.store(complete_delay.count());
  }

  Result<studentsvc::HttpResponse> send(const studentsvc::HttpRequest&) override { return answer(); }

  void send_async(studentsvc::HttpRequest, studentsvc::SendCompletion done, studentsvc::StopToken) override {
    auto job = std::make_shared<Job>();
    job->done = std::move(done);
    {
      const std::lock_guard lock(mutex_);
      queue_.push_back(job);
      queued_.fetch_add(1, std::memory_order_release);
    }
    const std::int64_t return_delay = return_delay_us_.load();
    if (return_delay < 0) {
      while (!job->completed.load()) std::this_thread::yield();
      return;
    }
    if (return_delay == 0) return;  // at once: on a busy machine the worker may not even have started
    while (!job->taken.load()) std::this_thread::yield();
    spin_for(return_delay);
  }

 private:
  using clock = std::chrono::steady_clock;
  struct Job {
    studentsvc::SendCompletion done;
    std::atomic<bool> taken{false};
    std::atomic<bool> completed{false};
  };
  static void spin_for(std::int64_t us) {
    const auto until = clock::now() + std::chrono::microseconds(us);
    while (clock::now() < until) {
    }
  }
  static Result<studentsvc::HttpResponse> answer() {
    return studentsvc::HttpResponse{200, {{"Content-Type", "application/json"}}, studentsvc::test::student_body};
  }
  void run() {
    while (!stopping_.load()) {
      if (queued_.load(std::memory_order_acquire) == 0) {  // spin: answer the moment one comes
        std::this_thread::yield();
        continue;
      }
      std::shared_ptr<Job> job;
      {
        const std::lock_guard lock(mutex_);
        job = queue_.front();
        queue_.erase(queue_.begin());
        queued_.fetch_sub(1);
      }
      job->taken.store(true);
      spin_for(complete_delay_us_.load());
      std::exchange(job->done, {})(answer());  // the SDK's completion, up to the awaitable's
      job->completed.store(true);
    }
  }

  std::mutex mutex_;
  std::vector<std::shared_ptr<Job>> queue_;
  std::atomic<int> queued_{0};
  std::atomic<std::int64_t> return_delay_us_{0};
  std::atomic<std::int64_t> complete_delay_us_{0};
  std::atomic<bool> stopping_{false};
  std::thread worker_;  // last: starts once the rest is built
};

}  // namespace

// The awaitable is move-only, and where it resumes is always said.
static_assert(!std::is_copy_constructible_v<studentsvc::Awaitable<StudentExtended>>);
static_assert(!std::is_copy_assignable_v<studentsvc::Awaitable<StudentExtended>>);
static_assert(std::is_nothrow_move_constructible_v<studentsvc::Awaitable<StudentExtended>>);
static_assert(!std::is_copy_constructible_v<studentsvc::Awaitable<RawResponse>>);
static_assert(std::is_nothrow_move_constructible_v<studentsvc::Awaitable<RawResponse>>);
static_assert(!std::is_default_constructible_v<studentsvc::ResumeVia>);
static_assert(std::is_constructible_v<studentsvc::ResumeVia, studentsvc::ResumeInline>);

TEST_CASE("awaitable: each call resumes on the loop's thread, never the event thread", "[awaitable][thread]") {
  MockServer mock;
  const Client client(mock.client_options());
  EventLoop loop;
  std::vector<Resumption> seen;
  std::optional<Result<StudentExtended>> student;
  std::optional<Result<StudentExtended>> current;
  std::optional<Result<RawResponse>> conversation;
  auto body = [&]() -> Task {
    const auto via = studentsvc::resume_via(loop.poster());
    student = co_await client.get_student_async("1234567", via);
    seen.push_back(here());
    // Named, not temporaries inside co_await: GCC 12 miscompiles some of those ("array used as initializer").
    const std::string jwt = studentsvc::testing::MockServerOptions{}.jwts.begin()->first;
    current = co_await client.current_student_async(jwt, via);
    seen.push_back(here());
    const studentsvc::ConversationRequest request;
    conversation = co_await client.conversation_async(request, via);
    seen.push_back(here());
  };
  std::optional<Task> task;
  loop.call([&] { task.emplace(body()); });
  REQUIRE(eventually([&] { return loop.call([&] { return task->finished(); }); }));
  REQUIRE(seen.size() == 3);
  for (const auto& r : seen) {
    CHECK(r.thread == loop.id());
    CHECK(r.thread_name != event_thread_name);
  }
  // Each resumption is posted, unless its completion beat the suspension (a
  // loaded machine, a sanitizer): then it resumed at once, on the loop too.
  CHECK(loop.handles_posted() <= 3);
  REQUIRE(student.has_value());
  CHECK(student->has_value());
  REQUIRE(current.has_value());
  CHECK(current->has_value());
  REQUIRE(conversation.has_value());
  CHECK(conversation->has_value());
  loop.call([&] { task.reset(); });
}

TEST_CASE("awaitable: resume_inline resumes on the event thread", "[awaitable][thread]") {
  MockServer mock;
  const Client client(mock.client_options());
  std::promise<Resumption> resumed;
  std::optional<Result<StudentExtended>> result;
  auto body = [&]() -> Task {
    result = co_await client.get_student_async("1234567", studentsvc::resume_inline);
    resumed.set_value(here());
  };
  Task task = body();
  const Resumption r = resumed.get_future().get();
  REQUIRE(eventually([&] { return task.finished(); }));
  CHECK(r.thread_name == event_thread_name);
  CHECK(r.thread != std::this_thread::get_id());
  CHECK(result->has_value());
}

TEST_CASE("awaitable: a call that completes inside co_await resumes at once, once", "[awaitable]") {
  EventLoop loop;
  SECTION("an invalid perm, on the real transport") {
    MockServer mock;
    const Client client(mock.client_options());
    std::optional<Result<StudentExtended>> r;
    std::optional<Task> task;
    auto body = [&]() -> Task { r = co_await client.get_student_async("12", studentsvc::resume_via(loop.poster())); };
    loop.call([&] {
      task.emplace(body());
      CHECK(task->finished());  // resumed before the task's first suspension returned
    });
    REQUIRE(r.has_value());
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().kind == ErrorKind::invalid_argument);
    CHECK(loop.handles_posted() == 0);
    CHECK(mock.request_count() == 0);
    loop.call([&] { task.reset(); });
  }
  SECTION("a transport that only implements send") {
    auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
    fake->respond(200, studentsvc::test::student_body);
    studentsvc::ClientOptions options;
    options.base_url = "https://api.example.edu";
    options.auth.api_key = "key";
    options.transport = fake;
    const Client client(options);
    std::optional<Result<StudentExtended>> r;
    std::optional<Task> task;
    auto body = [&]() -> Task {
      r = co_await client.get_student_async("1234567", studentsvc::resume_via(loop.poster()));
    };
    loop.call([&] {
      task.emplace(body());
      CHECK(task->finished());
    });
    REQUIRE(r.has_value());
    CHECK(r->has_value());
    CHECK(loop.handles_posted() == 0);
    loop.call([&] { task.reset(); });
  }
}

TEST_CASE("awaitable: a completion racing the suspension resumes exactly once", "[awaitable][race]") {
  SECTION("the real transport, in a loop") {
    MockServer mock;
    const Client client(mock.client_options());
    constexpr int rounds = 200;
    std::atomic<int> resumed{0};
    std::atomic<int> ok{0};
    // resume_inline: the event thread's completion races await_suspend's own exchange.
    auto body = [&](std::string perm, std::promise<void>& done) -> Task {
      auto r = co_await client.get_student_async(perm, studentsvc::resume_inline);
      resumed.fetch_add(1);
      if (r.has_value()) ok.fetch_add(1);
      done.set_value();
    };
    for (int i = 0; i < rounds; ++i) {
      std::promise<void> done;
      Task task = body(i % 2 == 0 ? "1234567" : "12", done);
      done.get_future().wait();
      // The frame ends on whichever thread resumed it; wait until it is parked at its end.
      REQUIRE(eventually([&] { return task.finished(); }));
    }
    CHECK(resumed.load() == rounds);
    CHECK(ok.load() == rounds / 2);
  }
  SECTION("a transport that completes at once on another thread, in a loop") {
    // The completion runs on the transport's worker while await_suspend is still
    // between starting the call and its exchange: both orders, and the moment
    // between, over the rounds (ThreadSanitizer watches every one of them).
    auto transport = std::make_shared<ImmediateTransport>();
    studentsvc::ClientOptions options;
    options.base_url = "https://api.example.edu";
    options.auth.api_key = "key";
    options.retry = studentsvc::RetryPolicy::none();
    options.transport = transport;
    const Client client(options);
    EventLoop loop;
    constexpr int rounds = 600;
    std::atomic<int> resumed{0};
    std::atomic<int> ok{0};
    int at_once = 0;  // rounds resumed inside co_await: the completion came first
    auto body = [&](studentsvc::ResumeVia via, std::promise<std::thread::id>& done) -> Task {
      auto r = co_await client.get_student_async("1234567", std::move(via));
      resumed.fetch_add(1);
      if (r.has_value() && r->first_name == "Ana") ok.fetch_add(1);
      done.set_value(std::this_thread::get_id());
    };
    for (int i = 0; i < rounds; ++i) {
      // Every tenth round the completion certainly comes first; the others delay
      // send_async's return, or the completion, by 0, 1, 2, 4, ... 256 µs.
      const bool completion_first = i % 10 == 9;
      const auto sweep = std::chrono::microseconds((1 << ((i / 2) % 10)) / 2);  // 0 first: no wait at all
      if (completion_first) {
        transport->set_delays(-1us, 0us);
      } else if ((i / 20) % 2 == 0) {
        transport->set_delays(sweep, 0us);
      } else {
        transport->set_delays(0us, sweep);
      }
      std::promise<std::thread::id> done;
      std::optional<Task> task;
      bool resumed_at_once = false;
      if (i % 2 == 0) {
        // resume_inline: resumed by the worker's completion, or at once inside co_await.
        task.emplace(body(studentsvc::resume_inline, done));
        resumed_at_once = done.get_future().get() == std::this_thread::get_id();
      } else {
        // resume_via: posted to the loop, or resumed at once (no post) inside co_await.
        const std::size_t posted = loop.handles_posted();
        loop.call([&] { task.emplace(body(studentsvc::resume_via(loop.poster()), done)); });
        CHECK(done.get_future().get() == loop.id());
        resumed_at_once = loop.handles_posted() == posted;
      }
      if (completion_first) CHECK(resumed_at_once);
      if (resumed_at_once) ++at_once;
      REQUIRE(eventually([&] { return task->finished(); }));
      if (i % 2 == 0) {
        task.reset();
      } else {
        loop.call([&] { task.reset(); });
      }
    }
    loop.drain();
    CHECK(resumed.load() == rounds);
    CHECK(ok.load() == rounds);
    // The other rounds went either way: how many of each is the machine's business.
    CHECK(at_once >= rounds / 10);
    CHECK(loop.handles_posted() <= static_cast<std::size_t>(rounds / 2));
    std::printf("awaitable race: %d of %d rounds resumed inside co_await\n", at_once, rounds);  // NOLINT
  }
}

TEST_CASE("awaitable: a stop before, during and racing the completion resumes once", "[awaitable][stop]") {
  EventLoop loop;
  std::atomic<int> resumed{0};
  SECTION("before: cancelled, nothing sent") {
    MockServer mock;
    const Client client(mock.client_options());
    std::stop_source stop;
    stop.request_stop();
    std::optional<Result<StudentExtended>> r;
    std::optional<Task> task;
    auto body = [&]() -> Task {
      r = co_await client.get_student_async("1234567", studentsvc::resume_via(loop.poster()), {}, stop.get_token());
      resumed.fetch_add(1);
    };
    loop.call([&] { task.emplace(body()); });
    REQUIRE(eventually([&] { return loop.call([&] { return task->finished(); }); }));
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().kind == ErrorKind::cancelled);
    CHECK(mock.request_count() == 0);
    loop.call([&] { task.reset(); });
  }
  SECTION("during: the request in flight is cancelled") {
    HoldingServer holding;
    const Client client(studentsvc::test::raw_options(holding.server));
    std::stop_source stop;
    std::optional<Result<StudentExtended>> r;
    std::optional<Task> task;
    auto body = [&]() -> Task {
      r = co_await client.get_student_async("1234567", studentsvc::resume_via(loop.poster()), {}, stop.get_token());
      resumed.fetch_add(1);
    };
    loop.call([&] { task.emplace(body()); });
    REQUIRE(eventually([&] { return holding.server.requests() >= 1; }));
    stop.request_stop();
    REQUIRE(eventually([&] { return loop.call([&] { return task->finished(); }); }));
    REQUIRE_FALSE(r->has_value());
    CHECK(r->error().kind == ErrorKind::cancelled);
    loop.call([&] { task.reset(); });
  }
  SECTION("racing the completion, in a loop") {
    MockServer mock;
    const Client client(mock.client_options());
    constexpr int rounds = 100;
    auto body = [&](studentsvc::StopToken stop) -> Task {
      (void)co_await client.get_student_async("1234567", studentsvc::resume_via(loop.poster()), {}, stop);
      resumed.fetch_add(1);
    };
    for (int i = 0; i < rounds; ++i) {
      std::stop_source stop;
      std::optional<Task> task;
      loop.call([&] { task.emplace(body(stop.get_token())); });
      std::this_thread::sleep_for(std::chrono::microseconds(i * 20));
      stop.request_stop();
      REQUIRE(eventually([&] { return loop.call([&] { return task->finished(); }); }));
      loop.call([&] { task.reset(); });
    }
    loop.drain();
    CHECK(resumed.load() == rounds);
    CHECK(loop.handles_posted() <= static_cast<std::size_t>(rounds));
  }
}

TEST_CASE("awaitable: a destroyed frame cancels its call and is never resumed", "[awaitable][lifetime]") {
  EventLoop loop;
  SECTION("destroyed while the call is in flight") {
    HoldingServer holding;
    auto attempts = std::make_shared<CancelledAttempts>();
    auto options = studentsvc::test::raw_options(holding.server);
    options.instrumentation = attempts;
    auto client = std::make_unique<Client>(options);
    std::atomic<int> resumed{0};
    std::optional<Task> task;
    auto body = [&]() -> Task {
      (void)co_await client->get_student_async("1234567", studentsvc::resume_via(loop.poster()));
      resumed.fetch_add(1);
    };
    loop.call([&] { task.emplace(body()); });
    REQUIRE(eventually([&] { return holding.server.requests() >= 1; }));
    loop.call([&] { task.reset(); });  // the frame, and its awaitable, go
    // The Client still lives: the frame's end alone cancels the call. Its attempt
    // ends as cancelled, and the server sees the transfer's connection closed.
    CHECK(eventually([&] { return attempts->cancelled() == 1; }));
    CHECK(eventually([&] { return holding.closed_by_client.load() == 1; }));
    REQUIRE(client != nullptr);
    // The Client's destruction waits for its calls: none is left.
    auto closed = std::async(std::launch::async, [&] { client.reset(); });
    REQUIRE(closed.wait_for(20s) == std::future_status::ready);
    loop.drain();
    CHECK(resumed.load() == 0);
    CHECK(loop.handles_posted() == 0);
    CHECK(attempts->cancelled() == 1);
  }
  SECTION("destroyed after its resumption was posted, before the loop ran it") {
    // Answers after 50 ms: the completion comes after the suspension, so its
    // resumption is posted (one that beat it would resume at once instead).
    studentsvc::testing::MockServerOptions slow;
    slow.latency = 50ms;
    MockServer mock(slow);
    const Client client(mock.client_options());
    std::atomic<int> resumed{0};
    std::optional<Task> task;
    auto body = [&]() -> Task {
      (void)co_await client.get_student_async("1234567", studentsvc::resume_via(loop.poster()));
      resumed.fetch_add(1);
    };
    loop.call([&] { task.emplace(body()); });
    loop.pause();
    REQUIRE(eventually([&] { return loop.handles_posted() == 1; }));
    task.reset();  // the loop is held: nothing runs on it meanwhile
    loop.resume();
    loop.drain();  // runs the posted handle: it must resume nothing (ASan: no use of the freed frame)
    CHECK(resumed.load() == 0);
  }
}

TEST_CASE("awaitable: the last Client destroyed resumes each awaiting coroutine once, cancelled", "[awaitable][lifetime]") {
  HoldingServer holding;
  auto client = std::make_unique<Client>(studentsvc::test::raw_options(holding.server));
  EventLoop loop;
  constexpr int waiting = 3;
  std::vector<std::optional<Result<StudentExtended>>> results(waiting);
  std::vector<Resumption> seen(waiting);
  std::vector<Task> tasks;
  auto body = [&](int i) -> Task {
    results[i] = co_await client->get_student_async("123456" + std::to_string(i), studentsvc::resume_via(loop.poster()));
    seen[i] = here();
  };
  loop.call([&] {
    for (int i = 0; i < waiting; ++i) tasks.push_back(body(i));
  });
  REQUIRE(eventually([&] { return holding.server.requests() >= waiting; }));
  client.reset();  // waits for the calls' completions, which post the resumptions
  loop.drain();
  CHECK(loop.handles_posted() == waiting);
  for (int i = 0; i < waiting; ++i) {
    REQUIRE(results[i].has_value());
    REQUIRE_FALSE(results[i]->has_value());
    CHECK(results[i]->error().kind == ErrorKind::cancelled);
    CHECK(seen[i].thread == loop.id());
  }
  loop.call([&] { tasks.clear(); });
}

TEST_CASE("awaitable: an exception thrown after resuming reaches the coroutine's promise", "[awaitable]") {
  // The promise rethrows from unhandled_exception (RethrowingTask): the exception
  // leaves the coroutine by whoever resumed it. Had the SDK caught it anywhere
  // between (the posted resumption, the completion, await_suspend), it would not
  // come out there, and the SDK's log would say so. The server answers after
  // 50 ms: a completion then comes after the suspension, and is posted.
  studentsvc::testing::MockServerOptions slow;
  slow.latency = 50ms;
  MockServer mock(slow);
  studentsvc::test::LogCapture logs;
  auto options = mock.client_options();
  options.logger = logs.logger(studentsvc::LogLevel::trace);
  const Client client(options);
  EventLoop loop;
  std::atomic<int> resumed{0};
  auto body = [&](std::string perm) -> studentsvc::test::RethrowingTask {
    (void)co_await client.get_student_async(perm, studentsvc::resume_via(loop.poster()));
    resumed.fetch_add(1);
    throw std::runtime_error("after resuming");
  };
  SECTION("resumed by the loop: out of the loop's resume() call") {
    std::optional<studentsvc::test::RethrowingTask> task;
    loop.call([&] {
      task.emplace(body("1234567"));
      task->start();  // suspends in co_await: nothing thrown yet
    });
    REQUIRE(eventually([&] { return loop.escaped().size() == 1; }));
    CHECK(resumed.load() == 1);
    CHECK(loop.handles_posted() == 1);
    CHECK_THROWS_WITH(std::rethrow_exception(loop.escaped().front()), "after resuming");
    CHECK(loop.call([&] { return task->done(); }));
    loop.call([&] { task.reset(); });
  }
  SECTION("resumed at once inside co_await (an invalid perm): out of the starting call") {
    std::optional<studentsvc::test::RethrowingTask> task;
    loop.call([&] { task.emplace(body("12")); });
    CHECK_THROWS_WITH(loop.call([&] { task->start(); }), "after resuming");
    CHECK(resumed.load() == 1);
    CHECK(loop.handles_posted() == 0);
    CHECK(loop.escaped().empty());
    loop.call([&] { task.reset(); });
  }
  loop.drain();
  for (const auto& line : logs.lines()) {
    CHECK(line.find("after resuming") == std::string::npos);
    CHECK(line.find("threw") == std::string::npos);
  }
}

TEST_CASE("awaitable: awaited at most once, moved-from yields an error", "[awaitable]") {
  MockServer mock;
  const Client client(mock.client_options());
  std::promise<void> done;
  std::optional<Result<StudentExtended>> first;
  std::optional<Result<StudentExtended>> second;
  std::optional<Result<StudentExtended>> moved_from;
  auto body = [&]() -> Task {
    auto awaitable = client.get_student_async("1234567", studentsvc::resume_inline);
    first = co_await awaitable;
    second = co_await awaitable;
    auto other = client.get_student_async("12", studentsvc::resume_inline);
    auto taken = std::move(other);
    moved_from = co_await other;  // NOLINT(bugprone-use-after-move): what this checks
    (void)co_await taken;
    done.set_value();
  };
  Task task = body();
  done.get_future().wait();
  REQUIRE(eventually([&] { return task.finished(); }));
  CHECK(first->has_value());
  REQUIRE_FALSE(second->has_value());
  CHECK(second->error().kind == ErrorKind::invalid_argument);
  REQUIRE_FALSE(moved_from->has_value());
  CHECK(moved_from->error().kind == ErrorKind::invalid_argument);
}

}  // namespace awaitable_test

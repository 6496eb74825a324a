// <studentsvc/asio.hpp>: the Asio completion tokens through the real
// CurlTransport against MockServer and raw servers on 127.0.0.1. Built twice
// (tests/CMakeLists.txt): asio_test on Boost.Asio, asio_standalone_test on
// standalone Asio (STUDENTSVC_ASIO_STANDALONE). Label concurrency: TSan runs both.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(STUDENTSVC_ASIO_STANDALONE)
#include <asio.hpp>
#include <asio/experimental/deferred.hpp>
#include <asio/experimental/parallel_group.hpp>
namespace net = ::asio;
#define ASIO_TEST_PREFIX "asio (standalone): "
#else
#include <boost/asio.hpp>
#include <boost/asio/experimental/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
namespace net = ::boost::asio;
#define ASIO_TEST_PREFIX "asio (Boost): "
#endif

#include <studentsvc/asio.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/cancelled_attempts.hpp"
#include "support/coro_task.hpp"
#include "support/log_capture.hpp"
#include "support/loopback.hpp"
#include "support/raw_server.hpp"
#include "support/wait.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build).
namespace asio_test {

using namespace std::chrono_literals;
using studentsvc::Client;
using studentsvc::ErrorKind;
using studentsvc::RawResponse;
using studentsvc::Result;
using studentsvc::StudentExtended;
using studentsvc::test::CancelledAttempts;
using studentsvc::test::eventually;
using studentsvc::test::RawServer;
using studentsvc::test::event_thread_name;
using studentsvc::test::here;
using studentsvc::test::Resumption;
using studentsvc::testing::MockServer;

namespace {


// A server that reads each request and never answers it (until stopped).
struct HoldingServer {
  RawServer server{[this](int fd, int) {
    (void)server.next_request(fd);
    server.sleep_unless_stopped(60s);
  }};
};

// True when every result is an error of this kind.
bool all_failed_as(const std::vector<Result<StudentExtended>>& results, ErrorKind kind) {
  for (const auto& r : results) {
    if (r.has_value() || r.error().kind != kind) return false;
  }
  return true;
}

// An io_context run by a thread of its own for the test's length.
struct IoThread {
  net::io_context io;
  net::executor_work_guard<net::io_context::executor_type> work = net::make_work_guard(io);
  std::thread thread{[this] { io.run(); }};
  ~IoThread() {
    work.reset();
    thread.join();
  }
};

}  // namespace

TEST_CASE(ASIO_TEST_PREFIX "use_awaitable: each call resumes on the io_context's thread, never the event thread",
          "[asio][thread]") {
  MockServer mock;
  std::vector<Resumption> seen;
  std::optional<Result<StudentExtended>> student;
  std::optional<Result<StudentExtended>> current;
  std::optional<Result<RawResponse>> conversation;
  std::optional<std::vector<Result<StudentExtended>>> batch;
  net::io_context io;
  studentsvc::asio::client client(io.get_executor(), Client(mock.client_options()));
  const std::vector<std::string> perms{"1234567", "12"};
  auto body = [&]() -> net::awaitable<void> {
    student = co_await client.async_get_student("1234567", net::use_awaitable);
    seen.push_back(here());
    const std::string jwt = studentsvc::testing::MockServerOptions{}.jwts.begin()->first;
    current = co_await client.async_current_student(jwt, net::use_awaitable);
    seen.push_back(here());
    const studentsvc::ConversationRequest request;  // named: see awaitable_test.cpp (GCC 12)
    conversation = co_await client.async_conversation(request, net::use_awaitable);
    seen.push_back(here());
    const studentsvc::BatchOptions options;
    batch = co_await client.async_get_students(perms, options, net::use_awaitable);
    seen.push_back(here());
  };
  net::co_spawn(io, body(), net::detached);
  io.run();  // this thread is the io_context's
  REQUIRE(seen.size() == 4);
  for (const auto& r : seen) {
    CHECK(r.thread == std::this_thread::get_id());
    CHECK(r.thread_name != event_thread_name);
  }
  CHECK(student->has_value());
  CHECK(current->has_value());
  CHECK(conversation->has_value());
  REQUIRE(batch->size() == 2);
  CHECK((*batch)[0].has_value());
  CHECK((*batch)[1].error().kind == ErrorKind::invalid_argument);
}

TEST_CASE(ASIO_TEST_PREFIX "a plain callback runs on the client's executor, never inside the initiating call",
          "[asio][thread]") {
  MockServer mock;
  net::io_context io;
  studentsvc::asio::client client(io.get_executor(), Client(mock.client_options()));
  for (const char* perm : {"1234567", "12"}) {  // "12" completes inside the initiating call
    bool initiated = false;
    std::optional<bool> ran_after_initiation;
    std::optional<Resumption> seen;
    std::optional<Result<StudentExtended>> r;
    client.async_get_student(perm, [&](Result<StudentExtended> result) {
      ran_after_initiation = initiated;
      seen = here();
      r = std::move(result);
    });
    initiated = true;
    io.restart();
    io.run();
    REQUIRE(ran_after_initiation.has_value());
    CHECK(*ran_after_initiation);
    CHECK(seen->thread == std::this_thread::get_id());
    CHECK(seen->thread_name != event_thread_name);
    CHECK(r->has_value() == (std::string(perm) == "1234567"));
  }
}

TEST_CASE(ASIO_TEST_PREFIX "use_future and deferred", "[asio]") {
  MockServer mock;
  IoThread io;
  studentsvc::asio::client client(io.io.get_executor(), Client(mock.client_options()));
  SECTION("use_future") {
    auto future = client.async_get_student("1234567", net::use_future);
    const auto r = future.get();
    CHECK(r.has_value());
  }
  SECTION("deferred: nothing is sent until the operation is started") {
    auto op = client.async_get_student("1234567", net::experimental::deferred);
    std::this_thread::sleep_for(50ms);
    CHECK(mock.request_count() == 0);
    std::promise<Result<StudentExtended>> done;
    std::move(op)([&](Result<StudentExtended> r) { done.set_value(std::move(r)); });
    CHECK(done.get_future().get().has_value());
    CHECK(mock.request_count() == 1);
  }
}

TEST_CASE(ASIO_TEST_PREFIX "per-call options reach the call, a deferred one's after the caller's copy is gone",
          "[asio]") {
  MockServer mock;
  IoThread io;
  studentsvc::asio::client client(io.io.get_executor(), Client(mock.client_options()));
  const auto deferred_lookup = [&] {
    studentsvc::CallOptions call;  // gone when this returns, before the operation starts
    call.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    return client.async_get_student("1234567", call, net::experimental::deferred);
  };
  auto op = deferred_lookup();
  std::promise<Result<StudentExtended>> done;
  std::move(op)([&](Result<StudentExtended> r) { done.set_value(std::move(r)); });
  CHECK(done.get_future().get().has_value());
  REQUIRE(mock.request_count() == 1);
  CHECK(mock.last_request().header("traceparent") == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");

  SECTION("get_student: svc-user-jwt of another student is sent, and the lookup refused") {
    studentsvc::CallOptions call;
    call.user_jwt = "mock-jwt-avery";
    const auto r = client.async_get_student("1234567", call, net::use_future).get();
    CHECK(mock.last_request().header("svc-user-jwt") == "mock-jwt-avery");
    REQUIRE_FALSE(r.has_value());
  }
  SECTION("current_student: an invalid traceparent is refused, nothing sent") {
    studentsvc::CallOptions call;
    call.traceparent = "not-a-traceparent";
    const auto r = client.async_current_student("mock-jwt-avery", call, net::use_future).get();
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::invalid_argument);
    CHECK(mock.request_count() == 1);
  }
}

TEST_CASE(ASIO_TEST_PREFIX "per-operation cancellation stops the call", "[asio][stop]") {
  HoldingServer holding;
  net::io_context io;
  studentsvc::asio::client client(io.get_executor(), Client(studentsvc::test::raw_options(holding.server)));
  const auto cancelled_by = [&](net::cancellation_type type, bool conversation) {
    net::cancellation_signal signal;
    std::optional<ErrorKind> kind;
    std::optional<bool> ok;
    const auto record = [&](auto r) {
      ok = r.has_value();
      if (!r) kind = r.error().kind;
    };
    const int before = holding.server.requests();
    if (conversation) {
      client.async_conversation(studentsvc::ConversationRequest{},
                                net::bind_cancellation_slot(signal.slot(), [&](Result<RawResponse> r) { record(r); }));
    } else {
      client.async_get_student("1234567",
                               net::bind_cancellation_slot(signal.slot(), [&](Result<StudentExtended> r) { record(r); }));
    }
    // Emit once the request is on the wire, on the io_context's thread (this one).
    net::steady_timer poll(io);
    std::function<void()> wait_sent = [&] {
      if (holding.server.requests() > before) {
        signal.emit(type);
        return;
      }
      poll.expires_after(5ms);
      poll.async_wait([&](auto) { wait_sent(); });
    };
    wait_sent();
    io.restart();
    io.run_for(3s);  // the held request never answers: only a stop ends it
    const std::optional<ErrorKind> seen = kind;
    if (!ok.has_value()) {
      // Not stopped (total on a conversation): a terminal stop ends it, so that no
      // operation is left pending with a handler and a slot that refer to this
      // lambda's locals (`record`, `ok`, `kind`, `signal`) once it returns.
      signal.emit(net::cancellation_type::terminal);
      io.restart();
      io.run_for(10s);
      REQUIRE(ok.has_value());
      CHECK(kind == ErrorKind::cancelled);
    }
    return seen;
  };
  CHECK(cancelled_by(net::cancellation_type::terminal, false) == ErrorKind::cancelled);
  CHECK(cancelled_by(net::cancellation_type::partial, false) == ErrorKind::cancelled);
  CHECK(cancelled_by(net::cancellation_type::total, false) == ErrorKind::cancelled);
  CHECK(cancelled_by(net::cancellation_type::terminal, true) == ErrorKind::cancelled);
  CHECK(cancelled_by(net::cancellation_type::partial, true) == ErrorKind::cancelled);
  // A conversation is not idempotent: total cancellation (nothing happened) cannot be promised.
  CHECK_FALSE(cancelled_by(net::cancellation_type::total, true).has_value());
}

TEST_CASE(ASIO_TEST_PREFIX "make_parallel_group ... wait_for_one cancels the slower lookup", "[asio][stop]") {
  HoldingServer holding;
  net::io_context io;
  studentsvc::asio::client client(io.get_executor(), Client(studentsvc::test::raw_options(holding.server)));
  std::optional<std::size_t> first;
  std::optional<Result<StudentExtended>> lookup;
  net::steady_timer timer(io, 200ms);
  net::experimental::make_parallel_group(client.async_get_student("1234567", net::experimental::deferred),
                                         timer.async_wait(net::experimental::deferred))
      .async_wait(net::experimental::wait_for_one(), [&](std::array<std::size_t, 2> order, Result<StudentExtended> r,
                                                         auto /*timer's error_code*/) {
        first = order[0];
        lookup = std::move(r);
      });
  io.run_for(10s);
  REQUIRE(first.has_value());
  CHECK(*first == 1);  // the timer
  REQUIRE(lookup.has_value());
  REQUIRE_FALSE(lookup->has_value());
  CHECK(lookup->error().kind == ErrorKind::cancelled);
}

TEST_CASE(ASIO_TEST_PREFIX "a handler bound to another executor runs there, never on the SDK's thread",
          "[asio][thread]") {
  MockServer mock;
  net::io_context io;  // the client's executor: never run here, so nothing may land on it
  IoThread other;      // the handler's own io_context, on its own thread
  studentsvc::asio::client client(io.get_executor(), Client(mock.client_options()));
  for (const char* perm : {"1234567", "12"}) {  // "12" completes inside the initiating call
    SECTION(std::string("bind_executor(another io_context), perm ") + perm) {
      // On the other io_context's thread: never inside the initiating call (this
      // thread's), though it may run while that call is still returning.
      std::promise<Resumption> ran;
      std::optional<Result<StudentExtended>> r;
      client.async_get_student(perm, net::bind_executor(other.io, [&](Result<StudentExtended> result) {
                                 r = std::move(result);
                                 ran.set_value(here());
                               }));
      const Resumption seen = ran.get_future().get();
      CHECK(seen.thread == other.thread.get_id());
      CHECK(seen.thread != std::this_thread::get_id());
      CHECK(seen.thread_name != event_thread_name);
      CHECK(r->has_value() == (std::string(perm) == "1234567"));
      CHECK(io.poll() == 0);  // nothing was posted to the client's own executor
    }
  }
  SECTION("bind_executor(a strand of the client's io_context)") {
    auto strand = net::make_strand(io);
    bool initiated = false;
    std::optional<bool> in_strand;
    std::optional<bool> after_initiation;
    std::optional<Resumption> seen;
    client.async_get_student("1234567", net::bind_executor(strand, [&](Result<StudentExtended> result) {
                               CHECK(result.has_value());
                               in_strand = strand.running_in_this_thread();
                               after_initiation = initiated;
                               seen = here();
                             }));
    initiated = true;
    io.run();
    REQUIRE(in_strand.has_value());
    CHECK(*in_strand);
    CHECK(*after_initiation);
    CHECK(seen->thread == std::this_thread::get_id());
    CHECK(seen->thread_name != event_thread_name);
  }
}

TEST_CASE(ASIO_TEST_PREFIX "an exception thrown after co_await ... use_awaitable reaches co_spawn's handler",
          "[asio]") {
  MockServer mock;
  studentsvc::test::LogCapture logs;
  auto options = mock.client_options();
  options.logger = logs.logger(studentsvc::LogLevel::trace);
  net::io_context io;
  studentsvc::asio::client client(io.get_executor(), Client(options));
  for (const char* perm : {"1234567", "12"}) {
    std::optional<bool> ok;
    std::exception_ptr caught;
    int completions = 0;
    auto body = [&]() -> net::awaitable<void> {
      auto r = co_await client.async_get_student(perm, net::use_awaitable);
      ok = r.has_value();
      throw std::runtime_error("after resuming");
    };
    net::co_spawn(io, body(), [&](std::exception_ptr e) {
      ++completions;
      caught = e;
    });
    io.restart();
    io.run();
    REQUIRE(ok.has_value());
    CHECK(*ok == (std::string(perm) == "1234567"));
    CHECK(completions == 1);
    REQUIRE(caught != nullptr);
    CHECK_THROWS_WITH(std::rethrow_exception(caught), "after resuming");
  }
  for (const auto& line : logs.lines()) {
    CHECK(line.find("after resuming") == std::string::npos);
    CHECK(line.find("threw") == std::string::npos);
  }
}

TEST_CASE(ASIO_TEST_PREFIX "async_get_students: per-operation cancellation stops the batch", "[asio][stop]") {
  HoldingServer holding;
  auto attempts = std::make_shared<CancelledAttempts>();
  auto options = studentsvc::test::raw_options(holding.server);
  options.instrumentation = attempts;
  net::io_context io;
  studentsvc::asio::client client(io.get_executor(), Client(options));
  const std::vector<std::string> perms{"1234567", "2345678", "3456789", "4567890"};
  for (const auto type : {net::cancellation_type::terminal, net::cancellation_type::partial,
                          net::cancellation_type::total}) {
    net::cancellation_signal signal;
    std::optional<std::vector<Result<StudentExtended>>> results;
    std::optional<Resumption> seen;
    studentsvc::BatchOptions batch;
    batch.max_concurrency = 2;  // two in flight, two never sent
    const int before = holding.server.requests();
    const int cancelled_before = attempts->cancelled();
    client.async_get_students(perms, batch,
                              net::bind_cancellation_slot(signal.slot(), [&](std::vector<Result<StudentExtended>> r) {
                                results = std::move(r);
                                seen = here();
                              }));
    net::steady_timer poll(io);
    std::function<void()> wait_sent = [&] {
      if (holding.server.requests() >= before + 2) {
        signal.emit(type);
        return;
      }
      poll.expires_after(5ms);
      poll.async_wait([&](auto) { wait_sent(); });
    };
    wait_sent();
    io.restart();
    io.run();  // the pending batch keeps run() going until its handler has run
    REQUIRE(results.has_value());
    REQUIRE(results->size() == perms.size());
    CHECK(all_failed_as(*results, ErrorKind::cancelled));
    CHECK(seen->thread == std::this_thread::get_id());
    CHECK(attempts->cancelled() == cancelled_before + 2);  // the two in flight, cancelled on the wire
    CHECK(holding.server.requests() == before + 2);        // the other two never sent
  }
}

TEST_CASE(ASIO_TEST_PREFIX "async_get_students: the io_context's shutdown stops the batch", "[asio][lifetime]") {
  HoldingServer holding;
  auto attempts = std::make_shared<CancelledAttempts>();
  auto options = studentsvc::test::raw_options(holding.server);
  options.instrumentation = attempts;
  const Client sdk(options);  // alive throughout: only the shutdown may stop the batch
  std::atomic<int> handlers_run{0};
  auto io = std::make_unique<net::io_context>();
  studentsvc::asio::client client(io->get_executor(), sdk);
  studentsvc::BatchOptions batch;
  batch.max_concurrency = 2;
  client.async_get_students({"1234567", "2345678", "3456789"}, batch,
                            [&](std::vector<Result<StudentExtended>>) { handlers_run.fetch_add(1); });
  REQUIRE(eventually([&] { return holding.server.requests() >= 2; }));
  io.reset();  // shutdown: the handler is destroyed unrun, and the batch is stopped
  CHECK(eventually([&] { return attempts->cancelled() == 2; }));
  CHECK(holding.server.requests() == 2);  // the third perm is never sent
  CHECK(handlers_run.load() == 0);
}

TEST_CASE(ASIO_TEST_PREFIX "async_get_students: the last basic_client destroyed stops the batch and joins it",
          "[asio][lifetime]") {
  HoldingServer holding;
  auto attempts = std::make_shared<CancelledAttempts>();
  auto options = studentsvc::test::raw_options(holding.server);
  options.instrumentation = attempts;
  IoThread io;
  std::promise<std::pair<std::vector<Result<StudentExtended>>, Resumption>> done;
  auto client = std::make_unique<studentsvc::asio::client>(io.io.get_executor(), Client(options));
  auto copy = std::make_unique<studentsvc::asio::client>(*client);  // copies share their batches
  studentsvc::BatchOptions batch;
  batch.max_concurrency = 2;
  client->async_get_students({"1234567", "2345678", "3456789"}, batch, [&](std::vector<Result<StudentExtended>> r) {
    done.set_value({std::move(r), here()});
  });
  REQUIRE(eventually([&] { return holding.server.requests() >= 2; }));
  client.reset();  // a copy remains: the batch goes on
  auto result = done.get_future();
  CHECK(result.wait_for(100ms) == std::future_status::timeout);
  CHECK(attempts->cancelled() == 0);
  // The last copy: its destructor stops the batch and joins its thread, so the
  // handler is posted by the time it returns (the held requests never answer).
  auto destroyed = std::async(std::launch::async, [&] { copy.reset(); });
  REQUIRE(destroyed.wait_for(20s) == std::future_status::ready);
  CHECK(attempts->cancelled() == 2);
  REQUIRE(result.wait_for(20s) == std::future_status::ready);
  auto [results, seen] = result.get();
  REQUIRE(results.size() == 3);
  CHECK(all_failed_as(results, ErrorKind::cancelled));
  CHECK(seen.thread == io.thread.get_id());
  CHECK(holding.server.requests() == 2);
}

TEST_CASE(ASIO_TEST_PREFIX "destroying the io_context with operations pending never touches it afterwards",
          "[asio][lifetime]") {
  HoldingServer holding;
  auto attempts = std::make_shared<CancelledAttempts>();
  auto options = studentsvc::test::raw_options(holding.server);
  options.instrumentation = attempts;
  auto client_sdk = std::make_unique<Client>(options);
  std::atomic<int> handlers_run{0};
  std::atomic<int> handlers_destroyed{0};
  struct Watched {
    std::atomic<int>* destroyed;
    std::atomic<int>* run;
    std::shared_ptr<int> alive = std::make_shared<int>(0);  // destroyed once, with the last copy
    ~Watched() {
      if (alive && alive.use_count() == 1) destroyed->fetch_add(1);
    }
    Watched(std::atomic<int>* d, std::atomic<int>* r) : destroyed(d), run(r) {}
    Watched(Watched&&) noexcept = default;
    Watched(const Watched&) = default;
    void operator()(Result<StudentExtended>) const { run->fetch_add(1); }
  };
  {
    auto io = std::make_unique<net::io_context>();
    studentsvc::asio::client client(io->get_executor(), *client_sdk);
    client.async_get_student("1234567", Watched(&handlers_destroyed, &handlers_run));
    client.async_get_student("7654321", Watched(&handlers_destroyed, &handlers_run));
    REQUIRE(eventually([&] { return holding.server.requests() >= 2; }));
    io.reset();  // shutdown: the pending handlers are destroyed, not run, and the calls stopped
    CHECK(handlers_destroyed.load() == 2);
    // The Client lives on: the shutdown alone cancelled the calls, whose
    // completions find the context gone (ASan sees no use of it).
    CHECK(eventually([&] { return attempts->cancelled() == 2; }));
  }
  client_sdk.reset();
  CHECK(handlers_run.load() == 0);
}

TEST_CASE(ASIO_TEST_PREFIX "the last Client destroyed completes pending operations as cancelled, on the loop",
          "[asio][lifetime]") {
  HoldingServer holding;
  IoThread io;
  std::promise<std::pair<Result<StudentExtended>, Resumption>> done;
  {
    auto client = std::make_unique<studentsvc::asio::client>(io.io.get_executor(),
                                                             Client(studentsvc::test::raw_options(holding.server)));
    client->async_get_student("1234567", [&](Result<StudentExtended> r) { done.set_value({std::move(r), here()}); });
    REQUIRE(eventually([&] { return holding.server.requests() >= 1; }));
  }  // the last Client handle: the call is cancelled
  auto [r, seen] = done.get_future().get();
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind == ErrorKind::cancelled);
  CHECK(seen.thread == io.thread.get_id());
}

}  // namespace asio_test

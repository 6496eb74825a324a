// Issue 40 item 0: a hedged lookup never outlives its transport. The last copy
// of a Client, which holds the only CurlTransport, goes while hedged lookups
// still wait in the transport's queue (one connection, a 2 ms hedge, a server
// that answers late). The loop then drops those lookups as cancelled; the
// Call released by one of them frees the ClientState and the transport on
// the event thread, in the middle of that step, and the losing hedge copies
// dropped after it must still find the transport's handle pool. ASan aborts
// on the first use-after-free; labelled `concurrency`, TSan runs it too.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <studentsvc/studentsvc.hpp>

#include "support/event_threads.hpp"
#include "support/raw_server.hpp"
#include "support/wait.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace transport_lifetime_test {

using namespace std::chrono_literals;
using studentsvc::Client;
using studentsvc::ErrorKind;
using studentsvc::Result;
using studentsvc::StudentExtended;
using studentsvc::test::event_threads;
using studentsvc::test::eventually;
using studentsvc::test::RawServer;

namespace {

constexpr int lookups = 6;             // one in flight, the rest and every hedge queued
constexpr auto answer_delay = 30ms;    // far past the hedge: every lookup sends its second copy
constexpr auto limit = 30s;            // only a hang waits this long

/// Answers every request on a kept-alive connection `answer_delay` late,
/// with the student the request asked for.
struct LateServer {
  LateServer()
      : server([this](int fd, int) {
          server.serve(fd, [this](const std::string& request, int) {
            (void)server.sleep_unless_stopped(answer_delay);
            const std::string target = RawServer::target_of(request);
            const std::string perm = target.substr(target.rfind('/') + 1);
            return RawServer::response(200, R"({"perm":")" + perm + R"(","firstName":"Ana","lastName":"N"})");
          });
        }) {}
  RawServer server;
};

/// One connection (the rest queue on the transport), a 2 ms hedge, no retry:
/// the CurlTransport is made here and held by the Client alone.
studentsvc::ClientOptions hedged_options(const RawServer& server) {
  studentsvc::ClientOptions o;
  o.base_url = server.base_url();
  o.allow_insecure_loopback = true;
  o.auth.api_key = "k";
  o.retry = studentsvc::RetryPolicy::none();
  o.hedging = studentsvc::HedgingOptions{2ms};
  auto curl = studentsvc::curl_transport_options(o);
  curl.max_connections = 1;
  o.transport = std::make_shared<studentsvc::CurlTransport>(curl);
  return o;
}

std::string perm_of(int i) { return std::to_string(2000000 + i); }

/// What one round's completions saw: each runs exactly once, with the
/// student or as cancelled (the Client went while it waited).
struct Outcomes {
  std::atomic<int> completions{0};
  std::atomic<int> answered{0};
  std::atomic<int> cancelled{0};
  std::atomic<int> other{0};

  void record(const Result<StudentExtended>& r) {
    if (r) {
      answered.fetch_add(1);
    } else if (r.error().kind == ErrorKind::cancelled) {
      cancelled.fetch_add(1);
    } else {
      other.fetch_add(1);
    }
    completions.fetch_add(1);
  }
};

/// Every lookup completed once, none failed another way, and the event
/// thread of the transport that went has ended.
void check_round(const Outcomes& seen) {
  REQUIRE(eventually([&] { return seen.completions.load() == lookups; }, limit));
  CHECK(seen.other.load() == 0);
  CHECK(seen.answered.load() + seen.cancelled.load() == lookups);
  CHECK(eventually([] { return event_threads() == 0; }, limit));
}

}  // namespace

TEST_CASE("hedged lookups queued when a completion drops the last Client: the transport outlives every transfer",
          "[lifetime][hedge][concurrency]") {
  constexpr int rounds = 40;
  for (int round = 0; round < rounds; ++round) {
    CAPTURE(round);
    const LateServer late;
    Outcomes seen;
    std::mutex mutex;
    std::optional<Client> last;  // the only copy: the first completion drops it, on the event thread
    {
      const std::lock_guard lock(mutex);  // the completions wait until every lookup is out
      last.emplace(hedged_options(late.server));
      for (int i = 0; i < lookups; ++i) {
        last->get_student_async(perm_of(i), [&](Result<StudentExtended> r) {
          std::optional<Client> dropped;
          {
            const std::lock_guard completion_lock(mutex);
            dropped.swap(last);
          }
          dropped.reset();  // here, inside the completion: cancels the queued lookups
          seen.record(r);
        });
      }
    }
    check_round(seen);
    CHECK(seen.answered.load() >= 1);
  }
}

TEST_CASE("hedged lookups queued when another thread drops the last Client: the transport outlives every transfer",
          "[lifetime][hedge][concurrency]") {
  constexpr int rounds = 100;
  for (int round = 0; round < rounds; ++round) {
    CAPTURE(round);
    const LateServer late;
    Outcomes seen;
    std::optional<Client> client(hedged_options(late.server));
    for (int i = 0; i < lookups; ++i) {
      client->get_student_async(perm_of(i), [&](Result<StudentExtended> r) { seen.record(r); });
    }
    // After the hedges went into the queue; before or after the first answer, by round.
    REQUIRE(eventually([&] { return late.server.requests() >= 1; }, limit));
    std::this_thread::sleep_for(std::chrono::milliseconds{5 + (round % 8) * 5});
    client.reset();  // this thread: cancels every lookup and waits for their completions
    CHECK(seen.completions.load() == lookups);
    check_round(seen);
  }
}

}  // namespace transport_lifetime_test

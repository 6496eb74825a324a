// Unit tests for detail/batch/window.hpp with a fake asynchronous lookup
// (a worker thread that answers after a short delay): the window cap, results
// and progress on the calling thread, lazy input ranges, fail-fast and stop
// requests (every input not sent is delivered as cancelled), synchronous
// completions and an empty input.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <ranges>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <studentsvc/detail/batch/window.hpp>
#include <studentsvc/detail/json/error_body.hpp>
#include <studentsvc/stop_token.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace batch_window_test {

using namespace std::chrono_literals;
using studentsvc::ApiError;
using studentsvc::ErrorKind;
using studentsvc::Result;
using studentsvc::detail::BatchProgress;
using studentsvc::detail::BatchWindowOptions;
using studentsvc::detail::run_batch_window;

namespace {

// Answers lookups on its own thread after `delay`, with `answer(input)`, and
// records how many were in flight at most.
class FakeLookups {
 public:
  using Answer = std::function<Result<std::string>(const std::string&)>;
  explicit FakeLookups(Answer answer, std::chrono::microseconds delay = 200us)
      : answer_(std::move(answer)), delay_(delay), worker_([this] { work(); }) {}
  ~FakeLookups() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  FakeLookups(const FakeLookups&) = delete;
  FakeLookups& operator=(const FakeLookups&) = delete;

  // The batch's `start`.
  void operator()(std::size_t, const std::string& input, std::function<void(Result<std::string>)> done) {
    const std::lock_guard lock(mutex_);
    ++started_;
    ++in_flight_;
    peak_ = std::max(peak_, in_flight_);
    queue_.push_back({input, std::move(done)});
    cv_.notify_all();
  }
  [[nodiscard]] int started() const {
    const std::lock_guard lock(mutex_);
    return started_;
  }
  [[nodiscard]] int peak() const {
    const std::lock_guard lock(mutex_);
    return peak_;
  }
  [[nodiscard]] std::thread::id worker_id() const { return worker_.get_id(); }

 private:
  struct Pending {
    std::string input;
    std::function<void(Result<std::string>)> done;
  };
  void work() {
    for (;;) {
      Pending p;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        p = std::move(queue_.front());
        queue_.pop_front();
      }
      std::this_thread::sleep_for(delay_);
      auto result = answer_(p.input);
      {
        const std::lock_guard lock(mutex_);
        --in_flight_;
      }
      p.done(std::move(result));
    }
  }

  Answer answer_;
  std::chrono::microseconds delay_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  int started_ = 0;
  int in_flight_ = 0;
  int peak_ = 0;
  bool stopping_ = false;
  std::thread worker_;  // last: starts once the rest is built
};

std::vector<std::string> perms(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(1000000 + i));
  return out;
}

Result<std::string> echo(const std::string& input) { return "student " + input; }

// A stop flag for standard libraries without std::stop_token.
struct FlagStop {
  const std::atomic<bool>* flag;
  [[nodiscard]] bool stop_requested() const noexcept { return flag->load(); }
};

}  // namespace

TEST_CASE("batch window: every input gets its result, at most max_concurrency in flight", "[batch_window]") {
  FakeLookups lookups(echo);
  const auto inputs = perms(500);
  std::vector<int> seen(inputs.size(), 0);
  std::vector<BatchProgress> progress;
  const auto caller = std::this_thread::get_id();
  bool always_on_caller = true;
  const auto summary = run_batch_window<std::string>(
      inputs, lookups,
      [&](std::size_t index, const std::string& input, Result<std::string> r) {
        always_on_caller = always_on_caller && std::this_thread::get_id() == caller;
        REQUIRE(index < inputs.size());
        CHECK(input == inputs[index]);
        REQUIRE(r);
        CHECK(*r == "student " + input);
        ++seen[index];
      },
      BatchWindowOptions{8, true}, studentsvc::detail::NeverStop{},
      [&](const BatchProgress& p) { progress.push_back(p); });
  CHECK(always_on_caller);
  CHECK(summary.sent == 500);
  CHECK(summary.not_sent == 0);
  CHECK_FALSE(summary.stopped_by);
  CHECK_FALSE(summary.stop_requested);
  for (const int n : seen) CHECK(n == 1);
  CHECK(lookups.peak() <= 8);
  CHECK(lookups.peak() >= 1);
  REQUIRE(progress.size() == 500);
  CHECK(progress.back().done == 500);
  CHECK(progress.back().total == std::optional<std::size_t>{500});
  CHECK(progress.back().failures == 0);
}

TEST_CASE("batch window: a lazy single-pass input (a stream of perms) with no known total", "[batch_window]") {
  FakeLookups lookups(echo, 0us);
  std::stringstream file;
  for (int i = 0; i < 2000; ++i) file << (1000000 + i) << '\n';
  auto lazy = std::views::istream<std::string>(file);
  std::size_t delivered = 0;
  std::optional<std::size_t> total{123};
  const auto summary = run_batch_window<std::string>(
      lazy, lookups,
      [&](std::size_t index, const std::string& input, Result<std::string> r) {
        CHECK(input == std::to_string(1000000 + index));
        CHECK(r.has_value());
        ++delivered;
      },
      BatchWindowOptions{16, true}, studentsvc::detail::NeverStop{},
      [&](const BatchProgress& p) { total = p.total; });
  CHECK(delivered == 2000);
  CHECK(summary.sent == 2000);
  CHECK_FALSE(total.has_value());  // an istream has no size
  CHECK(lookups.peak() <= 16);
}

TEST_CASE("batch window: fail-fast after a 401 sends no more than the window", "[batch_window][fail_fast]") {
  // A wrong password: every lookup is answered 401.
  FakeLookups lookups([](const std::string&) -> Result<std::string> {
    return std::unexpected(studentsvc::decode_error_body(401, R"({"detail":"Invalid API key."})"));
  });
  const auto inputs = perms(5000);
  std::size_t unauthorized = 0;
  std::size_t cancelled = 0;
  std::size_t delivered = 0;
  BatchProgress last;
  const auto summary = run_batch_window<std::string>(
      inputs, lookups,
      [&](std::size_t, const std::string&, Result<std::string> r) {
        ++delivered;
        REQUIRE_FALSE(r);
        if (r.error().kind == ErrorKind::unauthorized) ++unauthorized;
        if (r.error().kind == ErrorKind::cancelled) {
          ++cancelled;
          CHECK_THAT(r.error().message, Catch::Contains("unauthorized (401): Invalid API key."));
          CHECK_FALSE(r.error().retryable);
        }
      },
      BatchWindowOptions{16, true}, studentsvc::detail::NeverStop{}, [&](const BatchProgress& p) { last = p; });
  CHECK(lookups.started() <= 16);
  CHECK(lookups.started() >= 1);
  CHECK(delivered == 5000);
  CHECK(unauthorized == summary.sent);
  CHECK(cancelled == 5000 - summary.sent);
  CHECK(summary.not_sent == cancelled);
  REQUIRE(summary.stopped_by);
  CHECK(summary.stopped_by->kind == ErrorKind::unauthorized);
  CHECK_FALSE(summary.stop_requested);
  CHECK(last.done == 5000);
  CHECK(last.failures == 5000);
}

TEST_CASE("batch window: with fail-fast off, a 401 for all sends all", "[batch_window][fail_fast]") {
  FakeLookups lookups([](const std::string&) -> Result<std::string> {
    return std::unexpected(studentsvc::decode_error_body(401, ""));
  }, 0us);
  const auto summary = run_batch_window<std::string>(
      perms(300), lookups, [](std::size_t, const std::string&, Result<std::string>) {}, BatchWindowOptions{8, false});
  CHECK(summary.sent == 300);
  CHECK(lookups.started() == 300);
  CHECK_FALSE(summary.stopped_by);
}

TEST_CASE("batch window: per-lookup errors (404, 503) do not stop the batch", "[batch_window][fail_fast]") {
  FakeLookups lookups([](const std::string& input) -> Result<std::string> {
    if (input.back() == '3') return std::unexpected(studentsvc::decode_error_body(404, R"({"message":"no"})"));
    if (input.back() == '7') return std::unexpected(studentsvc::decode_error_body(503, ""));
    return echo(input);
  }, 0us);
  std::size_t failures = 0;
  const auto summary = run_batch_window<std::string>(
      perms(200), lookups, [&](std::size_t, const std::string&, Result<std::string> r) { failures += r ? 0U : 1U; },
      BatchWindowOptions{4, true});
  CHECK(summary.sent == 200);
  CHECK(failures == 40);
  CHECK_FALSE(summary.stopped_by);
}

TEST_CASE("batch window: a stop request ends the sending, and unsent inputs are cancelled", "[batch_window][cancel]") {
  FakeLookups lookups(echo, 1000us);
  std::atomic<bool> stop{false};
  std::size_t ok = 0;
  std::size_t cancelled = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto summary = run_batch_window<std::string>(
      perms(100'000), lookups,
      [&](std::size_t, const std::string&, Result<std::string> r) {
        if (r) {
          if (++ok == 50) stop = true;  // the caller stops after 50 results
        } else {
          CHECK(r.error().kind == ErrorKind::cancelled);
          CHECK_THAT(r.error().message, Catch::Contains("stop requested"));
          ++cancelled;
        }
      },
      BatchWindowOptions{8, true}, FlagStop{&stop});
  const auto took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(summary.stop_requested);
  CHECK(summary.sent <= 50 + 8);
  CHECK(ok + cancelled == 100'000);
  CHECK(summary.not_sent == cancelled);
  CHECK(took < 30'000.0);
}

// StopToken is what the public calls take: std::stop_token, or where the
// standard library lacks it a stand-in that never stops (one case each).
#if STUDENTSVC_HAS_STOP_TOKEN
TEST_CASE("batch window: std::stop_token as the stop", "[batch_window][cancel]") {
  FakeLookups lookups(echo, 0us);
  std::stop_source source;
  source.request_stop();
  std::size_t cancelled = 0;
  const studentsvc::StopToken token = source.get_token();
  const auto summary = run_batch_window<std::string>(
      perms(10), lookups,
      [&](std::size_t, const std::string&, Result<std::string> r) { cancelled += r ? 0U : 1U; },
      BatchWindowOptions{}, token);
  CHECK(summary.sent == 0);
  CHECK(cancelled == 10);
  CHECK(summary.stop_requested);
  CHECK(lookups.started() == 0);
}
#else
TEST_CASE("batch window: the StopToken stand-in never stops a batch", "[batch_window][cancel]") {
  FakeLookups lookups(echo, 0us);
  std::size_t ok = 0;
  const auto summary = run_batch_window<std::string>(
      perms(10), lookups, [&](std::size_t, const std::string&, Result<std::string> r) { ok += r ? 1U : 0U; },
      BatchWindowOptions{}, studentsvc::StopToken{});
  CHECK_FALSE(studentsvc::StopToken{}.stop_possible());
  CHECK(summary.sent == 10);
  CHECK(ok == 10);
  CHECK_FALSE(summary.stop_requested);
  CHECK(lookups.started() == 10);
}
#endif

TEST_CASE("batch window: synchronous completions, an empty input, a zero window", "[batch_window]") {
  std::size_t started = 0;
  const auto sync_start = [&](std::size_t, const std::string& input,
                              const std::function<void(Result<std::string>)>& done) {
    ++started;
    if (input.size() != 7) {
      done(studentsvc::make_error(ErrorKind::invalid_argument, "perm must be exactly 7 ASCII digits"));
    } else {
      done(echo(input));
    }
  };
  std::vector<std::string> inputs{"1234567", "12", "7654321"};
  std::vector<bool> ok;
  const auto summary = run_batch_window<std::string>(
      inputs, sync_start, [&](std::size_t, const std::string&, Result<std::string> r) { ok.push_back(r.has_value()); },
      BatchWindowOptions{0, true});
  CHECK(summary.sent == 3);
  CHECK(ok == std::vector<bool>{true, false, true});  // invalid_argument does not trigger fail-fast
  const std::vector<std::string> none;
  std::size_t calls = 0;
  const auto empty = run_batch_window<std::string>(
      none, sync_start, [&](std::size_t, const std::string&, Result<std::string>) { ++calls; });
  CHECK(empty.sent == 0);
  CHECK(calls == 0);
}

}  // namespace batch_window_test

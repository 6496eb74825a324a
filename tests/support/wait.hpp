#pragma once
// Waiting in tests without assuming a quiet machine: a condition polled until a
// generous deadline (never a sleep that only usually suffices), and elapsed
// wall time for lower bounds and for what a test reports.

#include <chrono>
#include <thread>

namespace studentsvc::test {

/// How long eventually() waits by default: far past any honest delay on a
/// loaded 2-core machine, so only a real hang fails.
inline constexpr std::chrono::milliseconds eventually_limit{10'000};

/// Polls `done()` every 2 ms until it holds (true) or `limit` passes (false):
/// how a test waits for another thread's effect (a server's handler, the
/// event thread, a log line) before it goes on.
template <class Pred>
[[nodiscard]] bool eventually(Pred&& done, std::chrono::milliseconds limit = eventually_limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
  return true;
}

/// Seconds of wall time since `start`.
[[nodiscard]] inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Milliseconds of wall time since `start`.
[[nodiscard]] inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace studentsvc::test

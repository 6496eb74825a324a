#pragma once
// Simulated time for the retry engine: a steady and a wall clock that only
// move when the engine "sleeps" (or a fake transport says an attempt took
// time), so retry tests check every wait exactly and wait for none.

#include <algorithm>
#include <chrono>
#include <vector>

#include <studentsvc/retry.hpp>

namespace studentsvc::test {

class SimulatedTime {
 public:
  /// Starts the wall clock at `wall` (the steady clock at its epoch).
  explicit SimulatedTime(std::chrono::system_clock::time_point wall = std::chrono::system_clock::time_point{
                             std::chrono::seconds{784111777}})  // Sun, 06 Nov 1994 08:49:37 GMT
      : wall_(wall) {}
  SimulatedTime(const SimulatedTime&) = delete;
  SimulatedTime& operator=(const SimulatedTime&) = delete;

  /// The engine's clock; it refers to this object, which must outlive it.
  [[nodiscard]] detail::RetryClock clock() {
    return detail::RetryClock{[this] { return now_; }, [this] { return wall_; },
                              [this](std::chrono::milliseconds d) {
                                sleeps_.push_back(d);
                                advance(d);
                              }};
  }
  /// Moves both clocks on by `d` (saturating: a "forever" wait ends at the clock's end).
  void advance(std::chrono::milliseconds d) {
    if (d <= std::chrono::milliseconds{0}) return;
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    d = std::min({d, duration_cast<milliseconds>(std::chrono::steady_clock::time_point::max() - now_),
                  duration_cast<milliseconds>(std::chrono::system_clock::time_point::max() - wall_)});
    now_ += d;
    wall_ += d;
    elapsed_ += d;
  }
  /// Every wait the engine asked for, in order.
  [[nodiscard]] const std::vector<std::chrono::milliseconds>& sleeps() const noexcept { return sleeps_; }
  /// Simulated time passed since the start (sleeps and advance()).
  [[nodiscard]] std::chrono::milliseconds elapsed() const noexcept { return elapsed_; }
  /// The wall clock now.
  [[nodiscard]] std::chrono::system_clock::time_point wall() const noexcept { return wall_; }

 private:
  std::chrono::steady_clock::time_point now_{};
  std::chrono::system_clock::time_point wall_;
  std::chrono::milliseconds elapsed_{0};
  std::vector<std::chrono::milliseconds> sleeps_;
};

}  // namespace studentsvc::test

#pragma once
/// @file detail/retry/clock.hpp
/// @brief RetryClock: the clocks and the sleep of the retry and rate-limit
/// drivers, injectable so their tests run in simulated time.

#include <chrono>
#include <functional>
#include <thread>

namespace studentsvc::detail {

/// The clocks and the sleep of the retry drivers: steady_clock for the
/// deadline, system_clock for an HTTP-date `Retry-After`, and a blocking
/// sleep. Tests set all three to simulated time.
struct RetryClock {
  std::function<std::chrono::steady_clock::time_point()> now = [] { return std::chrono::steady_clock::now(); };
  std::function<std::chrono::system_clock::time_point()> wall = [] { return std::chrono::system_clock::now(); };
  std::function<void(std::chrono::milliseconds)> sleep = [](std::chrono::milliseconds d) {
    std::this_thread::sleep_for(d);
  };
};

}  // namespace studentsvc::detail

// The batch's progress bar (stderr, only when it is a terminal) and its summary line.

#include "cmd/get/progress.hpp"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ostream>
#include <string>

#include "exit_status.hpp"

namespace studentsvc_cli {

namespace {

/// "12.5" from a rate; whole numbers above 100.
std::string rate_text(double per_second) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, per_second >= 100.0 ? "%.0f" : "%.1f", per_second);
  return buffer;
}

/// "1h02m", "3m05s" or "42s".
std::string duration_text(std::chrono::seconds s) {
  const auto total = s.count() < 0 ? 0 : s.count();
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", static_cast<long long>(total / 3600),
                  static_cast<long long>(total % 3600 / 60));
  } else if (total >= 60) {
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  } else {
    std::snprintf(buffer, sizeof buffer, "%llds", static_cast<long long>(total));
  }
  return buffer;
}

}  // namespace

std::string progress_line(const BatchCounts& c, std::chrono::steady_clock::duration elapsed) {
  constexpr std::size_t width = 24;
  const double seconds = std::chrono::duration<double>(elapsed).count();
  if (!c.total_known) {
    return std::to_string(c.done) + " done  " + rate_text(seconds > 0.0 ? static_cast<double>(c.done) / seconds : 0.0) +
           "/s  " + std::to_string(c.failed) + " failed";
  }
  const double fraction = c.total == 0 ? 1.0 : static_cast<double>(c.done) / static_cast<double>(c.total);
  const auto filled = static_cast<std::size_t>(fraction * static_cast<double>(width));
  std::string out = "[";  // appended piece by piece: GCC 12's -O3 -Wrestrict misreads "[" + std::string
  out.append(filled, '#').append(width - filled, '-').append("] ");
  out += std::to_string(c.done) + "/" + std::to_string(c.total) + "  ";
  out += std::to_string(static_cast<int>(fraction * 100.0)) + "%  ";
  const double rate = seconds > 0.0 ? static_cast<double>(c.done) / seconds : 0.0;
  out += rate_text(rate) + "/s  ETA ";
  if (rate > 0.0) {
    out += duration_text(std::chrono::seconds(static_cast<long long>(static_cast<double>(c.total - c.done) / rate)));
  } else {
    out += "?";
  }
  out += "  " + std::to_string(c.failed) + " failed";
  return out;
}

std::string summary_line(const BatchCounts& c, std::chrono::steady_clock::duration elapsed, bool stopped) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  char time[32];
  std::snprintf(time, sizeof time, "%.1fs", seconds);
  std::string out = std::to_string(c.done) + " looked up, " + std::to_string(c.done - c.failed) + " found, " +
                    std::to_string(c.failed) + " failed in " + time;
  if (seconds > 0.0) out += " (" + rate_text(static_cast<double>(c.done) / seconds) + "/s)";
  if (stopped) out += "; stopped, " + std::to_string(c.total_known ? c.total - c.done : c.not_sent) + " not sent";
  return out;
}

void ProgressBar::update(const BatchCounts& c, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  err_ << "\r\033[K" << printable(progress_line(c, now - start_)) << std::flush;
}

void ProgressBar::finish() {
  if (!enabled_) return;
  err_ << "\r\033[K" << std::flush;
}

std::chrono::steady_clock::duration ProgressBar::elapsed() const { return std::chrono::steady_clock::now() - start_; }

}  // namespace studentsvc_cli

#pragma once
// The batch's progress bar (stderr, only when it is a terminal) and its summary line.

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace studentsvc_cli {

/// Counts of a batch so far.
struct BatchCounts {
  std::size_t done = 0;
  std::size_t total = 0;
  std::size_t failed = 0;
};

/// "12.5" from a rate; whole numbers above 100.
[[nodiscard]] inline std::string rate_text(double per_second) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, per_second >= 100.0 ? "%.0f" : "%.1f", per_second);
  return buffer;
}

/// "1h02m", "3m05s" or "42s".
[[nodiscard]] inline std::string duration_text(std::chrono::seconds s) {
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

/// One frame of the bar: `[#####-----] 1200/5000  24%  310.0/s  ETA 12s  3 failed`.
[[nodiscard]] inline std::string progress_line(const BatchCounts& c, std::chrono::steady_clock::duration elapsed) {
  constexpr std::size_t width = 24;
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const double fraction = c.total == 0 ? 1.0 : static_cast<double>(c.done) / static_cast<double>(c.total);
  const auto filled = static_cast<std::size_t>(fraction * static_cast<double>(width));
  std::string out = "[" + std::string(filled, '#') + std::string(width - filled, '-') + "] ";
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

/// The line after the batch: `5000 looked up, 4990 found, 10 failed in 3.2s (1562.5/s)`.
[[nodiscard]] inline std::string summary_line(const BatchCounts& c, std::chrono::steady_clock::duration elapsed,
                                              bool stopped) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  char time[32];
  std::snprintf(time, sizeof time, "%.1fs", seconds);
  std::string out = std::to_string(c.done) + " looked up, " + std::to_string(c.done - c.failed) + " found, " +
                    std::to_string(c.failed) + " failed in " + time;
  if (seconds > 0.0) out += " (" + rate_text(static_cast<double>(c.done) / seconds) + "/s)";
  if (stopped) out += "; stopped, " + std::to_string(c.total - c.done) + " not sent";
  return out;
}

/// Redraws the bar on a terminal's stderr, at most ten times a second.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}

  void update(const BatchCounts& c, bool force = false) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    std::fprintf(stderr, "\r\033[K%s", progress_line(c, now - start_).c_str());
    std::fflush(stderr);
  }

  /// Clears the bar, so the summary line starts a clean line.
  void finish() {
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

  [[nodiscard]] std::chrono::steady_clock::duration elapsed() const { return std::chrono::steady_clock::now() - start_; }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace studentsvc_cli

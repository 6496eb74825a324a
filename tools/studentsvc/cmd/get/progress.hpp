#pragma once
// The batch's progress bar (stderr, only when it is a terminal) and its summary line.

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace studentsvc_cli {

/// Counts of a batch so far.
struct BatchCounts {
  std::size_t done = 0;
  std::size_t total = 0;
  std::size_t failed = 0;
  bool total_known = true;   ///< false for a pipe: read as the batch goes, its length unknown
  std::size_t not_sent = 0;  ///< inputs not written after a stop (counted when the total is unknown)
};

/// One frame of the bar: `[#####-----] 1200/5000  24%  310.0/s  ETA 12s  3 failed`.
[[nodiscard]] std::string progress_line(const BatchCounts& c, std::chrono::steady_clock::duration elapsed);

/// The line after the batch: `5000 looked up, 4990 found, 10 failed in 3.2s (1562.5/s)`.
[[nodiscard]] std::string summary_line(const BatchCounts& c, std::chrono::steady_clock::duration elapsed, bool stopped);

/// Redraws the bar on `err` (a terminal's stderr), at most ten times a second.
class ProgressBar {
 public:
  ProgressBar(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}

  void update(const BatchCounts& c, bool force = false);
  /// Clears the bar, so the summary line starts a clean line.
  void finish();
  [[nodiscard]] std::chrono::steady_clock::duration elapsed() const;

 private:
  std::ostream& err_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace studentsvc_cli

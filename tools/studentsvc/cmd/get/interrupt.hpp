#pragma once
// SIGINT and SIGTERM during a batch: the batch stops (the lookups in flight are
// cancelled, no more are sent) and still ends as usual, so --failed-to lists
// every perm not looked up. A second signal has its default action.

#include <signal.h>

#include <thread>

#include "cmd/get/roster.hpp"

namespace studentsvc_cli {

/// While alive, SIGINT or SIGTERM requests `stop`, from a thread of its own
/// (the handler only wakes it). One at a time.
class StopOnSignal {
 public:
  explicit StopOnSignal(BatchStop& stop);
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  ~StopOnSignal();

  /// The signal that stopped the batch, or 0.
  [[nodiscard]] static int received() noexcept;

 private:
  std::thread watcher_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace studentsvc_cli

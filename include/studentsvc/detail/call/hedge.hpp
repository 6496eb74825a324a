#pragma once
/// @file detail/call/hedge.hpp
/// @brief HedgeRace: one attempt sent as up to two copies (ClientOptions::hedging):
/// the first answer wins, the other copy's transfer is stopped.
/// @sa docs/pipeline.md, HedgingOptions

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>

#include <studentsvc/detail/call/stop.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

/// The two copies of one attempt and the timer of the second. Each has its
/// own stop, following the call's, so the loser (and the timer) can be
/// stopped alone. Completions may come from two threads: one mutex. The race
/// keeps the call alive until it is decided, and no longer: the loser's
/// transfer, still being stopped, holds only the race.
class HedgeRace {
 public:
  HedgeRace(std::shared_ptr<void> call_owner, const StopToken& call)
      : owner_(std::move(call_owner)), timer_(std::make_shared<CallStop>(call, StopToken{})) {
    copies_[0] = std::make_shared<CallStop>(call, StopToken{});
  }
  /// The stop of copy `i` (0 the first, 1 the hedge); the timer's for `i` = 2.
  [[nodiscard]] StopToken token(std::size_t i) const {
    const std::lock_guard lock(mutex_);
    return i == 2 ? timer_->token() : copies_[i]->token();
  }
  /// Before sending the hedge: false when an answer is already in.
  [[nodiscard]] bool add_hedge(const StopToken& call) {
    const std::lock_guard lock(mutex_);
    if (decided_) return false;
    copies_[1] = std::make_shared<CallStop>(call, StopToken{});
    return true;
  }
  [[nodiscard]] bool decided() const {
    const std::lock_guard lock(mutex_);
    return decided_;
  }
  /// An answer from copy `i`: the call (to hand the answer to) for the first,
  /// whose other copy and timer are stopped; null for the loser's (ignored).
  [[nodiscard]] std::shared_ptr<void> win(std::size_t i) {
    std::shared_ptr<CallStop> loser;
    std::shared_ptr<void> owner;
    {
      const std::lock_guard lock(mutex_);
      if (decided_) return nullptr;
      decided_ = true;
      loser = copies_[1 - i];
      owner = std::move(owner_);
    }
    if (loser) loser->request_stop();
    timer_->request_stop();
    return owner;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<void> owner_;
  std::array<std::shared_ptr<CallStop>, 2> copies_;
  std::shared_ptr<CallStop> timer_;
  bool decided_ = false;
};

}  // namespace studentsvc::detail

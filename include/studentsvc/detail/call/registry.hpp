#pragma once
/// @file detail/call/registry.hpp
/// @brief CallRegistry, a client's asynchronous calls in flight (so that its
/// last handle can cancel and wait for them), and the marker of a thread that
/// runs completions (which must never wait for them).

#include <condition_variable>
#include <cstddef>
#include <mutex>

#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

/// True on a thread that runs asynchronous completions (a transport's event
/// thread, or a caller inside a completion): it must never wait for them.
inline thread_local bool in_async_completion = false;

/// Sets in_async_completion for a scope.
class AsyncCompletionScope {
 public:
  AsyncCompletionScope() noexcept : was_(in_async_completion) { in_async_completion = true; }
  ~AsyncCompletionScope() { in_async_completion = was_; }
  AsyncCompletionScope(const AsyncCompletionScope&) = delete;
  AsyncCompletionScope& operator=(const AsyncCompletionScope&) = delete;

 private:
  bool was_;
};

/// A client's asynchronous calls in flight (batches' lookups included): counted, so that the last Client
/// handle's destruction can cancel them (one stop source) and wait for them.
class CallRegistry {
 public:
  /// Counts a call in; false (do not start it) once the client is closing.
  [[nodiscard]] bool enter() {
    const std::lock_guard lock(mutex_);
    if (closing_) return false;
    ++in_flight_;
    return true;
  }
  /// Counts a call out, after its completion has run.
  void leave() {
    {
      const std::lock_guard lock(mutex_);
      --in_flight_;
    }
    idle_.notify_all();
  }
  /// Cancels every call in flight and waits until each has completed, except
  /// on a thread that runs completions (waiting there would wait for itself).
  void close() {
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
    }
    stop_.request_stop();
    if (in_async_completion) return;
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return in_flight_ == 0; });
  }
  [[nodiscard]] std::size_t in_flight() const {
    const std::lock_guard lock(mutex_);
    return in_flight_;
  }
  [[nodiscard]] StopToken token() const noexcept { return stop_.get_token(); }

 private:
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t in_flight_ = 0;
  bool closing_ = false;
  StopSource stop_;
};

}  // namespace studentsvc::detail

#pragma once
// A small hand-written coroutine task and event loop for the awaitable tests:
// the Task starts at once, keeps its frame until the Task is destroyed (which
// destroys a suspended frame too) and keeps an exception its body throws; the
// EventLoop is one thread that resumes the handles posted to it, the
// "user's loop" of resume_via, and keeps what they throw out of resume().

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace studentsvc::test {

/// A coroutine lambda must outlive its Task (its frame refers to the closure):
/// name the lambda, then call it.
class Task {
 public:
  struct promise_type {
    std::exception_ptr exception;
    std::atomic<bool> finished{false};  // read from another thread than the one that resumed it
    Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
    std::suspend_never initial_suspend() noexcept { return {}; }
    // `finished` is set once the frame is suspended at its end (in await_suspend,
    // after the coroutine stored where it stopped): a thread that sees it may
    // destroy the frame. Set in final_suspend() itself, it raced that store
    // when another thread resumed the coroutine (ThreadSanitizer saw it).
    struct AtEnd {
      [[nodiscard]] bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<promise_type> h) const noexcept {
        h.promise().finished.store(true, std::memory_order_release);
      }
      void await_resume() const noexcept {}
    };
    AtEnd final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { exception = std::current_exception(); }
  };

  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&&) = delete;
  ~Task() { destroy(); }
  /// Destroys the frame, suspended or not.
  void destroy() {
    if (handle_) std::exchange(handle_, {}).destroy();
  }
  [[nodiscard]] bool finished() const {
    return handle_ && handle_.promise().finished.load(std::memory_order_acquire);
  }
  [[nodiscard]] std::exception_ptr exception() const { return handle_ ? handle_.promise().exception : nullptr; }

 private:
  explicit Task(std::coroutine_handle<promise_type> h) : handle_(h) {}
  std::coroutine_handle<promise_type> handle_;
};

/// A task whose promise lets an exception out of the coroutine (its
/// unhandled_exception rethrows), to whoever resumed it: the loop's resume()
/// call, or start(). It starts suspended (start() runs it to its first
/// suspension) and keeps its frame until destroyed. What reaches the awaiting
/// coroutine's promise must then leave by its resumer: a test fails if
/// anything between (the SDK) caught or swallowed it.
class RethrowingTask {
 public:
  struct promise_type {
    RethrowingTask get_return_object() {
      return RethrowingTask(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() { throw; }  // the coroutine then counts as done (at its final suspend point)
  };

  RethrowingTask(RethrowingTask&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  RethrowingTask& operator=(RethrowingTask&&) = delete;
  ~RethrowingTask() {
    if (handle_) handle_.destroy();
  }
  /// Runs the coroutine to its first suspension; what it throws meanwhile comes out here.
  void start() { handle_.resume(); }
  /// At its end (returned, or threw): read on the thread that resumed it last.
  [[nodiscard]] bool done() const { return handle_.done(); }

 private:
  explicit RethrowingTask(std::coroutine_handle<promise_type> h) : handle_(h) {}
  std::coroutine_handle<promise_type> handle_;
};

/// CurlTransport's event thread's name (CurlEventLoop::thread_name).
inline constexpr const char* event_thread_name = "studentsvc-curl";

/// The name of the calling thread ("studentsvc-curl" on CurlTransport's event thread).
[[nodiscard]] inline std::string this_thread_name() {
  char name[32] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  return name;
}

/// Where a coroutine or a handler found itself when it ran.
struct Resumption {
  std::thread::id thread;
  std::string thread_name;
};
[[nodiscard]] inline Resumption here() { return {std::this_thread::get_id(), this_thread_name()}; }

/// One thread that runs what is posted to it, in order: coroutine handles
/// (resume_via's post) and functions.
class EventLoop {
 public:
  EventLoop() : thread_([this] { run(); }) {}
  ~EventLoop() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  void post(std::function<void()> f) {
    // Notified under the lock: a poster on another thread (the SDK's event
    // thread) is out of notify_all() before the loop can run `f`, so a test
    // that destroys the loop right after `f` ran never destroys the condition
    // variable under a notify_all() still running (ThreadSanitizer saw that).
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(f));
    cv_.notify_all();
  }
  void post(std::coroutine_handle<> h) {
    ++handles_posted_;
    post([h] { h.resume(); });
  }
  /// A resume_via post for this loop.
  [[nodiscard]] auto poster() {
    return [this](std::coroutine_handle<> h) { post(h); };
  }
  /// Runs `f` on the loop's thread and waits for it.
  template <class F>
  auto call(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    post([&task] { task(); });
    return result.get();
  }
  /// Holds the loop (what is posted waits) until resume().
  void pause() {
    call([this] {
      const std::lock_guard lock(mutex_);
      paused_ = true;
    });
  }
  void resume() {
    {
      const std::lock_guard lock(mutex_);
      paused_ = false;
    }
    cv_.notify_all();
  }
  /// Waits until everything posted so far has run.
  void drain() {
    call([] {});
  }
  [[nodiscard]] std::thread::id id() const { return thread_.get_id(); }
  [[nodiscard]] std::size_t handles_posted() const { return handles_posted_.load(); }
  /// The exceptions that came out of what the loop ran (a resumed coroutine's, say), in order.
  [[nodiscard]] std::vector<std::exception_ptr> escaped() const {
    const std::lock_guard lock(escaped_mutex_);
    return escaped_;
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || (!paused_ && !queue_.empty()); });
      if (queue_.empty()) return;  // stopping, all run
      auto f = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      try {
        f();
      } catch (...) {  // out of a handle's resume(): kept for the test (escaped())
        const std::lock_guard escaped_lock(escaped_mutex_);
        escaped_.push_back(std::current_exception());
      }
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  bool paused_ = false;
  std::atomic<std::size_t> handles_posted_{0};
  mutable std::mutex escaped_mutex_;
  std::vector<std::exception_ptr> escaped_;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace studentsvc::test

// docs/async.md's "Coroutines and Asio" example, first form: co_await a lookup in
// any coroutine type, resumed on your own loop through resume_via, against
// MockServer. The test suite runs it and looks for "coroutines example: ok".

#include <coroutine>
#include <deque>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>

#include <studentsvc/awaitable.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

namespace {

// The smallest eager, fire-and-forget coroutine type: any coroutine type works.
struct Detached {
  struct promise_type {
    Detached get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};

// Your event loop (Qt, libuv, a hand-written one): here a queue run on main().
class Loop {
 public:
  void post(std::coroutine_handle<> h) {
    const std::lock_guard lock(mutex_);
    ready_.push_back(h);
  }
  bool run_one() {
    std::coroutine_handle<> h;
    {
      const std::lock_guard lock(mutex_);
      if (ready_.empty()) return false;
      h = ready_.front();
      ready_.pop_front();
    }
    h.resume();
    return true;
  }

 private:
  std::mutex mutex_;
  std::deque<std::coroutine_handle<>> ready_;
};

}  // namespace

Detached show_student(const studentsvc::Client& client, Loop& loop, bool& done) {
  // post() is called once, from any thread: it only hands the handle to the loop.
  const auto on_my_loop = studentsvc::resume_via([&loop](std::coroutine_handle<> h) { loop.post(h); });
  auto student = co_await client.get_student_async("1234567", on_my_loop);  // a Result, never throws
  if (student) {
    std::cout << student->first_name << ' ' << student->last_name << '\n';  // on the loop's thread
  } else {
    std::cout << "lookup failed: " << student.error().message << '\n';
  }
  done = student.has_value();
}

int main() {
  studentsvc::testing::MockServer mock;
  const studentsvc::Client client(mock.client_options());
  Loop loop;
  bool done = false;
  show_student(client, loop, done);
  while (!done) {
    if (!loop.run_one()) std::this_thread::yield();
  }
  std::cout << "coroutines example: ok\n";
  return 0;
}

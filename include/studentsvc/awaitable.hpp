#pragma once
/// @file awaitable.hpp
/// @brief Awaitable<T>: `co_await` a call in any coroutine type, on your own
/// event loop. An awaited call is one more driver of the call pipeline: it
/// starts the Completion form of the call (client.hpp) and resumes the
/// awaiting coroutine where its ResumeVia says.
///
/// @code
/// auto student = co_await client.get_student_async("1234567", studentsvc::resume_via(post_to_my_loop));
/// @endcode
///
/// Everything here is inline in this header, never in the compiled library:
/// no class of the library changes with coroutines enabled or not.

#include <atomic>
#include <concepts>
#include <coroutine>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <studentsvc/client.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/call/stop.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc {

namespace detail {
struct AwaitCore;
}  // namespace detail

/// @brief The type of resume_inline.
struct ResumeInline {
  explicit constexpr ResumeInline() = default;
};

/// @brief Resume the awaiting coroutine on the thread that completes the call:
/// on CurlTransport the SDK's event thread, where it must not block (as a
/// completion). An exception its promise lets out of `resume()` there ends
/// the program (std::terminate); the SDK never catches it.
inline constexpr ResumeInline resume_inline{};

/// @brief Where an awaiting coroutine resumes: resume_via(post) or
/// resume_inline. There is no default.
class ResumeVia {
 public:
  /// @brief Resume on the thread that completes the call (resume_inline).
  ResumeVia(ResumeInline) noexcept {}  // NOLINT(google-explicit-constructor): `resume_inline` is the spelling

  /// @brief True for resume_inline.
  [[nodiscard]] bool is_inline() const noexcept { return !post_; }

 private:
  template <class Post>
    requires std::invocable<Post&, std::coroutine_handle<>>
  friend ResumeVia resume_via(Post post);
  friend struct detail::AwaitCore;

  explicit ResumeVia(std::function<void(std::coroutine_handle<>)> post) noexcept : post_(std::move(post)) {}

  std::function<void(std::coroutine_handle<>)> post_;
};

/// @brief Resume the awaiting coroutine on your loop: when the call
/// completes, `post(handle)` is called once, from any thread (the SDK's event
/// thread, or the awaiting thread), and must only hand `handle` to your loop,
/// whose thread then calls `handle.resume()`. A handle whose awaitable was
/// destroyed meanwhile resumes nothing. An exception `post` throws is logged
/// and dropped, and the coroutine is then never resumed: post must not throw.
template <class Post>
  requires std::invocable<Post&, std::coroutine_handle<>>
[[nodiscard]] ResumeVia resume_via(Post post) {
  return ResumeVia(std::function<void(std::coroutine_handle<>)>(std::move(post)));
}

namespace detail {

/// What the awaitable and the call's completion share (the completion may
/// outlive the awaitable): who resumes whom, decided by one atomic.
struct AwaitCore {
  enum Phase : int {
    starting,   ///< await_suspend is starting the call
    suspended,  ///< the coroutine is suspended; the completion resumes it
    completed,  ///< the result is in; resumption handed to the ResumeVia (or due in await_suspend)
    resumed,    ///< a posted resumption reached the user's loop and resumed the coroutine
    abandoned,  ///< the awaitable was destroyed before resuming: resume nothing
  };

  AwaitCore(ResumeVia r, const StopToken& caller) : resume(std::move(r)), stop(caller, StopToken{}) {}

  std::atomic<int> phase{starting};
  std::coroutine_handle<> waiter;
  ResumeVia resume;
  CallStop stop;  ///< the caller's token, and the awaitable's destruction while pending

  // The completion's end, after its result is stored: resumes the coroutine
  // if it is suspended (the one resumption), else leaves it to await_suspend.
  void completed_from(const std::shared_ptr<AwaitCore>& self);
  // The awaitable's destruction: a pending call is cancelled, a posted
  // resumption will find it gone.
  void abandon() noexcept {
    int expected = suspended;
    if (phase.compare_exchange_strong(expected, abandoned, std::memory_order_acq_rel)) {
      stop.request_stop();
      return;
    }
    expected = completed;  // a resumption may be on its way to the user's loop
    phase.compare_exchange_strong(expected, abandoned, std::memory_order_acq_rel);
  }
};

/// The coroutine handed to a resume_via post: when the user's loop resumes
/// it, it resumes the awaiting coroutine unless its awaitable is gone, and
/// frees itself (symmetric transfer: an exception of the awaiting coroutine's
/// promise reaches the loop's resume() call, not this frame).
struct ResumeRelay {
  struct promise_type {
    std::shared_ptr<AwaitCore> core;

    ResumeRelay get_return_object() noexcept {
      return ResumeRelay{std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct Hop {
      [[nodiscard]] bool await_ready() const noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> self) noexcept {
        const std::shared_ptr<AwaitCore> relayed = std::move(self.promise().core);
        self.destroy();
        int expected = AwaitCore::completed;
        if (relayed->phase.compare_exchange_strong(expected, AwaitCore::resumed, std::memory_order_acq_rel)) {
          return relayed->waiter;  // `relayed` goes here; the awaitable still holds it
        }
        return std::noop_coroutine();  // abandoned: the frame it would resume is gone
      }
      void await_resume() const noexcept {}
    };
    Hop final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    [[noreturn]] void unhandled_exception() noexcept { std::terminate(); }  // its body throws nothing
  };
  std::coroutine_handle<promise_type> handle;
};

inline ResumeRelay make_resume_relay() { co_return; }

// Runs the inline resumption outside every handler of the SDK: an exception
// the promise lets out of resume() terminates (noexcept) instead of being dropped.
inline void resume_here(std::coroutine_handle<> waiter) noexcept { waiter.resume(); }

inline void AwaitCore::completed_from(const std::shared_ptr<AwaitCore>& self) {
  if (phase.exchange(completed, std::memory_order_acq_rel) != suspended) return;  // await_suspend resumes, or nobody
  if (resume.is_inline()) {
    resume_here(waiter);
    return;
  }
  ResumeRelay relay = make_resume_relay();
  relay.handle.promise().core = self;
  resume.post_(relay.handle);
}

/// The arguments of an awaited call until it starts, and how to start it on
/// the call's Completion form.
struct AwaitedLookup {
  std::string key;  ///< the perm, or the user's JWT
  CallOptions call;
  bool current = false;  ///< current_student, else get_student
  void start(const Client& client, Completion<StudentExtended> done, const StopToken& stop) const {
    if (current) {
      client.current_student_async(key, std::move(done), call, stop);
    } else {
      client.get_student_async(key, std::move(done), call, stop);
    }
  }
};
struct AwaitedConversation {
  ConversationRequest request;
  void start(const Client& client, Completion<RawResponse> done, const StopToken& stop) const {
    client.conversation_async(request, std::move(done), stop);
  }
};
template <class T>
using AwaitedCall = std::conditional_t<std::is_same_v<T, RawResponse>, AwaitedConversation, AwaitedLookup>;

template <class T>
struct AwaitState final : AwaitCore {
  AwaitState(Client c, AwaitedCall<T> a, ResumeVia r, const StopToken& s)
      : AwaitCore(std::move(r), s), client(std::move(c)), args(std::move(a)) {}
  std::optional<Client> client;  ///< until the call has started: the last Client can close while awaited
  AwaitedCall<T> args;
  Result<T> result{std::unexpect};
};

}  // namespace detail

/// @brief A call that starts when it is awaited, and yields its Result<T>.
///
/// Move-only, awaited at most once (a second `co_await` yields
/// invalid_argument). `co_await` never throws. The coroutine resumes once,
/// where the call's ResumeVia says, or on the awaiting thread at once when
/// the call completes while it is being awaited (an invalid perm, a custom
/// Transport that only implements `send`). A stop request on the call's
/// StopToken ends it as `cancelled`. Destroying a pending awaitable (its
/// coroutine frame destroyed) cancels the call and never resumes the dead
/// frame. Until awaited it holds a copy of its Client; once the call is
/// started it does not, so destroying the last Client resumes every awaiting
/// coroutine once, with `cancelled`, through its ResumeVia.
template <class T>
class [[nodiscard]] Awaitable {
  static_assert(std::is_same_v<T, StudentExtended> || std::is_same_v<T, RawResponse>);

 public:
  /// @brief Takes over `other`'s call; `other` then yields an error if awaited.
  Awaitable(Awaitable&& other) noexcept
      : state_(std::move(other.state_)),
        started_(std::exchange(other.started_, false)),
        consumed_(std::exchange(other.consumed_, false)) {}
  Awaitable& operator=(Awaitable&&) = delete;
  Awaitable(const Awaitable&) = delete;
  Awaitable& operator=(const Awaitable&) = delete;
  ~Awaitable() {
    if (state_ && started_) state_->abandon();
  }

  /// @brief True for a moved-from or already started awaitable (it then resumes at once).
  [[nodiscard]] bool await_ready() const noexcept { return state_ == nullptr || started_; }

  /// Starts the call; false (resume now) when it completed already.
  bool await_suspend(std::coroutine_handle<> waiter) {
    detail::AwaitState<T>& s = *state_;
    started_ = true;
    s.waiter = waiter;
    s.args.start(
        *s.client,
        [state = state_](Result<T> r) {
          state->result = std::move(r);
          state->completed_from(state);
        },
        s.stop.token());
    s.client.reset();  // the awaitable no longer keeps the Client open
    int expected = detail::AwaitCore::starting;
    // After this exchange the completion may resume and free this frame: touch nothing of it.
    return s.phase.compare_exchange_strong(expected, detail::AwaitCore::suspended, std::memory_order_acq_rel);
  }

  /// @brief The call's result; an invalid_argument error when moved from or awaited twice.
  [[nodiscard]] Result<T> await_resume() {
    if (!started_ || consumed_) {
      return make_error(ErrorKind::invalid_argument, "this Awaitable was moved from or already awaited");
    }
    consumed_ = true;
    return std::move(state_->result);
  }

 private:
  friend class Client;
  explicit Awaitable(std::shared_ptr<detail::AwaitState<T>> state) noexcept : state_(std::move(state)) {}

  std::shared_ptr<detail::AwaitState<T>> state_;
  bool started_ = false;
  bool consumed_ = false;
};

inline Awaitable<StudentExtended> Client::get_student_async(std::string_view perm, ResumeVia resume,
                                                            const CallOptions& call, StopToken stop) const {
  return Awaitable<StudentExtended>(std::make_shared<detail::AwaitState<StudentExtended>>(
      *this, detail::AwaitedLookup{std::string(perm), call, false}, std::move(resume), stop));
}

inline Awaitable<StudentExtended> Client::current_student_async(std::string_view user_jwt, ResumeVia resume,
                                                                const CallOptions& call, StopToken stop) const {
  return Awaitable<StudentExtended>(std::make_shared<detail::AwaitState<StudentExtended>>(
      *this, detail::AwaitedLookup{std::string(user_jwt), call, true}, std::move(resume), stop));
}

inline Awaitable<RawResponse> Client::conversation_async(const ConversationRequest& request, ResumeVia resume,
                                                         StopToken stop) const {
  return Awaitable<RawResponse>(std::make_shared<detail::AwaitState<RawResponse>>(
      *this, detail::AwaitedConversation{request}, std::move(resume), stop));
}

}  // namespace studentsvc

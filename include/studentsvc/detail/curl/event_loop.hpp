#pragma once
/// @file detail/curl/event_loop.hpp
/// @brief One event thread driving a curl multi handle: transfers submitted from
/// any thread run concurrently on it (no thread per call), with a cap on how many
/// are in flight, timers (a retry's backoff, a rate limit's wait) on the same
/// thread, cancellation by id or `std::stop_token`, and a destructor that
/// cancels what is left and waits.

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>
#include <version>

#include <studentsvc/errors.hpp>
#include <studentsvc/stop_token.hpp>  // StopToken: without std::stop_token it never stops, only cancel(id) cancels

#if defined(__linux__)
#include <pthread.h>
#endif

namespace studentsvc::detail {

/// How one submitted transfer ended.
struct TransferOutcome {
  /// libcurl's result; CURLE_ABORTED_BY_CALLBACK when `cancelled`.
  CURLcode code = CURLE_OK;
  /// True when it was stopped (cancel(), its stop_token, or the loop's
  /// destruction) before it finished: nothing it received may be used.
  bool cancelled = false;
};

/// A move-only `void(TransferOutcome)` callable (std::move_only_function is not
/// in every standard library the SDK builds with), so a completion may own a
/// std::promise or a unique_ptr.
class TransferCompletion {
 public:
  TransferCompletion() = default;
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, TransferCompletion> &&
             std::is_invocable_v<std::remove_cvref_t<F>&, TransferOutcome>)
  TransferCompletion(F&& f)  // NOLINT(google-explicit-constructor): a lambda converts, as to std::function
      : impl_(std::make_unique<Model<std::remove_cvref_t<F>>>(std::forward<F>(f))) {}

  explicit operator bool() const noexcept { return impl_ != nullptr; }
  void operator()(TransferOutcome outcome) { impl_->call(outcome); }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual void call(TransferOutcome outcome) = 0;
  };
  template <class F>
  struct Model final : Concept {
    explicit Model(F&& f) : fn(std::move(f)) {}
    explicit Model(const F& f) : fn(f) {}
    void call(TransferOutcome outcome) override { fn(outcome); }
    F fn;
  };
  std::unique_ptr<Concept> impl_;
};

/// @brief An event thread per owner that runs curl easy handles on one multi handle.
///
/// - `submit` is thread-safe. The thread starts on the first submit and is
///   stopped and joined by the destructor.
/// - The caller configures the easy handle (URL, headers, write callback,
///   CURLOPT_TIMEOUT_MS, ...) and keeps it, and everything its callbacks use,
///   alive until the completion has run. The loop never sets an option on it.
/// - The completion runs exactly once, on the event thread, after the handle
///   left the multi handle (the caller may reuse or free it from there). It
///   must be short and must not block: every transfer waits while it runs. It
///   may call submit() and cancel(). An exception it throws is caught and
///   counted (completion_exceptions()), never propagated: the loop goes on.
/// - At most `max_in_flight` transfers run at once; later ones wait in a FIFO
///   queue and start as running ones finish.
/// - schedule(delay, fn) runs `fn` on the event thread after `delay`: the
///   wait of an async retry or of the rate limit, without a sleeping thread.
///   Timers do not count against the cap and are cancelled like transfers.
/// - cancel(id) or a stop request on the submit's stop_token ends the transfer,
///   queued or in flight (mid-body too), with `cancelled` at the next turn of
///   the loop (the loop is woken at once, so within milliseconds).
/// - The destructor cancels every queued and in-flight transfer, runs their
///   completions, then joins the thread. It must not run on the event thread
///   (from a completion): that would be a join of itself.
/// - A completion may destroy the loop's owner (CurlEventLoop's destructor
///   then runs on the event thread). Completions the same step had already
///   taken from the queue run after that: what a completion uses must be its
///   own (shared) or outlive the loop, never the owner's alone.
/// - libcurl's global init must have happened (curl_easy_init does it), which
///   holds for any caller that has an easy handle to submit.
/// - run_here_or_submit() runs a transfer on the calling thread, on the same
///   multi handle (and so the same connections), while the event thread has
///   nothing to do: a blocking call then costs no hand-off between threads.
///   The event thread parks meanwhile; work submitted for it takes the
///   transfer over mid-flight, and its completion then runs on the event thread.
/// - If the event thread cannot start (no curl multi handle, no thread), the
///   completion runs at once on the calling thread with CURLE_FAILED_INIT.
class CurlEventLoopCore : public std::enable_shared_from_this<CurlEventLoopCore> {
 public:
  using TransferId = std::uint64_t;

  /// @brief `max_in_flight` 0 is taken as 1. Owned by a shared_ptr (the event
  /// thread holds one too); CurlEventLoop is the handle to use.
  explicit CurlEventLoopCore(std::size_t max_in_flight) : max_in_flight_(std::max<std::size_t>(max_in_flight, 1)) {}
  // The thread has been joined, or has ended after a detach (it held the last reference).
  ~CurlEventLoopCore() {
    if (multi_ != nullptr) curl_multi_cleanup(multi_);
  }
  CurlEventLoopCore(const CurlEventLoopCore&) = delete;
  CurlEventLoopCore& operator=(const CurlEventLoopCore&) = delete;
  friend class CurlEventLoop;  // shut_down()

  /// @brief Queues `easy` and returns its id (never 0). `done` runs once on the
  /// event thread with how it ended. A null `easy`, or a handle that is already
  /// running here, completes with CURLE_BAD_FUNCTION_ARGUMENT without running.
  TransferId submit(CURL* easy, TransferCompletion done) {
    return enqueue(transfer_of(easy, std::move(done)), NoStop{});
  }

  /// @brief submit(), but run on the calling thread while the event thread is
  /// idle (parked: no transfer, no timer, nothing queued), with `done` called
  /// here before it returns. Work that arrives meanwhile takes the transfer to
  /// the event thread, where `done` then runs. The caller waits for `done`
  /// either way; it must not be the event thread.
  void run_here_or_submit(CURL* easy, TransferCompletion done) {
    {
      std::unique_lock lock(mutex_);
      if (!start_locked() || !parked_ || driven_here_ || stopping_ || has_work_locked()) {
        lock.unlock();
        submit(easy, std::move(done));
        return;
      }
      driven_here_ = true;  // the event thread stays parked: multi_ is this thread's
      ++in_flight_;
      peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
    }
    TransferPtr transfer = transfer_of(easy, std::move(done));
    transfer->id = next_id_.fetch_add(1, std::memory_order_relaxed);
    if (easy == nullptr || curl_multi_add_handle(multi_, easy) != CURLM_OK) {
      complete(std::move(transfer), TransferOutcome{CURLE_BAD_FUNCTION_ARGUMENT, false});
      stop_driving_here(true);
      return;
    }
    for (;;) {
      int running = 0;
      curl_multi_perform(multi_, &running);
      std::optional<TransferOutcome> outcome;
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) outcome = TransferOutcome{msg->data.result, false};
      }
      if (outcome) {
        curl_multi_remove_handle(multi_, easy);
        // Still this thread's turn: the completion touches what only the driver may.
        complete(std::move(transfer), *outcome);
        stop_driving_here(true);
        return;
      }
      {
        const std::lock_guard lock(mutex_);
        if (stopping_ || has_work_locked()) {
          // The event thread has work: it takes this transfer over where it is.
          active_.emplace(easy, std::move(transfer));
        }
      }
      if (!transfer) {
        stop_driving_here(false);
        return;
      }
      // Submissions and cancels end the wait with curl_multi_wakeup.
      curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
  }

  /// @brief Runs `done` on the event thread once `delay` has passed (0 or less:
  /// at the next turn of the loop), with `code` CURLE_OK; or, cancelled by
  /// cancel(id) or the destructor before then, with `cancelled`.
  /// Returns its id (never 0), from the same series as transfers'.
  TransferId schedule(std::chrono::milliseconds delay, TransferCompletion done) {
    return enqueue(timer_of(delay, std::move(done)), NoStop{});
  }

  /// @brief submit(), also cancelled by a stop request on `stop`. A `stop`
  /// already stopped completes it as cancelled without running.
  TransferId submit(CURL* easy, TransferCompletion done, StopToken stop) {
    return enqueue(transfer_of(easy, std::move(done)), stop);
  }
  /// @brief schedule(), also cancelled by a stop request on `stop`.
  TransferId schedule(std::chrono::milliseconds delay, TransferCompletion done, StopToken stop) {
    return enqueue(timer_of(delay, std::move(done)), stop);
  }

  /// @brief Cancels the transfer `id` if it is queued or in flight (it completes
  /// as cancelled); no effect once it has completed. Thread-safe.
  void cancel(TransferId id) {
    {
      const std::lock_guard lock(mutex_);
      if (multi_ == nullptr) return;  // nothing was ever submitted
      cancel_requests_.push_back(id);
    }
    wake();
  }

  /// @brief Transfers submitted and not yet completed (queued or in flight).
  [[nodiscard]] std::size_t pending() const {
    const std::lock_guard lock(mutex_);
    return queue_.size() + in_flight_;
  }
  /// @brief Timers scheduled and not yet run or cancelled.
  [[nodiscard]] std::size_t timers_pending() const {
    const std::lock_guard lock(mutex_);
    return timers_pending_;
  }
  /// @brief Transfers running on the multi handle now.
  [[nodiscard]] std::size_t in_flight() const {
    const std::lock_guard lock(mutex_);
    return in_flight_;
  }
  /// @brief The largest number in flight at once so far.
  [[nodiscard]] std::size_t peak_in_flight() const {
    const std::lock_guard lock(mutex_);
    return peak_in_flight_;
  }
  /// @brief The cap on transfers in flight.
  [[nodiscard]] std::size_t max_in_flight() const noexcept { return max_in_flight_; }
  /// @brief True once the event thread has started (the first submit).
  [[nodiscard]] bool started() const {
    const std::lock_guard lock(mutex_);
    return thread_.joinable();
  }
  /// @brief True when called on the event thread (from a completion).
  [[nodiscard]] bool on_event_thread() const {
    const std::lock_guard lock(mutex_);
    return thread_.joinable() && thread_.get_id() == std::this_thread::get_id();
  }
  /// @brief How many completions threw (each exception was swallowed).
  [[nodiscard]] std::size_t completion_exceptions() const noexcept {
    return completion_exceptions_.load(std::memory_order_relaxed);
  }
  /// @brief The event thread's name, as /proc/self/task/<tid>/comm shows it on Linux.
  static constexpr const char* thread_name = "studentsvc-curl";

 private:
  struct Canceller {
    CurlEventLoopCore* loop;
    TransferId id;
    void operator()() const noexcept { loop->cancel(id); }
  };

  // A transfer, or a timer when `due` is set.
  struct Transfer {
    TransferId id = 0;
    CURL* easy = nullptr;
    std::optional<std::chrono::steady_clock::time_point> due;
    TransferCompletion done;
    bool cancel_requested = false;
    std::optional<StopCallback<Canceller>> on_stop;
  };
  using TransferPtr = std::unique_ptr<Transfer>;

  // The stop token of a call that has none.
  struct NoStop {
    [[nodiscard]] static constexpr bool stop_requested() noexcept { return false; }
  };

  static TransferPtr transfer_of(CURL* easy, TransferCompletion done) {
    auto transfer = std::make_unique<Transfer>();
    transfer->easy = easy;
    transfer->done = std::move(done);
    return transfer;
  }
  static TransferPtr timer_of(std::chrono::milliseconds delay, TransferCompletion done) {
    auto timer = std::make_unique<Transfer>();
    timer->due = std::chrono::steady_clock::now() + std::max(delay, std::chrono::milliseconds{0});
    timer->done = std::move(done);
    return timer;
  }

  template <class Stop>
  TransferId enqueue(TransferPtr transfer, const Stop& stop) {
    transfer->id = next_id_.fetch_add(1, std::memory_order_relaxed);
    const TransferId id = transfer->id;
    // Registered before the transfer is queued (a stop_callback whose token is
    // already stopped runs here, at once); the check under the lock below
    // catches a stop that came before the transfer could be found.
    if constexpr (!std::is_same_v<Stop, NoStop>) {
      if (stop.stop_possible()) transfer->on_stop.emplace(stop, Canceller{this, id});
    }
    CURLM* multi = nullptr;
    {
      const std::lock_guard lock(mutex_);
      if (transfer->due) ++timers_pending_;  // complete() counts it down, whichever way it ends
      if (start_locked()) {
        if (stop.stop_requested()) {
          transfer->cancel_requested = true;
          cancel_requests_.push_back(id);  // admit() looks through the queue only when asked to
        }
        if (transfer->due) {
          incoming_timers_.push_back(std::move(transfer));
        } else {
          queue_.push_back(std::move(transfer));
        }
        multi = multi_;
      }
    }
    if (multi == nullptr) {  // no event thread: say so at once, here
      complete(std::move(transfer), TransferOutcome{CURLE_FAILED_INIT, false});
      return id;
    }
    wake();
    return id;
  }

  // Work the event thread must take (mutex_ held).
  [[nodiscard]] bool has_work_locked() const {
    return !queue_.empty() || !incoming_timers_.empty() || !cancel_requests_.empty();
  }

  // Ends whichever wait the loop is in: the event thread parked, or a thread
  // (the event thread or a caller driving here) in curl_multi_poll.
  void wake() {
    CURLM* multi = nullptr;
    {
      const std::lock_guard lock(mutex_);
      multi = multi_;
    }
    wake_.notify_one();
    if (multi != nullptr) curl_multi_wakeup(multi);
  }

  // A caller driving here gives multi_ back; the event thread goes on from
  // where it parked (it runs whatever arrived meanwhile).
  void stop_driving_here(bool finished) {
    bool event_thread_has_work = false;
    {
      const std::lock_guard lock(mutex_);
      driven_here_ = false;
      if (finished) --in_flight_;
      event_thread_has_work = stopping_ || has_work_locked() || !finished;
    }
    // Only then: waking a parked thread for nothing costs two context switches a call.
    if (event_thread_has_work) wake_.notify_one();
  }

  // Starts the multi handle and the thread on first use (mutex_ held); false
  // when they cannot start.
  bool start_locked() {
    if (thread_.joinable()) return true;
    if (multi_ == nullptr) {
      multi_ = curl_multi_init();
      if (multi_ == nullptr) return false;
      // libcurl sizes its cache at 4 x the handles added at the moment, so a
      // draining batch would close idle connections the next lookups reuse.
      curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(max_in_flight_));
    }
    try {
      thread_ = std::thread([self = shared_from_this()] { self->run(); });
    } catch (...) {  // std::system_error: out of threads
      return false;
    }
    return true;
  }

  /// Cancels everything and waits for the thread (the handle's destructor).
  /// From a completion, on the event thread itself, it cannot wait for its
  /// own thread: it cancels everything at once, there, and lets the thread
  /// end by itself (the thread's reference keeps this core alive till then).
  void shut_down() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
      if (!thread_.joinable()) {  // never started: nothing queued
        if (multi_ != nullptr) curl_multi_cleanup(multi_);
        multi_ = nullptr;
        return;
      }
    }
    if (thread_.get_id() == std::this_thread::get_id()) {
      // Completions cancelled here may queue more work: drain that too.
      for (;;) {
        admit();
        const std::lock_guard lock(mutex_);
        if (queue_.empty() && incoming_timers_.empty()) break;
      }
      for (auto& [due, timer] : timers_) complete(std::move(timer), TransferOutcome{CURLE_ABORTED_BY_CALLBACK, true});
      timers_.clear();
      // The multi handle's cached connections close now, while the owner's
      // socket callbacks can still run; the loop then sees no multi handle and ends.
      CURLM* multi = nullptr;
      {
        const std::lock_guard lock(mutex_);
        multi = std::exchange(multi_, nullptr);
      }
      curl_multi_cleanup(multi);
      thread_.detach();
      return;
    }
    wake();
    thread_.join();
    const std::lock_guard lock(mutex_);
    curl_multi_cleanup(multi_);
    multi_ = nullptr;
  }

  // Runs the completion (outside mutex_), then frees the transfer, whose
  // stop_callback's destructor may wait for a concurrent stop request to finish.
  void complete(TransferPtr transfer, TransferOutcome outcome) {
    if (transfer->due) {
      const std::lock_guard lock(mutex_);
      --timers_pending_;
    }
    if (transfer->done) {
      try {
        transfer->done(outcome);
      } catch (...) {
        // A throwing completion is a caller bug; the other transfers must go on.
        completion_exceptions_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    transfer.reset();
  }

  void finish_active(CURL* easy, TransferOutcome outcome) {
    const auto it = active_.find(easy);
    if (it == active_.end()) return;
    TransferPtr transfer = std::move(it->second);
    active_.erase(it);
    curl_multi_remove_handle(multi_, easy);
    {
      const std::lock_guard lock(mutex_);
      --in_flight_;
    }
    complete(std::move(transfer), outcome);
  }

  // Applies cancel requests and a shutdown, then starts queued transfers up
  // to the cap. Completions run with mutex_ released.
  void admit() {
    static constexpr TransferOutcome cancelled{CURLE_ABORTED_BY_CALLBACK, true};
    std::vector<TransferId> cancels;
    std::vector<TransferPtr> dropped;
    std::vector<TransferPtr> new_timers;
    bool stopping = false;
    const auto hit = [&](const Transfer& t) {
      return stopping || t.cancel_requested || std::find(cancels.begin(), cancels.end(), t.id) != cancels.end();
    };
    {
      const std::lock_guard lock(mutex_);
      cancels.swap(cancel_requests_);
      new_timers.swap(incoming_timers_);
      stopping = stopping_;
      // A roster can queue thousands: walk them only when something is to be cancelled.
      for (auto it = queue_.begin(); (stopping || !cancels.empty()) && it != queue_.end();) {
        if (hit(**it)) {
          dropped.push_back(std::move(*it));
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& t : new_timers) {
      if (hit(*t)) {
        dropped.push_back(std::move(t));
      } else {
        const auto due = *t->due;
        timers_.emplace(due, std::move(t));
      }
    }
    for (auto it = timers_.begin(); it != timers_.end();) {
      if (hit(*it->second)) {
        dropped.push_back(std::move(it->second));
        it = timers_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& t : dropped) complete(std::move(t), cancelled);
    dropped.clear();
    std::vector<CURL*> to_cancel;
    for (const auto& [easy, transfer] : active_) {
      if (stopping || std::find(cancels.begin(), cancels.end(), transfer->id) != cancels.end()) {
        to_cancel.push_back(easy);
      }
    }
    for (CURL* easy : to_cancel) finish_active(easy, cancelled);
    if (stopping) return;  // the queue drains as cancelled on the next turn
    for (;;) {
      TransferPtr next;
      {
        const std::lock_guard lock(mutex_);
        if (queue_.empty() || in_flight_ >= max_in_flight_) return;
        next = std::move(queue_.front());
        queue_.pop_front();
        ++in_flight_;
        peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
      }
      CURL* easy = next->easy;
      const bool refused = easy == nullptr || active_.contains(easy) ||
                           curl_multi_add_handle(multi_, easy) != CURLM_OK;
      if (refused) {
        {
          const std::lock_guard lock(mutex_);
          --in_flight_;
        }
        complete(std::move(next), TransferOutcome{CURLE_BAD_FUNCTION_ARGUMENT, false});
        continue;
      }
      active_.emplace(easy, std::move(next));
    }
  }

  // Runs the timers that are due, in due order (equal times: scheduling order).
  void fire_due_timers() {
    const auto now = std::chrono::steady_clock::now();
    while (!timers_.empty() && timers_.begin()->first <= now) {
      TransferPtr timer = std::move(timers_.begin()->second);
      timers_.erase(timers_.begin());
      complete(std::move(timer), TransferOutcome{CURLE_OK, false});
    }
  }

  // The poll's longest wait: up to the next timer, at most a second.
  [[nodiscard]] int poll_timeout_ms() const {
    constexpr std::chrono::milliseconds longest{1000};
    if (timers_.empty()) return static_cast<int>(longest.count());
    const auto left = timers_.begin()->first - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return 0;
    return static_cast<int>(std::min(std::chrono::ceil<std::chrono::milliseconds>(left), longest).count());
  }

  void run() {
#if defined(__linux__)
    pthread_setname_np(pthread_self(), thread_name);
#endif
    for (;;) {
      admit();
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg == CURLMSG_DONE) finish_active(msg->easy_handle, TransferOutcome{msg->data.result, false});
      }
      fire_due_timers();
      {
        std::unique_lock lock(mutex_);
        if (stopping_ && queue_.empty() && active_.empty() && timers_.empty() && incoming_timers_.empty()) return;
        // Submissions, timers and cancels made by completions above: take them now.
        if (!cancel_requests_.empty() || !incoming_timers_.empty() || (stopping_ && !queue_.empty()) ||
            (!queue_.empty() && in_flight_ < max_in_flight_)) {
          continue;
        }
        if (active_.empty() && timers_.empty() && !stopping_) {
          // Nothing for multi_ to drive: park off it, so a blocking caller may
          // drive it on its own thread (run_here_or_submit) until work comes.
          parked_ = true;
          wake_.wait(lock, [&] { return !driven_here_ && (stopping_ || has_work_locked()); });
          parked_ = false;
          continue;
        }
      }
      // libcurl shortens the wait to its own next timeout; submit(), schedule(),
      // cancel() and the destructor end it early with curl_multi_wakeup.
      curl_multi_poll(multi_, nullptr, 0, poll_timeout_ms(), nullptr);
    }
  }

  const std::size_t max_in_flight_;
  std::atomic<TransferId> next_id_{1};
  std::atomic<std::size_t> completion_exceptions_{0};

  mutable std::mutex mutex_;  // guards the members below it, up to active_
  std::deque<TransferPtr> queue_;
  std::vector<TransferPtr> incoming_timers_;
  std::vector<TransferId> cancel_requests_;
  std::size_t in_flight_ = 0;
  std::size_t timers_pending_ = 0;
  std::size_t peak_in_flight_ = 0;
  bool stopping_ = false;
  bool parked_ = false;       // the event thread waits on wake_, off multi_
  bool driven_here_ = false;  // a caller's thread drives multi_ (run_here_or_submit)
  std::condition_variable wake_;
  std::thread thread_;
  CURLM* multi_ = nullptr;  // set once, before the thread starts; freed after it is joined

  // Event thread only.
  std::unordered_map<CURL*, TransferPtr> active_;
  std::multimap<std::chrono::steady_clock::time_point, TransferPtr> timers_;
};

/// @brief The handle to a CurlEventLoopCore: what a transport owns. Its
/// destructor cancels every queued and in-flight transfer and timer, runs their
/// completions and joins the event thread; run from one of the loop's own
/// completions, it cancels them all there and lets the thread end by itself.
class CurlEventLoop {
 public:
  using TransferId = CurlEventLoopCore::TransferId;  ///< Names a transfer or timer.

  /// @brief `max_in_flight` 0 is taken as 1.
  explicit CurlEventLoop(std::size_t max_in_flight = 64)
      : core_(std::make_shared<CurlEventLoopCore>(max_in_flight)) {}
  ~CurlEventLoop() { core_->shut_down(); }
  CurlEventLoop(const CurlEventLoop&) = delete;
  CurlEventLoop& operator=(const CurlEventLoop&) = delete;

  /// @copydoc CurlEventLoopCore::submit(CURL*, TransferCompletion)
  TransferId submit(CURL* easy, TransferCompletion done) { return core_->submit(easy, std::move(done)); }
  /// @copydoc CurlEventLoopCore::schedule(std::chrono::milliseconds, TransferCompletion)
  TransferId schedule(std::chrono::milliseconds delay, TransferCompletion done) {
    return core_->schedule(delay, std::move(done));
  }
  /// @brief submit(), also cancelled by a stop request on `stop`.
  TransferId submit(CURL* easy, TransferCompletion done, StopToken stop) {
    return core_->submit(easy, std::move(done), std::move(stop));
  }
  /// @brief schedule(), also cancelled by a stop request on `stop`.
  TransferId schedule(std::chrono::milliseconds delay, TransferCompletion done, StopToken stop) {
    return core_->schedule(delay, std::move(done), std::move(stop));
  }
  /// @copydoc CurlEventLoopCore::run_here_or_submit
  void run_here_or_submit(CURL* easy, TransferCompletion done) { core_->run_here_or_submit(easy, std::move(done)); }
  /// @brief Cancels the transfer or timer `id` (no effect once it completed).
  void cancel(TransferId id) { core_->cancel(id); }
  /// @brief Transfers submitted and not yet completed.
  [[nodiscard]] std::size_t pending() const { return core_->pending(); }
  /// @brief Timers scheduled and not yet run or cancelled.
  [[nodiscard]] std::size_t timers_pending() const { return core_->timers_pending(); }
  /// @brief Transfers running on the multi handle now.
  [[nodiscard]] std::size_t in_flight() const { return core_->in_flight(); }
  /// @brief The largest number in flight at once so far.
  [[nodiscard]] std::size_t peak_in_flight() const { return core_->peak_in_flight(); }
  /// @brief The cap on transfers in flight.
  [[nodiscard]] std::size_t max_in_flight() const noexcept { return core_->max_in_flight(); }
  /// @brief True once the event thread has started.
  [[nodiscard]] bool started() const { return core_->started(); }
  /// @brief True when called on the event thread (from a completion).
  [[nodiscard]] bool on_event_thread() const { return core_->on_event_thread(); }
  /// @brief How many completions threw.
  [[nodiscard]] std::size_t completion_exceptions() const noexcept { return core_->completion_exceptions(); }
  /// @brief The event thread's name.
  static constexpr const char* thread_name = CurlEventLoopCore::thread_name;

 private:
  std::shared_ptr<CurlEventLoopCore> core_;
};

}  // namespace studentsvc::detail

#pragma once
/// @file asio.hpp
/// @brief Asio completion tokens for a Client: `basic_client<Executor>` and its
/// `async_*` operations (use_awaitable, deferred, use_future, callbacks, any
/// token). Boost.Asio by default; standalone Asio when STUDENTSVC_ASIO_STANDALONE
/// is defined. Each operation is a driver of the call pipeline: it starts the
/// Completion form of the call (client.hpp) with `async_initiate`, and posts
/// the handler to its associated executor (or the client's) when it completes.
///
/// @code
/// studentsvc::asio::client client(io.get_executor(), studentsvc::Client(options));
/// auto student = co_await client.async_get_student("1234567", boost::asio::use_awaitable);
/// @endcode

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(STUDENTSVC_ASIO_STANDALONE)
#include <asio/any_io_executor.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/cancellation_state.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/execution/context.hpp>
#include <asio/execution_context.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <asio/query.hpp>
#else
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>
#endif

#include <studentsvc/client.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/call/stop.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail::asio_ops {

#if defined(STUDENTSVC_ASIO_STANDALONE)
namespace net = ::asio;
#else
namespace net = ::boost::asio;
#endif

/// One execution context's pending operations: when the context shuts down
/// (an io_context destroyed with operations pending), each is ended without
/// completing, and a late completion from the SDK touches nothing of it.
/// An intrusive list: joining and leaving it allocate nothing.
class Registry {
 public:
  struct Op {
    Op() = default;
    Op(const Op&) = delete;
    Op& operator=(const Op&) = delete;
    virtual ~Op() = default;
    virtual void context_gone() noexcept = 0;
    /// The owning pointer, or null once the operation is being destroyed.
    [[nodiscard]] virtual std::shared_ptr<Op> lock_self() noexcept = 0;

   private:
    friend class Registry;
    Op* prev_ = nullptr;
    Op* next_ = nullptr;
    bool linked_ = false;
  };

  /// False once the context is shutting down.
  bool add(Op& op) {
    const std::lock_guard lock(mutex_);
    if (closed_.load(std::memory_order_relaxed)) return false;
    op.prev_ = nullptr;
    op.next_ = head_;
    if (head_ != nullptr) head_->prev_ = &op;
    head_ = &op;
    op.linked_ = true;
    return true;
  }
  /// Leaves the list (nothing when it is not in it).
  void remove(Op& op) noexcept {
    const std::lock_guard lock(mutex_);
    unlink(op);
  }
  /// True once the context is shutting down. Unlocked: an operation that reads
  /// false and then posts holds its own lock meanwhile, which a shutdown's
  /// context_gone() of that operation waits for.
  [[nodiscard]] bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  void shutdown() noexcept {
    std::vector<std::shared_ptr<Op>> ops;
    {
      const std::lock_guard lock(mutex_);
      closed_.store(true, std::memory_order_release);
      for (Op* op = head_; op != nullptr; op = op->next_) {
        try {
          if (auto alive = op->lock_self()) ops.push_back(std::move(alive));
        } catch (...) {  // no memory for the list: this one is not ended early, its completion still finds `closed`
        }
      }
      while (head_ != nullptr) unlink(*head_);
    }
    for (auto& op : ops) op->context_gone();  // unlocked: each takes its own lock
  }

 private:
  void unlink(Op& op) noexcept {
    if (!op.linked_) return;
    if (op.prev_ != nullptr) op.prev_->next_ = op.next_;
    if (op.next_ != nullptr) op.next_->prev_ = op.prev_;
    if (head_ == &op) head_ = op.next_;
    op.prev_ = op.next_ = nullptr;
    op.linked_ = false;
  }

  std::mutex mutex_;
  std::atomic<bool> closed_{false};
  Op* head_ = nullptr;
};

/// The Registry of an execution context, as one of its services: its
/// shutdown runs when the context is destroyed, before the scheduler's.
class RegistryService final : public net::execution_context::service {
 public:
  inline static net::execution_context::id id;  // NOLINT: Asio finds a service by this member
  explicit RegistryService(net::execution_context& context) : net::execution_context::service(context) {}
  [[nodiscard]] const std::shared_ptr<Registry>& registry() const noexcept { return registry_; }

 private:
  void shutdown() override { registry_->shutdown(); }
  std::shared_ptr<Registry> registry_ = std::make_shared<Registry>();
};

/// The registry of one execution context (a client's), looked up once:
/// use_service locks the context's services and searches them on each call.
class KnownRegistry {
 public:
  KnownRegistry() = default;
  template <class Executor>
  explicit KnownRegistry(const Executor& executor) {
    if constexpr (net::can_query<const Executor&, net::execution::context_t>::value) {
      try {
        net::execution_context& context = net::query(executor, net::execution::context);
        registry_ = net::use_service<RegistryService>(context).registry();
        context_ = &context;
      } catch (...) {  // an empty executor: each operation looks its context up, as Asio's own would
      }
    }
  }
  /// `context`'s registry. The one held is used only while it is open: a
  /// closed one's context has shut down, and another may live at its address.
  [[nodiscard]] std::shared_ptr<Registry> of(net::execution_context& context) const {
    if (&context == context_ && registry_ && !registry_->closed()) return registry_;
    return net::use_service<RegistryService>(context).registry();
  }

 private:
  net::execution_context* context_ = nullptr;
  std::shared_ptr<Registry> registry_;
};

/// One pending operation: the handler, the work it keeps on the handler's
/// executor (so that io_context::run does not return before it), and the stop
/// of the SDK's call, requested by the handler's cancellation slot.
///
/// The operation owns itself (`keep_alive_`) from its start until the SDK's
/// completion, which takes that ownership into the posted function: the SDK
/// holds a plain pointer, which its std::function stores without allocating.
template <class Value, class Handler, class HandlerExecutor>
class Pending final : public Registry::Op,
                      public std::enable_shared_from_this<Pending<Value, Handler, HandlerExecutor>> {
 public:
  Pending(Handler handler, const HandlerExecutor& executor)
      : handler_(std::move(handler)), work_(net::make_work_guard(executor)) {}
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
  ~Pending() override {
    if (registry_) registry_->remove(*this);  // an operation whose call never started
  }

  [[nodiscard]] std::shared_ptr<Registry::Op> lock_self() noexcept override { return this->weak_from_this().lock(); }

  /// Joins the context's registry (`known`'s, when it is that context's) and
  /// the handler's cancellation slot; `Filter` says which cancellation types
  /// stop the call.
  template <class Filter>
  void watch(const HandlerExecutor& executor, const KnownRegistry& known) {
    if constexpr (net::can_query<const HandlerExecutor&, net::execution::context_t>::value) {
      registry_ = known.of(net::query(executor, net::execution::context));
      registry_->add(*this);
    }  // else an executor of no context (standalone Asio's use_future): nothing to outlive
    auto slot = net::get_associated_cancellation_slot(*handler_);
    if (slot.is_connected()) {
      // Filtered here, as Asio's own operations do: a cancellation_state would allocate a second slot.
      slot.assign([weak = this->weak_from_this()](net::cancellation_type type) {
        if (Filter{}(type) == net::cancellation_type::none) return;
        if (auto op = weak.lock()) op->stop_.request_stop();
      });
    }
  }

  /// Owns itself until complete(): called once, before the SDK's call starts.
  void keep_alive() { keep_alive_ = this->shared_from_this(); }

  [[nodiscard]] StopToken stop_token() const noexcept { return stop_.get_token(); }

  /// The SDK's completion (any thread, or inside the initiating call): posts
  /// the handler's run to its executor, unless that context is gone. The
  /// value and the handler wait here, not in the posted function, which Asio
  /// moves around.
  void complete(Value&& value) {
    // Held to the end: once posted, the handler's run may end the last other owner at any time.
    const auto self = std::move(keep_alive_);
    {
      const std::lock_guard lock(mutex_);
      if (!handler_ || value_.has_value() || (registry_ && registry_->closed())) return;
      value_.emplace(std::move(value));
      // Posted while locked: a shutdown of the context waits for the lock, so the post
      // reaches a live scheduler, which then runs it or destroys it (and with it, this).
      net::post(work_->get_executor(), [op = self] { op->run_handler(); });
    }
    if (registry_) {
      registry_->remove(*this);
      registry_.reset();  // left: the destructor has nothing to remove
    }
  }

  /// The context is shutting down: the handler is destroyed unrun, and the
  /// SDK's call is stopped (nobody is left to take its result). A posted
  /// handler is the scheduler's to run or destroy.
  void context_gone() noexcept override {
    std::optional<Handler> handler;  // destroyed unlocked: it may own a Client whose closing completes calls
    std::optional<net::executor_work_guard<HandlerExecutor>> work;
    {
      const std::lock_guard lock(mutex_);
      if (!handler_ || value_.has_value()) return;  // posted
      handler.emplace(std::move(*handler_));
      work.emplace(std::move(*work_));
      handler_.reset();
      work_.reset();
    }
    stop_.request_stop();  // unlocked: a completion it runs at once finds the handler gone
  }

 private:
  // The posted function, on the handler's executor. Once posted, nothing else touches the handler or the work.
  void run_handler() {
    net::get_associated_cancellation_slot(*handler_).clear();
    work_.reset();  // this handler runs inside the executor's own run: it cannot return meanwhile
    std::move(*handler_)(std::move(*value_));
  }

  std::mutex mutex_;
  std::optional<Handler> handler_;
  std::optional<net::executor_work_guard<HandlerExecutor>> work_;
  /// Set once, by complete(), as the handler is posted: from then on the handler and the work are the posted run's.
  std::optional<Value> value_;
  std::shared_ptr<Pending> keep_alive_;
  std::shared_ptr<Registry> registry_;
  StopSource stop_;  ///< requested by the slot or the context's shutdown only: no token to follow
};

/// The threads of one basic_client's batches (shared by its copies).
///
/// Client::get_students waits for its lookups on the calling thread, and the
/// Client has no batch form that a completion drives, so async_get_students
/// runs each batch's window on a thread of its own (the lookups themselves run
/// on the transport's event thread, as in get_students). Each batch stops on
/// its own stop (the caller's BatchOptions::stop, the operation's cancellation
/// slot, its io_context's shutdown) and on this object's end: when the last
/// copy of the basic_client goes, its batches are stopped and their threads
/// joined, as the last Client handle cancels and waits for its calls.
class BatchThreads {
 public:
  /// One batch: its stop, and whether its thread has finished its work.
  struct Run {
    Run(const StopToken& caller, const StopToken& operation) : stop(caller, operation) {}
    CallStop stop;
    std::atomic<bool> finished{false};
  };

  BatchThreads() = default;
  BatchThreads(const BatchThreads&) = delete;
  BatchThreads& operator=(const BatchThreads&) = delete;
  ~BatchThreads() {
    std::vector<Entry> runs;
    {
      const std::lock_guard lock(mutex_);
      runs.swap(runs_);
    }
    for (auto& r : runs) r.run->stop.request_stop();
    for (auto& r : runs) r.thread.join();
  }

  /// Runs `body(stop)` on a new thread, `stop` being `run`'s; false (nothing
  /// started) when no thread could be made.
  template <class Body>
  bool start(const std::shared_ptr<Run>& run, Body&& body) {
    std::vector<Entry> done;
    const std::lock_guard lock(mutex_);
    reap(done);
    try {
      runs_.reserve(runs_.size() + 1);  // the one allocation that may fail, before the thread exists
      std::thread thread([run, body = std::optional<std::decay_t<Body>>(std::forward<Body>(body))]() mutable {
        (*body)(run->stop.token());
        body.reset();  // its Client copy goes here, before the thread counts as finished
        run->finished.store(true, std::memory_order_release);
      });
      runs_.push_back(Entry{run, std::move(thread)});
    } catch (...) {  // std::system_error (no thread left) or bad_alloc: the caller completes the batch
      return false;
    }
    return true;
  }

 private:
  struct Entry {
    std::shared_ptr<Run> run;
    std::thread thread;
  };
  // Joins the threads whose batch has finished (locked; each is at its end).
  void reap(std::vector<Entry>& done) {
    for (auto it = runs_.begin(); it != runs_.end();) {
      if (it->run->finished.load(std::memory_order_acquire)) {
        it->thread.join();
        done.push_back(std::move(*it));
        it = runs_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::mutex mutex_;
  std::vector<Entry> runs_;
};

/// Starts one operation: `start(done, stop)` starts the SDK's call.
template <class Value, class Filter, class Handler, class Executor, class Start>
void start_operation(Handler&& handler, const Executor& client_executor, const KnownRegistry& known, Start&& start) {
  using H = std::decay_t<Handler>;
  auto executor = net::get_associated_executor(handler, client_executor);
  using E = decltype(executor);
  auto op = std::make_shared<Pending<Value, H, E>>(std::forward<Handler>(handler), executor);
  op->template watch<Filter>(executor, known);
  op->keep_alive();
  // A plain pointer: the SDK calls its completion exactly once, which ends the keep_alive. Should the
  // call's start throw, the operation is kept (leaked): the SDK may hold the completion still.
  start([raw = op.get()](Value&& value) { raw->complete(std::move(value)); }, op->stop_token());
}

}  // namespace studentsvc::detail::asio_ops

namespace studentsvc::asio {

/// @brief A Client whose calls are Asio asynchronous operations.
///
/// The completion signature is `void(Result<T>)` (`void(std::vector<Result<StudentExtended>>)`
/// for async_get_students), so `co_await client.async_get_student(p, use_awaitable)`
/// yields a Result. The handler runs on its associated executor, or this
/// client's: never on the SDK's event thread, never inside the initiating call.
/// Per-operation cancellation (the handler's cancellation slot) stops the
/// call, which then completes as `cancelled`: the lookups accept terminal,
/// partial and total cancellation, the conversation (not idempotent) terminal
/// and partial only. A pending operation keeps work on its handler's executor;
/// when that execution context is destroyed with operations pending, they end
/// without completing (their handlers destroyed, their calls stopped) and
/// nothing touches it afterwards. async_get_students runs a thread per batch:
/// see there.
template <class Executor>
class basic_client {
  using Lookup = Result<StudentExtended>;

 public:
  /// @brief The executor handlers run on unless they have one of their own.
  using executor_type = Executor;

  /// @brief Wraps `client`; completions are posted to `executor` (or the handler's own).
  basic_client(Executor executor, Client client)
      : executor_(std::move(executor)), registry_(executor_), client_(std::move(client)) {}

  /// @brief The client's executor.
  [[nodiscard]] executor_type get_executor() const noexcept { return executor_; }
  /// @brief The wrapped Client (its blocking and callback forms).
  [[nodiscard]] const Client& sdk_client() const noexcept { return client_; }

  /// @brief get_student(), as an Asio operation: `void(Result<StudentExtended>)`.
  template <class Token = detail::asio_ops::net::default_completion_token_t<Executor>>
    requires(!std::is_convertible_v<Token, const CallOptions&>)
  auto async_get_student(std::string_view perm, Token&& token = Token{}) {
    return async_lookup(Kind::get_student, perm, nullptr, std::forward<Token>(token));
  }
  /// @brief get_student() with per-call options, as an Asio operation.
  template <class Token = detail::asio_ops::net::default_completion_token_t<Executor>>
  auto async_get_student(std::string_view perm, const CallOptions& call, Token&& token = Token{}) {
    return async_lookup(Kind::get_student, perm, std::make_shared<const CallOptions>(call), std::forward<Token>(token));
  }

  /// @brief current_student(), as an Asio operation: `void(Result<StudentExtended>)`.
  template <class Token = detail::asio_ops::net::default_completion_token_t<Executor>>
    requires(!std::is_convertible_v<Token, const CallOptions&>)
  auto async_current_student(std::string_view user_jwt, Token&& token = Token{}) {
    return async_lookup(Kind::current_student, user_jwt, nullptr, std::forward<Token>(token));
  }
  /// @brief current_student() with per-call options, as an Asio operation.
  template <class Token = detail::asio_ops::net::default_completion_token_t<Executor>>
  auto async_current_student(std::string_view user_jwt, const CallOptions& call, Token&& token = Token{}) {
    return async_lookup(Kind::current_student, user_jwt, std::make_shared<const CallOptions>(call),
                        std::forward<Token>(token));
  }

  /// @brief conversation(), as an Asio operation: `void(Result<RawResponse>)`.
  template <class Token = detail::asio_ops::net::default_completion_token_t<Executor>>
  auto async_conversation(const ConversationRequest& request, Token&& token = Token{}) {
    return detail::asio_ops::net::async_initiate<Token, void(Result<RawResponse>)>(InitiateConversation{this},
                                                                                   token, request);
  }

  /// @brief get_students(), as an Asio operation:
  /// `void(std::vector<Result<StudentExtended>>)`, result `i` for `perms[i]`.
  ///
  /// **A thread per batch.** The lookups run on the transport's event thread
  /// as in get_students, but the batch's window (Client::get_students, which
  /// waits for them) runs on a thread of its own for the batch's length: the
  /// Client has no batch form driven by completions. The thread holds a copy
  /// of the Client until the batch ends. The batch stops (lookups in flight
  /// cancelled, the rest not sent, each `cancelled`) on BatchOptions::stop,
  /// on the operation's cancellation slot (terminal, partial or total), when
  /// its handler's io_context shuts down (the handler is then destroyed
  /// unrun), and when the last copy of this basic_client is destroyed, whose
  /// destructor then joins the batch's thread (where StopToken cannot stop, as
  /// with libc++ without `std::stop_token`, it waits for the batch to end).
  /// When no thread can be started, every perm completes as `cancelled`.
  template <class Token = detail::asio_ops::net::default_completion_token_t<Executor>>
  auto async_get_students(std::vector<std::string> perms, const BatchOptions& batch, Token&& token = Token{}) {
    return detail::asio_ops::net::async_initiate<Token, void(std::vector<Lookup>)>(InitiateBatch{this}, token,
                                                                                    std::move(perms), batch);
  }

 private:
  enum class Kind { get_student, current_student };
  using AllLookupCancellation = detail::asio_ops::net::enable_total_cancellation;
  using NonIdempotentCancellation = detail::asio_ops::net::enable_partial_cancellation;

  // As Asio's own I/O objects: an operation (a deferred one too) starts while its basic_client lives.
  // A lookup's CallOptions travel by pointer, null for none: its arguments are copied into
  // use_awaitable's coroutine frame, which Asio recycles only while under about 1 KB.
  using SharedCallOptions = std::shared_ptr<const CallOptions>;
  template <class Token>
  auto async_lookup(Kind kind, std::string_view key, SharedCallOptions call, Token&& token) {
    return detail::asio_ops::net::async_initiate<Token, void(Lookup)>(Initiate{this}, token, kind, std::string(key),
                                                                       std::move(call));
  }
  struct Initiate {
    const basic_client* self;
    template <class Handler>
    void operator()(Handler&& handler, Kind kind, const std::string& key, const SharedCallOptions& call) const {
      static const CallOptions none;
      const CallOptions& options = call ? *call : none;
      detail::asio_ops::start_operation<Lookup, AllLookupCancellation>(
          std::forward<Handler>(handler), self->executor_, self->registry_,
          [&](Completion<StudentExtended> done, const StopToken& stop) {
            if (kind == Kind::current_student) {
              self->client_.current_student_async(key, std::move(done), options, stop);
            } else {
              self->client_.get_student_async(key, std::move(done), options, stop);
            }
          });
    }
  };
  struct InitiateConversation {
    const basic_client* self;
    template <class Handler>
    void operator()(Handler&& handler, const ConversationRequest& request) const {
      detail::asio_ops::start_operation<Result<RawResponse>, NonIdempotentCancellation>(
          std::forward<Handler>(handler), self->executor_, self->registry_,
          [&](Completion<RawResponse> done, const StopToken& stop) {
            self->client_.conversation_async(request, std::move(done), stop);
          });
    }
  };
  struct InitiateBatch {
    const basic_client* self;
    template <class Handler>
    void operator()(Handler&& handler, std::vector<std::string> perms, const BatchOptions& batch) const {
      detail::asio_ops::start_operation<std::vector<Lookup>, AllLookupCancellation>(
          std::forward<Handler>(handler), self->executor_, self->registry_, [&](auto done, const StopToken& stop) {
            auto run = std::make_shared<detail::asio_ops::BatchThreads::Run>(batch.stop, stop);
            const std::size_t count = perms.size();
            auto body = [client = self->client_, perms = std::move(perms), options = BatchOptions(batch),
                         done](const StopToken& either) mutable {
              options.stop = either;
              done(client.get_students(perms, options));
            };
            if (!self->batches_->start(run, std::move(body))) {
              done(std::vector<Lookup>(count, Lookup(std::unexpect, no_thread_error())));
            }
          });
    }
  };
  [[nodiscard]] static ApiError no_thread_error() {
    ApiError e;
    e.kind = ErrorKind::cancelled;
    e.message = "not sent: no thread could be started for the batch";
    return e;
  }

  Executor executor_;
  detail::asio_ops::KnownRegistry registry_;  ///< executor_'s context's
  Client client_;
  // Declared last: the last copy stops and joins its batches before its Client goes.
  std::shared_ptr<detail::asio_ops::BatchThreads> batches_ = std::make_shared<detail::asio_ops::BatchThreads>();
};

/// @brief basic_client on Asio's default polymorphic executor.
using client = basic_client<detail::asio_ops::net::any_io_executor>;

}  // namespace studentsvc::asio

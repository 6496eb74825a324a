#pragma once
/// @file client.hpp
/// @brief Client: the three calls of the interface, each one straight path
/// (validate → build → authorise → send with retries → map). The bodies are in
/// detail/call/client-inl.hpp (header-only mode) or the studentsvc library (compiled
/// mode), so this header needs neither JSON nor libcurl.

#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/batch/repeats.hpp>
#include <studentsvc/detail/batch/window.hpp>
#include <studentsvc/detail/call/stop.hpp>
#include <studentsvc/detail/config.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/stop_token.hpp>
#include <studentsvc/streaming.hpp>

namespace studentsvc {

namespace detail {
struct ClientState;  // options checked once, the transport, the jitter source (client-inl.hpp)
struct ClientCloser;  // cancels and waits for the async calls when the last Client handle goes
}  // namespace detail

// awaitable.hpp: the awaitable overloads below are defined there (inline, never in the
// compiled library), so no class layout here depends on coroutines being enabled.
class ResumeVia;
template <class T>
class Awaitable;

/// @brief The completion of an asynchronous call: called exactly once with the result.
template <class T>
using Completion = std::function<void(Result<T>)>;

/// @brief Settings of one Client::get_students batch.
struct BatchOptions {
  /// Most requests in flight at once (default 16; 0 counts as 1). CurlTransport
  /// runs them on the curl multi interface, over at most this many connections
  /// to the host (fewer with HTTP/2 multiplexing); a custom Transport that only
  /// implements `send` runs them one after another.
  std::size_t max_concurrency = 16;
  /// Applied to every lookup of the batch (JWT, API version, timeouts, body cap, retry policy).
  CallOptions call;
  /// Stop sending once an answer shows every further lookup would fail the
  /// same way (stops_batch(): a 401, TLS, DNS, a wrong base URL path, ...);
  /// the lookups not sent fail as `cancelled`, naming that error.
  bool fail_fast = true;
  /// A stop request cancels the lookups in flight and sends no more; each
  /// fails as `cancelled`.
  StopToken stop;
};

/// @brief The client of the Student Information and Conversation Service.
///
/// Thread safety: a Client is immutable once built; any number of threads may
/// call the same Client (or copies of it, which share one transport) at once.
/// No call throws: every failure is an ApiError in the returned Result.
class Client {
 public:
  /// @brief Builds a client, checking its options once. A bad base URL,
  /// timeout, header cap or retry policy, or a missing transport, is reported
  /// by every call (or up front by Client::create).
  explicit Client(ClientOptions options);

  /// @brief Builds a client, or says why the options cannot work.
  [[nodiscard]] static Result<Client> create(ClientOptions options);

  /// @brief `GET /students/v2/students/{perm}`. With CallOptions::user_jwt set,
  /// only the token's own student is returned. Extended-only fields are
  /// std::nullopt unless the service account is approved for them.
  [[nodiscard]] Result<StudentExtended> get_student(std::string_view perm, const CallOptions& call = {}) const;

  /// @brief Many get_student lookups at once: result `i` belongs to `perms[i]`.
  ///
  /// for_each_student() over the distinct perms, collected in input order: a
  /// perm given twice is looked up once and both positions get its result.
  /// Each lookup is retried on its own per the call's RetryPolicy. An invalid
  /// perm fails alone with invalid_argument and is never sent; a failed lookup
  /// never fails the others, except that with `batch.fail_fast` (the default)
  /// an error every further lookup would repeat (stops_batch()) stops the
  /// sending and the rest fail as `cancelled`. Up to `batch.max_concurrency`
  /// requests are in flight at once, on the transport's event thread
  /// (CurlTransport: the curl multi interface over reused connections, HTTP/2
  /// multiplexing where the server offers it); a custom Transport that only
  /// implements `send` runs them one after another. A failed lookup's
  /// ApiError::attempts counts its own attempts.
  [[nodiscard]] std::vector<Result<StudentExtended>> get_students(std::span<const std::string> perms,
                                                                  const BatchOptions& batch = {}) const;

  /// @brief `GET /students/v2/students/current` for the student named by
  /// `user_jwt` (required, opaque). Only the StudentMinimal fields are filled.
  [[nodiscard]] Result<StudentExtended> current_student(std::string_view user_jwt,
                                                        const CallOptions& call = {}) const;

  /// @brief `{method} /conversation[/sub_path]`: the interface shows neither
  /// method nor payload, so the call passes both through and returns the raw
  /// answer. Retried only when `request.idempotent` is set.
  [[nodiscard]] Result<RawResponse> conversation(const ConversationRequest& request = {}) const;

  /// @name Asynchronous calls
  /// Each call comes in two forms: one returns a std::future, one calls a
  /// Completion exactly once. Both behave as the blocking call does (the same
  /// validation, retries, timeouts, body cap and credentials), without a
  /// thread per call: on CurlTransport, every asynchronous call of a transport
  /// runs on its one event thread, and the completion is called there. Keep a
  /// completion short and never block in it (no waiting on a future, no
  /// blocking call): every other transfer waits meanwhile. An exception it
  /// throws is logged at `error` and dropped. A custom Transport that only
  /// implements `send` runs the call on the calling thread, which the call
  /// blocks, and calls the completion there before returning.
  ///
  /// A stop request on `stop` ends the call as ErrorKind::cancelled, whether
  /// it is waiting to be sent, in flight (mid-body too) or waiting to retry.
  /// When the last copy of the Client is destroyed, its calls in flight are
  /// cancelled and the destructor waits for their completions (unless it runs
  /// inside one of them). The transport outlives them all.
  /// @{

  /// @brief get_student(), asynchronously: `done` gets the result.
  void get_student_async(std::string_view perm, Completion<StudentExtended> done, const CallOptions& call = {},
                         StopToken stop = {}) const;
  /// @brief get_student(), asynchronously: the result comes through the future.
  [[nodiscard]] std::future<Result<StudentExtended>> get_student_async(std::string_view perm,
                                                                       const CallOptions& call = {},
                                                                       StopToken stop = {}) const;
  /// @brief current_student(), asynchronously: `done` gets the result.
  void current_student_async(std::string_view user_jwt, Completion<StudentExtended> done,
                             const CallOptions& call = {}, StopToken stop = {}) const;
  /// @brief current_student(), asynchronously: the result comes through the future.
  [[nodiscard]] std::future<Result<StudentExtended>> current_student_async(std::string_view user_jwt,
                                                                           const CallOptions& call = {},
                                                                           StopToken stop = {}) const;
  /// @brief conversation(), asynchronously: `done` gets the result.
  void conversation_async(const ConversationRequest& request, Completion<RawResponse> done,
                          StopToken stop = {}) const;
  /// @brief conversation(), asynchronously: the result comes through the future.
  [[nodiscard]] std::future<Result<RawResponse>> conversation_async(const ConversationRequest& request = {},
                                                                    StopToken stop = {}) const;
  /// @}

  /// @name Awaitable calls (include <studentsvc/awaitable.hpp>)
  /// `co_await` yields the Result (never throws); the call starts when awaited.
  /// `resume` says where the coroutine resumes: resume_via(post) hands it to
  /// your loop, resume_inline resumes it on the transport's event thread.
  /// @{

  /// @brief get_student(), awaited.
  [[nodiscard]] Awaitable<StudentExtended> get_student_async(std::string_view perm, ResumeVia resume,
                                                             const CallOptions& call = {}, StopToken stop = {}) const;
  /// @brief current_student(), awaited.
  [[nodiscard]] Awaitable<StudentExtended> current_student_async(std::string_view user_jwt, ResumeVia resume,
                                                                 const CallOptions& call = {},
                                                                 StopToken stop = {}) const;
  /// @brief conversation(), awaited.
  [[nodiscard]] Awaitable<RawResponse> conversation_async(const ConversationRequest& request, ResumeVia resume,
                                                          StopToken stop = {}) const;
  /// @}

  /// @brief Looks up every perm of `perms` (any input range of strings, read
  /// lazily: a std::views::istream over a file works) and hands each result to
  /// `on_result(index, perm, result)` as it completes; returns when all are done.
  ///
  /// At most `options.max_concurrency` lookups are in flight, and only those
  /// perms are held: memory stays flat however long the roster. `on_result`
  /// and `options.on_progress` run on the calling thread, one at a time, in
  /// completion order (not input order: use `index`), so they may block and
  /// need no locking. An invalid perm fails alone with invalid_argument.
  /// A perm given more than once is looked up once: over a multi-pass range
  /// (a vector, a span: perms the caller already holds) its result is kept
  /// until its last position has it; over a single-pass stream a repeat
  /// shares the identical lookup while that is in flight, and is looked up
  /// again after it ended (nothing is kept, so memory stays flat).
  /// With `options.fail_fast` (the default), an error every further lookup
  /// would repeat (stops_batch()) stops the sending; the perms not sent
  /// complete as `cancelled`, naming that error (BatchSummary::stopped_by).
  /// A stop request on `options.stop` cancels the lookups in flight and sends
  /// no more. An exception thrown by a callback cancels the lookups in flight
  /// and propagates out of this call, like std::for_each.
  template <std::ranges::input_range Perms, class OnResult>
    requires std::convertible_to<std::ranges::range_reference_t<Perms>, std::string_view> &&
             std::invocable<OnResult&, std::size_t, std::string_view, Result<StudentExtended>>
  BatchSummary for_each_student(Perms&& perms, OnResult&& on_result, const StreamOptions& options = {}) const {
    detail::BatchWindowOptions window;
    window.max_concurrency = options.max_concurrency;
    window.fail_fast = options.fail_fast;
    // One stop for the lookups: the caller's, or the batch's own when a callback throws.
    auto stop = std::make_shared<detail::CallStop>(options.stop, StopToken{});
    auto repeats = std::make_shared<detail::RepeatedPerms>();
    if constexpr (std::ranges::forward_range<Perms>) repeats->count(perms);
    const auto start = [&](std::size_t, const auto& perm, auto done) {
      const std::string_view p(perm);
      if (auto kept = repeats->take(p)) {
        done(std::move(*kept));  // a repeat whose lookup already ended
        return;
      }
      batch_lookup_async(
          p,
          [done, repeats, key = std::string(p)](Result<StudentExtended> r) mutable {
            repeats->keep(key, r);
            done(std::move(r));
          },
          options.call, stop->token());
    };
    const auto deliver = [&](std::size_t index, const auto& perm, Result<StudentExtended> result) {
      on_result(index, std::string_view(perm), std::move(result));
    };
    const auto progress = [&](const BatchProgress& p) {
      if (options.on_progress) options.on_progress(p);
    };
    try {
      return detail::run_batch_window<StudentExtended>(std::forward<Perms>(perms), start, deliver, window, *stop,
                                                       progress);
    } catch (...) {
      stop->request_stop();
      throw;
    }
  }

  /// @brief The options this client was built with.
  [[nodiscard]] const ClientOptions& options() const noexcept;

  /// @brief The transport in use (the one given, or the default one: a CurlTransport).
  [[nodiscard]] const std::shared_ptr<Transport>& transport() const noexcept;

 private:
  // get_student_async for a batch: always shares a request with an identical lookup in flight.
  void batch_lookup_async(std::string_view perm, Completion<StudentExtended> done, const CallOptions& call,
                          StopToken stop) const;

  std::shared_ptr<detail::ClientState> state_;
  std::shared_ptr<detail::ClientCloser> closer_;
};

}  // namespace studentsvc

#if STUDENTSVC_HEADER_ONLY
#include <studentsvc/detail/call/client-inl.hpp>
#endif

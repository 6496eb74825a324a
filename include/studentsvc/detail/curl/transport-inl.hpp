#pragma once
/// @file detail/curl/transport-inl.hpp
/// @brief CurlTransport's bodies: included by curl_transport.hpp in header-only
/// mode, compiled once by <studentsvc/src.hpp> otherwise.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <algorithm>
#include <condition_variable>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/curl_transport.hpp>
#include <studentsvc/detail/curl/connection_trust.hpp>
#include <studentsvc/detail/curl/errors.hpp>
#include <studentsvc/detail/curl/event_loop.hpp>
#include <studentsvc/detail/curl/exchange.hpp>
#include <studentsvc/detail/curl/handle_pool.hpp>
#include <studentsvc/detail/curl/request.hpp>
#include <studentsvc/detail/curl/sockets.hpp>
#include <studentsvc/detail/header_only.hpp>

namespace studentsvc {
namespace detail {

/// What a CurlTransport's transfers run on. Shared by the transport and by
/// every completion it queued: a completion the loop runs after the transport
/// went (in the same step as the one that destroyed it) still has the pool.
struct CurlTransportState {
  explicit CurlTransportState(CurlTransportOptions o)
      : options(std::move(o)),
        handles(CurlHandleSettings{options.ca_bundle, options.allow_http, options.max_connections, options.ca_pem,
                                   options.client_certificate, options.pinned_public_key, &sockets}) {}

  CurlTransportOptions options;
  /// Sockets of every connection this transport's handles have open.
  CurlSocketRegistry sockets;
  CurlHandlePool handles;
  /// The connections the event loop's transfers are on (touched only by the
  /// thread driving its multi handle, and by completions, which hold this state).
  ConnectionsInUse async_connections;

  /// True on the event thread (inside a completion), where nothing may wait for it.
  [[nodiscard]] bool on_event_thread() {
    const std::lock_guard lock(loop_mutex);
    return loop && loop->on_event_thread();
  }

  /// The event thread of every transfer and timer, made on first use; null
  /// once close() ran: the transport is gone and nothing more is sent.
  [[nodiscard]] CurlEventLoop* event_loop() {
    const std::lock_guard lock(loop_mutex);
    if (closed) return nullptr;
    if (!loop) loop = std::make_unique<CurlEventLoop>(static_cast<std::size_t>(std::max(options.max_connections, 1L)));
    return loop.get();
  }

  /// The transport's destructor: the loop cancels what is queued or in flight
  /// and runs those completions (which hand their handles back to `handles`),
  /// then joins its thread; on the event thread itself it lets the thread end.
  /// Completions already taken out of the loop's queue in the step that
  /// destroyed the transport run after this, on the state they hold.
  void close() {
    std::unique_ptr<CurlEventLoop> ending;
    {
      const std::lock_guard lock(loop_mutex);
      closed = true;
      ending = std::move(loop);
    }
    ending.reset();  // outside the lock: its completions may ask for the loop
  }

  std::mutex loop_mutex;
  std::unique_ptr<CurlEventLoop> loop;
  bool closed = false;
};

/// One transfer: the request (the handle points into its URL and body), the
/// pooled handle, what it writes into, and the caller's completion. A
/// send_async transfer owns its request; a blocking send's borrows the caller's,
/// which outlives it (the caller waits for the completion).
struct CurlAsyncTransfer {
  HttpRequest owned;
  const HttpRequest* request = &owned;
  PooledEasy handle;
  CurlExchange exchange;
  SendCompletion done;
  StopToken stop;
};

/// The loop's completion of a CurlAsyncTransfer: maps the outcome, gives the
/// handle back and calls the caller's completion, on the event thread. A
/// connection found stale before anything was sent is left for a new one, once.
/// It holds the transport's state: the transport may go before it runs.
struct CurlAsyncCompletion {
  std::shared_ptr<CurlTransportState> state;
  std::unique_ptr<CurlAsyncTransfer> transfer;

  void operator()(TransferOutcome outcome) {
    CURL* h = transfer->handle.get();
    leave_connection(transfer->exchange);
    Result<HttpResponse> result;
    if (outcome.cancelled) {
      (void)curl_transfer_result(h, CURLE_ABORTED_BY_CALLBACK, transfer->exchange);
      result = std::unexpected(cancelled_error(transfer->exchange.sends > 0
                                                   ? "cancelled (stop requested) after the request went out: it may "
                                                     "or may not have been processed"
                                                   : "cancelled (stop requested) before the request was sent"));
    } else if (send_again_on_fresh_connection(h, outcome.code, transfer->exchange)) {
      submit(state, std::move(transfer));
      return;
    } else {
      result = curl_transfer_result(h, outcome.code, transfer->exchange);
    }
    state->handles.release(std::move(transfer->handle));
    SendCompletion done = std::move(transfer->done);
    transfer.reset();  // the request and its buffers, before the caller goes on
    done(std::move(result));
  }

  /// A transfer for `request` (owned, or `borrowed` when not null) on a pooled
  /// handle, or nullptr once `done` has been told why there is none.
  static std::unique_ptr<CurlAsyncTransfer> prepare(CurlTransportState& state, HttpRequest request,
                                                    const HttpRequest* borrowed, SendCompletion done, StopToken stop) {
    auto transfer = std::make_unique<CurlAsyncTransfer>();
    if (borrowed != nullptr) {
      transfer->request = borrowed;
    } else {
      transfer->owned = std::move(request);
    }
    transfer->done = std::move(done);
    transfer->stop = std::move(stop);
    transfer->handle = state.handles.acquire();
    if (!transfer->handle) {
      transfer->done(make_error(ErrorKind::transport, "could not create a libcurl handle"));
      return nullptr;
    }
    if (auto prepared =
            curl_prepare(transfer->handle, *transfer->request, transfer->exchange, state.options.proxy, state.sockets);
        !prepared) {
      state.handles.release(std::move(transfer->handle));
      transfer->done(std::unexpected(std::move(prepared.error())));
      return nullptr;
    }
    // Read and written by whichever thread drives the loop's multi handle, one at a time.
    transfer->exchange.connections = &state.async_connections;
    // Wait for a multiplexable connection rather than open another, where HTTP/2 can be offered.
    set_if_changed(transfer->handle.get(), CURLOPT_PIPEWAIT, transfer->handle.applied.pipewait,
                   transfer->request->url.starts_with("https:") ? 1L : 0L);
    return transfer;
  }

  /// A blocking send's transfer: on the calling thread while the loop is idle.
  static void run_here_or_submit(const std::shared_ptr<CurlTransportState>& state,
                                 std::unique_ptr<CurlAsyncTransfer> transfer) {
    CURL* h = transfer->handle.get();
    CurlAsyncCompletion completion{state, std::move(transfer)};
    if (CurlEventLoop* loop = state->event_loop()) {
      loop->run_here_or_submit(h, std::move(completion));
    } else {
      completion(gone);
    }
  }

  static void submit(const std::shared_ptr<CurlTransportState>& state, std::unique_ptr<CurlAsyncTransfer> transfer) {
    CURL* h = transfer->handle.get();
    const StopToken stop = transfer->stop;
    CurlAsyncCompletion completion{state, std::move(transfer)};
    CurlEventLoop* loop = state->event_loop();
    if (loop == nullptr) {
      completion(gone);
      return;
    }
    loop->submit(h, std::move(completion), stop);
  }

  /// The outcome of a transfer submitted once the transport has gone (only
  /// a completion running after it can submit): cancelled, never sent.
  static constexpr TransferOutcome gone{CURLE_ABORTED_BY_CALLBACK, true};
};

}  // namespace detail

STUDENTSVC_INLINE CurlTransport::CurlTransport(CurlTransportOptions options)
    : state_(std::make_shared<detail::CurlTransportState>(std::move(options))) {}

// The loop and the state hold each other through the queued completions: the
// loop ends here, and the state goes with the last completion still holding it.
STUDENTSVC_INLINE CurlTransport::~CurlTransport() { state_->close(); }

STUDENTSVC_INLINE const CurlTransportOptions& CurlTransport::options() const noexcept { return state_->options; }

STUDENTSVC_INLINE Result<HttpResponse> CurlTransport::send(const HttpRequest& request) {
  if (state_->on_event_thread()) {
    // Inside a completion the loop cannot run this transfer while its thread
    // waits: it runs here, on a handle (and connection) of its own.
    detail::PooledEasy handle = state_->handles.acquire();
    if (!handle) return make_error(ErrorKind::transport, "could not create a libcurl handle");
    detail::CurlExchange exchange;
    if (auto prepared = detail::curl_prepare(handle, request, exchange, state_->options.proxy, state_->sockets);
        !prepared) {
      state_->handles.release(std::move(handle));
      return std::unexpected(std::move(prepared.error()));
    }
    CURLcode code = curl_easy_perform(handle.get());
    if (detail::send_again_on_fresh_connection(handle.get(), code, exchange)) code = curl_easy_perform(handle.get());
    auto result = detail::curl_transfer_result(handle.get(), code, exchange);
    state_->handles.release(std::move(handle));
    return result;
  }
  // Everywhere else on the event loop's multi handle: one connection pool for
  // every form. Driven on this thread while the event thread is idle (no hand-off).
  struct Waiter {
    std::mutex mutex;
    std::condition_variable ready;
    std::optional<Result<HttpResponse>> outcome;
  } w;
  // One pointer captured: the completion needs no allocation of its own.
  auto transfer = detail::CurlAsyncCompletion::prepare(*state_, {}, &request, [waiter = &w](Result<HttpResponse> r) {
    const std::lock_guard lock(waiter->mutex);
    waiter->outcome = std::move(r);
    waiter->ready.notify_one();  // under the lock: the waiter lives on the waiting caller's stack
  }, StopToken{});
  if (transfer) detail::CurlAsyncCompletion::run_here_or_submit(state_, std::move(transfer));
  std::unique_lock lock(w.mutex);
  w.ready.wait(lock, [&] { return w.outcome.has_value(); });
  return std::move(*w.outcome);
}

STUDENTSVC_INLINE std::vector<Result<HttpResponse>> CurlTransport::send_all(std::span<const HttpRequest> requests,
                                                                            std::size_t max_concurrency) {
  if (requests.empty()) return {};
  if (state_->on_event_thread()) return Transport::send_all(requests, 1);  // one after another, here
  // On the event loop: at most `max_concurrency` at once, each finished one starting the next.
  struct Batch {
    std::mutex mutex;
    std::condition_variable done;
    std::vector<Result<HttpResponse>> out;
    std::size_t next = 0;
    std::size_t finished = 0;
  } batch;
  batch.out.resize(requests.size());
  // Each finished request claims the next under the lock, so `batch` is in use
  // only while some request is unfinished, and the caller cannot have returned.
  std::function<void(std::size_t)> start = [&](std::size_t i) {
    send_async(requests[i], [&, i](Result<HttpResponse> r) {
      std::optional<std::size_t> next;
      {
        const std::lock_guard lock(batch.mutex);
        batch.out[i] = std::move(r);
        ++batch.finished;
        if (batch.next < requests.size()) {
          next = batch.next++;
        } else if (batch.finished == requests.size()) {
          batch.done.notify_one();  // under the lock: `batch` lives on the waiting caller's stack
        }
      }
      if (next) start(*next);
    }, StopToken{});
  };
  const std::size_t width = std::min(std::max<std::size_t>(max_concurrency, 1), requests.size());
  for (std::size_t k = 0; k < width; ++k) {  // `width` claims here; each finished one claims one more
    std::size_t i = 0;
    {
      const std::lock_guard lock(batch.mutex);
      if (batch.next == requests.size()) break;
      i = batch.next++;
    }
    start(i);
  }
  std::unique_lock lock(batch.mutex);
  batch.done.wait(lock, [&] { return batch.finished == requests.size(); });
  return std::move(batch.out);
}

STUDENTSVC_INLINE void CurlTransport::send_async(HttpRequest request, SendCompletion done, StopToken stop) {
  if (stop.stop_requested()) {
    done(std::unexpected(cancelled_error("cancelled (stop requested) before the request was sent")));
    return;
  }
  auto transfer = detail::CurlAsyncCompletion::prepare(*state_, std::move(request), nullptr, std::move(done),
                                                       std::move(stop));
  if (transfer) detail::CurlAsyncCompletion::submit(state_, std::move(transfer));
}

STUDENTSVC_INLINE void CurlTransport::run_after(std::chrono::milliseconds delay, std::function<void(bool)> fn,
                                                StopToken stop) {
  detail::CurlEventLoop* loop = state_->event_loop();
  if (loop == nullptr) {  // only a completion running after the transport went gets here
    fn(false);
    return;
  }
  detail::TransferCompletion done([fn = std::move(fn)](detail::TransferOutcome outcome) { fn(!outcome.cancelled); });
  loop->schedule(delay, std::move(done), std::move(stop));
}

}  // namespace studentsvc

#endif  // STUDENTSVC_WITH_CURL

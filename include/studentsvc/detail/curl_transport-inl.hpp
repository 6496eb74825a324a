#pragma once
/// @file detail/curl_transport-inl.hpp
/// @brief CurlTransport's bodies: included by curl_transport.hpp in header-only
/// mode, compiled once by src/curl_transport.cpp otherwise.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/curl_transport.hpp>
#include <studentsvc/detail/curl_batch.hpp>
#include <studentsvc/detail/curl_errors.hpp>
#include <studentsvc/detail/curl_event_loop.hpp>
#include <studentsvc/detail/curl_exchange.hpp>
#include <studentsvc/detail/curl_handle_pool.hpp>
#include <studentsvc/detail/curl_request.hpp>
#include <studentsvc/detail/curl_sockets.hpp>
#include <studentsvc/detail/header_only.hpp>

namespace studentsvc {
namespace detail {

struct CurlTransportState {
  explicit CurlTransportState(CurlTransportOptions o)
      : options(std::move(o)),
        handles(CurlHandleSettings{options.ca_bundle, options.allow_http, options.max_connections, options.ca_pem,
                                   options.client_certificate, options.pinned_public_key}) {}

  CurlTransportOptions options;
  /// Sockets of every connection this transport's handles have open.
  CurlSocketRegistry sockets;
  CurlHandlePool handles;
  CurlBatchEnginePool engines;  // after `handles`: its easy handles go before the share they use
  /// The connections the event loop's transfers are on (its thread only; the
  /// loop, declared after it, runs every completion before this goes).
  ConnectionsInUse async_connections;

  /// The event thread of send_async and run_after, made on first use. Declared
  /// last, so destroyed first: its destructor cancels what is in flight and
  /// runs the completions, which hand their easy handles back to `handles`.
  [[nodiscard]] CurlEventLoop& event_loop() {
    const std::lock_guard lock(loop_mutex);
    if (!loop) loop = std::make_unique<CurlEventLoop>(static_cast<std::size_t>(std::max(options.max_connections, 1L)));
    return *loop;
  }
  std::mutex loop_mutex;
  std::unique_ptr<CurlEventLoop> loop;
};

/// One send_async transfer: the request (the handle points into its URL and
/// body), the pooled handle, what it writes into, and the caller's completion.
struct CurlAsyncTransfer {
  HttpRequest request;
  CurlEasy handle;
  CurlExchange exchange;
  SendCompletion done;
  StopToken stop;
};

/// The loop's completion of a CurlAsyncTransfer: maps the outcome, gives the
/// handle back and calls the caller's completion, on the event thread. A
/// connection found stale before anything was sent is left for a new one, once.
struct CurlAsyncCompletion {
  CurlTransportState* state;
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
    } else if (outcome.code == CURLE_ABORTED_BY_CALLBACK && transfer->exchange.stale_connection) {
      transfer->exchange.stale_connection = false;
      transfer->exchange.error[0] = '\0';
      curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
      CurlTransportState* s = state;
      submit(*s, std::move(transfer));
      return;
    } else {
      result = curl_transfer_result(h, outcome.code, transfer->exchange);
    }
    state->handles.release(std::move(transfer->handle));
    SendCompletion done = std::move(transfer->done);
    transfer.reset();  // the request and its buffers, before the caller goes on
    done(std::move(result));
  }

  static void submit(CurlTransportState& state, std::unique_ptr<CurlAsyncTransfer> transfer) {
    CURL* h = transfer->handle.get();
#if STUDENTSVC_HAS_STOP_TOKEN
    const StopToken stop = transfer->stop;
    state.event_loop().submit(h, CurlAsyncCompletion{&state, std::move(transfer)}, stop);
#else
    state.event_loop().submit(h, CurlAsyncCompletion{&state, std::move(transfer)});
#endif
  }
};

}  // namespace detail

STUDENTSVC_INLINE CurlTransport::CurlTransport(CurlTransportOptions options)
    : state_(std::make_unique<detail::CurlTransportState>(std::move(options))) {}

STUDENTSVC_INLINE CurlTransport::~CurlTransport() = default;

STUDENTSVC_INLINE const CurlTransportOptions& CurlTransport::options() const noexcept { return state_->options; }

STUDENTSVC_INLINE Result<HttpResponse> CurlTransport::send(const HttpRequest& request) {
  detail::CurlEasy handle = state_->handles.acquire();
  if (!handle) return make_error(ErrorKind::transport, "could not create a libcurl handle");
  detail::CurlExchange exchange;
  if (auto prepared = detail::curl_prepare(handle.get(), request, exchange, state_->options.proxy, state_->sockets);
      !prepared) {
    state_->handles.release(std::move(handle));
    return std::unexpected(std::move(prepared.error()));
  }
  CURLcode code = curl_easy_perform(handle.get());
  if (code == CURLE_ABORTED_BY_CALLBACK && exchange.stale_connection) {
    // Refused a stale connection before sending anything: once more, on a new one.
    exchange.stale_connection = false;
    exchange.error[0] = '\0';
    curl_easy_setopt(handle.get(), CURLOPT_FRESH_CONNECT, 1L);
    code = curl_easy_perform(handle.get());
  }
  auto result = detail::curl_transfer_result(handle.get(), code, exchange);
  state_->handles.release(std::move(handle));
  return result;
}

STUDENTSVC_INLINE std::vector<Result<HttpResponse>> CurlTransport::send_all(std::span<const HttpRequest> requests,
                                                                            std::size_t max_concurrency) {
  std::size_t limit = std::min(std::max<std::size_t>(max_concurrency, 1), requests.size());
  if (limit <= 1) return Transport::send_all(requests, 1);  // one at a time needs no multi handle
  std::unique_ptr<detail::CurlBatchEngine> engine = state_->engines.take(limit, state_->handles);
  if (!engine) return Transport::send_all(requests, 1);
  limit = std::min(limit, engine->slots.size());
  bool reusable = true;
  auto out = detail::run_curl_batch(*engine, requests, limit, state_->options.proxy, state_->sockets, reusable);
  if (reusable) state_->engines.give_back(std::move(engine));  // else dropped, not pooled
  return out;
}

STUDENTSVC_INLINE void CurlTransport::send_async(HttpRequest request, SendCompletion done, StopToken stop) {
  if (stop.stop_requested()) {
    done(std::unexpected(cancelled_error("cancelled (stop requested) before the request was sent")));
    return;
  }
  auto transfer = std::make_unique<detail::CurlAsyncTransfer>();
  transfer->request = std::move(request);
  transfer->done = std::move(done);
  transfer->stop = std::move(stop);
  transfer->handle = state_->handles.acquire();
  if (!transfer->handle) {
    transfer->done(make_error(ErrorKind::transport, "could not create a libcurl handle"));
    return;
  }
  CURL* h = transfer->handle.get();
  if (auto prepared =
          detail::curl_prepare(h, transfer->request, transfer->exchange, state_->options.proxy, state_->sockets);
      !prepared) {
    state_->handles.release(std::move(transfer->handle));
    transfer->done(std::unexpected(std::move(prepared.error())));
    return;
  }
  transfer->exchange.connections = &state_->async_connections;  // read and written on the event thread only
  // Wait for a multiplexable connection rather than open another, where HTTP/2 can be offered.
  curl_easy_setopt(h, CURLOPT_PIPEWAIT, transfer->request.url.starts_with("https:") ? 1L : 0L);
  detail::CurlAsyncCompletion::submit(*state_, std::move(transfer));
}

STUDENTSVC_INLINE void CurlTransport::run_after(std::chrono::milliseconds delay, std::function<void(bool)> fn,
                                                StopToken stop) {
  detail::TransferCompletion done([fn = std::move(fn)](detail::TransferOutcome outcome) { fn(!outcome.cancelled); });
#if STUDENTSVC_HAS_STOP_TOKEN
  state_->event_loop().schedule(delay, std::move(done), std::move(stop));
#else
  (void)stop;
  state_->event_loop().schedule(delay, std::move(done));
#endif
}

}  // namespace studentsvc

#endif  // STUDENTSVC_WITH_CURL

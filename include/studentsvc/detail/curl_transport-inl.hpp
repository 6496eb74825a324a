#pragma once
/// @file detail/curl_transport-inl.hpp
/// @brief CurlTransport's bodies: included by curl_transport.hpp in header-only
/// mode, compiled once by src/curl_transport.cpp otherwise.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/curl_transport.hpp>
#include <studentsvc/detail/curl_batch.hpp>
#include <studentsvc/detail/curl_errors.hpp>
#include <studentsvc/detail/curl_exchange.hpp>
#include <studentsvc/detail/curl_handle_pool.hpp>
#include <studentsvc/detail/curl_request.hpp>
#include <studentsvc/detail/curl_sockets.hpp>
#include <studentsvc/detail/header_only.hpp>

namespace studentsvc {
namespace detail {

struct CurlTransportState {
  explicit CurlTransportState(CurlTransportOptions o)
      : options(std::move(o)), handles(CurlHandleSettings{options.ca_bundle, options.allow_http, options.max_connections}) {}

  CurlTransportOptions options;
  /// Sockets of every connection this transport's handles have open.
  CurlSocketRegistry sockets;
  CurlHandlePool handles;
  CurlBatchEnginePool engines;  // after `handles`: its easy handles go before the share they use
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

}  // namespace studentsvc

#endif  // STUDENTSVC_WITH_CURL

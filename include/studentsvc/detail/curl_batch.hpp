#pragma once
/// @file detail/curl_batch.hpp
/// @brief CurlBatchEngine: a multi handle and its easy handles, pooled, that
/// run one batch of requests at a time over the curl multi interface.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/detail/curl_errors.hpp>
#include <studentsvc/detail/curl_exchange.hpp>
#include <studentsvc/detail/curl_handle_pool.hpp>
#include <studentsvc/detail/curl_handles.hpp>
#include <studentsvc/detail/curl_request.hpp>
#include <studentsvc/detail/curl_sockets.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc::detail {

/// One transfer lane of a batch: an easy handle and what its current transfer writes into.
struct CurlBatchSlot {
  CurlEasy handle;
  CurlExchange exchange;
  std::size_t index = 0;  ///< Which request of the batch it carries.
};

/// What a batch runs on: a multi handle (whose connection cache outlives the
/// batch) and its slots. Used by one batch at a time.
struct CurlBatchEngine {
  std::vector<std::unique_ptr<CurlBatchSlot>> slots;
  /// The connections the batch's transfers are on, for the pre-request check
  /// of a shared HTTP/2 connection.
  ConnectionsInUse connections;
  CurlMulti multi;  // declared last: destroyed first, before the easy handles
};

/// Idle batch engines, so that a batch's connections stay open for the next one.
class CurlBatchEnginePool {
 public:
  /// An idle engine (or a new one) with at least `slots` easy handles from
  /// `handles`; null when libcurl cannot make one with two or more.
  [[nodiscard]] std::unique_ptr<CurlBatchEngine> take(std::size_t slots, CurlHandlePool& handles) {
    std::unique_ptr<CurlBatchEngine> engine;
    {
      const std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        engine = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!engine) {
      engine = std::make_unique<CurlBatchEngine>();
      engine->multi.reset(curl_multi_init());
      if (!engine->multi) return nullptr;
      curl_multi_setopt(engine->multi.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    }
    while (engine->slots.size() < slots) {
      CurlEasy h = handles.acquire();
      if (!h) return engine->slots.size() >= 2 ? std::move(engine) : nullptr;
      auto slot = std::make_unique<CurlBatchSlot>();
      curl_easy_setopt(h.get(), CURLOPT_PRIVATE, static_cast<void*>(slot.get()));
      slot->handle = std::move(h);
      engine->slots.push_back(std::move(slot));
    }
    return engine;
  }

  /// Keeps `engine` (and its open connections) for the next batch.
  void give_back(std::unique_ptr<CurlBatchEngine> engine) {
    const std::lock_guard lock(mutex_);
    idle_.push_back(std::move(engine));
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<CurlBatchEngine>> idle_;
};

/// Runs `requests` on `engine`, at most `limit` (≤ its slots) at once; results
/// in input order. False in `reusable` when the multi handle itself failed
/// (what was left has failed then, and the engine must be dropped).
[[nodiscard]] inline std::vector<Result<HttpResponse>> run_curl_batch(CurlBatchEngine& engine,
                                                                      std::span<const HttpRequest> requests,
                                                                      std::size_t limit, const std::string& proxy,
                                                                      CurlSocketRegistry& sockets, bool& reusable) {
  CURLM* multi = engine.multi.get();
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(limit));
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(limit));  // idle ones kept for the next batch

  std::vector<Result<HttpResponse>> out(requests.size());
  std::size_t next = 0;
  std::size_t active = 0;
  // Starts the next unsent request on `slot`; false when none is left.
  auto start = [&](CurlBatchSlot& slot) {
    while (next < requests.size()) {
      const std::size_t i = next++;
      CURL* h = slot.handle.get();
      slot.exchange = CurlExchange{};
      slot.exchange.connections = &engine.connections;
      slot.index = i;
      if (auto prepared = curl_prepare(h, requests[i], slot.exchange, proxy, sockets); !prepared) {
        out[i] = std::unexpected(std::move(prepared.error()));
        continue;
      }
      // Wait for a multiplexable connection rather than open another one, but
      // only where HTTP/2 can be offered (https, ALPN): over plain http a
      // waiting transfer would only be held up.
      curl_easy_setopt(h, CURLOPT_PIPEWAIT, requests[i].url.starts_with("https:") ? 1L : 0L);
      if (curl_multi_add_handle(multi, h) != CURLM_OK) {
        out[i] = curl_transfer_result(h, CURLE_FAILED_INIT, slot.exchange);
        continue;
      }
      slot.exchange.in_flight = true;
      ++active;
      return true;
    }
    return false;
  };
  for (std::size_t s = 0; s < limit; ++s) {
    if (!start(*engine.slots[s])) break;
  }
  reusable = true;
  while (active > 0) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* h = msg->easy_handle;
      const CURLcode code = msg->data.result;
      void* owner = nullptr;
      curl_easy_getinfo(h, CURLINFO_PRIVATE, &owner);
      curl_multi_remove_handle(multi, h);
      auto& slot = *static_cast<CurlBatchSlot*>(owner);
      if (code == CURLE_ABORTED_BY_CALLBACK && slot.exchange.stale_connection) {
        // Refused a stale connection before sending anything: once more, on a new one.
        slot.exchange.stale_connection = false;
        slot.exchange.error[0] = '\0';
        curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
        if (curl_multi_add_handle(multi, h) == CURLM_OK) continue;  // still in flight
      }
      slot.exchange.in_flight = false;
      leave_connection(slot.exchange);
      --active;
      out[slot.index] = curl_transfer_result(h, code, slot.exchange);
      start(slot);
    }
    // Sockets and libcurl's own timers wake the poll; 100 ms bounds any wake-up it misses.
    if (mc == CURLM_OK && active > 0) mc = curl_multi_poll(multi, nullptr, 0, 100, nullptr);
    if (mc != CURLM_OK) {  // the multi handle itself failed: fail what is left, never spin
      const std::string reason = std::string("curl multi: ") + curl_multi_strerror(mc);
      for (auto& slot : engine.slots) {
        if (!slot->exchange.in_flight) continue;
        curl_multi_remove_handle(multi, slot->handle.get());
        (void)curl_transfer_result(slot->handle.get(), CURLE_FAILED_INIT, slot->exchange);
        slot->exchange.in_flight = false;
        leave_connection(slot->exchange);
        out[slot->index] = make_error(ErrorKind::transport, reason);
      }
      for (; next < requests.size(); ++next) out[next] = make_error(ErrorKind::transport, reason);
      reusable = false;
      return out;
    }
  }
  return out;
}

}  // namespace studentsvc::detail

#endif  // STUDENTSVC_WITH_CURL

#pragma once
/// @file curl_transport.hpp
/// @brief CurlTransport, the default Transport on libcurl. The only header that
/// includes <curl/curl.h>.

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/detail/ascii.hpp>
#include <studentsvc/detail/curl_sockets.hpp>
#include <studentsvc/detail/url_userinfo.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc {

/// @brief Settings fixed for the life of a CurlTransport.
struct CurlTransportOptions {
  /// PEM file of trusted CAs; empty: the system's store. Peer and host
  /// verification are always on; there is no switch to turn them off.
  std::string ca_bundle;
  /// Explicit proxy URL; empty: libcurl's environment variables (`https_proxy`,
  /// `no_proxy`, ...). Used for https:// only, always as a CONNECT tunnel, so the
  /// proxy never sees a request line or a credential header. A plain http://
  /// (loopback) call never goes through a proxy, not even this one.
  std::string proxy;
  /// Permits `http://` URLs. The Client sets it only with the loopback opt-in
  /// and has already refused non-loopback hosts.
  bool allow_http = false;
  /// Idle connections kept for reuse across calls and threads: each pooled
  /// easy handle keeps its own connection, and at most this many idle handles
  /// are kept. Keep it at or above the number of threads calling at once:
  /// past it, a finished call closes its connection and a later one pays a
  /// new TCP and TLS handshake.
  long max_connections = 64;
};

namespace detail {

/// libcurl's global state, set up once on first use (thread-safe since C++11
/// statics); never torn down, since other static destructors may still use it.
inline void ensure_curl_global_init() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)code;
}

struct CurlEasyDeleter {
  void operator()(CURL* h) const noexcept { curl_easy_cleanup(h); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;

struct CurlMultiDeleter {
  void operator()(CURLM* m) const noexcept { curl_multi_cleanup(m); }
};
using CurlMulti = std::unique_ptr<CURLM, CurlMultiDeleter>;

struct CurlSlistDeleter {
  void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};
using CurlSlist = std::unique_ptr<curl_slist, CurlSlistDeleter>;

struct CurlBatchSlot;

/// What one transfer writes into, and the cap it enforces.
struct CurlExchange {
  HttpResponse response;
  std::size_t max_body = 0;
  bool body_too_large = false;
  /// Set by the blank line that ends a response's header section; a transfer
  /// that ends without it was cut off inside the headers (libcurl 7.88 reports
  /// that as success with whatever status line it got).
  bool headers_complete = false;
  /// Cap on status lines, header fields, trailers and 1xx responses together.
  std::size_t max_header = 0;
  std::size_t header_bytes = 0;
  bool headers_too_large = false;
  /// False: the request must not be sent twice (HttpRequest::idempotent).
  bool idempotent = true;
  /// Times the request was about to go out (pre-request callback): above 0,
  /// its bytes may have reached the server.
  int sends = 0;
  /// libcurl was about to send it again after the connection died (its own
  /// "retrying a fresh connect"); refused for a non-idempotent request.
  bool replay_refused = false;
  /// The connection libcurl chose had unread bytes or a hang-up while idle:
  /// aborted before anything was sent, to be run again on a new connection.
  bool stale_connection = false;
  int local_port = 0;  ///< The local port of the connection it went out on.
  CURL* handle = nullptr;
  CurlSocketRegistry* sockets = nullptr;
  /// In a batch: the other slots, whose connections (HTTP/2, shared) are in use.
  const std::vector<std::unique_ptr<CurlBatchSlot>>* peers = nullptr;
  CurlSlist request_headers;
  std::array<char, CURL_ERROR_SIZE> error{};
};

/// One transfer lane of a batch: an easy handle and what its current transfer writes into.
struct CurlBatchSlot {
  CurlEasy handle;
  CurlExchange exchange;
  std::size_t index = 0;  ///< Which request of the batch it carries.
  bool busy = false;      ///< Added to the multi handle.
};

/// What a batch runs on: a multi handle (whose connection cache outlives the
/// batch) and its slots. Used by one batch at a time.
struct CurlBatchEngine {
  std::vector<std::unique_ptr<CurlBatchSlot>> slots;
  CurlMulti multi;  // declared last: destroyed first, before the easy handles
};

inline std::size_t curl_write_body(char* data, std::size_t size, std::size_t count, void* user) noexcept {
  auto* ex = static_cast<CurlExchange*>(user);
  const std::size_t n = size * count;
  if (ex->response.body.size() + n > ex->max_body) {
    ex->body_too_large = true;
    return 0;  // libcurl aborts the transfer with CURLE_WRITE_ERROR
  }
  try {
    ex->response.body.append(data, n);
  } catch (...) {
    return 0;
  }
  return n;
}

inline std::size_t curl_write_header(char* data, std::size_t size, std::size_t count, void* user) noexcept {
  auto* ex = static_cast<CurlExchange*>(user);
  const std::size_t n = size * count;
  // libcurl hands every status line, header, 1xx response and chunked trailer
  // here, a line at a time; their sum is what the cap bounds.
  ex->header_bytes += n;
  if (ex->header_bytes > ex->max_header) {
    ex->headers_too_large = true;
    return 0;  // libcurl aborts the transfer with CURLE_WRITE_ERROR
  }
  std::string_view line(data, n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  try {
    if (line.starts_with("HTTP/")) {
      ex->response.headers.clear();  // a new status line: 1xx or a new response
      ex->headers_complete = false;
    } else if (line.empty()) {
      ex->headers_complete = true;
    } else if (const auto colon = line.find(':'); colon != std::string_view::npos && colon > 0) {
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      ex->response.headers.add(std::string(line.substr(0, colon)), std::string(value));
    }
  } catch (...) {
    return 0;
  }
  return n;
}

/// CURLOPT_PREREQFUNCTION: runs on the connection libcurl chose, right before
/// the request is written, each time libcurl is about to write it.
inline int curl_before_send(void* user, char*, char*, int, int local_port) noexcept {
  auto* ex = static_cast<CurlExchange*>(user);
  if (ex == nullptr) return CURL_PREREQFUNC_OK;
  if (ex->sends > 0 && !ex->idempotent) {
    // libcurl's "Connection died, retrying a fresh connect" would replay it.
    // Refusing here keeps keep-alive for such requests (FRESH_CONNECT would
    // cost a handshake per call); the price is an error where libcurl resends.
    ex->replay_refused = true;
    return CURL_PREREQFUNC_ABORT;
  }
  long connects = 0;
  curl_easy_getinfo(ex->handle, CURLINFO_NUM_CONNECTS, &connects);
  if (connects == 0 && ex->sockets != nullptr) {  // a reused connection
    bool shared = false;  // an HTTP/2 connection another transfer of the batch is on
    if (ex->peers != nullptr) {
      for (const auto& peer : *ex->peers) {
        shared = shared || (peer->busy && &peer->exchange != ex && peer->exchange.local_port == local_port);
      }
    }
    if (!shared) {
      // Unread bytes on an idle connection answer no request of ours: using it
      // would hand them to this call. Nothing is sent yet; the caller runs the
      // request again on a new connection (libcurl closes this aborted one).
      const curl_socket_t fd = ex->sockets->find_by_local_port(local_port);
      if (fd == CURL_SOCKET_BAD || socket_has_input(fd)) {
        ex->stale_connection = true;
        return CURL_PREREQFUNC_ABORT;
      }
    }
  }
  ex->local_port = local_port;
  ++ex->sends;
  return CURL_PREREQFUNC_OK;
}

/// Whether a COULDNT_CONNECT on `h` was about another endpoint than the URL's
/// host and port: libcurl names the endpoint it failed to reach ("Failed to
/// connect to H port P"), which is the proxy's when one is in use.
[[nodiscard]] inline bool curl_connect_failed_elsewhere(CURL* h, std::string_view reason) {
  char* url = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &url) != CURLE_OK || url == nullptr) return false;
  CURLU* u = curl_url();
  if (u == nullptr) return false;
  bool elsewhere = false;
  char* host = nullptr;
  char* port = nullptr;
  if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK && curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
    std::string_view name(host);
    if (name.size() > 2 && name.front() == '[' && name.back() == ']') name = name.substr(1, name.size() - 2);
    const std::string target = "connect to " + std::string(name) + " port " + port + " ";
    elsewhere = reason.find("connect to ") != std::string_view::npos && reason.find(target) == std::string_view::npos;
  }
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(u);
  return elsewhere;
}

/// The ApiError of a failed transfer: kind transport and libcurl's reason,
/// with the cause named first for the cases callers act on. With the handle,
/// a failure at a proxy says so. libcurl's text may echo a proxy URL, so its
/// userinfo (`user:password@`) is stripped first.
[[nodiscard]] inline ApiError curl_error(CURLcode code, const CurlExchange& ex, CURL* h = nullptr) {
  ApiError e;
  e.kind = ErrorKind::transport;
  e.retryable = true;
  const std::string reason =
      strip_url_userinfo(ex.error[0] != '\0' ? std::string_view(ex.error.data()) : curl_easy_strerror(code));
  long connect_status = 0;  // the proxy's answer to CONNECT, 0 when none came
  if (h != nullptr) curl_easy_getinfo(h, CURLINFO_HTTP_CONNECTCODE, &connect_status);
  if (connect_status >= 300 || (code == CURLE_RECV_ERROR && reason.find("CONNECT") != std::string::npos)) {
    // "CONNECT tunnel failed, response 403", "Proxy CONNECT aborted"
    e.message = connect_status >= 300
                    ? "proxy refused the tunnel (status " + std::to_string(connect_status) + "): " + reason
                    : "proxy failed during the tunnel setup: " + reason;
    e.retryable = connect_status == 0 || connect_status >= 500 || connect_status == 408 || connect_status == 429;
    return e;
  }
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM: {
      // The certificate check results (X509_V_OK, 0, when it passed) of an
      // https:// proxy and of the server. A handle keeps the last ones across
      // transfers, so the proxy is blamed only when the server's check did not
      // fail: an old proxy failure does not name a server's failed check.
      long proxy_verify = 0;
      long server_verify = 0;
      if (h != nullptr) {
        curl_easy_getinfo(h, CURLINFO_PROXY_SSL_VERIFYRESULT, &proxy_verify);
        curl_easy_getinfo(h, CURLINFO_SSL_VERIFYRESULT, &server_verify);
      }
      e.message = (proxy_verify != 0 && server_verify == 0 ? "TLS certificate verification of the proxy failed: "
                                                           : "TLS certificate verification failed: ") +
                  reason;
      e.retryable = false;
      break;
    }
    case CURLE_SSL_CONNECT_ERROR: e.message = "TLS handshake failed: " + reason; break;
    case CURLE_OPERATION_TIMEDOUT: e.message = "timed out: " + reason; break;
    case CURLE_COULDNT_RESOLVE_HOST: e.message = "DNS lookup failed: " + reason; break;
    // Also a proxy URL libcurl cannot parse ("Unsupported proxy syntax").
    case CURLE_COULDNT_RESOLVE_PROXY: e.message = "could not resolve the proxy: " + reason; break;
    case CURLE_PROXY: e.message = "proxy failed: " + reason; break;  // SOCKS handshake errors
    case CURLE_COULDNT_CONNECT:
      // Also a proxy URL with a scheme libcurl does not know ("Unsupported proxy scheme").
      e.message = (h != nullptr && curl_connect_failed_elsewhere(h, reason)) || reason.find("proxy") != std::string::npos
                      ? "could not connect to the proxy: " + reason
                      : "connect failed: " + reason;
      break;
    case CURLE_GOT_NOTHING: e.message = "connection closed with no response: " + reason; break;
    case CURLE_PARTIAL_FILE: e.message = "connection closed mid-body: " + reason; break;
    // libcurl's reason says which: "Connection reset by peer", "Too large
    // response headers" (its own cap on the header section), ...
    case CURLE_RECV_ERROR: e.message = "receive failed: " + reason; break;
    case CURLE_SEND_ERROR: e.message = "send failed: " + reason; break;
    case CURLE_FILESIZE_EXCEEDED:
      e.message = "response body exceeds the " + std::to_string(ex.max_body) + "-byte limit";
      e.retryable = false;
      break;
    case CURLE_UNSUPPORTED_PROTOCOL:
      e.message = "unsupported protocol: " + reason;
      e.retryable = false;
      break;
    default: e.message = reason; break;
  }
  if (ex.body_too_large) {
    e.message = "response body exceeds the " + std::to_string(ex.max_body) + "-byte limit";
    e.retryable = false;
  }
  return e;
}

}  // namespace detail

/// @brief The default Transport, on libcurl.
///
/// Thread safety: one CurlTransport may be shared by any number of threads.
/// Each transfer takes an easy handle from a pool, and each pooled handle keeps
/// its connection open (keep-alive, HTTP/2 where offered over TLS), so
/// connections are reused across calls and threads. DNS and TLS sessions are
/// shared under locks; connections are not shared between handles, since
/// libcurl does not support sharing them between concurrent threads. Redirects are
/// never followed: a 3xx comes back as a response, so credentials never go to
/// another host.
///
/// Connection trust: a kept-alive connection that holds unread bytes or a
/// hang-up when a request is about to go out on it (a late 408, junk after a
/// body) is dropped before anything is sent and the request goes out on a new
/// one, so an answer always belongs to its request. A request with
/// HttpRequest::idempotent false is written at most once: libcurl's own resend
/// after a reused connection dies is refused, and any failure after it went
/// out says "(the request may or may not have been processed)". Status lines,
/// headers, trailers and 1xx answers together are capped at
/// HttpRequest::max_response_header_bytes.
class CurlTransport : public Transport {
 public:
  /// @brief A transport with these settings; libcurl's global state is set up on first use.
  explicit CurlTransport(CurlTransportOptions options = {}) : options_(std::move(options)) {
    detail::ensure_curl_global_init();
    share_ = curl_share_init();
    if (share_ != nullptr) {
      curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &CurlTransport::lock);
      curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &CurlTransport::unlock);
      curl_share_setopt(share_, CURLSHOPT_USERDATA, &locks_);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    }
  }
  ~CurlTransport() override {
    idle_.clear();  // easy handles go before the share they use
    engines_.clear();
    if (share_ != nullptr) curl_share_cleanup(share_);
  }
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  /// @brief The options this transport was built with.
  [[nodiscard]] const CurlTransportOptions& options() const noexcept { return options_; }

  [[nodiscard]] Result<HttpResponse> send(const HttpRequest& request) override {
    detail::CurlEasy handle = acquire();
    if (!handle) return make_error(ErrorKind::transport, "could not create a libcurl handle");
    detail::CurlExchange exchange;
    if (auto prepared = prepare(handle.get(), request, exchange); !prepared) {
      release(std::move(handle));
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
    auto result = finish(handle.get(), code, exchange);
    release(std::move(handle));
    return result;
  }

  /// @brief Sends a batch on the curl multi interface; results in input order.
  ///
  /// At most `max_concurrency` transfers run at once (0 counts as 1), over at
  /// most that many connections to one host (CURLMOPT_MAX_HOST_CONNECTIONS);
  /// where the server offers HTTP/2 the transfers share a connection as
  /// multiplexed streams. One failed transfer never fails the others.
  ///
  /// A batch runs on a pooled engine (a multi handle and its easy handles)
  /// that one batch uses at a time, so any number of threads may call this
  /// at once; the engine's connections stay open for the next batch. Batch
  /// transfers share DNS and TLS sessions, but not connections, with `send`.
  [[nodiscard]] std::vector<Result<HttpResponse>> send_all(std::span<const HttpRequest> requests,
                                                           std::size_t max_concurrency) override {
    std::size_t limit = std::min(std::max<std::size_t>(max_concurrency, 1), requests.size());
    if (limit <= 1) return Transport::send_all(requests, 1);  // one at a time needs no multi handle
    std::unique_ptr<detail::CurlBatchEngine> engine = take_engine(limit);
    if (!engine) return Transport::send_all(requests, 1);
    limit = std::min(limit, engine->slots.size());
    CURLM* multi = engine->multi.get();
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(limit));
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(limit));  // idle ones kept for the next batch

    std::vector<Result<HttpResponse>> out(requests.size());
    std::size_t next = 0;
    std::size_t active = 0;
    // Starts the next unsent request on `slot`; false when none is left.
    auto start = [&](detail::CurlBatchSlot& slot) {
      while (next < requests.size()) {
        const std::size_t i = next++;
        CURL* h = slot.handle.get();
        slot.exchange = detail::CurlExchange{};
        slot.exchange.peers = &engine->slots;
        slot.index = i;
        if (auto prepared = prepare(h, requests[i], slot.exchange); !prepared) {
          out[i] = std::unexpected(std::move(prepared.error()));
          continue;
        }
        // Wait for a multiplexable connection rather than open another one, but
        // only where HTTP/2 can be offered (https, ALPN): over plain http a
        // waiting transfer would only be held up.
        curl_easy_setopt(h, CURLOPT_PIPEWAIT, requests[i].url.starts_with("https:") ? 1L : 0L);
        if (curl_multi_add_handle(multi, h) != CURLM_OK) {
          out[i] = finish(h, CURLE_FAILED_INIT, slot.exchange);
          continue;
        }
        slot.busy = true;
        ++active;
        return true;
      }
      return false;
    };
    for (std::size_t s = 0; s < limit; ++s) {
      if (!start(*engine->slots[s])) break;
    }
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
        auto& slot = *static_cast<detail::CurlBatchSlot*>(owner);
        if (code == CURLE_ABORTED_BY_CALLBACK && slot.exchange.stale_connection) {
          // Refused a stale connection before sending anything: once more, on a new one.
          slot.exchange.stale_connection = false;
          slot.exchange.error[0] = '\0';
          curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
          if (curl_multi_add_handle(multi, h) == CURLM_OK) continue;  // still busy
        }
        slot.busy = false;
        --active;
        out[slot.index] = finish(h, code, slot.exchange);
        start(slot);
      }
      // Sockets and libcurl's own timers wake the poll; 100 ms bounds any wake-up it misses.
      if (mc == CURLM_OK && active > 0) mc = curl_multi_poll(multi, nullptr, 0, 100, nullptr);
      if (mc != CURLM_OK) {  // the multi handle itself failed: fail what is left, never spin
        const std::string reason = std::string("curl multi: ") + curl_multi_strerror(mc);
        for (auto& slot : engine->slots) {
          if (!slot->busy) continue;
          curl_multi_remove_handle(multi, slot->handle.get());
          (void)finish(slot->handle.get(), CURLE_FAILED_INIT, slot->exchange);
          slot->busy = false;
          out[slot->index] = make_error(ErrorKind::transport, reason);
        }
        for (; next < requests.size(); ++next) out[next] = make_error(ErrorKind::transport, reason);
        active = 0;
        return out;  // the engine is dropped, not pooled
      }
    }
    return_engine(std::move(engine));
    return out;
  }

 protected:
  /// Sets every per-request option on `h`; options are set in full each time so
  /// a pooled handle carries nothing over from its last request.
  [[nodiscard]] Result<void> prepare(CURL* h, const HttpRequest& request, detail::CurlExchange& ex) const {
    ex.max_body = request.max_response_bytes;
    ex.max_header = request.max_response_header_bytes;
    ex.idempotent = request.idempotent;
    ex.handle = h;
    ex.sockets = &sockets_;
    curl_slist* list = nullptr;
    std::string line;  // one buffer for every header line
    line.reserve(128);
    for (const auto& [name, value] : request.headers) {
      line.assign(name).append(value.empty() ? ";" : ": ").append(value);
      curl_slist* next = curl_slist_append(list, line.c_str());
      if (next == nullptr) {
        curl_slist_free_all(list);
        return make_error(ErrorKind::transport, "out of memory building headers");
      }
      list = next;
    }
    if (!request.body.empty()) {
      if (curl_slist* next = curl_slist_append(list, "Expect:"); next != nullptr) list = next;
    }
    ex.request_headers.reset(list);

    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    // Only https:// goes through a proxy. Plain http:// (the loopback opt-in),
    // or a URL without a scheme that libcurl would take as http, never does:
    // "" turns off the environment's http_proxy / ALL_PROXY too, since the
    // proxy would see the credential headers in clear. https://: the explicit
    // proxy, or (null) libcurl's environment variables.
    const bool tls = request.url.size() >= 6 && detail::iequals(std::string_view(request.url).substr(0, 6), "https:");
    curl_easy_setopt(h, CURLOPT_PROXY, !tls ? "" : (options_.proxy.empty() ? nullptr : options_.proxy.c_str()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, ex.request_headers.get());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ex.error.data());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &detail::curl_write_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &detail::curl_write_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
    curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, &detail::curl_before_send);
    curl_easy_setopt(h, CURLOPT_PREREQDATA, &ex);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, &detail::CurlSocketRegistry::open);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &sockets_);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, &detail::CurlSocketRegistry::close);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, &sockets_);
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 0L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(request.max_response_bytes));

    if (request.method == "GET" && request.body.empty()) {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, nullptr);
    } else if (request.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, nullptr);
    } else if (request.body.empty() && request.method != "POST" && request.method != "PUT" &&
               request.method != "PATCH") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    } else {
      // A pooled handle may still carry NOBODY from a HEAD; clear it first, or
      // the body and Content-Length are dropped and no answer body is read.
      curl_easy_setopt(h, CURLOPT_NOBODY, 0L);
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    return {};
  }

  /// @brief The response (or transport error) of a finished transfer on handle `h`.
  [[nodiscard]] static Result<HttpResponse> finish(CURL* h, CURLcode code, detail::CurlExchange& ex) {
    // Drop pointers into `ex`, which dies when the caller returns.
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
    curl_easy_setopt(h, CURLOPT_PREREQDATA, nullptr);
    if (code != CURLE_OK || !ex.headers_complete) {
      ApiError e = code != CURLE_OK
                       ? detail::curl_error(code, ex, h)
                       : make_error(ErrorKind::transport, "connection closed before the response headers were complete")
                             .error();
      if (ex.headers_too_large) {
        e.message = "response headers exceed the " + std::to_string(ex.max_header) + "-byte limit";
        e.retryable = false;
      } else if (code == CURLE_OUT_OF_MEMORY && !ex.headers_complete) {
        // libcurl buffers one header line up to CURL_MAX_HTTP_HEADER, then fails "out of memory".
        e.message = "a response header line exceeds libcurl's " + std::to_string(CURL_MAX_HTTP_HEADER) + "-byte limit";
        e.retryable = false;
      } else if (code == CURLE_RECV_ERROR && std::string_view(ex.error.data()).find("in chunked-encoding") !=
                                                 std::string_view::npos) {
        // Likewise one trailer line (its own smaller buffer): "Out of memory in chunked-encoding".
        e.message = "a response trailer line exceeds libcurl's limit";
        e.retryable = false;
      }
      if (ex.replay_refused) e.message = "connection lost before a response; not sent again";
      if (!ex.idempotent && ex.sends > 0) {  // it went out: another attempt could do it twice
        e.message += " (the request may or may not have been processed)";
        e.retryable = false;
      }
      return std::unexpected(std::move(e));
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    ex.response.status = static_cast<int>(status);
    return std::move(ex.response);
  }

  /// A pooled handle, or a new one with the options that never change.
  [[nodiscard]] detail::CurlEasy acquire() {
    {
      const std::lock_guard lock(pool_mutex_);
      if (!idle_.empty()) {
        detail::CurlEasy h = std::move(idle_.back());
        idle_.pop_back();
        return h;
      }
    }
    detail::CurlEasy h(curl_easy_init());
    if (!h) return h;
    CURL* e = h.get();
    if (share_ != nullptr) curl_easy_setopt(e, CURLOPT_SHARE, share_);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for DNS timeouts: safe in threads
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, options_.allow_http ? "https,http" : "https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    // TLS 1.2 at least, whatever the system's OpenSSL policy would allow.
    curl_easy_setopt(e, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
    // An https:// proxy: verified (system store) and held to the same floor.
    curl_easy_setopt(e, CURLOPT_PROXY_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_PROXY_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_PROXY_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
    // Through a proxy, only ever a CONNECT tunnel: the proxy never sees a
    // request line or our headers, and its CONNECT answer is not the response.
    curl_easy_setopt(e, CURLOPT_HTTPPROXYTUNNEL, 1L);
    curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    if (!options_.ca_bundle.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_bundle.c_str());
    return h;
  }

  /// @brief Returns an easy handle to the pool for reuse (its connection stays open).
  void release(detail::CurlEasy handle) {
    {
      const std::lock_guard lock(pool_mutex_);
      if (idle_.size() < static_cast<std::size_t>(std::max(options_.max_connections, 1L))) {
        idle_.push_back(std::move(handle));
        return;
      }
    }
    // Over the cap: `handle` is cleaned up here, outside the lock, closing its connection.
  }

 private:
  using LockArray = std::array<std::mutex, CURL_LOCK_DATA_LAST>;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) noexcept {
    (*static_cast<LockArray*>(user))[static_cast<std::size_t>(data)].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) noexcept {
    (*static_cast<LockArray*>(user))[static_cast<std::size_t>(data)].unlock();
  }

  CurlTransportOptions options_;
  /// Sockets of every connection this transport's handles have open; libcurl's
  /// callbacks update it from const prepare()d handles, hence mutable.
  mutable detail::CurlSocketRegistry sockets_;
  LockArray locks_;
  CURLSH* share_ = nullptr;
  std::mutex pool_mutex_;
  std::vector<detail::CurlEasy> idle_;
  std::mutex engine_mutex_;
  std::vector<std::unique_ptr<detail::CurlBatchEngine>> engines_;

  /// An idle batch engine (or a new one) with at least `slots` easy handles;
  /// null when libcurl cannot make one.
  [[nodiscard]] std::unique_ptr<detail::CurlBatchEngine> take_engine(std::size_t slots) {
    std::unique_ptr<detail::CurlBatchEngine> engine;
    {
      const std::lock_guard lock(engine_mutex_);
      if (!engines_.empty()) {
        engine = std::move(engines_.back());
        engines_.pop_back();
      }
    }
    if (!engine) {
      engine = std::make_unique<detail::CurlBatchEngine>();
      engine->multi.reset(curl_multi_init());
      if (!engine->multi) return nullptr;
      curl_multi_setopt(engine->multi.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    }
    while (engine->slots.size() < slots) {
      detail::CurlEasy h = acquire();
      if (!h) return engine->slots.size() >= 2 ? std::move(engine) : nullptr;
      auto slot = std::make_unique<detail::CurlBatchSlot>();
      curl_easy_setopt(h.get(), CURLOPT_PRIVATE, static_cast<void*>(slot.get()));
      slot->handle = std::move(h);
      engine->slots.push_back(std::move(slot));
    }
    return engine;
  }

  void return_engine(std::unique_ptr<detail::CurlBatchEngine> engine) {
    const std::lock_guard lock(engine_mutex_);
    engines_.push_back(std::move(engine));
  }
};

}  // namespace studentsvc

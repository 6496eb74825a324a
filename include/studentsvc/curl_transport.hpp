#pragma once
/// @file curl_transport.hpp
/// @brief CurlTransport, the default Transport on libcurl. The only header that
/// includes <curl/curl.h>.

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc {

/// @brief Settings fixed for the life of a CurlTransport.
struct CurlTransportOptions {
  /// PEM file of trusted CAs; empty: the system's store. Peer and host
  /// verification are always on; there is no switch to turn them off.
  std::string ca_bundle;
  /// Explicit proxy URL; empty: libcurl's environment variables (`https_proxy`, `no_proxy`, ...).
  std::string proxy;
  /// Permits `http://` URLs. The Client sets it only with the loopback opt-in
  /// and has already refused non-loopback hosts.
  bool allow_http = false;
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

struct CurlSlistDeleter {
  void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};
using CurlSlist = std::unique_ptr<curl_slist, CurlSlistDeleter>;

/// What one transfer writes into, and the cap it enforces.
struct CurlExchange {
  HttpResponse response;
  std::size_t max_body = 0;
  bool body_too_large = false;
  CurlSlist request_headers;
  std::array<char, CURL_ERROR_SIZE> error{};
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
  std::string_view line(data, n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  try {
    if (line.starts_with("HTTP/")) {
      ex->response.headers.clear();  // a new status line: 1xx or a new response
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

/// The ApiError of a failed transfer: kind transport and libcurl's reason,
/// with the cause named first for the cases callers act on.
[[nodiscard]] inline ApiError curl_error(CURLcode code, const CurlExchange& ex) {
  ApiError e;
  e.kind = ErrorKind::transport;
  e.retryable = true;
  std::string reason = ex.error[0] != '\0' ? std::string(ex.error.data()) : std::string(curl_easy_strerror(code));
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      e.message = "TLS certificate verification failed: " + reason;
      e.retryable = false;
      break;
    case CURLE_SSL_CONNECT_ERROR: e.message = "TLS handshake failed: " + reason; break;
    case CURLE_OPERATION_TIMEDOUT: e.message = "timed out: " + reason; break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: e.message = "DNS lookup failed: " + reason; break;
    case CURLE_COULDNT_CONNECT: e.message = "connect failed: " + reason; break;
    case CURLE_GOT_NOTHING: e.message = "connection closed with no response: " + reason; break;
    case CURLE_PARTIAL_FILE: e.message = "connection closed mid-body: " + reason; break;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: e.message = "connection reset: " + reason; break;
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
/// Each transfer takes an easy handle from a pool; DNS, TLS sessions and the
/// connection cache are shared (with locks) so connections are reused across
/// calls and threads (keep-alive, HTTP/2 where offered over TLS). Redirects are
/// never followed: a 3xx comes back as a response, so credentials never go to
/// another host.
class CurlTransport : public Transport {
 public:
  explicit CurlTransport(CurlTransportOptions options = {}) : options_(std::move(options)) {
    detail::ensure_curl_global_init();
    share_ = curl_share_init();
    if (share_ != nullptr) {
      curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &CurlTransport::lock);
      curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &CurlTransport::unlock);
      curl_share_setopt(share_, CURLSHOPT_USERDATA, &locks_);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    }
  }
  ~CurlTransport() override {
    idle_.clear();  // easy handles go before the share they use
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
    const CURLcode code = curl_easy_perform(handle.get());
    auto result = finish(handle.get(), code, exchange);
    release(std::move(handle));
    return result;
  }

 protected:
  /// Sets every per-request option on `h`; options are set in full each time so
  /// a pooled handle carries nothing over from its last request.
  [[nodiscard]] Result<void> prepare(CURL* h, const HttpRequest& request, detail::CurlExchange& ex) const {
    ex.max_body = request.max_response_bytes;
    curl_slist* list = nullptr;
    for (const auto& [name, value] : request.headers) {
      const std::string line = value.empty() ? name + ";" : name + ": " + value;
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
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, ex.request_headers.get());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ex.error.data());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &detail::curl_write_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &detail::curl_write_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
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
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    return {};
  }

  [[nodiscard]] static Result<HttpResponse> finish(CURL* h, CURLcode code, detail::CurlExchange& ex) {
    // Drop pointers into `ex`, which dies when the caller returns.
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
    if (code != CURLE_OK) return std::unexpected(detail::curl_error(code, ex));
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
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    if (!options_.ca_bundle.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_bundle.c_str());
    if (!options_.proxy.empty()) curl_easy_setopt(e, CURLOPT_PROXY, options_.proxy.c_str());
    return h;
  }

  void release(detail::CurlEasy handle) {
    const std::lock_guard lock(pool_mutex_);
    idle_.push_back(std::move(handle));
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
  LockArray locks_;
  CURLSH* share_ = nullptr;
  std::mutex pool_mutex_;
  std::vector<detail::CurlEasy> idle_;
};

}  // namespace studentsvc

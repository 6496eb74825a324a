#pragma once
/// @file detail/curl/handle_pool.hpp
/// @brief CurlHandlePool: idle easy handles (each keeping its connection) for
/// reuse across calls and threads, and the DNS/TLS-session share they all use.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <algorithm>
#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/detail/curl/connection_trust.hpp>
#include <studentsvc/detail/curl/exchange.hpp>
#include <studentsvc/detail/curl/handles.hpp>
#include <studentsvc/detail/curl/sockets.hpp>
#include <studentsvc/tls.hpp>

namespace studentsvc::detail {

/// The options every handle of a pool is made with (from CurlTransportOptions).
struct CurlHandleSettings {
  std::string ca_bundle;
  bool allow_http = false;
  long max_idle = 64;  ///< Idle handles kept; past it a returned handle is closed.
  std::string ca_pem{};  ///< CA text (CURLOPT_CAINFO_BLOB); overrides ca_bundle.
  std::optional<ClientCertificate> client_certificate{};  ///< Mutual TLS (CURLOPT_SSLCERT, SSLKEY, KEYPASSWD).
  std::string pinned_public_key{};                      ///< CURLOPT_PINNEDPUBLICKEY.
  /// Where the handles' sockets are recorded (CURLOPT_OPENSOCKETDATA); outlives the pool.
  CurlSocketRegistry* sockets = nullptr;
};

/// The per-request options curl_prepare last set on a handle: a request sets
/// only those that differ (most repeat from call to call, and each setopt costs).
struct CurlAppliedOptions {
  enum class Proxy { unknown, none, configured };
  enum class Method { unknown, get, other };
  Proxy proxy = Proxy::unknown;
  Method method = Method::unknown;
  long connect_timeout_ms = -1;
  long timeout_ms = -1;
  curl_off_t max_file_size = -1;
  long pipewait = -1;
};

/// A pooled easy handle and what was last set on it.
struct PooledEasy {
  CurlEasy easy;
  CurlAppliedOptions applied{};

  [[nodiscard]] CURL* get() const noexcept { return easy.get(); }
  explicit operator bool() const noexcept { return static_cast<bool>(easy); }
};

/// Thread-safe pool of easy handles with the options that never change.
class CurlHandlePool {
 public:
  explicit CurlHandlePool(CurlHandleSettings settings) : settings_(std::move(settings)) {
    ensure_curl_global_init();
    share_ = curl_share_init();
    if (share_ != nullptr) {
      curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &CurlHandlePool::lock);
      curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &CurlHandlePool::unlock);
      curl_share_setopt(share_, CURLSHOPT_USERDATA, &locks_);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    }
  }
  ~CurlHandlePool() {
    idle_.clear();  // easy handles go before the share they use
    if (share_ != nullptr) curl_share_cleanup(share_);
  }
  CurlHandlePool(const CurlHandlePool&) = delete;
  CurlHandlePool& operator=(const CurlHandlePool&) = delete;

  /// A pooled handle, or a new one with the options that never change; null when libcurl cannot make one.
  [[nodiscard]] PooledEasy acquire() {
    {
      const std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        PooledEasy h = std::move(idle_.back());
        idle_.pop_back();
        return h;
      }
    }
    PooledEasy h{CurlEasy(curl_easy_init())};
    if (!h) return h;
    CURL* e = h.get();
    if (share_ != nullptr) curl_easy_setopt(e, CURLOPT_SHARE, share_);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM for DNS timeouts: safe in threads
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, settings_.allow_http ? "https,http" : "https");
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
    if (!settings_.ca_bundle.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, settings_.ca_bundle.c_str());
    set_tls_identity(e);
    // The callbacks; their data (the transfer's CurlExchange) is set per request.
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &curl_write_body);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &curl_write_header);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, &curl_before_send);
    if (settings_.sockets != nullptr) {
      curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &CurlSocketRegistry::open);
      curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, settings_.sockets);
      curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, &CurlSocketRegistry::close);
      curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, settings_.sockets);
    }
    return h;
  }

  /// Returns an easy handle for reuse (its connection stays open).
  void release(PooledEasy handle) {
    {
      const std::lock_guard lock(mutex_);
      if (idle_.size() < static_cast<std::size_t>(std::max(settings_.max_idle, 1L))) {
        idle_.push_back(std::move(handle));
        return;
      }
    }
    // Over the cap: `handle` is cleaned up here, outside the lock, closing its connection.
  }

 private:
  /// The server-side TLS settings every handle gets (never the proxy's): CA
  /// text, client certificate and key, pinned key. libcurl copies each value.
  void set_tls_identity(CURL* e) const {
    if (!settings_.ca_pem.empty()) {
      curl_blob blob{const_cast<char*>(settings_.ca_pem.data()), settings_.ca_pem.size(),  // NOLINT: copied, not written
                     CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (const auto& c = settings_.client_certificate) {
      curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file.c_str());
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file.c_str());
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
      // A Secret holds a std::string, so its bytes end in a NUL; the Client refused a NUL inside.
      if (!c->key_password.empty()) curl_easy_setopt(e, CURLOPT_KEYPASSWD, c->key_password.reveal().data());
    }
    if (!settings_.pinned_public_key.empty()) {
      curl_easy_setopt(e, CURLOPT_PINNEDPUBLICKEY, settings_.pinned_public_key.c_str());
    }
  }

  using LockArray = std::array<std::mutex, CURL_LOCK_DATA_LAST>;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) noexcept {
    (*static_cast<LockArray*>(user))[static_cast<std::size_t>(data)].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) noexcept {
    (*static_cast<LockArray*>(user))[static_cast<std::size_t>(data)].unlock();
  }

  CurlHandleSettings settings_;
  LockArray locks_;
  CURLSH* share_ = nullptr;
  std::mutex mutex_;
  std::vector<PooledEasy> idle_;
};

}  // namespace studentsvc::detail

#endif  // STUDENTSVC_WITH_CURL

#pragma once
/// @file curl_transport.hpp
/// @brief CurlTransport, the default Transport on libcurl. Does not include
/// <curl/curl.h>: the libcurl side lives in detail/curl/.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <studentsvc/detail/config.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/tls.hpp>

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
  /// Transfers in flight at once on the transport's event loop (later ones
  /// queue), and idle connections kept open for reuse. Every form of call
  /// (blocking, asynchronous, batches) shares this one pool.
  long max_connections = 64;
  /// The trusted CAs as PEM text (CURLOPT_CAINFO_BLOB), in place of `ca_bundle`
  /// and the system's bundle file; empty: none.
  std::string ca_pem{};
  /// A certificate and key presented to servers that ask for one (mutual TLS);
  /// none by default. Not presented to an https:// proxy.
  std::optional<ClientCertificate> client_certificate{};
  /// `sha256//<base64>[;sha256//<base64>...]`: the server's public key must
  /// match one (CURLOPT_PINNEDPUBLICKEY); empty: no pin. A Client checks the
  /// form first; set here directly, it goes to libcurl as given.
  std::string pinned_public_key{};
};

/// @brief The settings a Client gives its default CurlTransport: the CA bundle
/// or text, proxy, loopback opt-in, client certificate and pin of `options`.
/// For a CurlTransport of your own that keeps them (say, with more connections).
[[nodiscard]] inline CurlTransportOptions curl_transport_options(const ClientOptions& options) {
  CurlTransportOptions curl;
  curl.ca_bundle = options.ca_bundle;
  curl.proxy = options.proxy;
  curl.allow_http = options.allow_insecure_loopback;
  curl.ca_pem = options.ca_pem;
  curl.client_certificate = options.client_certificate;
  curl.pinned_public_key = options.pinned_public_key;
  return curl;
}

namespace detail {
struct CurlTransportState;  // the handle pool, event loop and socket registry (detail/curl/transport-inl.hpp)
}  // namespace detail

/// @brief The default Transport, on libcurl.
///
/// Thread safety: one CurlTransport may be shared by any number of threads.
/// Every transfer, whether from `send`, `send_all` or `send_async`, runs on the
/// transport's one event thread (the curl multi interface), so all of them
/// share one connection pool: keep-alive, and HTTP/2 multiplexing where the
/// server offers it over TLS. Redirects are never followed: a 3xx comes back
/// as a response, so credentials never go to another host.
/// @sa docs/pipeline.md
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
  explicit CurlTransport(CurlTransportOptions options = {});
  // The virtual members are declared inline in header-only mode: a virtual not
  // inline here would be the class's key function, and every TU including this
  // header would then emit the vtable and every body it names.
  STUDENTSVC_INLINE ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  /// @brief The options this transport was built with.
  [[nodiscard]] const CurlTransportOptions& options() const noexcept;

  /// @brief Sends one request on the event loop and waits for its response.
  ///
  /// Inside a completion (on the event thread, which the loop cannot wait for
  /// there) it runs on a connection of its own instead.
  [[nodiscard]] STUDENTSVC_INLINE Result<HttpResponse> send(const HttpRequest& request) override;

  /// @brief Sends a batch on the event loop; results in input order.
  ///
  /// At most `max_concurrency` of its transfers run at once (0 counts as 1),
  /// on the connections every other call of this transport uses; where the
  /// server offers HTTP/2 they share a connection as multiplexed streams. One
  /// failed transfer never fails the others. Any number of threads may call
  /// this at once.
  [[nodiscard]] STUDENTSVC_INLINE std::vector<Result<HttpResponse>> send_all(std::span<const HttpRequest> requests,
                                                                             std::size_t max_concurrency) override;

  /// @brief Starts `request` on this transport's event thread and returns at
  /// once; `done` runs there, exactly once, with the outcome.
  ///
  /// One event thread per CurlTransport (started by the first asynchronous
  /// request or timer, stopped by the destructor) drives every asynchronous
  /// transfer on the curl multi interface, at most
  /// CurlTransportOptions::max_connections at once (later ones queue), with
  /// the same connection checks, caps and proxy rules as `send`. Keep `done`
  /// short and never block in it: every other transfer waits while it runs.
  /// A stop request on `stop` ends the transfer, queued or mid-body, as
  /// ErrorKind::cancelled. Destroying the transport cancels whatever is still
  /// in flight, runs those completions, then joins the thread.
  STUDENTSVC_INLINE void send_async(HttpRequest request, SendCompletion done, StopToken stop) override;

  /// @brief Calls `fn(true)` on the event thread once `delay` has passed, or
  /// `fn(false)` when `stop` or the transport's destruction comes first. No
  /// thread sleeps meanwhile.
  STUDENTSVC_INLINE void run_after(std::chrono::milliseconds delay, std::function<void(bool)> fn,
                                   StopToken stop) override;

 private:
  /// Shared with the completions this transport queued, which may run after it went.
  std::shared_ptr<detail::CurlTransportState> state_;
};

}  // namespace studentsvc

#if STUDENTSVC_HEADER_ONLY && STUDENTSVC_WITH_CURL
#include <studentsvc/detail/curl/transport-inl.hpp>
#endif

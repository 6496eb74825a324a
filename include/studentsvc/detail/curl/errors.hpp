#pragma once
/// @file detail/curl/errors.hpp
/// @brief What a finished libcurl transfer comes to: its response, or an
/// ApiError named by cause (CURLcode, caps, a proxy's failure, a refused resend).

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <string>
#include <string_view>
#include <utility>

#include <curl/curl.h>

#include <studentsvc/detail/curl/exchange.hpp>
#include <studentsvc/detail/request/url_userinfo.hpp>
#include <studentsvc/detail/text/wipe.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc::detail {

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

/// Which step failed, for ApiError::transport_failure, from libcurl's code and
/// CURLINFO_HTTP_CONNECTCODE (`connect_status`: a proxy's answer to CONNECT,
/// 0 when none came). A body cut at the size cap by the write callback (not by
/// CURLOPT_MAXFILESIZE) is CURLE_WRITE_ERROR here: the caller knows and says
/// `body_too_large` itself.
[[nodiscard]] constexpr TransportFailure transport_failure_of(CURLcode code, long connect_status = 0) noexcept {
  if (connect_status >= 300) return TransportFailure::proxy;
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return TransportFailure::name_resolution;
    case CURLE_COULDNT_CONNECT: return TransportFailure::connect;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_USE_SSL_FAILED: return TransportFailure::tls_handshake;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS: return TransportFailure::tls_certificate;
    case CURLE_OPERATION_TIMEDOUT: return TransportFailure::timeout;
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: return TransportFailure::connection_lost;
    case CURLE_PROXY: return TransportFailure::proxy;
    case CURLE_FILESIZE_EXCEEDED: return TransportFailure::body_too_large;
    default: return TransportFailure::unspecified;
  }
}

/// Whether libcurl's `reason` is the server's TLS alert about our client
/// certificate: none sent when it requires one (TLS 1.3 "certificate
/// required"), or one it does not accept ("bad certificate", "unknown ca",
/// "certificate unknown"). The same again on every attempt.
[[nodiscard]] inline bool client_certificate_refused(std::string_view reason) noexcept {
  for (const std::string_view alert : {"alert certificate required", "alert bad certificate", "alert unknown ca",
                                       "alert certificate unknown"}) {
    if (reason.find(alert) != std::string_view::npos) return true;
  }
  return false;
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
  e.transport_failure = transport_failure_of(code, connect_status);
  if (connect_status >= 300 || (code == CURLE_RECV_ERROR && reason.find("CONNECT") != std::string::npos)) {
    // "CONNECT tunnel failed, response 403", "Proxy CONNECT aborted"
    e.message = connect_status >= 300
                    ? "proxy refused the tunnel (status " + std::to_string(connect_status) + "): " + reason
                    : "proxy failed during the tunnel setup: " + reason;
    e.transport_failure = TransportFailure::proxy;
    e.retryable = connect_status == 0 || connect_status >= 500 || connect_status == 408 || connect_status == 429;
    return e;
  }
  switch (code) {
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      e.message = "TLS public key pin did not match: the server's key is none of pinned_public_key: " + reason;
      e.retryable = false;
      break;
    case CURLE_SSL_CERTPROBLEM:  // our own certificate or key: libcurl or OpenSSL could not load or use it
      e.message = "the client certificate or key could not be used (a wrong key password, or a key that does not "
                  "belong to the certificate?): " + reason;
      e.retryable = false;
      break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE: {
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
      if ((h != nullptr && curl_connect_failed_elsewhere(h, reason)) || reason.find("proxy") != std::string::npos) {
        e.message = "could not connect to the proxy: " + reason;
        e.transport_failure = TransportFailure::proxy;
      } else {
        e.message = "connect failed: " + reason;
      }
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
    // A URL libcurl cannot use (a host it cannot convert, a bad character):
    // every attempt would fail the same way, before anything is sent.
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
      e.message = "the URL cannot be used: " + reason;
      e.retryable = false;
      break;
    default: e.message = reason; break;
  }
  if (client_certificate_refused(reason)) {
    e.message = "the server refused the client certificate, or none was sent (it requires mutual TLS: see "
                "client_certificate): " + reason;
    e.retryable = false;
    e.transport_failure = TransportFailure::tls_certificate;
  }
  if (ex.body_too_large) {
    e.message = "response body exceeds the " + std::to_string(ex.max_body) + "-byte limit";
    e.retryable = false;
    e.transport_failure = TransportFailure::body_too_large;
  }
  return e;
}

/// The response (or transport error) of a finished transfer on handle `h`.
/// Drops the handle's pointers into `ex`, which dies when the caller returns.
[[nodiscard]] inline Result<HttpResponse> curl_transfer_result(CURL* h, CURLcode code, CurlExchange& ex) {
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(h, CURLOPT_PREREQDATA, nullptr);
  wipe_string(ex.header_text);  // the credentials' lines: the request is over
  ex.header_nodes.clear();
  if (code != CURLE_OK || !ex.headers_complete) {
    ApiError e = code != CURLE_OK
                     ? curl_error(code, ex, h)
                     : make_error(ErrorKind::transport, "connection closed before the response headers were complete")
                           .error();
    if (code == CURLE_OK) e.transport_failure = TransportFailure::connection_lost;
    if (ex.headers_too_large) {
      // An answer over a cap, like a body too large: the server's doing, the same again next time.
      e.message = "response headers exceed the " + std::to_string(ex.max_header) + "-byte limit";
      e.retryable = false;
      e.transport_failure = TransportFailure::body_too_large;
    } else if (code == CURLE_OUT_OF_MEMORY && !ex.headers_complete) {
      // libcurl buffers one header line up to CURL_MAX_HTTP_HEADER, then fails "out of memory".
      e.message = "a response header line exceeds libcurl's " + std::to_string(CURL_MAX_HTTP_HEADER) + "-byte limit";
      e.retryable = false;
    } else if (code == CURLE_RECV_ERROR &&
               std::string_view(ex.error.data()).find("in chunked-encoding") != std::string_view::npos) {
      // Likewise one trailer line (its own smaller buffer): "Out of memory in chunked-encoding".
      e.message = "a response trailer line exceeds libcurl's limit";
      e.retryable = false;
    }
    if (ex.replay_refused) {
      e.message = "connection lost before a response; not sent again";
      e.transport_failure = TransportFailure::connection_lost;
    }
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

}  // namespace studentsvc::detail

#endif  // STUDENTSVC_WITH_CURL

#pragma once
/// @file detail/curl/exchange.hpp
/// @brief CurlExchange, what one transfer writes into, and the libcurl
/// callbacks that fill it within the body and header caps.
/// @sa connection_trust.hpp for the check made before a request goes out.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/detail/curl/handles.hpp>
#include <studentsvc/detail/curl/sockets.hpp>
#include <studentsvc/detail/text/wipe.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc::detail {

class ConnectionsInUse;  // connection_trust.hpp

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
  /// In a batch: added to the multi handle and not yet finished.
  bool in_flight = false;
  CURL* handle = nullptr;
  CurlSocketRegistry* sockets = nullptr;
  /// The connections its engine's other transfers are on; null: none shared.
  ConnectionsInUse* connections = nullptr;
  /// The local port of the connection it went out on, held in `connections`
  /// (0: none) from its send till leave_connection.
  int port_in_use = 0;
  /// The request's header list (CURLOPT_HTTPHEADER): nodes pointing into `header_text`.
  std::vector<curl_slist> header_nodes;
  /// The header lines, credentials included: wiped once the transfer is
  /// over (curl_transfer_result), before it is reused, and on destruction.
  std::string header_text;
  std::array<char, CURL_ERROR_SIZE> error{};

  CurlExchange() = default;
  CurlExchange(const CurlExchange&) = delete;
  CurlExchange& operator=(const CurlExchange&) = delete;
  ~CurlExchange() { wipe_string(header_text); }
};

/// CURLOPT_WRITEFUNCTION: appends body bytes up to the body cap.
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

/// CURLOPT_HEADERFUNCTION: records the final response's header fields, within the header cap.
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
      if (ex->response.headers.empty()) ex->response.headers.reserve(8);  // one allocation for a typical answer's fields
      ex->response.headers.add(std::string(line.substr(0, colon)), std::string(value));
    }
  } catch (...) {
    return 0;
  }
  return n;
}

}  // namespace studentsvc::detail

#endif  // STUDENTSVC_WITH_CURL

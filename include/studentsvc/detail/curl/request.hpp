#pragma once
/// @file detail/curl/request.hpp
/// @brief Sets up a pooled easy handle for one HttpRequest: every per-request
/// option that differs from the handle's last request, so it carries nothing over.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <string>
#include <string_view>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/detail/text/ascii.hpp>
#include <studentsvc/detail/curl/connection_trust.hpp>
#include <studentsvc/detail/curl/exchange.hpp>
#include <studentsvc/detail/curl/handle_pool.hpp>
#include <studentsvc/detail/curl/sockets.hpp>
#include <studentsvc/detail/request/header_validation.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc::detail {

/// Sets `option` to `value` unless the handle's `last` value is already it.
template <class T>
void set_if_changed(CURL* h, CURLoption option, T& last, T value) {
  if (last == value) return;
  curl_easy_setopt(h, option, value);
  last = value;
}

/// Points `handle` at `request`, writing into `ex`; `proxy` is CurlTransportOptions::proxy.
/// The callbacks are the pool's (handle_pool.hpp); what repeats from the handle's last request is not set again.
[[nodiscard]] inline Result<void> curl_prepare(PooledEasy& handle, const HttpRequest& request, CurlExchange& ex,
                                               const std::string& proxy, CurlSocketRegistry& sockets) {
  CURL* h = handle.get();
  CurlAppliedOptions& last = handle.applied;
  ex.max_body = request.max_response_bytes;
  ex.max_header = request.max_response_header_bytes;
  ex.idempotent = request.idempotent;
  ex.handle = h;
  ex.sockets = &sockets;
  // The header list lives in the exchange: its lines in one buffer, reserved
  // up front so the nodes can point into it, and its nodes in one array
  // (libcurl only reads the list), instead of two allocations a line.
  std::size_t bytes = request.body.empty() ? 0 : sizeof("Expect:");
  for (const auto& [name, value] : request.headers) {
    // libcurl drops a header whose value is only spaces and tabs and HTTP
    // strips them around a value: what arrived would not be what was asked
    // for. (An empty value is sent as the empty-value form, `name;`, below.)
    if (!value.empty() && (is_header_blank(value.front()) || is_header_blank(value.back()))) {
      return make_error(ErrorKind::invalid_argument,
                        "header '" + name +
                            "' value is blank or starts or ends with a space or tab, which libcurl would drop or "
                            "strip; nothing was sent");
    }
    bytes += name.size() + value.size() + 3;  // ": " and NUL
  }
  try {
    wipe_string(ex.header_text);  // an earlier request's lines (a resend rebuilds them)
    ex.header_text.reserve(bytes);
    ex.header_nodes.clear();
    ex.header_nodes.reserve(request.headers.size() + 1);
    const auto add_line = [&](std::string_view name, std::string_view separator, std::string_view value) {
      if (!ex.header_nodes.empty()) ex.header_nodes.back().next = &ex.header_nodes.back() + 1;
      ex.header_nodes.push_back(curl_slist{ex.header_text.data() + ex.header_text.size(), nullptr});
      ex.header_text.append(name).append(separator).append(value).push_back('\0');
    };
    for (const auto& [name, value] : request.headers) add_line(name, value.empty() ? ";" : ": ", value);
    if (!request.body.empty()) add_line("Expect:", "", "");
  } catch (...) {
    return make_error(ErrorKind::transport, "out of memory building headers");
  }

  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  // Only https:// goes through a proxy. Plain http:// (the loopback opt-in),
  // or a URL without a scheme that libcurl would take as http, never does:
  // "" turns off the environment's http_proxy / ALL_PROXY too, since the
  // proxy would see the credential headers in clear. https://: the explicit
  // proxy, or (null) libcurl's environment variables.
  const bool tls = request.url.size() >= 6 && iequals(std::string_view(request.url).substr(0, 6), "https:");
  if (const auto use = tls ? CurlAppliedOptions::Proxy::configured : CurlAppliedOptions::Proxy::none;
      last.proxy != use) {
    curl_easy_setopt(h, CURLOPT_PROXY, !tls ? "" : (proxy.empty() ? nullptr : proxy.c_str()));
    last.proxy = use;  // `proxy` is the transport's, the same for every request on its handles
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, ex.header_nodes.empty() ? nullptr : ex.header_nodes.data());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ex.error.data());
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(h, CURLOPT_PREREQDATA, &ex);
  curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 0L);
  set_if_changed(h, CURLOPT_CONNECTTIMEOUT_MS, last.connect_timeout_ms, static_cast<long>(request.connect_timeout.count()));
  set_if_changed(h, CURLOPT_TIMEOUT_MS, last.timeout_ms, static_cast<long>(request.timeout.count()));
  set_if_changed(h, CURLOPT_MAXFILESIZE_LARGE, last.max_file_size, static_cast<curl_off_t>(request.max_response_bytes));

  if (request.method == "GET" && request.body.empty()) {
    if (last.method != CurlAppliedOptions::Method::get) {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);  // also clears NOBODY and a body of an earlier request
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, nullptr);
      last.method = CurlAppliedOptions::Method::get;
    }
    return {};
  }
  last.method = CurlAppliedOptions::Method::other;
  if (request.method == "HEAD") {
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

}  // namespace studentsvc::detail

#endif  // STUDENTSVC_WITH_CURL

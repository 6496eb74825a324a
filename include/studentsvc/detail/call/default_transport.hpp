#pragma once
/// @file detail/call/default_transport.hpp
/// @brief The transport a Client uses when ClientOptions::transport is empty,
/// made here so that client.hpp needs nothing of libcurl.

#include <memory>
#include <utility>

#include <studentsvc/detail/config.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/options.hpp>

#if STUDENTSVC_WITH_CURL
#include <studentsvc/curl_transport.hpp>
#endif

namespace studentsvc::detail {

/// A CurlTransport with the client's CA bundle, proxy, loopback opt-in and
/// TLS settings (CA text, client certificate, pin); null without curl
/// (STUDENTSVC_WITH_CURL=0), which the Client reports as "no transport configured".
[[nodiscard]] inline std::shared_ptr<Transport> make_default_transport(const ClientOptions& options) {
#if STUDENTSVC_WITH_CURL
  return std::make_shared<CurlTransport>(curl_transport_options(options));
#else
  (void)options;
  return nullptr;
#endif
}

}  // namespace studentsvc::detail

#pragma once
/// @file detail/call/default_transport.hpp
/// @brief The transport a Client uses when ClientOptions::transport is empty,
/// made here so that client.hpp needs nothing of libcurl.

#include <memory>

#include <studentsvc/detail/config.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/options.hpp>

#if STUDENTSVC_WITH_CURL
#include <studentsvc/curl_transport.hpp>
#endif

namespace studentsvc::detail {

/// A CurlTransport with the client's CA bundle, proxy and loopback opt-in;
/// null without curl (STUDENTSVC_WITH_CURL=0), which the Client reports as
/// "no transport configured".
[[nodiscard]] inline std::shared_ptr<Transport> make_default_transport(const ClientOptions& options) {
#if STUDENTSVC_WITH_CURL
  return std::make_shared<CurlTransport>(
      CurlTransportOptions{options.ca_bundle, options.proxy, options.allow_insecure_loopback});
#else
  (void)options;
  return nullptr;
#endif
}

}  // namespace studentsvc::detail

#pragma once
// Options for the SDK against a test's own server on 127.0.0.1 over plain
// HTTP (RawServer and the like), and the student body such servers answer.

#include <string>
#include <utility>

#include <studentsvc/curl_transport.hpp>
#include <studentsvc/options.hpp>

#include "raw_server.hpp"

namespace studentsvc::test {

/// A StudentMinimal's body (perm 1234567), as the service answers it.
inline constexpr const char* student_body =
    R"({"perm":"1234567","firstName":"Ana","lastName":"N","suffix":"","email":"a@example.edu"})";

/// A Client's options for `server` over plain HTTP, with one attempt per call
/// (a fault comes back as it happened; retries are what retry tests check).
[[nodiscard]] inline ClientOptions raw_options(const RawServer& server, std::string api_key = "raw-test-key") {
  ClientOptions o;
  o.base_url = server.base_url();
  o.auth.api_key = std::move(api_key);
  o.allow_insecure_loopback = true;
  o.retry = RetryPolicy::none();
  return o;
}

/// A CurlTransport's options that allow plain HTTP (to 127.0.0.1).
[[nodiscard]] inline CurlTransportOptions plain_http() {
  CurlTransportOptions o;
  o.allow_http = true;
  return o;
}

}  // namespace studentsvc::test

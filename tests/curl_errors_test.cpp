// curl_errors.hpp: what a failed libcurl transfer comes to. The code table of
// ApiError::transport_failure, then each failure produced for real through
// CurlTransport against servers on 127.0.0.1 the test starts (and one name
// under .invalid, RFC 6761, that no resolver answers), and the batch
// fail-fast decision each one drives.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>

#include <curl/curl.h>

#include <studentsvc/detail/curl/errors.hpp>
#include <studentsvc/detail/batch/fail_fast.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/loopback.hpp"
#include "support/raw_server.hpp"
#include "support/test_pki.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace curl_errors_test {

using namespace std::chrono_literals;
using studentsvc::ErrorKind;
using studentsvc::HttpRequest;
using studentsvc::TransportFailure;
using studentsvc::detail::FailFastReason;
using studentsvc::detail::fail_fast_reason;
using studentsvc::test::RawServer;
using studentsvc::test::plain_http;

namespace {

studentsvc::ApiError failure_of(studentsvc::CurlTransport& transport, const HttpRequest& request) {
  auto r = transport.send(request);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind == ErrorKind::transport);
  return r.error();
}

HttpRequest get(std::string url) {
  HttpRequest r;
  r.url = std::move(url);
  r.connect_timeout = 3s;
  r.timeout = 5s;
  return r;
}

}  // namespace

TEST_CASE("transport_failure_of: libcurl's codes name the failed step", "[curl_errors][transport_failure]") {
  using studentsvc::TransportFailure;
  using studentsvc::detail::transport_failure_of;
  CHECK(transport_failure_of(CURLE_COULDNT_RESOLVE_HOST) == TransportFailure::name_resolution);
  CHECK(transport_failure_of(CURLE_COULDNT_RESOLVE_PROXY) == TransportFailure::name_resolution);
  CHECK(transport_failure_of(CURLE_COULDNT_CONNECT) == TransportFailure::connect);
  CHECK(transport_failure_of(CURLE_SSL_CONNECT_ERROR) == TransportFailure::tls_handshake);
  CHECK(transport_failure_of(CURLE_PEER_FAILED_VERIFICATION) == TransportFailure::tls_certificate);
  CHECK(transport_failure_of(CURLE_SSL_CACERT_BADFILE) == TransportFailure::tls_certificate);
  CHECK(transport_failure_of(CURLE_SSL_CERTPROBLEM) == TransportFailure::tls_certificate);
  CHECK(transport_failure_of(CURLE_OPERATION_TIMEDOUT) == TransportFailure::timeout);
  CHECK(transport_failure_of(CURLE_GOT_NOTHING) == TransportFailure::connection_lost);
  CHECK(transport_failure_of(CURLE_PARTIAL_FILE) == TransportFailure::connection_lost);
  CHECK(transport_failure_of(CURLE_RECV_ERROR) == TransportFailure::connection_lost);
  CHECK(transport_failure_of(CURLE_SEND_ERROR) == TransportFailure::connection_lost);
  CHECK(transport_failure_of(CURLE_PROXY) == TransportFailure::proxy);
  CHECK(transport_failure_of(CURLE_RECV_ERROR, 403) == TransportFailure::proxy);  // CONNECT refused
  CHECK(transport_failure_of(CURLE_FILESIZE_EXCEEDED) == TransportFailure::body_too_large);
  CHECK(transport_failure_of(CURLE_OK) == TransportFailure::unspecified);
  CHECK(transport_failure_of(CURLE_WRITE_ERROR) == TransportFailure::unspecified);
  CHECK(transport_failure_of(CURLE_ABORTED_BY_CALLBACK) == TransportFailure::unspecified);
  static_assert(transport_failure_of(CURLE_COULDNT_RESOLVE_HOST) == TransportFailure::name_resolution);
}

TEST_CASE("transport_failure on real failures, and the fail-fast each one drives", "[curl_errors][transport_failure]") {
  SECTION("a host that does not resolve: name_resolution, stops a batch") {
    studentsvc::CurlTransport transport;
    const auto e = failure_of(transport, get("https://studentsvc-test.invalid/students/v2/students/1234567"));
    CHECK(e.transport_failure == TransportFailure::name_resolution);
    CHECK(fail_fast_reason(e) == FailFastReason::name_resolution);
  }
  SECTION("a refused connect: connect, a batch goes on (a restarting service)") {
    studentsvc::CurlTransport transport(plain_http());
    const studentsvc::test::RefusingPort refusing;
    const auto e = failure_of(transport, get("http://127.0.0.1:" + std::to_string(refusing.port()) + "/x"));
    CHECK(e.transport_failure == TransportFailure::connect);
    CHECK(fail_fast_reason(e) == FailFastReason::none);
  }
  SECTION("no answer in time: timeout") {
    RawServer server([&](int fd, int) {
      (void)server.next_request(fd);
      server.sleep_unless_stopped(10s);
    });
    studentsvc::CurlTransport transport(plain_http());
    auto request = get(server.base_url() + "/x");
    request.timeout = 200ms;
    const auto e = failure_of(transport, request);
    CHECK(e.transport_failure == TransportFailure::timeout);
    CHECK(fail_fast_reason(e) == FailFastReason::none);
  }
  SECTION("closed mid-body, or before any answer: connection_lost") {
    RawServer server([&](int fd, int n) {
      (void)server.next_request(fd);
      if (n == 0) RawServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"perm\"");
    });
    studentsvc::CurlTransport transport(plain_http());
    CHECK(failure_of(transport, get(server.base_url() + "/a")).transport_failure == TransportFailure::connection_lost);
    CHECK(failure_of(transport, get(server.base_url() + "/b")).transport_failure == TransportFailure::connection_lost);
  }
  SECTION("a body or headers over the cap: body_too_large, not retryable") {
    RawServer server([&](int fd, int n) {
      (void)server.next_request(fd);
      if (n == 0) {
        RawServer::write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'x'));
      } else {
        std::string head = "HTTP/1.1 200 OK\r\n";
        for (int i = 0; i < 200; ++i) head += "X-Filler-" + std::to_string(i) + ": " + std::string(100, 'y') + "\r\n";
        RawServer::write_all(fd, head + "Content-Length: 2\r\n\r\n{}");
      }
    });
    studentsvc::CurlTransport transport(plain_http());
    auto body = get(server.base_url() + "/body");
    body.max_response_bytes = 1000;
    const auto b = failure_of(transport, body);
    CHECK(b.transport_failure == TransportFailure::body_too_large);
    CHECK_FALSE(b.retryable);
    auto headers = get(server.base_url() + "/headers");
    headers.max_response_header_bytes = 4096;
    const auto h = failure_of(transport, headers);
    CHECK(h.transport_failure == TransportFailure::body_too_large);
    CHECK_FALSE(h.retryable);
  }
  SECTION("a proxy that refuses the CONNECT: proxy") {
    RawServer proxy([&](int fd, int) {
      const auto request = proxy.next_request(fd);
      if (request.starts_with("CONNECT ")) {
        RawServer::write_all(fd, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
      }
    });
    studentsvc::CurlTransportOptions options;
    options.proxy = proxy.base_url();
    studentsvc::CurlTransport transport(options);
    const auto e = failure_of(transport, get("https://registrar.example.edu/students/v2/students/1234567"));
    CHECK(e.transport_failure == TransportFailure::proxy);
    CHECK(fail_fast_reason(e) == FailFastReason::none);
  }
  SECTION("a certificate the client does not trust: tls_certificate, stops a batch") {
    const studentsvc::test::TestPki pki;
    studentsvc::testing::MockServer server({}, pki.self_cert.string(), pki.self_key.string());
    REQUIRE(server.running());
    studentsvc::CurlTransportOptions options;
    options.ca_bundle = pki.ca_cert.string();  // not the self-signed certificate's issuer
    studentsvc::CurlTransport transport(options);
    const auto e = failure_of(transport, get(server.base_url() + "/students/v2/students/1234567"));
    CHECK(e.transport_failure == TransportFailure::tls_certificate);
    CHECK_FALSE(e.retryable);
    CHECK(fail_fast_reason(e) == FailFastReason::tls);
  }
}

TEST_CASE("fail-fast on a TLS error: a streamed batch stops after the first answers", "[curl_errors][stream]") {
  const studentsvc::test::TestPki pki;
  studentsvc::testing::MockServer server({}, pki.self_cert.string(), pki.self_key.string());
  REQUIRE(server.running());
  auto options = server.client_options();
  options.ca_bundle = pki.ca_cert.string();
  const studentsvc::Client client(options);
  const std::vector<std::string> perms(500, "1234567");
  std::size_t cancelled = 0;
  studentsvc::StreamOptions stream;
  stream.max_concurrency = 4;
  const auto summary = client.for_each_student(
      perms,
      [&](std::size_t, std::string_view, studentsvc::Result<studentsvc::StudentExtended> r) {
        REQUIRE_FALSE(r.has_value());
        if (r.error().kind == ErrorKind::cancelled) ++cancelled;
      },
      stream);
  REQUIRE(summary.stopped_by.has_value());
  CHECK(summary.stopped_by->transport_failure == TransportFailure::tls_certificate);
  CHECK(summary.sent <= 4 + 3);
  CHECK(cancelled + summary.sent == perms.size());
}

TEST_CASE("curl_error: the TLS identity failures are named and not retried", "[curl_errors][tls]") {
  using studentsvc::detail::curl_error;
  studentsvc::detail::CurlExchange ex;
  auto with_reason = [&ex](std::string_view reason) {
    ex.error.fill('\0');
    reason.copy(ex.error.data(), std::min(reason.size(), ex.error.size() - 1));
  };
  with_reason("SSL: public key does not match pinned public key");
  auto e = curl_error(CURLE_SSL_PINNEDPUBKEYNOTMATCH, ex);
  CHECK(e.kind == ErrorKind::transport);
  CHECK_THAT(e.message, Catch::StartsWith("TLS public key pin did not match") &&
                            Catch::Contains("public key does not match pinned public key"));
  CHECK_FALSE(e.retryable);
  CHECK(e.transport_failure == TransportFailure::tls_certificate);

  with_reason("unable to set private key file: 'client.key' type PEM");
  e = curl_error(CURLE_SSL_CERTPROBLEM, ex);
  CHECK_THAT(e.message, Catch::StartsWith("the client certificate or key could not be used"));
  CHECK_FALSE(e.retryable);

  for (const std::string_view alert : {"OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required",
                                       "OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca"}) {
    INFO(alert);
    with_reason(alert);
    e = curl_error(alert.find("SSL_read") != std::string_view::npos ? CURLE_RECV_ERROR : CURLE_SSL_CONNECT_ERROR, ex);
    CHECK_THAT(e.message, Catch::StartsWith("the server refused the client certificate, or none was sent"));
    CHECK_FALSE(e.retryable);
    CHECK(e.transport_failure == TransportFailure::tls_certificate);
  }
  with_reason("Connection reset by peer");  // an ordinary failure keeps its meaning
  e = curl_error(CURLE_RECV_ERROR, ex);
  CHECK_THAT(e.message, Catch::StartsWith("receive failed"));
  CHECK(e.retryable);
}

}  // namespace curl_errors_test

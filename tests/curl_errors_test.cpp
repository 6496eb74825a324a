// curl_errors.hpp: what a failed libcurl transfer comes to. The code table of
// ApiError::transport_failure, then each failure produced for real through
// CurlTransport against servers on 127.0.0.1 the test starts (and one name
// under .invalid, RFC 6761, that no resolver answers), and the batch
// fail-fast decision each one drives.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/detail/curl/errors.hpp>
#include <studentsvc/detail/batch/fail_fast.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/fast_retry.hpp"
#include "support/loopback.hpp"
#include "support/plain_http_listener.hpp"
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
  SECTION("a proxy that refuses the CONNECT: proxy, stops a batch (its policy, the same for every lookup)") {
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
    CHECK_FALSE(e.retryable);
    CHECK(fail_fast_reason(e) == FailFastReason::proxy_refused);
  }
  SECTION("https:// to a plain-HTTP listener: tls_handshake, stops a batch") {
    const studentsvc::test::PlainHttpListener listener;
    studentsvc::CurlTransport transport;
    const auto e = failure_of(transport, get(listener.https_url() + "/students/v2/students/1234567"));
    CHECK(e.transport_failure == TransportFailure::tls_handshake);
    CHECK_THAT(e.message, Catch::StartsWith("TLS handshake failed: "));
    CHECK(fail_fast_reason(e) == FailFastReason::tls);
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

namespace {

/// Where every lookup fails the same way, and how: a host that does not
/// resolve, a TLS handshake with a plain-HTTP port, a web server's 404 for a
/// wrong path prefix.
struct Unusable {
  std::string name;
  std::string base_url;
  ErrorKind kind;
  TransportFailure failure;
};

studentsvc::ClientOptions unusable_options(const std::string& base_url) {
  studentsvc::ClientOptions o;
  o.base_url = base_url;
  o.allow_insecure_loopback = base_url.starts_with("http://");
  o.auth.api_key = "k";
  o.retry = studentsvc::test::fast_retry(3);  // each lookup retried: the final error is what stops
  // Past a resolver's 5 s resend of a query lost in a burst (it happens here): a
  // lost query is slow, never a timeout that would not stop the batch.
  o.connect_timeout = 20s;
  return o;
}

std::vector<std::string> perms_from(int first, std::size_t count) {
  std::vector<std::string> perms;
  for (std::size_t i = 0; i < count; ++i) perms.push_back(std::to_string(first + static_cast<int>(i)));
  return perms;
}

}  // namespace

TEST_CASE("fail-fast: a host that does not resolve, a failed TLS handshake and a wrong path stop a batch",
          "[curl_errors][stream][fail_fast]") {
  const studentsvc::test::PlainHttpListener listener;
  RawServer web_server([&](int fd, int) {  // a web server in front: its own HTML 404 for any path
    web_server.serve(fd, [](const std::string&, int) {
      return RawServer::response(404, "<html><body>404 Not Found</body></html>", {}, "text/html");
    });
  });
  // An index: the generator outlives this run, the servers (and their ports) do not.
  const std::vector<Unusable> cases{
      {"no such host", "https://no-such-host.invalid", ErrorKind::transport, TransportFailure::name_resolution},
      {"https:// to plain HTTP", listener.https_url(), ErrorKind::transport, TransportFailure::tls_handshake},
      {"wrong path prefix", web_server.base_url() + "/wrong", ErrorKind::http_status, TransportFailure::unspecified}};
  const Unusable& u = cases.at(GENERATE(0U, 1U, 2U));
  CAPTURE(u.name);
  const studentsvc::Client client(unusable_options(u.base_url));
  const auto is_trigger = [&](const studentsvc::ApiError& e) {
    return e.kind == u.kind && e.transport_failure == u.failure && studentsvc::stops_batch(e);
  };
  SECTION("for_each_student: at most the window is sent, every other perm is not sent, naming the error") {
    studentsvc::StreamOptions stream;
    stream.max_concurrency = 4;
    std::size_t triggers = 0;
    std::size_t skipped = 0;
    const auto perms = perms_from(3000000, 100);
    const auto summary = client.for_each_student(
        perms,
        [&](std::size_t, std::string_view, studentsvc::Result<studentsvc::StudentExtended> r) {
          REQUIRE_FALSE(r.has_value());
          if (is_trigger(r.error())) ++triggers;
          if (r.error().kind == ErrorKind::cancelled && r.error().message.starts_with("not sent: the batch stopped"))
            ++skipped;
        },
        stream);
    REQUIRE(summary.stopped_by.has_value());
    CHECK(is_trigger(*summary.stopped_by));
    // A transport failure is retried for the lookup, then final; a 404 is an answer, not retried.
    CHECK(summary.stopped_by->attempts == (u.kind == ErrorKind::transport ? 3 : 1));
    // Every lookup fails alike, so the first result in stops it: no more than the window was sent.
    CHECK(summary.sent <= 4);
    CHECK(triggers == summary.sent);
    CHECK(skipped == perms.size() - summary.sent);
    CHECK(summary.not_sent == skipped);
    if (u.failure == TransportFailure::tls_handshake) CHECK(listener.connections() <= 4 * 3);
  }
  SECTION("get_students: the same stop, one result per perm") {
    studentsvc::BatchOptions batch;
    batch.max_concurrency = 4;
    const auto perms = perms_from(3100000, 100);
    const auto results = client.get_students(perms, batch);
    REQUIRE(results.size() == perms.size());
    std::size_t triggers = 0;
    std::size_t skipped = 0;
    for (const auto& r : results) {
      REQUIRE_FALSE(r.has_value());
      if (is_trigger(r.error())) ++triggers;
      if (r.error().kind == ErrorKind::cancelled) ++skipped;
    }
    CHECK(triggers >= 1);
    CHECK(triggers <= 4);
    CHECK(triggers + skipped == perms.size());
  }
  SECTION("fail_fast off: every lookup is sent") {
    studentsvc::StreamOptions stream;
    stream.max_concurrency = 4;
    stream.fail_fast = false;
    std::size_t triggers = 0;
    const auto perms = perms_from(3200000, 8);
    const auto summary = client.for_each_student(
        perms,
        [&](std::size_t, std::string_view, studentsvc::Result<studentsvc::StudentExtended> r) {
          if (!r && is_trigger(r.error())) ++triggers;
        },
        stream);
    CHECK_FALSE(summary.stopped_by.has_value());
    CHECK(summary.sent == perms.size());
    CHECK(triggers == perms.size());
  }
}

TEST_CASE("a DNS or TLS handshake failure is retried for one call (a resolver hiccup, a reset), then final",
          "[curl_errors][retry]") {
  const studentsvc::test::PlainHttpListener listener;
  SECTION("a host that does not resolve") {
    const studentsvc::Client client(unusable_options("https://no-such-host.invalid"));
    const auto r = client.get_student("1234567");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().transport_failure == TransportFailure::name_resolution);
    CHECK_THAT(r.error().message, Catch::StartsWith("DNS lookup failed: "));
    CHECK(r.error().retryable);
    CHECK(r.error().attempts == 3);
  }
  SECTION("https:// to a plain-HTTP listener") {
    const studentsvc::Client client(unusable_options(listener.https_url()));
    const auto r = client.get_student("1234567");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().transport_failure == TransportFailure::tls_handshake);
    CHECK(r.error().retryable);
    CHECK(r.error().attempts == 3);
    CHECK(listener.connections() == 3);
  }
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

TEST_CASE("curl_error: a URL libcurl cannot use is not retryable", "[curl_errors][url]") {
  using studentsvc::detail::curl_error;
  studentsvc::detail::CurlExchange ex;
  for (const CURLcode code : {CURLE_URL_MALFORMAT, CURLE_NOT_BUILT_IN, CURLE_UNSUPPORTED_PROTOCOL}) {
    INFO(curl_easy_strerror(code));
    const auto e = curl_error(code, ex);
    CHECK(e.kind == ErrorKind::transport);
    CHECK_FALSE(e.retryable);
  }
  CHECK_THAT(curl_error(CURLE_URL_MALFORMAT, ex).message, Catch::StartsWith("the URL cannot be used"));
  // For real: a URL libcurl refuses is one attempt, not three, and nothing is sent.
  studentsvc::CurlTransport transport;
  auto r = transport.send(get("https://exa mple.invalid/students"));
  REQUIRE_FALSE(r);
  CHECK_FALSE(r.error().retryable);
  CHECK_THAT(r.error().message, Catch::StartsWith("the URL cannot be used"));
}

}  // namespace curl_errors_test

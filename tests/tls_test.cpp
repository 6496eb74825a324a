// TLS: HTTPS only, peer and host always verified, a CA bundle by option or
// STUDENTSVC_CA_BUNDLE, and plain http:// only with the loopback opt-in.
//
// Each test case generates, with the `openssl` command-line tool, into a fresh
// temporary folder: a CA; a server certificate it signs for localhost and
// 127.0.0.1 (subjectAltName); a self-signed certificate for the same names; and
// a certificate the CA signs for another host name. MockServer serves them
// over HTTPS on 127.0.0.1.

#include <stdlib.h>  // mkdtemp, setenv
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/test_pki.hpp"

namespace fs = std::filesystem;
using studentsvc::ErrorKind;
using studentsvc::testing::MockServer;
using studentsvc::test::TestPki;

namespace {

/// Options for an HTTPS MockServer that trust `ca` (empty: the system store).
studentsvc::ClientOptions https_options(const MockServer& server, const fs::path& ca, const std::string& host) {
  auto o = server.client_options();
  REQUIRE(o.base_url.starts_with("https://127.0.0.1:"));
  REQUIRE_FALSE(o.allow_insecure_loopback);  // not needed for https
  o.base_url = "https://" + host + ":" + std::to_string(server.port());
  o.ca_bundle = ca.string();
  o.retry = studentsvc::RetryPolicy::none();
  return o;
}

}  // namespace

TEST_CASE("a server certificate from the trusted CA passes, by address and by name", "[tls]") {
  const TestPki pki;
  MockServer server({}, pki.server_cert.string(), pki.server_key.string());
  REQUIRE(server.running());
  const std::string host = GENERATE(std::string("127.0.0.1"), std::string("localhost"));
  const studentsvc::Client client(https_options(server, pki.ca_cert, host));
  const auto student = client.get_student("1234567");
  REQUIRE(student);
  CHECK(student->first_name == "Ana");
  const auto current = client.current_student("mock-jwt-li");
  REQUIRE(current);
  CHECK(current->perm == "2345678");
}

TEST_CASE("STUDENTSVC_CA_BUNDLE supplies the CA bundle", "[tls]") {
  const TestPki pki;
  MockServer server({}, pki.server_cert.string(), pki.server_key.string());
  const auto base = server.client_options();
  ::setenv("STUDENTSVC_BASE_URL", base.base_url.c_str(), 1);
  ::setenv("STUDENTSVC_API_KEY", base.auth.api_key.c_str(), 1);
  ::setenv("STUDENTSVC_NETWORK_ID", base.auth.basic->network_id.c_str(), 1);
  ::setenv("STUDENTSVC_PASSWORD", base.auth.basic->password.c_str(), 1);
  ::setenv("STUDENTSVC_CA_BUNDLE", pki.ca_cert.c_str(), 1);
  auto options = studentsvc::ClientOptions::from_env();
  REQUIRE(options);
  CHECK(options->ca_bundle == pki.ca_cert.string());
  const auto student = studentsvc::Client(*options).get_student("3456789");
  REQUIRE(student);
  CHECK(student->suffix == "JR");
}

TEST_CASE("an untrusted self-signed certificate fails with a transport error naming the certificate", "[tls]") {
  const TestPki pki;
  MockServer server({}, pki.self_cert.string(), pki.self_key.string());
  REQUIRE(server.running());
  auto options = https_options(server, pki.ca_cert, "127.0.0.1");
  options.retry.max_attempts = 3;  // verification failures are final: not retried
  SECTION("with the test CA as the bundle") {}
  SECTION("with the loopback opt-in set, which does not weaken TLS") { options.allow_insecure_loopback = true; }
  const auto r = studentsvc::Client(options).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK(r.error().status == 0);
  CHECK_THAT(r.error().message, Catch::Contains("certificate"));
  CHECK_FALSE(r.error().retryable);
  CHECK(r.error().attempts == 1);
  CHECK(server.request_count() == 0);  // nothing, credentials included, went over the connection
}

TEST_CASE("the system store does not trust the test CA", "[tls]") {
  const TestPki pki;
  MockServer server({}, pki.server_cert.string(), pki.server_key.string());
  const auto r = studentsvc::Client(https_options(server, fs::path(), "127.0.0.1")).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK_THAT(r.error().message, Catch::Contains("certificate"));
  CHECK(server.request_count() == 0);
}

TEST_CASE("a certificate for another host name fails", "[tls]") {
  const TestPki pki;
  MockServer server({}, pki.other_cert.string(), pki.other_key.string());
  const std::string host = GENERATE(std::string("127.0.0.1"), std::string("localhost"));
  const auto r = studentsvc::Client(https_options(server, pki.ca_cert, host)).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK_THAT(r.error().message, Catch::Contains("certificate"));
  CHECK_THAT(r.error().message, Catch::Contains(host));  // libcurl names the host that did not match
  CHECK_FALSE(r.error().retryable);
  CHECK(server.request_count() == 0);
}

TEST_CASE("a CA bundle that cannot be read fails closed", "[tls]") {
  const TestPki pki;
  MockServer server({}, pki.server_cert.string(), pki.server_key.string());
  const auto r =
      studentsvc::Client(https_options(server, pki.dir / "no-such-bundle.pem", "127.0.0.1")).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK(server.request_count() == 0);
}

TEST_CASE("http:// is refused with invalid_argument unless opted in, and then only for loopback", "[tls]") {
  MockServer plain;  // plain HTTP on 127.0.0.1
  auto options = plain.client_options();
  const std::string port = std::to_string(plain.port());

  SECTION("without the opt-in, even loopback is refused and nothing is sent") {
    options.allow_insecure_loopback = false;
    const auto r = studentsvc::Client(options).get_student("1234567");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::invalid_argument);
    CHECK(r.error().status == 0);
    CHECK(plain.request_count() == 0);
    CHECK_FALSE(studentsvc::Client::create(options));
  }
  SECTION("with the opt-in, loopback hosts are accepted") {
    options.allow_insecure_loopback = true;
    for (const std::string host : {"127.0.0.1", "localhost", "LOCALHOST"}) {
      options.base_url = "http://" + host + ":" + port;
      const auto r = studentsvc::Client(options).get_student("1234567");
      INFO(options.base_url);
      REQUIRE(r);
      CHECK(r->first_name == "Ana");
    }
    for (const std::string url : {"http://127.0.0.1", "http://127.255.0.9:80", "http://[::1]:8080", "http://localhost/x"}) {
      options.base_url = url;
      INFO(url);
      CHECK(studentsvc::Client::create(options));
    }
  }
  SECTION("with the opt-in, any other host is still refused") {
    options.allow_insecure_loopback = true;
    for (const std::string& url : std::vector<std::string>{"http://example.edu", "http://10.0.0.1:" + port, "http://128.0.0.1", "http://127.0.0.1.evil.example",
          "http://localhost.evil.example", "http://127.0.0.1@evil.example", "http://[::2]", "http://0.0.0.0",
          "http://127.1"}) {
      options.base_url = url;
      INFO(url);
      const auto r = studentsvc::Client(options).get_student("1234567");
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == ErrorKind::invalid_argument);
    }
  }
  SECTION("other schemes are refused") {
    options.allow_insecure_loopback = true;
    for (const std::string& url : std::vector<std::string>{"ftp://127.0.0.1", "file:///etc/passwd", "127.0.0.1:" + port, "HTTPS:/x"}) {
      options.base_url = url;
      INFO(url);
      const auto r = studentsvc::Client(options).get_student("1234567");
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == ErrorKind::invalid_argument);
    }
  }
  CHECK(plain.request_count() <= 3);
}

TEST_CASE("the transport itself refuses http:// unless built for the loopback opt-in", "[tls]") {
  // Defence in depth: a request that bypassed the Client's URL check still
  // cannot go out in clear text.
  MockServer plain;
  studentsvc::CurlTransport strict;  // default options: https only
  studentsvc::HttpRequest request;
  request.url = plain.base_url() + "/students/v2/students/1234567";
  request.headers.set("x-api-key", "mock-api-key");
  const auto r = strict.send(request);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK_FALSE(r.error().retryable);
  CHECK(plain.request_count() == 0);

  studentsvc::CurlTransport loopback(studentsvc::CurlTransportOptions{{}, {}, true});
  CHECK(loopback.send(request));
}

// TLS: HTTPS only, peer and host always verified, a CA bundle by option or
// STUDENTSVC_CA_BUNDLE, and plain http:// only with the loopback opt-in.
//
// Each test case generates, with the `openssl` command-line tool, into a fresh
// temporary folder: a CA; a server certificate it signs for localhost and
// 127.0.0.1 (subjectAltName); a self-signed certificate for the same names; and
// a certificate the CA signs for another host name. MockServer serves them
// over HTTPS on 127.0.0.1.

#include <stdlib.h>  // mkdtemp, setenv
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/background_server.hpp"
#include "support/env_guard.hpp"
#include "support/raw_server.hpp"
#include "support/test_pki.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace tls_test {

namespace fs = std::filesystem;
using studentsvc::ErrorKind;
using studentsvc::testing::MockServer;
using studentsvc::test::TestPki;

extern "C" char** environ;

namespace {

// The client side of the TLS-floor test. OpenSSL reads OPENSSL_CONF once, when
// libcurl initialises it, so the test re-runs this program with a permissive
// config in its environment; then this makes one call, prints the outcome and
// exits before Catch2 starts.
[[maybe_unused]] const bool tls_floor_probe = [] {
  const char* url = std::getenv("STUDENTSVC_TLS_FLOOR_PROBE");
  if (url == nullptr) return false;
  studentsvc::CurlTransportOptions options;
  if (const char* ca = std::getenv("STUDENTSVC_TLS_FLOOR_CA")) options.ca_bundle = ca;
  if (const char* proxy = std::getenv("STUDENTSVC_TLS_FLOOR_PROXY")) options.proxy = proxy;
  studentsvc::CurlTransport transport(options);
  studentsvc::HttpRequest request;
  request.url = url;
  request.timeout = std::chrono::seconds{20};
  const auto r = transport.send(request);
  const std::string out = r ? "status " + std::to_string(r->status) : "error: " + r.error().message;
  std::printf("%s\n", out.c_str());
  std::fflush(stdout);
  std::_Exit(0);
}();

/// Runs `command` through the shell; its standard output.
std::string run_capture(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    ::pclose(p);
  }
  return out;
}

/// `openssl s_server` offering TLS 1.1 only, under OPENSSL_CONF=`conf`; stopped on destruction.
class LegacyTlsServer {
 public:
  LegacyTlsServer(const TestPki& pki, const fs::path& conf)
      : server_(
            [&](int port) {
              return std::vector<std::string>{"openssl", "s_server", "-tls1_1", "-cert", pki.server_cert.string(),
                                              "-key", pki.server_key.string(), "-accept",
                                              "127.0.0.1:" + std::to_string(port), "-www", "-quiet"};
            },
            environment_with("OPENSSL_CONF=" + conf.string())) {}

  [[nodiscard]] bool ready() const { return server_.running(); }
  [[nodiscard]] int port() const { return server_.port(); }

 private:
  // This process's environment with `setting` ("NAME=value") in place of any NAME= already there.
  static std::vector<std::string> environment_with(const std::string& setting) {
    const std::string name = setting.substr(0, setting.find('=') + 1);
    std::vector<std::string> env{setting};
    for (char** e = environ; *e != nullptr; ++e) {
      if (!std::string_view(*e).starts_with(name)) env.emplace_back(*e);
    }
    return env;
  }

  studentsvc::test::BackgroundServer server_;
};

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
  studentsvc::test::EnvGuard env;
  env.set("STUDENTSVC_BASE_URL", base.base_url);
  env.set("STUDENTSVC_API_KEY", std::string(base.auth.api_key.reveal()));
  env.set("STUDENTSVC_SVC_API_KEY", std::string(base.auth.svc_api_key.reveal()));  // the mock's differs from the API key
  env.set("STUDENTSVC_NETWORK_ID", base.auth.basic->network_id);
  env.set("STUDENTSVC_PASSWORD", std::string(base.auth.basic->password.reveal()));
  env.set("STUDENTSVC_CA_BUNDLE", pki.ca_cert.string());
  auto options = studentsvc::ClientOptions::from_env();
  REQUIRE(options);
  CHECK(options->ca_bundle == pki.ca_cert.string());
  const auto student = studentsvc::Client(*options).get_student("3456789");
  INFO((student ? std::string() : student.error().message));
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

TEST_CASE("a CA bundle that cannot be read is a configuration error before any request", "[tls]") {
  const TestPki pki;
  MockServer server({}, pki.server_cert.string(), pki.server_key.string());
  const auto options = https_options(server, pki.dir / "no-such-bundle.pem", "127.0.0.1");
  const auto created = studentsvc::Client::create(options);
  REQUIRE_FALSE(created);
  CHECK(created.error().kind == ErrorKind::invalid_argument);
  CHECK(created.error().message == "ca_bundle: the file does not exist");
  const auto r = studentsvc::Client(options).get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::invalid_argument);
  CHECK(server.request_count() == 0);
}

TEST_CASE("a CA bundle that is readable but holds no certificate fails closed", "[tls]") {
  const TestPki pki;
  MockServer server({}, pki.server_cert.string(), pki.server_key.string());
  const auto garbage = pki.dir / "garbage-bundle.pem";
  {
    std::ofstream out(garbage);
    out << "not a certificate\n";
  }
  const auto r = studentsvc::Client(https_options(server, garbage, "127.0.0.1")).get_student("1234567");
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

TEST_CASE("TLS 1.2 is the floor even where the system's OpenSSL policy allows TLS 1.0 and 1.1", "[tls]") {
  const TestPki pki;
  // Lets OpenSSL (server and client alike) speak TLS 1.0 and 1.1 with any cipher.
  const fs::path conf = pki.dir / "permissive.cnf";
  std::ofstream(conf) << "openssl_conf = default_conf\n[default_conf]\nssl_conf = ssl_sect\n"
                         "[ssl_sect]\nsystem_default = system_default_sect\n"
                         "[system_default_sect]\nMinProtocol = TLSv1\nCipherString = DEFAULT@SECLEVEL=0\n";
  const LegacyTlsServer server(pki, conf);
  REQUIRE(server.ready());
  const std::string address = "127.0.0.1:" + std::to_string(server.port());
  const std::string no_proxy_env =
      "env -u http_proxy -u https_proxy -u HTTPS_PROXY -u all_proxy -u ALL_PROXY -u no_proxy -u NO_PROXY "
      "OPENSSL_CONF='" + conf.string() + "' ";

  // Control: under that config a client without a floor does get a TLS 1.1 session.
  const std::string control = run_capture(no_proxy_env + "openssl s_client -brief -connect " + address +
                                          " -CAfile '" + pki.ca_cert.string() + "' -verify_return_error"
                                          " < /dev/null 2>&1");
  INFO("s_client: " << control);
  REQUIRE_THAT(control, Catch::Contains("TLSv1.1"));

  // The SDK, in a process with the same config, refuses to go below TLS 1.2:
  // to the server itself, and to an https:// proxy.
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string probe = no_proxy_env + "STUDENTSVC_TLS_FLOOR_CA='" + pki.ca_cert.string() + "' ";
  SECTION("the server") {
    const std::string out = run_capture(probe + "STUDENTSVC_TLS_FLOOR_PROBE='https://" + address + "/' '" + self + "'");
    INFO("probe: " << out);
    CHECK_THAT(out, Catch::StartsWith("error: TLS handshake failed"));
    CHECK_THAT(out, Catch::Contains("protocol version"));
  }
  SECTION("an https:// proxy") {
    const std::string out = run_capture(probe + "STUDENTSVC_TLS_FLOOR_PROXY='https://" + address +
                                        "' STUDENTSVC_TLS_FLOOR_PROBE='https://127.0.0.1:9/' '" + self + "'");
    INFO("probe: " << out);
    CHECK_THAT(out, Catch::StartsWith("error: TLS handshake failed"));
    CHECK_THAT(out, Catch::Contains("protocol version"));
  }
}

}  // namespace tls_test

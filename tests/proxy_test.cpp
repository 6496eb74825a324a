// Proxies: a plain http:// (loopback) call never goes through one, whatever the
// environment or options say; an https:// call shows a proxy nothing but a
// CONNECT; a failure at the proxy says so and never carries the proxy URL's
// user:password. The "proxy" is a RawServer on 127.0.0.1 that records every
// byte it receives; libcurl reads the proxy variables at each transfer, so the
// tests set them (and restore them) around the calls.

#include <stdlib.h>  // setenv, unsetenv
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/detail/request/url_userinfo.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/env_guard.hpp"
#include "support/raw_server.hpp"
#include "support/test_pki.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace proxy_test {

using namespace std::chrono_literals;
using studentsvc::ErrorKind;
using studentsvc::test::EnvGuard;
using studentsvc::test::RawServer;
using studentsvc::test::TestPki;
using studentsvc::test::RefusingPort;
using studentsvc::testing::MockServer;

namespace {

/// Every proxy variable libcurl reads points at `url`, and no_proxy excludes nothing.
void proxy_everything_through(EnvGuard& env, const std::string& url) {
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
    env.set(name, url);
  }
  env.unset("no_proxy");
  env.unset("NO_PROXY");
}

/// No proxy variable at all (the test's own explicit proxy is then the only one).
void no_proxy_variables(EnvGuard& env) {
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                           "no_proxy", "NO_PROXY"}) {
    env.unset(name);
  }
}

/// What the recording proxy answers once it has read a request head; `tunnel`
/// is a working proxy: it connects to the CONNECT target and relays both ways.
enum class ProxyReply { close, forbidden, auth_required, ok_then_garbage, tunnel };

/// A "proxy" that records every byte it receives on any connection.
class RecordingProxy {
 public:
  explicit RecordingProxy(ProxyReply reply)
      : server_([this, reply](int fd, int) { serve(fd, reply); }) {}

  [[nodiscard]] int port() const { return server_.port(); }
  [[nodiscard]] std::string url(const std::string& scheme = "http", const std::string& userinfo = "") const {
    return scheme + "://" + userinfo + "127.0.0.1:" + std::to_string(server_.port());
  }
  [[nodiscard]] int connections() const { return server_.connections(); }
  /// Everything received so far, all connections in order of arrival.
  [[nodiscard]] std::string received() const {
    const std::lock_guard lock(mutex_);
    return received_;
  }
  /// Waits for the handlers to finish, so received() is complete.
  void stop() { server_.stop(); }

 private:
  void record(const std::string& bytes) {
    const std::lock_guard lock(mutex_);
    received_ += bytes;
  }
  /// Appends whatever else arrives until the peer closes or 1 s passes quietly.
  void drain(int fd) {
    char buf[4096];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 1000) <= 0) return;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      record(std::string(buf, static_cast<std::size_t>(n)));
    }
  }
  void serve(int fd, ProxyReply reply) {
    record(RawServer::read_request(fd, 5000ms));
    switch (reply) {
      case ProxyReply::close: break;
      case ProxyReply::forbidden:
        RawServer::write_all(fd, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
        break;
      case ProxyReply::auth_required:
        RawServer::write_all(fd,
                             "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"p\"\r\n"
                             "Content-Length: 0\r\nConnection: close\r\n\r\n");
        break;
      case ProxyReply::ok_then_garbage:
        RawServer::write_all(fd, "HTTP/1.1 200 Connection established\r\n\r\nthis is not a TLS server hello\r\n");
        break;
      case ProxyReply::tunnel: relay(fd); return;
    }
    drain(fd);
  }
  /// Answers "CONNECT 127.0.0.1:PORT" with 200 and relays bytes both ways until
  /// either side closes, recording what the client sends.
  void relay(int fd) {
    const int port = RawServer::connect_target_port(received());
    if (port == 0) return;
    const int up = RawServer::connect_loopback(port);
    if (up < 0) return;
    RawServer::write_all(fd, "HTTP/1.1 200 Connection established\r\nX-Proxy-Note: tunnel\r\n\r\n");
    RawServer::relay(fd, up, [this](std::string_view bytes) { record(std::string(bytes)); });
  }

  RawServer server_;
  mutable std::mutex mutex_;
  std::string received_;
};

/// The credentials MockServer::client_options() carries, as they would appear on the wire.
std::vector<std::string> service_secrets(const studentsvc::ClientOptions& o) {
  std::vector<std::string> out{std::string(o.auth.api_key.reveal()), "x-api-key", "svc-api-key", "authorization"};
  if (!o.auth.svc_api_key.empty()) out.push_back(std::string(o.auth.svc_api_key.reveal()));
  if (o.auth.basic) {
    out.push_back(std::string(o.auth.basic->password.reveal()));
    out.push_back(studentsvc::basic_authorization_value(*o.auth.basic));
    const std::string value = studentsvc::basic_authorization_value(*o.auth.basic);
    out.push_back(value.substr(value.find(' ') + 1));  // the base64 credential alone
  }
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// No secret, in any letter case, in `seen`.
void check_no_secret(const std::string& seen, const std::vector<std::string>& secrets) {
  const std::string haystack = lower(seen);
  for (const auto& s : secrets) {
    INFO("secret: " << s);
    CHECK(haystack.find(lower(s)) == std::string::npos);
  }
}

studentsvc::ConversationRequest conversation_post() {
  studentsvc::ConversationRequest c;
  c.method = "POST";
  c.sub_path = "notes";
  c.body = R"({"note":"hello"})";
  return c;
}

}  // namespace

TEST_CASE("strip_url_userinfo removes user:password@ from URLs in a text", "[proxy][detail]") {
  using studentsvc::detail::strip_url_userinfo;
  CHECK(strip_url_userinfo("Unsupported proxy scheme for 'foo://user:secretpw@127.0.0.1:9'") ==
        "Unsupported proxy scheme for 'foo://127.0.0.1:9'");
  CHECK(strip_url_userinfo("Unsupported proxy syntax in 'http://user:secretpw@[zz'") ==
        "Unsupported proxy syntax in 'http://[zz'");
  CHECK(strip_url_userinfo("bare user:secretpw@proxy:3128 and \"u:p@h\"") == "bare proxy:3128 and \"h\"");
  CHECK(strip_url_userinfo("http://only-user@proxy/ https://a:b@c:1/x") == "http://proxy/ https://c:1/x");
  CHECK(strip_url_userinfo("http://u:p%40ss@proxy") == "http://proxy");
  CHECK(strip_url_userinfo("http://u:p@ss@proxy") == "http://proxy");  // unencoded '@': up to the last one
  CHECK(strip_url_userinfo("Failed to connect to 127.0.0.1 port 9 after 0 ms") ==
        "Failed to connect to 127.0.0.1 port 9 after 0 ms");
  CHECK(strip_url_userinfo("") == "");
  CHECK(strip_url_userinfo("  @ \t\n") == "   \t\n");
}

TEST_CASE("a plain http:// loopback call never goes through a proxy, whatever the environment says",
          "[proxy][e2e]") {
  MockServer target;  // plain HTTP on 127.0.0.1: the loopback opt-in
  REQUIRE(target.running());
  RecordingProxy proxy(ProxyReply::close);
  EnvGuard env;
  const std::string scheme = GENERATE(std::string("http"), std::string("socks5"), std::string("socks5h"));
  proxy_everything_through(env, proxy.url(scheme));
  auto options = target.client_options();
  REQUIRE(options.allow_insecure_loopback);
  options.retry = studentsvc::RetryPolicy::none();
  SECTION("environment only") {}
  SECTION("and an explicit proxy option too") { options.proxy = proxy.url(scheme); }
  INFO("proxy scheme " << scheme << ", explicit option '" << options.proxy << "'");

  const studentsvc::Client client(options);
  const auto student = client.get_student("1234567");
  REQUIRE(student);
  CHECK(student->first_name == "Ana");
  const auto conv = client.conversation(conversation_post());
  REQUIRE(conv);
  CHECK(target.request_count() == 2);  // both went straight to the target
  proxy.stop();
  CHECK(proxy.connections() == 0);
  CHECK(proxy.received().empty());
}

TEST_CASE("the transport keeps http:// off a proxy even for a URL without a scheme", "[proxy][e2e]") {
  // libcurl takes "127.0.0.1:PORT/..." as http://: it must not reach the proxy either.
  MockServer target;
  RecordingProxy proxy(ProxyReply::close);
  EnvGuard env;
  proxy_everything_through(env, proxy.url());
  studentsvc::CurlTransport transport(studentsvc::CurlTransportOptions{{}, proxy.url(), true});
  studentsvc::HttpRequest request;
  request.url = "127.0.0.1:" + std::to_string(target.port()) + "/students/v2/students/1234567";
  request.headers.set("x-api-key", "mock-api-key");
  const auto r = transport.send(request);
  REQUIRE(r);
  CHECK(target.request_count() == 1);
  proxy.stop();
  CHECK(proxy.connections() == 0);
}

TEST_CASE("a batch over plain http:// keeps off the proxy too", "[proxy][e2e]") {
  MockServer target;
  RecordingProxy proxy(ProxyReply::close);
  EnvGuard env;
  proxy_everything_through(env, proxy.url());
  studentsvc::CurlTransport transport(studentsvc::CurlTransportOptions{{}, proxy.url(), true});
  std::vector<studentsvc::HttpRequest> requests(4);
  for (auto& request : requests) {
    request.url = target.base_url() + "/students/v2/students/1234567";
    request.headers.set("x-api-key", "mock-api-key");
  }
  const auto results = transport.send_all(requests, 4);
  REQUIRE(results.size() == requests.size());
  for (const auto& r : results) CHECK(r);
  CHECK(target.request_count() == requests.size());
  proxy.stop();
  CHECK(proxy.connections() == 0);
}

TEST_CASE("an https:// call shows a proxy only a CONNECT, never a credential", "[proxy][e2e]") {
  // One PKI for every run of the case (6 and 24 runs): each takes seconds of
  // openssl on a loaded machine, which brought the case near its ctest timeout.
  static const TestPki pki;
  MockServer target({}, pki.server_cert.string(), pki.server_key.string());
  REQUIRE(target.running());
  const std::string authority = "127.0.0.1:" + std::to_string(target.port());
  const ProxyReply reply = GENERATE(ProxyReply::forbidden, ProxyReply::close, ProxyReply::ok_then_garbage);
  RecordingProxy proxy(reply);
  EnvGuard env;
  auto options = target.client_options();
  options.ca_bundle = pki.ca_cert.string();
  options.retry = studentsvc::RetryPolicy::none();
  SECTION("proxy from the environment") { proxy_everything_through(env, proxy.url()); }
  SECTION("explicit proxy option") {
    no_proxy_variables(env);
    options.proxy = proxy.url();
  }
  const studentsvc::Client client(options);
  const auto start = std::chrono::steady_clock::now();
  const auto student = client.get_student("1234567");
  const auto conv = client.conversation(conversation_post());
  CHECK(std::chrono::steady_clock::now() - start < 30s);  // the proxy's odd answers never hang a call
  proxy.stop();

  for (const auto* error : {student ? nullptr : &student.error(), conv ? nullptr : &conv.error()}) {
    REQUIRE(error != nullptr);
    INFO(error->message);
    CHECK(error->kind == ErrorKind::transport);
    CHECK(error->status == 0);
    switch (reply) {
      case ProxyReply::forbidden:
        CHECK_THAT(error->message, Catch::StartsWith("proxy refused the tunnel (status 403)"));
        CHECK_FALSE(error->retryable);
        break;
      case ProxyReply::close: CHECK_THAT(error->message, Catch::Contains("proxy")); break;
      case ProxyReply::ok_then_garbage: CHECK_THAT(error->message, Catch::StartsWith("TLS handshake failed")); break;
      default: break;
    }
    check_no_secret(error->message, service_secrets(options));
  }
  CHECK(target.request_count() == 0);

  // Two calls, two connections, each carrying one CONNECT head and nothing more
  // (after the garbage, libcurl's TLS ClientHello: no secret is in it).
  const std::string seen = proxy.received();
  INFO(seen);
  CHECK(proxy.connections() == 2);
  const std::string connect = "CONNECT " + authority + " HTTP/1.1\r\n";
  CHECK(seen.starts_with(connect));
  CHECK(seen.find(connect, connect.size()) != std::string::npos);
  CHECK(seen.find("GET ") == std::string::npos);
  CHECK(seen.find("POST ") == std::string::npos);
  check_no_secret(seen, service_secrets(options));
}

TEST_CASE("an https:// call works through a tunnelling proxy, which sees only ciphertext after the CONNECT",
          "[proxy][e2e]") {
  const TestPki pki;
  MockServer target({}, pki.server_cert.string(), pki.server_key.string());
  RecordingProxy proxy(ProxyReply::tunnel);
  EnvGuard env;
  auto options = target.client_options();
  options.ca_bundle = pki.ca_cert.string();
  SECTION("proxy from the environment") { proxy_everything_through(env, proxy.url()); }
  SECTION("explicit proxy option") {
    no_proxy_variables(env);
    options.proxy = proxy.url();
  }
  {
    const studentsvc::Client client(options);
    const auto student = client.get_student("1234567");
    REQUIRE(student);
    CHECK(student->first_name == "Ana");
    const auto conv = client.conversation(conversation_post());
    REQUIRE(conv);
    CHECK_FALSE(conv->headers.contains("X-Proxy-Note"));  // the proxy's CONNECT answer is not the response
    CHECK(target.request_count() == 2);
  }  // the client closes its connections, so the relay ends
  proxy.stop();
  const std::string seen = proxy.received();
  CHECK(seen.starts_with("CONNECT 127.0.0.1:" + std::to_string(target.port()) + " HTTP/1.1\r\n"));
  CHECK(proxy.connections() >= 1);
  check_no_secret(seen, service_secrets(options));
}

TEST_CASE("no_proxy is honoured for https://", "[proxy][e2e]") {
  const TestPki pki;
  MockServer target({}, pki.server_cert.string(), pki.server_key.string());
  RecordingProxy proxy(ProxyReply::forbidden);
  EnvGuard env;
  proxy_everything_through(env, proxy.url());
  const std::string name = GENERATE(std::string("no_proxy"), std::string("NO_PROXY"));
  env.set(name, "127.0.0.1");
  auto options = target.client_options();
  options.ca_bundle = pki.ca_cert.string();
  const auto student = studentsvc::Client(options).get_student("1234567");
  REQUIRE(student);
  proxy.stop();
  CHECK(proxy.connections() == 0);
}

TEST_CASE("an https:// proxy is verified: a certificate it cannot prove fails before any CONNECT",
          "[proxy][e2e]") {
  const TestPki pki;
  MockServer target({}, pki.server_cert.string(), pki.server_key.string());
  // The "proxy" speaks TLS with a self-signed certificate: the system store does not trust it.
  MockServer https_proxy({}, pki.self_cert.string(), pki.self_key.string());
  REQUIRE(https_proxy.running());
  EnvGuard env;
  no_proxy_variables(env);
  auto options = target.client_options();
  options.ca_bundle = pki.ca_cert.string();  // trusts the target's CA; the proxy has its own check
  options.retry = studentsvc::RetryPolicy::none();
  options.proxy = "https://127.0.0.1:" + std::to_string(https_proxy.port());
  const auto r = studentsvc::Client(options).get_student("1234567");
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK_THAT(r.error().message, Catch::StartsWith("TLS certificate verification of the proxy failed"));
  CHECK(https_proxy.request_count() == 0);  // no CONNECT, let alone a request, reached it
  CHECK(target.request_count() == 0);
}

TEST_CASE("a server certificate failure is not blamed on a proxy, even on a handle that met one before",
          "[proxy][e2e]") {
  const TestPki pki;
  MockServer https_proxy({}, pki.self_cert.string(), pki.self_key.string());
  MockServer untrusted_target({}, pki.self_cert.string(), pki.self_key.string());
  EnvGuard env;
  no_proxy_variables(env);
  studentsvc::CurlTransport transport(studentsvc::CurlTransportOptions{pki.ca_cert.string(), {}, false});
  studentsvc::HttpRequest request;
  request.url = "https://127.0.0.1:" + std::to_string(untrusted_target.port()) + "/students/v2/students/1234567";
  request.headers.set("x-api-key", "mock-api-key");

  // One pooled handle: first through an untrusted https:// proxy (from the environment) ...
  env.set("https_proxy", "https://127.0.0.1:" + std::to_string(https_proxy.port()));
  const auto via_proxy = transport.send(request);
  REQUIRE_FALSE(via_proxy);
  CHECK_THAT(via_proxy.error().message, Catch::StartsWith("TLS certificate verification of the proxy failed"));
  // ... then straight to a server whose certificate fails.
  env.unset("https_proxy");
  const auto direct = transport.send(request);
  REQUIRE_FALSE(direct);
  INFO(direct.error().message);
  CHECK_THAT(direct.error().message, Catch::StartsWith("TLS certificate verification failed"));
  CHECK(untrusted_target.request_count() == 0);
}

TEST_CASE("a failure at the proxy names the proxy and never its user:password", "[proxy][e2e]") {
  // One PKI for every run of the case (6 and 24 runs): each takes seconds of
  // openssl on a loaded machine, which brought the case near its ctest timeout.
  static const TestPki pki;
  MockServer target({}, pki.server_cert.string(), pki.server_key.string());
  RecordingProxy refusing(ProxyReply::forbidden);
  RecordingProxy auth(ProxyReply::auth_required);
  // Not a SOCKS server: answers the SOCKS5 greeting with an HTTP error line.
  RawServer not_socks([](int fd, int) {
    char greeting[64];
    if (::recv(fd, greeting, sizeof greeting, 0) > 0) RawServer::write_all(fd, "HTTP/1.1 400 Bad Request\r\n\r\n");
  });
  const std::string userinfo = "user:secretpw@";
  struct Case {
    std::string proxy;
    std::string expected;
  };
  // The listeners are new on each run of the test case: build the case here, not in the generator.
  const RefusingPort no_http_proxy;
  const RefusingPort no_socks_proxy;
  const std::vector<Case> cases{
      {"http://" + userinfo + "127.0.0.1:" + std::to_string(no_http_proxy.port()), "could not connect to the proxy"},
      {"http://" + userinfo + "proxy.invalid:3128", "could not resolve the proxy"},
      {refusing.url("http", userinfo), "proxy refused the tunnel (status 403)"},
      {auth.url("http", userinfo), "proxy refused the tunnel (status 407)"},
      {"socks5://" + userinfo + "127.0.0.1:" + std::to_string(no_socks_proxy.port()), "could not connect to the proxy"},
      {"socks5://" + userinfo + "127.0.0.1:" + std::to_string(not_socks.port()), "proxy failed"},
      // libcurl echoes the whole proxy URL in these two.
      {"foo://" + userinfo + "127.0.0.1:9", "could not connect to the proxy"},
      {"http://" + userinfo + "[zz", "could not resolve the proxy"}};
  const Case& c = cases.at(GENERATE(range(std::size_t{0}, std::size_t{8})));
  EnvGuard env;
  auto options = target.client_options();
  options.ca_bundle = pki.ca_cert.string();
  options.retry = studentsvc::RetryPolicy::none();
  bool transport_only = false;
  SECTION("explicit proxy option") {
    no_proxy_variables(env);
    options.proxy = c.proxy;
  }
  SECTION("proxy from the environment") { proxy_everything_through(env, c.proxy); }
  SECTION("the transport alone, without the Client's scrubbing of the proxy URL") {
    no_proxy_variables(env);
    options.proxy = c.proxy;
    transport_only = true;
  }
  INFO("proxy " << c.proxy << (transport_only ? ", CurlTransport alone" : ", through the Client"));
  studentsvc::Result<studentsvc::HttpResponse> sent = studentsvc::make_error(ErrorKind::transport, "not sent");
  if (transport_only) {
    studentsvc::CurlTransport transport(studentsvc::CurlTransportOptions{options.ca_bundle, options.proxy, false});
    studentsvc::HttpRequest request;
    request.url = target.base_url() + "/students/v2/students/1234567";
    request.headers.set("x-api-key", std::string(options.auth.api_key.reveal()));
    sent = transport.send(request);
    REQUIRE_FALSE(sent);
  }
  const auto r = transport_only ? studentsvc::Result<studentsvc::StudentExtended>(std::unexpected(sent.error()))
                                : studentsvc::Client(options).get_student("1234567");
  REQUIRE_FALSE(r);
  INFO(r.error().message);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK_THAT(r.error().message, Catch::StartsWith(c.expected));
  CHECK(r.error().message.find("secretpw") == std::string::npos);
  CHECK(r.error().message.find("user:") == std::string::npos);
  CHECK(r.error().detail.find("secretpw") == std::string::npos);
  CHECK(target.request_count() == 0);
}

}  // namespace proxy_test

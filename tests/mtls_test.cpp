// Mutual TLS, the CA as PEM text and the pinned public key, end to end with
// the real CurlTransport on 127.0.0.1:
// - a gateway that refuses the handshake without a client certificate from
//   its client CA: cpp-httplib's SSLServer given that CA (it fails the
//   handshake, as many gateways do); there, no, a wrong and an unusable
//   certificate must fail as clear transport errors;
// - nginx with `ssl_verify_client on` (a real gateway, which also resumes TLS
//   sessions properly: cpp-httplib 0.11 sets no session id context, so a
//   second connection of a batch would fail there): the right certificate
//   passes on every path that sends (blocking, asynchronous on the event
//   loop, a batch, CurlTransport::send_all); nginx answers a request without
//   one with its own 400 page;
// - MockServer over HTTPS for the CA as text and the pin.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include <httplib.h>

#include "support/test_pki.hpp"
#if defined(STUDENTSVC_NGINX)
#include "support/nginx_tls.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace mtls_test {
#endif

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using studentsvc::ClientCertificate;
using studentsvc::ErrorKind;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;
using studentsvc::test::TestPki;

namespace {

/// A TestPki with its client side.
struct ClientPki : TestPki {
  ClientPki() { add_client_pki(); }
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A TLS server that requires a client certificate signed by the client CA
/// and fails the handshake without one (cpp-httplib: SSL_VERIFY_PEER |
/// SSL_VERIFY_FAIL_IF_NO_PEER_CERT); counts the requests that got through.
class MutualTlsServer {
 public:
  explicit MutualTlsServer(const TestPki& pki)
      : server_(pki.server_cert.c_str(), pki.server_key.c_str(), pki.client_ca_cert.c_str()) {
    server_.Get(R"(/students/v2/students/(\d{7}))", [this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      res.set_content(R"({"perm":")" + std::string(req.matches[1]) +
                          R"(","firstName":"Ana","lastName":"L","suffix":null,"email":"a@example.edu"})",
                      "application/json");
    });
    server_.set_keep_alive_timeout(1);
    port_ = server_.is_valid() ? server_.bind_to_any_port("127.0.0.1") : 0;
    if (port_ > 0) {
      thread_ = std::thread([this] { server_.listen_after_bind(); });
      for (int i = 0; i < 2000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~MutualTlsServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  MutualTlsServer(const MutualTlsServer&) = delete;
  MutualTlsServer& operator=(const MutualTlsServer&) = delete;

  [[nodiscard]] bool running() const { return port_ > 0 && server_.is_running(); }
  [[nodiscard]] std::string base_url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] int requests() const { return requests_.load(); }

 private:
  httplib::SSLServer server_;
  std::atomic<int> requests_{0};
  int port_ = 0;
  std::thread thread_;
};

/// Options for `base_url`, trusting the test CA, one attempt per call.
studentsvc::ClientOptions options_for(const std::string& base_url, const TestPki& pki) {
  studentsvc::ClientOptions o;
  o.base_url = base_url;
  o.auth.api_key = "mtls-test-api-key";
  o.ca_bundle = pki.ca_cert.string();
  o.retry = studentsvc::RetryPolicy::none();
  return o;
}

MockServerOptions tls_mock() {
  MockServerOptions o;
  o.keep_alive_timeout = std::chrono::seconds{1};
  return o;
}

std::string why(const studentsvc::Result<studentsvc::StudentExtended>& r) {
  return r ? std::string("ok") : to_string(r.error());
}

/// A gateway's refusal of the client certificate. Under TLS 1.3 the server
/// checks it after the client has finished its handshake, so which the client
/// sees first is a race: the server's alert ("the server refused the client
/// certificate ...", not retried), or the connection it closed.
void check_refused(const studentsvc::ApiError& e) {
  INFO(to_string(e));
  CHECK(e.kind == ErrorKind::transport);
  if (e.message.starts_with("the server refused the client certificate")) {
    CHECK_FALSE(e.retryable);
    CHECK(e.transport_failure == studentsvc::TransportFailure::tls_certificate);
  } else {
    CHECK((e.transport_failure == studentsvc::TransportFailure::connection_lost ||
           e.transport_failure == studentsvc::TransportFailure::tls_handshake));
  }
}

const std::vector<std::string> roster = {"1234567", "2345678", "3456789", "1234567", "2345678", "3456789"};

}  // namespace

TEST_CASE("mutual TLS: without the right client certificate the call fails as a transport error", "[tls][mtls]") {
  const ClientPki pki;
  MutualTlsServer server(pki);
  REQUIRE(server.running());
  auto o = options_for(server.base_url(), pki);
  SECTION("none") {}
  SECTION("one from another CA") {
    o.client_certificate = ClientCertificate{pki.rogue_client_cert.string(), pki.rogue_client_key.string(), {}};
  }
  const studentsvc::Client client(o);
  for (const auto& r : {client.get_student("1234567"), client.get_student_async("2345678").get()}) {
    REQUIRE_FALSE(r);
    check_refused(r.error());
  }
  CHECK(server.requests() == 0);
}

TEST_CASE("mutual TLS: the right client certificate passes the handshake", "[tls][mtls]") {
  const ClientPki pki;
  MutualTlsServer server(pki);
  REQUIRE(server.running());
  auto o = options_for(server.base_url(), pki);
  o.client_certificate = ClientCertificate{pki.client_cert.string(), pki.client_key_encrypted.string(),
                                           pki.client_key_password};
  const auto r = studentsvc::Client(o).get_student("1234567");
  INFO(why(r));
  REQUIRE(r);
  CHECK(r->first_name == "Ana");
  CHECK(server.requests() == 1);
}

TEST_CASE("mutual TLS: a wrong key password fails clearly and is never shown", "[tls][mtls]") {
  const ClientPki pki;
  MutualTlsServer server(pki);
  REQUIRE(server.running());
  auto o = options_for(server.base_url(), pki);
  const std::string wrong = "WRONG-KEY-PASSWORD-CANARY-9d41";
  std::vector<std::string> lines;
  o.logger = studentsvc::Logger{studentsvc::LogLevel::trace,
                                [&lines](studentsvc::LogLevel, std::string_view line) { lines.emplace_back(line); }};
  o.client_certificate = ClientCertificate{pki.client_cert.string(), pki.client_key_encrypted.string(), wrong};
  const studentsvc::Client client(o);
  for (const auto& r : {client.get_student("1234567"), client.get_student_async("2345678").get()}) {
    REQUIRE_FALSE(r);
    INFO(to_string(r.error()));
    CHECK(r.error().kind == ErrorKind::transport);
    CHECK_THAT(r.error().message, StartsWith("the client certificate or key could not be used"));
    CHECK_FALSE(r.error().retryable);
    CHECK(to_string(r.error()).find(wrong) == std::string::npos);
  }
  for (const auto& line : lines) CHECK(line.find(wrong) == std::string::npos);
  CHECK(server.requests() == 0);
}

#if defined(STUDENTSVC_NGINX)
TEST_CASE("mutual TLS through nginx: the right certificate passes on every path that sends", "[tls][mtls][nginx]") {
  const ClientPki pki;
  const studentsvc::test::NginxTls gateway(
      pki, "ssl_client_certificate " + pki.client_ca_cert.string() + "; ssl_verify_client on;");
  REQUIRE(gateway.running());
  INFO(gateway.error_log());
  auto o = options_for(gateway.base_url(), pki);
  const bool encrypted = GENERATE(false, true);
  o.client_certificate = encrypted ? ClientCertificate{pki.client_cert.string(), pki.client_key_encrypted.string(),
                                                       pki.client_key_password}
                                   : ClientCertificate{pki.client_cert.string(), pki.client_key.string(), {}};
  INFO((encrypted ? "encrypted key" : "plain key"));
  const studentsvc::Client client(o);

  const auto blocking = client.get_student("1234567");
  INFO(why(blocking));
  REQUIRE(blocking);
  CHECK(blocking->first_name == "Ana");
  const auto current = client.current_student("a-jwt-nginx-does-not-check");
  INFO(why(current));
  CHECK(current);
  const auto async = client.get_student_async("2345678").get();
  INFO(why(async));
  CHECK(async);
  studentsvc::BatchOptions batch;
  batch.max_concurrency = 3;
  const auto results = client.get_students(roster, batch);
  REQUIRE(results.size() == roster.size());
  for (const auto& r : results) {
    INFO(why(r));
    CHECK(r);
  }

  // The transport alone, on the multi interface: a new connection per slot.
  std::vector<studentsvc::HttpRequest> requests;
  for (const auto& perm : roster) {
    studentsvc::HttpRequest request;
    request.url = gateway.base_url() + "/students/v2/students/" + perm;
    request.timeout = std::chrono::seconds{20};
    requests.push_back(std::move(request));
  }
  studentsvc::CurlTransportOptions with;
  with.ca_bundle = pki.ca_cert.string();
  with.client_certificate = o.client_certificate;
  studentsvc::CurlTransport transport(with);
  for (const auto& r : transport.send_all(requests, 3)) {
    INFO((r ? std::string() : r.error().message));
    REQUIRE(r);
    CHECK(r->status == 200);
  }
}

TEST_CASE("mutual TLS through nginx: without a certificate, nginx's own 400 page", "[tls][mtls][nginx]") {
  const ClientPki pki;
  const studentsvc::test::NginxTls gateway(
      pki, "ssl_client_certificate " + pki.client_ca_cert.string() + "; ssl_verify_client on;");
  REQUIRE(gateway.running());
  auto o = options_for(gateway.base_url(), pki);
  SECTION("none") {}
  SECTION("one from another CA") {
    o.client_certificate = ClientCertificate{pki.rogue_client_cert.string(), pki.rogue_client_key.string(), {}};
  }
  // nginx completes the handshake and answers 400 ("No required SSL
  // certificate was sent" / "The SSL certificate error"): not a transport error.
  const auto r = studentsvc::Client(o).get_student("1234567");
  REQUIRE_FALSE(r);
  INFO(to_string(r.error()));
  CHECK(r.error().status == 400);
  CHECK_THAT(r.error().body_excerpt, Contains("SSL certificate"));
}

TEST_CASE("from_env: the TLS variables reach the transport", "[tls][mtls][nginx]") {
  const ClientPki pki;
  const studentsvc::test::NginxTls gateway(
      pki, "ssl_client_certificate " + pki.client_ca_cert.string() + "; ssl_verify_client on;");
  REQUIRE(gateway.running());
  std::map<std::string, std::string, std::less<>> env = {
      {"STUDENTSVC_BASE_URL", gateway.base_url()},
      {"STUDENTSVC_API_KEY", "mtls-test-api-key"},
      {"STUDENTSVC_CA_PEM", read_file(pki.ca_cert)},
      {"STUDENTSVC_CLIENT_CERT", pki.client_cert.string()},
      {"STUDENTSVC_CLIENT_KEY", pki.client_key_encrypted.string()},
      {"STUDENTSVC_CLIENT_KEY_PASSWORD", pki.client_key_password},
      {"STUDENTSVC_PINNED_PUBLIC_KEY", pki.server_pin},
  };
  auto options = studentsvc::ClientOptions::from_env([&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  REQUIRE(options);
  const studentsvc::Client client(*options);
  const auto r = client.get_student("3456789");
  INFO(why(r));
  REQUIRE(r);
  CHECK(r->perm == "3456789");
  for (const auto& b : client.get_students(roster)) {
    INFO(why(b));
    CHECK(b);
  }
}
#endif

TEST_CASE("CA as PEM text: the right CA passes, another fails verification", "[tls][ca_pem]") {
  const ClientPki pki;
  MockServer server(tls_mock(), pki.server_cert.string(), pki.server_key.string());
  REQUIRE(server.running());
  auto o = server.client_options();
  o.retry = studentsvc::RetryPolicy::none();
  o.ca_pem = read_file(pki.ca_cert);
  REQUIRE_THAT(o.ca_pem, StartsWith("-----BEGIN CERTIFICATE-----"));
  const auto ok = studentsvc::Client(o).get_student("1234567");
  INFO(why(ok));
  CHECK(ok);
  const auto async = studentsvc::Client(o).get_student_async("2345678").get();
  INFO(why(async));
  CHECK(async);

  const std::size_t served = server.request_count();
  o.ca_pem = read_file(pki.client_ca_cert);  // a real CA, not the one that signed the server's certificate
  const studentsvc::Client wrong(o);
  const auto r = wrong.get_student("1234567");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::transport);
  CHECK_THAT(r.error().message, StartsWith("TLS certificate verification failed"));
  CHECK_FALSE(r.error().retryable);
  const auto batch = wrong.get_students(roster);
  for (const auto& b : batch) CHECK_FALSE(b);
  CHECK(server.request_count() == served);
}

TEST_CASE("pinned public key: a matching pin passes, another fails saying the pin did not match", "[tls][pin]") {
  const ClientPki pki;
  REQUIRE_THAT(pki.server_pin, StartsWith("sha256//"));
  REQUIRE(pki.server_pin != pki.self_pin);
  MockServer server(tls_mock(), pki.server_cert.string(), pki.server_key.string());
  REQUIRE(server.running());
  auto o = server.client_options();
  o.ca_bundle = pki.ca_cert.string();
  o.retry = studentsvc::RetryPolicy::none();

  SECTION("the server's pin, alone or in a list") {
    const bool listed = GENERATE(false, true);
    o.pinned_public_key = listed ? pki.self_pin + ";" + pki.server_pin : pki.server_pin;
    INFO(o.pinned_public_key);
    const studentsvc::Client client(o);
    const auto blocking = client.get_student("1234567");
    INFO(why(blocking));
    CHECK(blocking);
    const auto async = client.get_student_async("2345678").get();
    INFO(why(async));
    CHECK(async);
    for (const auto& r : client.get_students(roster)) {
      INFO(why(r));
      CHECK(r);
    }
  }
  SECTION("another key's pin") {
    o.pinned_public_key = pki.self_pin;
    const studentsvc::Client client(o);
    for (const auto& r : {client.get_student("1234567"), client.get_student_async("2345678").get()}) {
      REQUIRE_FALSE(r);
      INFO(to_string(r.error()));
      CHECK(r.error().kind == ErrorKind::transport);
      CHECK_THAT(r.error().message, StartsWith("TLS public key pin did not match"));
      CHECK_FALSE(r.error().retryable);
      CHECK(r.error().transport_failure == studentsvc::TransportFailure::tls_certificate);
    }
    CHECK(server.request_count() == 0);
  }
}

}  // namespace mtls_test

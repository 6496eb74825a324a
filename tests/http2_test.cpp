// HTTP/2 over TLS against a real gateway (nginx, started here on 127.0.0.1):
// batches and asynchronous calls multiplex their lookups on one connection.
// The check that refuses a connection with unread bytes must not take the
// other streams' frames on a shared HTTP/2 connection for stale ones (it did
// on the event loop: a roster of 1,500 lookups at concurrency 16 opened 194
// TLS connections).

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <studentsvc/studentsvc.hpp>

#include "support/nginx_tls.hpp"
#include "support/test_pki.hpp"
#include "support/wait.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace http2_test {

namespace {

using namespace std::chrono_literals;

/// nginx serving the student endpoint over TLS with HTTP/2 (ALPN); its
/// access log names each request's connection.
class Http2Gateway {
 public:
  explicit Http2Gateway(const studentsvc::test::TestPki& pki)
      : nginx_(pki, {.server = "access_log " + (pki.dir / "access.log").string() + " connections;",
                     .http = "log_format connections '$connection $server_protocol $ssl_session_reused';"}) {}

  [[nodiscard]] bool running() const { return nginx_.running(); }
  [[nodiscard]] std::string base_url() const { return nginx_.base_url(); }
  [[nodiscard]] std::string error_log() const { return nginx_.error_log(); }

  /// What the access log says so far: requests, the connections they came on, and their protocols.
  struct Seen {
    std::size_t requests = 0;
    std::set<std::string> connections;
    std::set<std::string> protocols;
    std::size_t handshakes = 0;  ///< TLS handshakes, full or resumed: one per connection
  };
  [[nodiscard]] Seen seen() const {
    Seen s;
    std::istringstream lines(studentsvc::test::NginxTls::read(nginx_.dir() / "access.log"));
    std::string connection;
    std::string protocol;
    std::string reused;
    while (lines >> connection >> protocol >> reused) {
      ++s.requests;
      if (s.connections.insert(connection).second) ++s.handshakes;
      s.protocols.insert(protocol);
    }
    return s;
  }

 private:
  studentsvc::test::NginxTls nginx_;
};

std::vector<std::string> perms(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::to_string(2000000 + i));
  return out;
}

studentsvc::Client client_of(const Http2Gateway& gateway, const studentsvc::test::TestPki& pki) {
  studentsvc::ClientOptions options;
  options.base_url = gateway.base_url();
  options.auth.api_key = "test-api-key";
  options.ca_bundle = pki.ca_cert.string();
  return studentsvc::Client(options);
}

// A handful at most: libcurl opens one connection and multiplexes the rest on
// it (CURLOPT_PIPEWAIT); before the fix the batches below opened dozens.
constexpr std::size_t connection_bound = 4;

// `requests` came, every one over HTTP/2, on at most `bound` connections.
void check_multiplexed(const Http2Gateway& gateway, std::size_t requests, std::size_t bound = connection_bound) {
  // nginx writes a stream's log line after it has sent the answer, so the
  // last lines can land just after the client has them all: wait for them.
  (void)studentsvc::test::eventually([&] { return gateway.seen().requests >= requests; });
  const auto seen = gateway.seen();
  INFO(gateway.error_log());
  CHECK(seen.requests == requests);
  CHECK(seen.protocols == std::set<std::string>{"HTTP/2.0"});
  CHECK(seen.connections.size() <= bound);
  CHECK(seen.handshakes == seen.connections.size());
}

}  // namespace

TEST_CASE("HTTP/2: a streamed batch multiplexes its lookups on one connection", "[http2][tls]") {
  const studentsvc::test::TestPki pki;
  const Http2Gateway gateway(pki);
  REQUIRE(gateway.running());
  const auto client = client_of(gateway, pki);
  const auto roster = perms(300);
  for (const std::size_t concurrency : {16U, 64U}) {
    studentsvc::BatchOptions batch;
    batch.max_concurrency = concurrency;
    const auto results = client.get_students(roster, batch);
    REQUIRE(results.size() == roster.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      INFO(i << ": " << (results[i] ? std::string("ok") : studentsvc::to_string(results[i].error())));
      REQUIRE(results[i]);
      CHECK(results[i]->perm == roster[i]);
    }
  }
  check_multiplexed(gateway, 2 * roster.size());
}

TEST_CASE("HTTP/2: asynchronous calls in flight together share one connection", "[http2][tls]") {
  const studentsvc::test::TestPki pki;
  const Http2Gateway gateway(pki);
  REQUIRE(gateway.running());
  const auto client = client_of(gateway, pki);
  const auto roster = perms(200);
  std::vector<std::future<studentsvc::Result<studentsvc::StudentExtended>>> pending;
  for (const auto& perm : roster) pending.push_back(client.get_student_async(perm));
  for (std::size_t i = 0; i < pending.size(); ++i) {
    REQUIRE(pending[i].wait_for(60s) == std::future_status::ready);
    const auto result = pending[i].get();
    INFO(i << ": " << (result ? std::string("ok") : studentsvc::to_string(result.error())));
    REQUIRE(result);
    CHECK(result->perm == roster[i]);
  }
  check_multiplexed(gateway, roster.size());
}

TEST_CASE("HTTP/2: CurlTransport::send_all multiplexes a batch on one connection", "[http2][tls]") {
  const studentsvc::test::TestPki pki;
  const Http2Gateway gateway(pki);
  REQUIRE(gateway.running());
  studentsvc::CurlTransportOptions options;
  options.ca_bundle = pki.ca_cert.string();
  studentsvc::CurlTransport transport(options);
  std::vector<studentsvc::HttpRequest> requests;
  for (const auto& perm : perms(200)) {
    studentsvc::HttpRequest r;
    r.url = gateway.base_url() + "/students/v2/students/" + perm;
    requests.push_back(std::move(r));
  }
  for (int round = 0; round < 2; ++round) {
    const auto out = transport.send_all(requests, 16);
    REQUIRE(out.size() == requests.size());
    for (const auto& r : out) {
      INFO((r ? std::string("ok") : studentsvc::to_string(r.error())));
      REQUIRE(r);
      CHECK(r->status == 200);
    }
  }
  check_multiplexed(gateway, 2 * requests.size());
}

TEST_CASE("HTTP/2: a blocking call and a batch of one Client share one connection and one TLS handshake",
          "[http2][tls][pool]") {
  const studentsvc::test::TestPki pki;
  const Http2Gateway gateway(pki);
  REQUIRE(gateway.running());
  const auto client = client_of(gateway, pki);
  const auto first = client.get_student("1999999");
  INFO((first ? std::string("ok") : studentsvc::to_string(first.error())));
  REQUIRE(first);
  const auto roster = perms(1000);
  const auto results = client.get_students(roster);
  REQUIRE(results.size() == roster.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    INFO(i << ": " << (results[i] ? std::string("ok") : studentsvc::to_string(results[i].error())));
    REQUIRE(results[i]);
  }
  const auto last = client.get_student("1999998");
  REQUIRE(last);
  // One pool for every form: the blocking calls ride the batch's connection.
  check_multiplexed(gateway, roster.size() + 2, 1);
}

}  // namespace http2_test

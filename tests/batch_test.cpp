// Batch lookups: Client::get_students and CurlTransport::send_all against
// MockServer on 127.0.0.1, and the sequential Transport::send_all default
// that custom transports inherit (FakeTransport).

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/fake_transport.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/many_students.hpp"

#include "support/fast_retry.hpp"
#include "support/raw_server.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace batch_test {

using studentsvc::BatchOptions;
using studentsvc::Client;
using studentsvc::ErrorKind;
using studentsvc::HttpRequest;
using studentsvc::RetryPolicy;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;

namespace {

// The five default students of MockServer, in an order unlike the map's.
const std::vector<std::string> known = {"5678901", "1234567", "4567890", "2345678", "3456789"};

std::size_t count_path(const MockServer& server, const std::string& suffix) {
  std::size_t n = 0;
  for (const auto& r : server.requests()) {
    if (r.path.ends_with(suffix)) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("get_students returns one result per perm, in input order") {
  MockServer server;
  REQUIRE(server.running());
  const Client client(server.client_options());

  // 60 lookups, every known perm many times, interleaved.
  std::vector<std::string> perms;
  for (int i = 0; i < 12; ++i) {
    for (std::size_t k = 0; k < known.size(); ++k) perms.push_back(known[(k * 3 + static_cast<std::size_t>(i)) % known.size()]);
  }
  for (const std::size_t concurrency : {std::size_t{1}, std::size_t{4}, std::size_t{16}}) {
    BatchOptions batch;
    batch.max_concurrency = concurrency;
    const auto results = client.get_students(perms, batch);
    REQUIRE(results.size() == perms.size());
    for (std::size_t i = 0; i < perms.size(); ++i) {
      INFO("concurrency " << concurrency << ", lookup " << i);
      REQUIRE(results[i].has_value());
      CHECK(results[i]->perm == perms[i]);
    }
  }
  // The decoded records are the single call's, field for field.
  const auto batch = client.get_students(known);
  for (std::size_t i = 0; i < known.size(); ++i) {
    const auto single = client.get_student(known[i]);
    REQUIRE(single.has_value());
    REQUIRE(batch[i].has_value());
    CHECK(*batch[i] == *single);
  }
  CHECK(batch[0]->first_name == "Zoë 🌟");
}

TEST_CASE("get_students of no perms sends nothing") {
  MockServer server;
  const Client client(server.client_options());
  const auto results = client.get_students(std::span<const std::string>{});
  CHECK(results.empty());
  CHECK(server.request_count() == 0);
}

TEST_CASE("one failed perm never fails the others, and invalid perms are not sent") {
  MockServerOptions options;
  // 7654321 answers 500 (a retryable status) every time; 9999999 is unknown (404).
  options.intercept = [](const httplib::Request& req, httplib::Response& res) {
    if (req.path.ends_with("/7654321")) {
      res.status = 500;
      res.set_content(R"({"message":"boom"})", "application/json");
      return true;
    }
    return false;
  };
  MockServer server(options);
  REQUIRE(server.running());
  const Client client(server.client_options());

  const std::vector<std::string> perms = {"1234567", "12345", "9999999", "7654321", "2345678", "abcdefg", "3456789",
                                          "12345678"};
  BatchOptions batch;
  batch.max_concurrency = 3;
  batch.call.retry = RetryPolicy::none();
  const auto results = client.get_students(perms, batch);
  REQUIRE(results.size() == perms.size());

  REQUIRE(results[0].has_value());
  CHECK(results[0]->last_name == "Núñez");
  REQUIRE_FALSE(results[1].has_value());
  CHECK(results[1].error().kind == ErrorKind::invalid_argument);
  CHECK(results[1].error().attempts == 0);
  REQUIRE_FALSE(results[2].has_value());
  CHECK(results[2].error().kind == ErrorKind::not_found);
  CHECK(results[2].error().status == 404);
  CHECK(results[2].error().attempts == 1);
  REQUIRE_FALSE(results[3].has_value());
  CHECK(results[3].error().kind == ErrorKind::http_status);
  CHECK(results[3].error().status == 500);
  CHECK(results[3].error().message == "boom");
  CHECK(results[3].error().retryable);
  REQUIRE(results[4].has_value());
  CHECK(results[4]->perm == "2345678");
  REQUIRE_FALSE(results[5].has_value());
  CHECK(results[5].error().kind == ErrorKind::invalid_argument);
  REQUIRE(results[6].has_value());
  CHECK(results[6]->suffix == "JR");
  REQUIRE_FALSE(results[7].has_value());
  CHECK(results[7].error().kind == ErrorKind::invalid_argument);

  // Only the five valid perms reached the server, each once (no retries).
  CHECK(server.request_count() == 5);
  for (const auto& r : server.requests()) {
    CHECK(r.path.find("12345678") == std::string::npos);
    CHECK(r.path.find("abcdefg") == std::string::npos);
    CHECK(r.header("x-api-key") == std::optional<std::string>("mock-api-key"));
  }
}

TEST_CASE("a batch's errors never carry the request's credentials") {
  MockServerOptions options;
  // A misbehaving server that echoes the API key and the Basic value in its error body.
  options.intercept = [](const httplib::Request& req, httplib::Response& res) {
    if (!req.path.ends_with("/2345678")) return false;
    res.status = 502;
    res.set_content("<html>upstream refused key " + req.get_header_value("x-api-key") + " with " +
                        req.get_header_value("Authorization") + "</html>",
                    "text/html");
    return true;
  };
  MockServer server(options);
  REQUIRE(server.running());
  const Client client(server.client_options());
  BatchOptions batch;
  batch.call.retry = RetryPolicy::none();
  const std::vector<std::string> perms = {"1234567", "2345678"};
  const auto results = client.get_students(perms, batch);
  REQUIRE(results.size() == 2);
  CHECK(results[0].has_value());
  REQUIRE_FALSE(results[1].has_value());
  const std::string text = studentsvc::to_string(results[1].error()) + results[1].error().body_excerpt;
  CHECK(results[1].error().status == 502);
  CHECK(text.find("mock-api-key") == std::string::npos);
  CHECK(text.find("mock-password") == std::string::npos);
  CHECK(text.find(studentsvc::basic_authorization_value({"svc-registrar-app", "mock-password"}).substr(6)) ==
        std::string::npos);
  CHECK(text.find("[REDACTED]") != std::string::npos);
}

TEST_CASE("the server never sees more requests in flight than max_concurrency") {
  MockServerOptions options;
  options.latency = std::chrono::milliseconds{15};
  const std::vector<std::string> perms = studentsvc::test::add_students(options, 48);
  MockServer server(options);
  REQUIRE(server.running());
  const Client client(server.client_options());

  for (const std::size_t bound : {std::size_t{1}, std::size_t{3}, std::size_t{8}}) {
    server.clear_requests();
    BatchOptions batch;
    batch.max_concurrency = bound;
    const auto results = client.get_students(perms, batch);
    std::size_t ok = 0;
    for (const auto& r : results) ok += r.has_value() ? 1U : 0U;
    INFO("bound " << bound);
    CHECK(ok == perms.size());
    CHECK(server.request_count() == perms.size());
    CHECK(server.max_in_flight() >= 1);
    CHECK(static_cast<std::size_t>(server.max_in_flight()) <= bound);
    // Connections are reused: never more than the bound, however many lookups.
    CHECK(server.connection_count() <= bound);
    if (bound > 1) {
      // 48 lookups of 15 ms each are not run one after another.
      CHECK(server.max_in_flight() > 1);
    }
  }
}

TEST_CASE("a batch that drains to one slow lookup keeps its idle connections for the next batch") {
  // libcurl's default cache holds 4 idle connections per transfer still
  // running: with one slow lookup left, it would close the idle ones, and the
  // next batch would open new ones (CI saw 9 and 10 connections for a bound of 8).
  MockServerOptions options;
  options.keep_alive_timeout = std::chrono::seconds{30};  // the server closes none while the test runs
  const std::vector<std::string> perms = studentsvc::test::add_students(options, 8);
  const std::string slow = perms[0];
  auto first_batch = std::make_shared<std::atomic<bool>>(true);
  options.intercept = [slow, first_batch](const httplib::Request& req, httplib::Response&) {
    if (first_batch->load() && req.path.ends_with("/" + slow)) std::this_thread::sleep_for(std::chrono::milliseconds{300});
    return false;
  };
  MockServer server(options);
  REQUIRE(server.running());
  const Client client(server.client_options());
  BatchOptions batch;
  batch.max_concurrency = 8;
  for (const auto& r : client.get_students(perms, batch)) CHECK(r.has_value());
  first_batch->store(false);
  for (const auto& r : client.get_students(perms, batch)) CHECK(r.has_value());
  CHECK(server.request_count() == 2 * perms.size());
  CHECK(server.connection_count() <= batch.max_concurrency);
}

TEST_CASE("a batch really overlaps its lookups, and max_concurrency 1 does not") {
  // Behaviour, not timing (the benchmark measures speed): with 20 ms of
  // latency per answer, the server sees lookups of one batch in flight together.
  MockServerOptions options;
  options.latency = std::chrono::milliseconds{20};
  const std::vector<std::string> perms = studentsvc::test::add_students(options, 32);
  MockServer server(options);
  REQUIRE(server.running());
  const Client client(server.client_options());

  auto run = [&](std::size_t concurrency) {
    server.clear_requests();
    BatchOptions batch;
    batch.max_concurrency = concurrency;
    const auto results = client.get_students(perms, batch);
    for (const auto& r : results) CHECK(r.has_value());
    CHECK(server.request_count() == perms.size());
    return server.max_in_flight();
  };
  CHECK(run(1) == 1);
  const int overlapped = run(16);
  CHECK(overlapped > 1);
  CHECK(overlapped <= 16);
}

TEST_CASE("retryable failures are retried per the policy, together") {
  MockServerOptions options;
  auto tries = std::make_shared<std::map<std::string, int>>();
  auto mutex = std::make_shared<std::mutex>();
  // Each of these perms fails its first N attempts with 503 (N in the name's last digit, mod 3).
  options.intercept = [tries, mutex](const httplib::Request& req, httplib::Response& res) {
    const std::string perm = req.path.substr(req.path.rfind('/') + 1);
    int seen = 0;
    {
      const std::lock_guard lock(*mutex);
      seen = ++(*tries)[perm];
    }
    const int fail_first = perm == "1234567" ? 1 : perm == "2345678" ? 2 : perm == "7777777" ? 100 : 0;
    if (seen <= fail_first) {
      res.status = 503;
      res.set_content("<html>busy</html>", "text/html");
      return true;
    }
    return false;
  };
  MockServer server(options);
  REQUIRE(server.running());
  const Client client(server.client_options());

  const std::vector<std::string> perms = {"1234567", "2345678", "3456789", "7777777", "9999999"};
  BatchOptions batch;
  batch.max_concurrency = 4;
  batch.call.retry = studentsvc::test::fast_retry(3);
  const auto results = client.get_students(perms, batch);
  REQUIRE(results.size() == 5);
  REQUIRE(results[0].has_value());  // recovered on attempt 2
  REQUIRE(results[1].has_value());  // recovered on attempt 3
  REQUIRE(results[2].has_value());
  REQUIRE_FALSE(results[3].has_value());  // 503 every time: gives up after 3 attempts
  CHECK(results[3].error().kind == ErrorKind::http_status);
  CHECK(results[3].error().status == 503);
  CHECK(results[3].error().attempts == 3);
  REQUIRE_FALSE(results[4].has_value());  // 404 is final: one attempt
  CHECK(results[4].error().kind == ErrorKind::not_found);
  CHECK(results[4].error().attempts == 1);

  CHECK(count_path(server, "/1234567") == 2);
  CHECK(count_path(server, "/2345678") == 3);
  CHECK(count_path(server, "/3456789") == 1);
  CHECK(count_path(server, "/7777777") == 3);
  CHECK(count_path(server, "/9999999") == 1);
}

TEST_CASE("CurlTransport::send_all keeps input order when some transfers fail") {
  MockServer server;
  REQUIRE(server.running());
  // A port with nothing listening: a server we start and stop at once.
  std::string closed_url;
  {
    MockServer gone;
    closed_url = gone.base_url();
  }
  studentsvc::CurlTransport transport(studentsvc::CurlTransportOptions{{}, {}, true});
  const auto good = server.client_options();
  auto request_for = [&](const std::string& base, const std::string& perm) {
    HttpRequest r;
    r.url = base + "/students/v2/students/" + perm;
    r.headers.set("x-api-key", std::string(good.auth.api_key.reveal()));
    r.headers.set("svc-api-key", good.auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom
                                     ? std::string(good.auth.svc_api_key.reveal())
                                     : std::string(good.auth.api_key.reveal()));
    r.headers.set("Authorization", studentsvc::basic_authorization_value(*good.auth.basic));
    r.timeout = std::chrono::milliseconds{5000};
    return r;
  };
  std::vector<HttpRequest> requests;
  requests.push_back(request_for(server.base_url(), "1234567"));
  requests.push_back(request_for(closed_url, "1234567"));
  requests.push_back(request_for(server.base_url(), "9999999"));
  requests.push_back(request_for(server.base_url(), "3456789"));
  HttpRequest tiny = request_for(server.base_url(), "2345678");
  tiny.max_response_bytes = 10;  // over the cap: fails alone
  requests.push_back(tiny);
  requests.push_back(request_for(server.base_url(), "5678901"));

  const auto out = transport.send_all(requests, 3);
  REQUIRE(out.size() == requests.size());
  REQUIRE(out[0].has_value());
  CHECK(out[0]->status == 200);
  CHECK(out[0]->body.find("\"1234567\"") != std::string::npos);
  REQUIRE_FALSE(out[1].has_value());
  CHECK(out[1].error().kind == ErrorKind::transport);
  REQUIRE(out[2].has_value());
  CHECK(out[2]->status == 404);
  REQUIRE(out[3].has_value());
  CHECK(out[3]->body.find("\"3456789\"") != std::string::npos);
  REQUIRE_FALSE(out[4].has_value());
  CHECK(out[4].error().kind == ErrorKind::transport);
  CHECK(out[4].error().message.find("limit") != std::string::npos);
  REQUIRE(out[5].has_value());
  CHECK(out[5]->body.find("\"5678901\"") != std::string::npos);
  CHECK(out[5]->headers.find("Content-Type").has_value());

  // The pooled handles carry nothing over: a single send afterwards works.
  const auto after = transport.send(request_for(server.base_url(), "3456789"));
  REQUIRE(after.has_value());
  CHECK(after->status == 200);
}

TEST_CASE("concurrent batches on one client from many threads") {
  MockServerOptions options;
  options.latency = std::chrono::milliseconds{2};
  MockServer server(options);
  REQUIRE(server.running());
  const Client client(server.client_options());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::string> perms;
      for (int i = 0; i < 20; ++i) perms.push_back(known[static_cast<std::size_t>(i + t) % known.size()]);
      BatchOptions batch;
      batch.max_concurrency = 4;
      for (int round = 0; round < 3; ++round) {
        const auto results = client.get_students(perms, batch);
        for (std::size_t i = 0; i < perms.size(); ++i) {
          if (!results[i] || results[i]->perm != perms[i]) ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
  CHECK(static_cast<std::size_t>(server.max_in_flight()) <= 16);
}

TEST_CASE("a custom transport with only send() gets the sequential send_all") {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  fake->respond(200, R"({"perm":"1234567","firstName":"Ana"})");
  fake->respond(404, R"({"message":"Student not found."})");
  fake->respond(200, R"({"perm":"3456789","firstName":"Jordan","nfr":"yes"})");
  fake->respond(200, R"({"perm":"2345678","firstName":"Li"})");
  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "key";
  options.transport = fake;
  const Client client(options);

  const std::vector<std::string> perms = {"1234567", "9999999", "bad", "3456789", "2345678"};
  BatchOptions batch;
  batch.max_concurrency = 8;
  const auto results = client.get_students(perms, batch);
  REQUIRE(results.size() == 5);
  REQUIRE(results[0].has_value());
  CHECK(results[0]->first_name == "Ana");
  REQUIRE_FALSE(results[1].has_value());
  CHECK(results[1].error().kind == ErrorKind::not_found);
  REQUIRE_FALSE(results[2].has_value());
  CHECK(results[2].error().kind == ErrorKind::invalid_argument);
  REQUIRE_FALSE(results[3].has_value());
  CHECK(results[3].error().kind == ErrorKind::decode);
  CHECK(results[3].error().message.find("nfr") != std::string::npos);
  REQUIRE(results[4].has_value());
  CHECK(results[4]->first_name == "Li");

  const auto sent = fake->requests();
  REQUIRE(sent.size() == 4);
  CHECK(sent[0].url == "https://api.example.edu/students/v2/students/1234567");
  CHECK(sent[1].url == "https://api.example.edu/students/v2/students/9999999");
  CHECK(sent[2].url == "https://api.example.edu/students/v2/students/3456789");
  CHECK(sent[3].url == "https://api.example.edu/students/v2/students/2345678");
}

TEST_CASE("a client that cannot send fails every lookup alike") {
  studentsvc::ClientOptions options;
  options.base_url = "ftp://nowhere";
  options.auth.api_key = "key";
  const Client client(options);
  const std::vector<std::string> perms = {"1234567", "2345678"};
  const auto results = client.get_students(perms);
  REQUIRE(results.size() == 2);
  for (const auto& r : results) {
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().kind == ErrorKind::invalid_argument);
  }
}

namespace {

/// A RawServer that answers every student lookup with `answer(perm asked for)`.
struct AnsweringServer {
  explicit AnsweringServer(std::function<std::string(const std::string&)> a) : answer(std::move(a)) {}
  std::function<std::string(const std::string&)> answer;
  studentsvc::test::RawServer raw{[this](int fd, int) {
    using studentsvc::test::RawServer;
    const std::string request = RawServer::read_request(fd);
    const auto at = request.find("/students/v2/students/");
    const std::string perm = at == std::string::npos ? "" : request.substr(at + 22, 7);
    (void)RawServer::write_all(fd, RawServer::response(200, answer(perm), "Connection: close\r\n"));
  }};
  [[nodiscard]] studentsvc::ClientOptions options() const {
    studentsvc::ClientOptions o;
    o.base_url = raw.base_url();
    o.allow_insecure_loopback = true;
    o.auth.api_key = "batch-test-key";
    o.retry = RetryPolicy::none();
    return o;
  }
};

}  // namespace

TEST_CASE("end to end: an answer for another student is a decode error, lookup by lookup") {
  // 2222222 is answered with 1111111's record; the others correctly; 4444444 with no perm.
  AnsweringServer server([](const std::string& perm) -> std::string {
    if (perm == "2222222") return R"({"perm":"1111111","firstName":"OTHER"})";
    if (perm == "4444444") return R"({"firstName":"NOPERM"})";
    return R"({"perm":")" + perm + R"(","firstName":"RIGHT"})";
  });
  const Client client(server.options());
  const auto wrong = client.get_student("2222222");
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().kind == ErrorKind::decode);
  CHECK_THAT(wrong.error().message, Catch::Contains("'perm'"));
  CHECK_THAT(studentsvc::to_string(wrong.error()), !Catch::Contains("1111111"));
  CHECK_THAT(studentsvc::to_string(wrong.error()), !Catch::Contains("2222222"));
  REQUIRE(client.get_student("1111111"));

  const std::vector<std::string> perms{"1111111", "2222222", "3333333", "4444444"};
  BatchOptions batch;
  batch.max_concurrency = 2;
  const auto results = client.get_students(perms, batch);
  REQUIRE(results.size() == 4);
  REQUIRE(results[0]);
  CHECK(results[0]->perm == "1111111");
  REQUIRE_FALSE(results[1]);
  CHECK(results[1].error().kind == ErrorKind::decode);
  REQUIRE(results[2]);
  CHECK(results[2]->perm == "3333333");
  REQUIRE_FALSE(results[3]);
  CHECK(results[3].error().kind == ErrorKind::decode);
  CHECK_THAT(results[3].error().message, Catch::Contains("'perm'"));
}

TEST_CASE("end to end: a student body with a key twice is a decode error naming the key") {
  AnsweringServer server([](const std::string& perm) -> std::string {
    if (perm == "2222222") return R"({"perm":"2222222","nfr":true,"nfr":false})";
    return R"({"perm":")" + perm + R"(","nfr":false})";
  });
  const Client client(server.options());
  const auto r = client.get_student("2222222");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::decode);
  CHECK(r.error().status == 200);
  CHECK_THAT(r.error().message, Catch::Contains("'nfr'"));
  const std::vector<std::string> perms{"1111111", "2222222"};
  const auto results = client.get_students(perms);
  REQUIRE(results.size() == 2);
  REQUIRE(results[0]);
  CHECK(results[0]->nfr == false);
  REQUIRE_FALSE(results[1]);
  CHECK_THAT(results[1].error().message, Catch::Contains("'nfr'"));
}

}  // namespace batch_test

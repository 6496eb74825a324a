// ClientOptions::perm_syntax end to end: alphanumeric perms reach the wire
// verbatim through the real CurlTransport, and a perm of neither syntax is
// refused by every call form before anything is sent; MockServer enforces the
// rule it is told, as a deployment would.

#include <catch2/catch.hpp>

#include <cstddef>
#include <future>
#include <string>
#include <string_view>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace perm_syntax_test {

using studentsvc::Client;
using studentsvc::ErrorKind;
using studentsvc::PermSyntax;
using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;

namespace {

// 7 bytes each, so only the characters are wrong: a path separator, an escape,
// a dot, a space, and non-ASCII letters (é and Å are 2 bytes in UTF-8).
const std::vector<std::string> hostile = {"A1B2C3/", "A1B2%41", "A1B2.3D", "A1B 2C3", "A1B2Cé", "ÅB2C3D", "../A1B2"};

Client client_for(const MockServer& server, PermSyntax syntax) {
  auto options = server.client_options();
  options.perm_syntax = syntax;
  options.retry = studentsvc::RetryPolicy::none();
  auto client = Client::create(std::move(options));
  REQUIRE(client);
  return std::move(*client);
}

}  // namespace

TEST_CASE("an alphanumeric perm is sent verbatim in the path, case kept", "[perm_syntax][e2e]") {
  MockServer server(studentsvc::testing::with_alphanumeric_perms());
  REQUIRE(server.running());
  const Client client = client_for(server, PermSyntax::alphanumeric);

  const auto avery = client.get_student("A1B2C3D");
  REQUIRE(avery);
  CHECK(avery->perm == "A1B2C3D");
  CHECK(avery->first_name == "Avery");
  const auto bo = client.get_student("Z9y8X7w");
  REQUIRE(bo);
  CHECK(bo->last_name == "Lindqvist");
  // The same letters in another case are another perm: not found, not folded.
  const auto folded = client.get_student("Z9Y8X7W");
  REQUIRE_FALSE(folded);
  CHECK(folded.error().kind == ErrorKind::not_found);
  // Digits still work under the alphanumeric syntax.
  CHECK(client.get_student("1234567"));

  const auto requests = server.requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[0].target == "/students/v2/students/A1B2C3D");
  CHECK(requests[1].target == "/students/v2/students/Z9y8X7w");
  CHECK(requests[2].target == "/students/v2/students/Z9Y8X7W");
  CHECK(requests[3].target == "/students/v2/students/1234567");
}

TEST_CASE("every call form honours the perm syntax", "[perm_syntax][e2e]") {
  MockServer server(studentsvc::testing::with_alphanumeric_perms());
  REQUIRE(server.running());
  const Client client = client_for(server, PermSyntax::alphanumeric);
  const std::vector<std::string> perms = {"A1B2C3D", "1234567", "Z9y8X7w", "A1B2C3D"};

  SECTION("asynchronous") {
    auto future = client.get_student_async("A1B2C3D");
    const auto r = future.get();
    REQUIRE(r);
    CHECK(r->first_name == "Avery");
  }
  SECTION("batch") {
    const auto results = client.get_students(perms);
    REQUIRE(results.size() == perms.size());
    for (std::size_t i = 0; i < perms.size(); ++i) {
      REQUIRE(results[i]);
      CHECK(results[i]->perm == perms[i]);
    }
    CHECK(server.request_count() == 3);  // the repeat looked up once
  }
  SECTION("streamed") {
    std::vector<std::string> seen(perms.size());
    const auto summary = client.for_each_student(perms, [&](std::size_t i, std::string_view, auto r) {
      REQUIRE(r);
      seen[i] = r->perm;
    });
    CHECK(summary.not_sent == 0);
    CHECK(server.request_count() == 3);  // the repeat looked up once
    CHECK(seen == perms);
  }
  SECTION("the user JWT's own student") {
    studentsvc::CallOptions call;
    call.user_jwt = "mock-jwt-avery";
    CHECK(client.get_student("A1B2C3D", call));
    const auto other = client.get_student("Z9y8X7w", call);
    REQUIRE_FALSE(other);
    CHECK(other.error().kind == ErrorKind::not_found);
    const auto current = client.current_student("mock-jwt-avery");
    REQUIRE(current);
    CHECK(current->perm == "A1B2C3D");
  }
}

TEST_CASE("a perm of neither syntax is refused by every call form and never sent", "[perm_syntax][e2e]") {
  MockServer server(studentsvc::testing::with_alphanumeric_perms());
  REQUIRE(server.running());
  for (const PermSyntax syntax : {PermSyntax::digits, PermSyntax::alphanumeric}) {
    const Client client = client_for(server, syntax);
    for (const std::string& perm : hostile) {
      CAPTURE(studentsvc::to_string(syntax), perm);
      const auto single = client.get_student(perm);
      REQUIRE_FALSE(single);
      CHECK(single.error().kind == ErrorKind::invalid_argument);
      CHECK_THAT(single.error().message, Catch::Contains("perm_syntax"));
      const auto async = client.get_student_async(perm).get();
      REQUIRE_FALSE(async);
      CHECK(async.error().kind == ErrorKind::invalid_argument);
      const std::vector<std::string> batch = {perm};
      const auto results = client.get_students(batch);
      REQUIRE(results.size() == 1);
      REQUIRE_FALSE(results[0]);
      CHECK(results[0].error().kind == ErrorKind::invalid_argument);
      std::size_t streamed = 0;
      client.for_each_student(batch, [&](std::size_t, std::string_view, auto r) {
        ++streamed;
        REQUIRE_FALSE(r);
        CHECK(r.error().kind == ErrorKind::invalid_argument);
      });
      CHECK(streamed == 1);
    }
  }
  CHECK(server.request_count() == 0);
}

TEST_CASE("the digits syntax refuses a letter before sending, naming the option", "[perm_syntax][e2e]") {
  MockServer server(studentsvc::testing::with_alphanumeric_perms());
  REQUIRE(server.running());
  const Client client = client_for(server, PermSyntax::digits);
  const auto r = client.get_student("A1B2C3D");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::invalid_argument);
  CHECK_THAT(r.error().message, Catch::Contains("perm_syntax") && Catch::Contains("alphanumeric"));
  CHECK(server.request_count() == 0);
}

TEST_CASE("MockServer enforces the perm syntax it is told", "[perm_syntax][e2e]") {
  // A digits deployment answers a letter with its validation error, whatever students it holds.
  MockServerOptions digits_only = studentsvc::testing::with_alphanumeric_perms();
  digits_only.perm_syntax = PermSyntax::digits;
  MockServer server(digits_only);
  REQUIRE(server.running());
  CHECK(server.client_options().perm_syntax == PermSyntax::digits);
  const Client client = client_for(server, PermSyntax::alphanumeric);
  const auto r = client.get_student("A1B2C3D");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::bad_request);
  CHECK(r.error().status == 400);
  CHECK(server.request_count() == 1);
  CHECK(client.get_student("1234567"));

  MockServer alphanumeric(studentsvc::testing::with_alphanumeric_perms());
  REQUIRE(alphanumeric.running());
  CHECK(alphanumeric.client_options().perm_syntax == PermSyntax::alphanumeric);
}

}  // namespace perm_syntax_test

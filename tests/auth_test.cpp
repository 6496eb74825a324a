// Unit tests for auth.hpp: the Basic credential value and the per-endpoint
// header table of AuthPolicy::apply (interface section 5, DESIGN.md).

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <studentsvc/auth.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace auth_test {

using studentsvc::AuthPolicy;
using studentsvc::BasicCredential;
using studentsvc::Endpoint;
using studentsvc::ErrorKind;
using studentsvc::Headers;
using studentsvc::SvcApiKeyMode;

namespace {

constexpr const char* api_key = "KEY-canary-9f2c";
constexpr const char* svc_key = "SVC-canary-77ab";
constexpr const char* network_id = "svc-acct";
constexpr const char* password = "PW-canary-e3e1";

AuthPolicy policy(SvcApiKeyMode mode = SvcApiKeyMode::same_as_api_key, bool with_basic = false) {
  AuthPolicy p;
  p.api_key = api_key;
  p.svc_api_key_mode = mode;
  if (mode == SvcApiKeyMode::custom) p.svc_api_key = svc_key;
  if (with_basic) p.basic = BasicCredential{network_id, password};
  return p;
}

Headers apply_ok(const AuthPolicy& p, Endpoint e, std::string_view jwt = {}) {
  Headers h;
  auto r = p.apply(e, jwt, h);
  if (!r) FAIL("apply failed: " << r.error().message);
  return h;
}

void check_no_secret(const std::string& text) {
  for (const char* secret : {api_key, svc_key, password}) {
    CHECK_THAT(text, !Catch::Contains(secret));
  }
}

}  // namespace

TEST_CASE("basic_authorization_value test vectors", "[auth]") {
  using studentsvc::basic_authorization_value;
  // RFC 7617 section 2.
  CHECK(basic_authorization_value({"Aladdin", "open sesame"}) == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  // RFC 7617 section 2.1: UTF-8 bytes are encoded as they are.
  CHECK(basic_authorization_value({"test", "123\xC2\xA3"}) == "Basic dGVzdDoxMjPCow==");
  // A ':' in the password is fine: only the first ':' separates.
  CHECK(basic_authorization_value({"user", "pa:ss:word"}) == "Basic dXNlcjpwYTpzczp3b3Jk");
  // Empty password: "user:".
  CHECK(basic_authorization_value({"user", ""}) == "Basic dXNlcjo=");
  // Both empty: ":".
  CHECK(basic_authorization_value({"", ""}) == "Basic Og==");
}

TEST_CASE("basic_authorization_value padding for lengths 0/1/2/3 mod 3", "[auth]") {
  using studentsvc::basic_authorization_value;
  CHECK(basic_authorization_value({"ab", ""}) == "Basic YWI6");        // "ab:"   3 bytes, no padding
  CHECK(basic_authorization_value({"ab", "c"}) == "Basic YWI6Yw==");   // "ab:c"  4 bytes
  CHECK(basic_authorization_value({"ab", "cd"}) == "Basic YWI6Y2Q=");  // "ab:cd" 5 bytes
  CHECK(basic_authorization_value({"ab", "cde"}) == "Basic YWI6Y2Rl"); // "ab:cde" 6 bytes
}

TEST_CASE("AuthPolicy::apply header table", "[auth]") {
  SECTION("get_student, default: x-api-key and svc-api-key carry the API key") {
    const auto h = apply_ok(policy(), Endpoint::get_student);
    CHECK(h.find("x-api-key") == std::optional<std::string_view>(api_key));
    CHECK(h.find("svc-api-key") == std::optional<std::string_view>(api_key));
    CHECK_FALSE(h.contains("Authorization"));
    CHECK_FALSE(h.contains("svc-user-jwt"));
    CHECK(h.size() == 2);
  }
  SECTION("current_student, default") {
    const auto h = apply_ok(policy(), Endpoint::current_student, "jwt");
    CHECK(h.find("x-api-key") == std::optional<std::string_view>(api_key));
    CHECK(h.find("svc-api-key") == std::optional<std::string_view>(api_key));
    CHECK(h.find("svc-user-jwt") == std::optional<std::string_view>("jwt"));
    CHECK_FALSE(h.contains("Authorization"));
    CHECK(h.size() == 3);
  }
  SECTION("svc-api-key custom") {
    for (const auto e : {Endpoint::get_student, Endpoint::current_student}) {
      const auto h = apply_ok(policy(SvcApiKeyMode::custom), e, "jwt");
      CHECK(h.find("x-api-key") == std::optional<std::string_view>(api_key));
      CHECK(h.find("svc-api-key") == std::optional<std::string_view>(svc_key));
    }
  }
  SECTION("svc-api-key off") {
    for (const auto e : {Endpoint::get_student, Endpoint::current_student}) {
      const auto h = apply_ok(policy(SvcApiKeyMode::off), e, "jwt");
      CHECK(h.contains("x-api-key"));
      CHECK_FALSE(h.contains("svc-api-key"));
    }
  }
  SECTION("Authorization only when basic is configured, on both student endpoints") {
    const std::string expected = studentsvc::basic_authorization_value({network_id, password});
    for (const auto e : {Endpoint::get_student, Endpoint::current_student}) {
      const auto h = apply_ok(policy(SvcApiKeyMode::same_as_api_key, true), e, "jwt");
      CHECK(h.find("Authorization") == std::optional<std::string_view>(expected));
    }
  }
  SECTION("conversation carries only x-api-key, whatever is configured") {
    for (const auto mode : {SvcApiKeyMode::same_as_api_key, SvcApiKeyMode::custom, SvcApiKeyMode::off}) {
      const auto h = apply_ok(policy(mode, true), Endpoint::conversation, "a-jwt-that-must-not-be-sent");
      CHECK(h.size() == 1);
      CHECK(h.find("x-api-key") == std::optional<std::string_view>(api_key));
    }
  }
  SECTION("svc-user-jwt on get_student only when given") {
    CHECK_FALSE(apply_ok(policy(), Endpoint::get_student).contains("svc-user-jwt"));
    CHECK(apply_ok(policy(), Endpoint::get_student, "tok").find("svc-user-jwt") ==
          std::optional<std::string_view>("tok"));
  }
  SECTION("earlier values of the same headers are replaced, not duplicated") {
    Headers h{{"X-Api-Key", "old"}, {"SVC-API-KEY", "old"}};
    REQUIRE(policy().apply(Endpoint::get_student, {}, h));
    CHECK(h.size() == 2);
    CHECK(h.find("x-api-key") == std::optional<std::string_view>(api_key));
  }
}

TEST_CASE("current_student requires a non-empty JWT", "[auth]") {
  Headers h;
  auto r = policy().apply(Endpoint::current_student, "", h);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::invalid_argument);
  CHECK_THAT(r.error().message, Catch::Contains("JWT"));
  check_no_secret(r.error().message);
}

TEST_CASE("the JWT passes through byte for byte and is never parsed", "[auth]") {
  const std::string jwt = GENERATE(as<std::string>{}, "not-a-jwt", "a.b", "eyJhbGciOiJub25lIn0.e30.",
                                   "  spaces  inside\tand tab ", "\xC3\xA9\xF0\x9F\x8C\x9F", "%2F..%00==",
                                   std::string(8192, 'j'));
  for (const auto e : {Endpoint::get_student, Endpoint::current_student}) {
    const auto h = apply_ok(policy(), e, jwt);
    const auto sent = h.find("svc-user-jwt");
    REQUIRE(sent);
    CHECK(std::string(*sent) == jwt);
  }
}

TEST_CASE("a network id with ':' is invalid_argument", "[auth]") {
  auto p = policy();
  p.basic = BasicCredential{"svc:acct", password};
  for (const auto e : {Endpoint::get_student, Endpoint::current_student}) {
    Headers h;
    auto r = p.apply(e, "jwt", h);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(r.error().message, Catch::Contains("network id"));
    check_no_secret(r.error().message);
    CHECK_THAT(r.error().message, !Catch::Contains("svc:acct"));
  }
  SECTION("conversation does not use the credential, so it is not refused there") {
    Headers h;
    CHECK(p.apply(Endpoint::conversation, {}, h));
  }
}

TEST_CASE("missing settings are invalid_argument and never echo a value", "[auth]") {
  SECTION("empty API key") {
    AuthPolicy p;
    Headers h;
    for (const auto e : {Endpoint::get_student, Endpoint::current_student, Endpoint::conversation}) {
      auto r = p.apply(e, "jwt", h);
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == ErrorKind::invalid_argument);
      CHECK(r.error().status == 0);
    }
  }
  SECTION("custom svc-api-key mode without a value") {
    auto p = policy();
    p.svc_api_key_mode = SvcApiKeyMode::custom;
    Headers h;
    auto r = p.apply(Endpoint::get_student, "JWT-canary-51d0", h);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::invalid_argument);
    check_no_secret(r.error().message);
    CHECK_THAT(r.error().message, !Catch::Contains("JWT-canary-51d0"));
  }
}

namespace {

/// A provider that hands out what the test sets, and counts the calls.
class ScriptedProvider final : public studentsvc::CredentialProvider {
 public:
  studentsvc::Result<studentsvc::Credentials> next;
  int calls = 0;
  int invalidations = 0;
  studentsvc::Result<studentsvc::Credentials> credentials() override {
    ++calls;
    return next;
  }
  void invalidate() override { ++invalidations; }
};

}  // namespace

TEST_CASE("AuthPolicy::provider: each request carries the provider's current credentials", "[auth]") {
  auto provider = std::make_shared<ScriptedProvider>();
  provider->next = studentsvc::Credentials{"KEY-provided-1", "SVC-provided-1", "svc-acct", "PW-provided-1"};
  AuthPolicy auth;
  auth.api_key = "KEY-fixed-unused";
  auth.basic = BasicCredential{"fixed-acct", "PW-fixed-unused"};
  auth.provider = provider;

  SECTION("student endpoint, svc-api-key the same as the key") {
    Headers h;
    REQUIRE(auth.apply(Endpoint::get_student, {}, h));
    CHECK(h.find("x-api-key") == std::optional<std::string_view>("KEY-provided-1"));
    CHECK(h.find("svc-api-key") == std::optional<std::string_view>("KEY-provided-1"));
    CHECK(h.find("Authorization") == std::optional<std::string_view>(
                                         studentsvc::basic_authorization_value({"svc-acct", "PW-provided-1"})));
  }
  SECTION("custom svc-api-key") {
    auth.svc_api_key_mode = SvcApiKeyMode::custom;
    Headers h;
    REQUIRE(auth.apply(Endpoint::current_student, "jwt", h));
    CHECK(h.find("svc-api-key") == std::optional<std::string_view>("SVC-provided-1"));
  }
  SECTION("a rotated value is used by the next request, and no request caches it") {
    Headers first;
    REQUIRE(auth.apply(Endpoint::conversation, {}, first));
    provider->next = studentsvc::Credentials{"KEY-provided-2", {}, {}, {}};
    Headers second;
    REQUIRE(auth.apply(Endpoint::get_student, {}, second));
    CHECK(first.find("x-api-key") == std::optional<std::string_view>("KEY-provided-1"));
    CHECK(second.find("x-api-key") == std::optional<std::string_view>("KEY-provided-2"));
    CHECK_FALSE(second.contains("Authorization"));  // no network id from the provider: no Basic
    CHECK(provider->calls == 2);
    CHECK(provider->invalidations == 0);  // only a 401 invalidates
  }
  SECTION("the provider's error fails the request with that error") {
    provider->next = studentsvc::make_error(ErrorKind::invalid_argument, "api_key_file '/run/key' does not exist");
    Headers h;
    const auto r = auth.apply(Endpoint::get_student, {}, h);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "api_key_file '/run/key' does not exist");
    CHECK_FALSE(h.contains("x-api-key"));
  }
  SECTION("the same checks as the fixed fields: an empty key, a ':' in the network id") {
    provider->next = studentsvc::Credentials{"", {}, {}, {}};
    Headers h;
    auto r = auth.apply(Endpoint::get_student, {}, h);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "API key is not set");
    provider->next = studentsvc::Credentials{"k", {}, "a:b", "PW-provided-3"};
    r = auth.apply(Endpoint::get_student, {}, h);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, !Catch::Contains("PW-provided-3"));
  }
}

}  // namespace auth_test

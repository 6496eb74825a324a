#include <array>
#include <string_view>

#include "bearer.hpp"
#include "catch.hpp"
#include "settings.hpp"

using student_portal::bearer_token;
using student_portal::parse_arguments;

TEST_CASE("the token is taken from Authorization: Bearer only") {
  CHECK(bearer_token("Bearer eyJhbGciOi.eyJzdWIi.sig-_~+/==") == "eyJhbGciOi.eyJzdWIi.sig-_~+/==");
  CHECK(bearer_token("bearer  mock-jwt-ana ") == "mock-jwt-ana");
  CHECK_FALSE(bearer_token(""));
  CHECK_FALSE(bearer_token("Bearer"));
  CHECK_FALSE(bearer_token("Bearer "));
  CHECK_FALSE(bearer_token("Basic dXNlcjpwYXNz"));
  CHECK_FALSE(bearer_token("Bearermock-jwt-ana"));
  CHECK_FALSE(bearer_token("Bearer two words"));
  CHECK_FALSE(bearer_token("Bearer a=b"));          // '=' only at the end
  CHECK_FALSE(bearer_token("Bearer tok\r\nX-Evil: 1"));  // never a header injection upstream
}

TEST_CASE("--listen takes HOST:PORT") {
  const std::array<std::string_view, 2> v4{"--listen", "127.0.0.1:8080"};
  const auto s = parse_arguments(v4);
  REQUIRE(s);
  REQUIRE(*s);
  CHECK((*s)->host == "127.0.0.1");
  CHECK((*s)->port == 8080);

  const std::array<std::string_view, 1> v6{"--listen=[::1]:0"};
  const auto s6 = parse_arguments(v6);
  REQUIRE(s6);
  REQUIRE(*s6);
  CHECK((*s6)->host == "::1");
  CHECK((*s6)->port == 0);

  const std::array<std::string_view, 1> help{"--help"};
  const auto h = parse_arguments(help);
  REQUIRE(h);
  CHECK_FALSE(*h);
}

TEST_CASE("a bad command line is a usage error") {
  CHECK_FALSE(parse_arguments(std::array<std::string_view, 0>{}));
  CHECK_FALSE(parse_arguments(std::array<std::string_view, 1>{"--listen"}));
  CHECK_FALSE(parse_arguments(std::array<std::string_view, 2>{"--listen", "127.0.0.1"}));
  CHECK_FALSE(parse_arguments(std::array<std::string_view, 2>{"--listen", "127.0.0.1:99999"}));
  CHECK_FALSE(parse_arguments(std::array<std::string_view, 2>{"--listen", ":8080"}));
  CHECK_FALSE(parse_arguments(std::array<std::string_view, 3>{"--listen", "127.0.0.1:80", "--verbose"}));
}

TEST_CASE("the portal turns the circuit breaker on and keeps pages fast when the service is down") {
  const auto o = student_portal::portal_client_options({});
  REQUIRE(o.circuit_breaker);
  CHECK(o.circuit_breaker->failure_threshold >= 1);
  CHECK(o.retry.max_attempts <= 2);
  CHECK(o.connect_timeout <= std::chrono::seconds(2));
  CHECK(o.timeout <= std::chrono::seconds(5));
}

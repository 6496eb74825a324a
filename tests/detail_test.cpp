// Unit tests for detail/: base64, URL parsing and encoding, header validation,
// the retry deadline, URL userinfo secrets and the JSON nesting probe.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/detail/text/base64.hpp>
#include <studentsvc/detail/retry/deadline.hpp>
#include <studentsvc/detail/request/header_validation.hpp>
#include <studentsvc/detail/json/depth.hpp>
#include <studentsvc/detail/call/redact.hpp>
#include <studentsvc/detail/request/url.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace detail_test {

using namespace std::chrono_literals;

using studentsvc::ErrorKind;
using studentsvc::Headers;
namespace detail = studentsvc::detail;

namespace {

detail::BaseUrl parse_ok(std::string_view url, bool allow_http = false) {
  auto r = detail::parse_base_url(url, allow_http);
  if (!r) FAIL("parse_base_url(" << url << ") failed: " << r.error().message);
  return *r;
}

void check_refused(std::string_view url, bool allow_http = false) {
  CAPTURE(url, allow_http);
  auto r = detail::parse_base_url(url, allow_http);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::invalid_argument);
  CHECK(r.error().status == 0);
  CHECK_FALSE(r.error().message.empty());
}

}  // namespace

TEST_CASE("base64_encode: RFC 4648 section 10 vectors", "[detail][base64]") {
  CHECK(detail::base64_encode("") == "");
  CHECK(detail::base64_encode("f") == "Zg==");
  CHECK(detail::base64_encode("fo") == "Zm8=");
  CHECK(detail::base64_encode("foo") == "Zm9v");
  CHECK(detail::base64_encode("foob") == "Zm9vYg==");
  CHECK(detail::base64_encode("fooba") == "Zm9vYmE=");
  CHECK(detail::base64_encode("foobar") == "Zm9vYmFy");
}

TEST_CASE("base64_encode: binary bytes and the full alphabet", "[detail][base64]") {
  CHECK(detail::base64_encode(std::string_view("\0\0\0", 3)) == "AAAA");
  CHECK(detail::base64_encode("\xFF\xFF\xFF") == "////");
  CHECK(detail::base64_encode("\xFB\xEF\xBE") == "++++");
  CHECK(detail::base64_encode("\xFF") == "/w==");
  CHECK(detail::base64_encode(std::string_view("\x00\x10\x83\x10\x51\x87\x20\x92\x8b\x30\xd3\x8f\x41\x14\x93\x51"
                                               "\x55\x97\x61\x96\x9b\x71\xd7\x9f\x82\x18\xa3\x92\x59\xa7\xa2\x9a"
                                               "\xab\xb2\xdb\xaf\xc3\x1c\xb3\xd3\x5d\xb7\xe3\x9e\xbb\xf3\xdf\xbf",
                                               48)) ==
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
  for (std::size_t n = 0; n < 10; ++n) {
    CHECK(detail::base64_encode(std::string(n, 'x')).size() == (n + 2) / 3 * 4);
  }
}

TEST_CASE("parse_base_url: https", "[detail][url]") {
  const auto u = parse_ok("https://api.example.edu");
  CHECK(u.scheme == "https");
  CHECK(u.authority == "api.example.edu");
  CHECK(u.host == "api.example.edu");
  CHECK(u.path_prefix.empty());
  SECTION("scheme and host are case-insensitive") {
    const auto v = parse_ok("HTTPS://API.Example.EDU/Prefix");
    CHECK(v.scheme == "https");
    CHECK(v.host == "api.example.edu");
    CHECK(v.path_prefix == "/Prefix");  // the path keeps its case
  }
  SECTION("https to any host, loopback included, needs no opt-in") {
    CHECK(parse_ok("https://127.0.0.1").host == "127.0.0.1");
    CHECK(parse_ok("https://[2001:db8::1]").host == "2001:db8::1");
  }
}

TEST_CASE("parse_base_url: ports", "[detail][url]") {
  CHECK(parse_ok("https://api.example.edu:8443").authority == "api.example.edu:8443");
  CHECK(parse_ok("https://api.example.edu:8443").host == "api.example.edu");
  CHECK(parse_ok("https://api.example.edu:443/x").path_prefix == "/x");
  CHECK(parse_ok("https://[::1]:8443").host == "::1");
  CHECK(parse_ok("https://[::1]:8443").authority == "[::1]:8443");
  CHECK(parse_ok("https://h:65535").authority == "h:65535");
  check_refused("https://api.example.edu:");
  check_refused("https://api.example.edu:http");
  check_refused("https://api.example.edu:-1");
  check_refused("https://api.example.edu:123456");
  check_refused("https://api.example.edu:65536");
  check_refused("https://api.example.edu:99999");
  check_refused("https://[::1]:");
  check_refused("https://[::1]x");
  check_refused("https://[::1");
  check_refused("https://:443");
}

TEST_CASE("parse_base_url: plain http is refused without the opt-in", "[detail][url]") {
  check_refused("http://api.example.edu");
  check_refused("http://127.0.0.1:8080");
  check_refused("http://localhost");
  check_refused("http://[::1]");
}

TEST_CASE("parse_base_url: http with the opt-in, loopback only", "[detail][url]") {
  SECTION("accepted") {
    for (const char* url : {"http://127.0.0.1", "http://127.0.0.1:8080", "http://127.255.255.254:1/p",
                            "http://127.1.2.3", "http://[::1]", "http://[::1]:9000", "http://localhost",
                            "http://LOCALHOST:8080", "HTTP://localhost/api/"}) {
      CAPTURE(url);
      const auto u = parse_ok(url, true);
      CHECK(u.scheme == "http");
    }
  }
  SECTION("refused") {
    for (const char* url : {"http://128.0.0.1", "http://126.0.0.1", "http://127.0.0.1.evil.com",
                            "http://localhost.evil.com", "http://evil.com", "http://10.0.0.1", "http://0.0.0.0",
                            "http://[::2]", "http://[::ffff:8.8.8.8]", "http://127.0.0", "http://127.0.0.1.2",
                            "http://127.0.0.256", "http://127.0.0.", "http://127..0.1", "http://0127.0.0.1",
                            "http://localhost.", "http://127.0.0.1evil.com", "http://example.com:127"}) {
      check_refused(url, true);
    }
  }
}

TEST_CASE("parse_base_url: other schemes, userinfo, query, fragment, controls", "[detail][url]") {
  check_refused("");
  check_refused("api.example.edu");
  check_refused("ftp://api.example.edu");
  check_refused("file:///etc/passwd");
  check_refused("https://");
  check_refused("https:///path");
  check_refused("https://user@api.example.edu");
  check_refused("https://user:pass@api.example.edu");
  check_refused("https://api.example.edu@evil.com");
  check_refused("https://api.example.edu?x=1");
  check_refused("https://api.example.edu/p?x=1");
  check_refused("https://api.example.edu/#frag");
  check_refused("https://api.example.edu/p q");
  check_refused("https://api.example.edu/p\r\nX-Injected: 1");
  check_refused(std::string_view("https://api.example.edu\0.evil.com", 33));
  check_refused("https://api.example.edu/\x7f");
}

TEST_CASE("parse_base_url: a host libcurl cannot use is refused up front, an IDN host with its ASCII form",
          "[detail][url]") {
  // libcurl converts a UTF-8 host only through libidn2 and the locale: in the
  // C locale every request failed as a "retryable" malformed URL.
  for (const char* idn : {"https://b\xC3\xBC" "cher.example", "https://api.\xC3\xA9" "cole.example/students",
                          "https://\xD0\xBF\xD1\x80\xD0\xB8\xD0\xBC\xD0\xB5\xD1\x80.example:8443"}) {
    CAPTURE(idn);
    const auto r = detail::parse_base_url(idn, false);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(r.error().message, Catch::StartsWith("base URL host is not ASCII"));
    CHECK_THAT(r.error().message, Catch::Contains("punycode, xn--"));
  }
  CHECK(parse_ok("https://xn--bcher-kva.example").host == "xn--bcher-kva.example");
  CHECK(parse_ok("https://api.example.edu/caf\xC3\xA9").path_prefix == "/caf\xC3\xA9");  // the path is not the host
  for (const char* bad : {"https://a!b.example", "https://a{b}.example", "https://a$b.example", "https://a'b.example",
                          "https://a\"b.example", "https://a^b.example", "https://a`b.example", "https://a*b.example",
                          "https://a<b>.example", "https://a=b.example", "https://a;b.example", "https://a,b.example",
                          "https://a+b.example", "https://a&b.example", "https://a(b).example", "https://a%41.example",
                          "https://a\\b.example", "https://a]b.example"}) {
    CAPTURE(bad);
    const auto r = detail::parse_base_url(bad, false);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("which a host name cannot hold") ||
                                      Catch::Contains("invalid port"));
  }
  check_refused("https://[::g]");
  check_refused("https://[fe80::1 ]");
  CHECK(parse_ok("https://[::1]:8443").host == "::1");
  CHECK(parse_ok("https://[fe80::1%25eth0]").host == "fe80::1%25eth0");
  CHECK(parse_ok("https://under_score.example").host == "under_score.example");
  CHECK(parse_ok("https://10.0.0.1:443").host == "10.0.0.1");
}

TEST_CASE("header validation: blank, padded and oversized values are refused, naming the value", "[detail][headers]") {
  for (const std::string bad : {"", " ", "\t", "  \t", " x", "x ", "\tx", "x\t", " x "}) {
    CAPTURE(bad);
    for (const char* name : {"x-api-key", "svc-api-key", "Authorization", "svc-user-jwt", "svc-api-version",
                             "Content-Type", "Accept", "X-Other"}) {
      CAPTURE(name);
      const auto r = detail::validate_header_value(name, bad);
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == ErrorKind::invalid_argument);
      CHECK_THAT(r.error().message, Catch::Contains("nothing was sent"));
      CHECK(detail::validate_headers(Headers{{name, bad}}).error().message == r.error().message);
    }
  }
  // The label says which setting: the value itself never (it may be a secret).
  const auto label = [](std::string_view name) {
    return detail::validate_header_value(name, " SECRET-canary").error().message;
  };
  CHECK_THAT(label("x-api-key"), Catch::StartsWith("the API key (x-api-key) starts or ends with a space or tab"));
  CHECK_THAT(label("svc-api-key"), Catch::StartsWith("the svc-api-key "));
  CHECK_THAT(label("authorization"), Catch::Contains("password"));
  CHECK_THAT(label("svc-user-jwt"), Catch::StartsWith("the user JWT (svc-user-jwt)"));
  CHECK_THAT(label("svc-api-version"), Catch::StartsWith("api_version (svc-api-version)"));
  CHECK_THAT(label("content-type"), Catch::StartsWith("content_type (Content-Type)"));
  for (const char* name : {"x-api-key", "authorization", "svc-user-jwt"}) CHECK_THAT(label(name), !Catch::Contains("SECRET"));

  // The cap: exactly max_header_value_bytes passes, one byte more is refused.
  const std::string at_cap(studentsvc::max_header_value_bytes, 'k');
  CHECK(detail::validate_header_value("x-api-key", at_cap));
  const auto over = detail::validate_header_value("svc-user-jwt", at_cap + "k");
  REQUIRE_FALSE(over);
  CHECK(over.error().message == "the user JWT (svc-user-jwt) is 16385 bytes, over the 16384-byte cap on a request "
                                "header value; nothing was sent");
  CHECK(detail::validate_header_value("x", "inner \t spaces and tabs"));
  CHECK(detail::validate_url_length(std::string(studentsvc::max_request_url_bytes, 'u'), "x"));
  const auto long_url = detail::validate_url_length(std::string(studentsvc::max_request_url_bytes + 1, 'u'),
                                                    "sub_path and query");
  REQUIRE_FALSE(long_url);
  CHECK_THAT(long_url.error().message, Catch::Contains("sub_path and query") && Catch::Contains("nothing was sent"));
}

TEST_CASE("parse_base_url: trailing slashes are normalised", "[detail][url]") {
  CHECK(parse_ok("https://h/").path_prefix.empty());
  CHECK(parse_ok("https://h///").path_prefix.empty());
  CHECK(parse_ok("https://h/api").path_prefix == "/api");
  CHECK(parse_ok("https://h/api/").path_prefix == "/api");
  CHECK(parse_ok("https://h/api///").path_prefix == "/api");
  CHECK(parse_ok("https://h/a/b/").path_prefix == "/a/b");
}

TEST_CASE("BaseUrl::join appends the path to the prefix", "[detail][url]") {
  CHECK(parse_ok("https://h").join("/students/v2/students/1234567") == "https://h/students/v2/students/1234567");
  CHECK(parse_ok("https://h:8443/api///").join("/conversation") == "https://h:8443/api/conversation");
  CHECK(parse_ok("http://[::1]:9/x", true).join("/y") == "http://[::1]:9/x/y");
  CHECK(parse_ok("HTTPS://H.example/").join("/p") == "https://H.example/p");  // authority as given
}

TEST_CASE("is_loopback_host", "[detail][url]") {
  CHECK(detail::is_loopback_host("localhost"));
  CHECK(detail::is_loopback_host("::1"));
  CHECK(detail::is_loopback_host("127.0.0.1"));
  CHECK(detail::is_loopback_host("127.200.3.4"));
  CHECK_FALSE(detail::is_loopback_host("[::1]"));
  CHECK_FALSE(detail::is_loopback_host("128.0.0.1"));
  CHECK_FALSE(detail::is_loopback_host("127.0.0.1.evil.com"));
  CHECK_FALSE(detail::is_loopback_host("localhost.evil.com"));
  CHECK_FALSE(detail::is_loopback_host(""));
  CHECK_FALSE(detail::is_loopback_host("127"));
  CHECK_FALSE(detail::is_loopback_host("127.0.0.1."));
}

TEST_CASE("percent_encode keeps only RFC 3986 unreserved characters", "[detail][url]") {
  CHECK(detail::percent_encode("AZaz09-._~") == "AZaz09-._~");
  CHECK(detail::percent_encode("a b") == "a%20b");
  CHECK(detail::percent_encode("a/b?c#d&e=f+g%h") == "a%2Fb%3Fc%23d%26e%3Df%2Bg%25h");
  CHECK(detail::percent_encode("a/b", true) == "a/b");
  CHECK(detail::percent_encode("\xC3\xA9\xF0\x9F\x8C\x9F") == "%C3%A9%F0%9F%8C%9F");
  CHECK(detail::percent_encode(std::string_view("\0\r\n", 3)) == "%00%0D%0A");
  CHECK(detail::percent_encode("").empty());
}

TEST_CASE("encode_sub_path", "[detail][url]") {
  auto ok = [](std::string_view in) {
    auto r = detail::encode_sub_path(in);
    if (!r) FAIL("encode_sub_path(" << in << ") failed");
    return *r;
  };
  CHECK(ok("") == "");
  CHECK(ok("/") == "");
  CHECK(ok("threads") == "/threads");
  CHECK(ok("/threads/42/") == "/threads/42");
  CHECK(ok("a//b") == "/a/b");
  CHECK(ok("a b/c?d") == "/a%20b/c%3Fd");
  CHECK(ok("...") == "/...");
  CHECK(ok(".hidden/a..b") == "/.hidden/a..b");
  CHECK(ok("%2e%2e") == "/%252e%252e");  // an encoded dot-segment stays literal
  for (const char* bad : {".", "..", "a/..", "../a", "a/./b", "/..", "a/../../b", "./"}) {
    CAPTURE(bad);
    auto r = detail::encode_sub_path(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::invalid_argument);
  }
}

TEST_CASE("encode_query", "[detail][url]") {
  CHECK(detail::encode_query({}) == "");
  CHECK(detail::encode_query({{"a", "1"}}) == "?a=1");
  CHECK(detail::encode_query({{"b", "2"}, {"a", "1"}, {"b", "3"}}) == "?b=2&a=1&b=3");  // order and repeats kept
  CHECK(detail::encode_query({{"q", "a b&c=d"}, {"k/ey", ""}}) == "?q=a%20b%26c%3Dd&k%2Fey=");
  CHECK(detail::encode_query({{"name", "Jos\xC3\xA9"}}) == "?name=Jos%C3%A9");
}

TEST_CASE("header validation: CR, LF and NUL anywhere are refused", "[detail][headers]") {
  const std::string secret = "SECRET-canary-0a1b";
  for (const std::string& bad : {std::string("\r") + secret, secret + "\n", secret.substr(0, 3) + "\r\n" +
                                                                                secret.substr(3),
                                std::string(1, '\0') + secret, secret + std::string(1, '\0'),
                                secret.substr(0, 5) + std::string(1, '\0') + secret.substr(5)}) {
    CHECK_FALSE(detail::is_safe_header_value(bad));
    const Headers h{{"Accept", "application/json"}, {"x-api-key", bad}};
    auto r = detail::validate_headers(h);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::invalid_argument);
    CHECK_THAT(r.error().message, Catch::Contains("x-api-key"));
    CHECK_THAT(r.error().message, !Catch::Contains("SECRET"));
    CHECK_THAT(r.error().message, !Catch::Contains("canary"));
  }
}

TEST_CASE("header validation: ordinary values and names pass", "[detail][headers]") {
  CHECK(detail::is_safe_header_value(""));
  CHECK(detail::is_safe_header_value("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="));
  CHECK(detail::is_safe_header_value("tab\tand spaces"));
  CHECK(detail::is_safe_header_value("\xC3\xA9"));
  CHECK(detail::validate_headers(Headers{{"x-api-key", "k"}, {"User-Agent", "studentsvc-cpp/0.1.0"}}));
  CHECK(detail::validate_headers(Headers{}));
  CHECK(detail::is_valid_header_name("svc-api-version"));
  CHECK(detail::is_valid_header_name("X_Custom!#$%&'*+.^`|~"));
}

TEST_CASE("header validation: bad names are refused", "[detail][headers]") {
  for (const char* bad : {"", "X Api", "x:api", "x-api\r", "x(y)", "\xC3\xA9"}) {
    CAPTURE(bad);
    CHECK_FALSE(detail::is_valid_header_name(bad));
    auto r = detail::validate_headers(Headers{{bad, "v"}});
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::invalid_argument);
  }
}

TEST_CASE("header validation: every control character but tab is refused, each class", "[detail][headers]") {
  const std::string secret = "SECRET-canary-0a1b";
  std::vector<char> refused;
  for (int c = 0x00; c <= 0x1f; ++c) {
    if (c != 0x09) refused.push_back(static_cast<char>(c));
  }
  refused.push_back(static_cast<char>(0x7f));
  for (const char c : refused) {
    CAPTURE(static_cast<int>(static_cast<unsigned char>(c)));
    for (const std::string& bad : {std::string(1, c), std::string(1, c) + secret, secret + std::string(1, c),
                                   secret.substr(0, 4) + std::string(1, c) + secret.substr(4)}) {
      CHECK_FALSE(detail::is_safe_header_value(bad));
      auto r = detail::validate_headers(Headers{{"svc-user-jwt", bad}});
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == ErrorKind::invalid_argument);
      CHECK_THAT(r.error().message, Catch::Contains("svc-user-jwt"));
      CHECK_THAT(r.error().message, !Catch::Contains("SECRET"));
    }
  }
  // Tab, printable ASCII and bytes of UTF-8 (0x80-0xFF) are field content RFC 9110 allows.
  for (int c = 0x09; c <= 0xff; ++c) {
    if (c != 0x09 && (c < 0x20 || c == 0x7f)) continue;
    CAPTURE(c);
    CHECK(detail::is_safe_header_value(std::string("a") + static_cast<char>(c) + "b"));
  }
}

TEST_CASE("Deadline: bounded, unbounded and never overflowing", "[detail][deadline]") {
  using std::chrono::milliseconds;
  const auto t0 = detail::Deadline::clock::now();
  SECTION("a bound counts down and cuts timeouts to what is left, never below 1 ms") {
    const detail::Deadline d(1000ms, t0);
    CHECK_FALSE(d.unbounded());
    CHECK(d.left(t0) == 1000ms);
    CHECK(d.left(t0 + 400ms) == 600ms);
    CHECK(d.left(t0 + 5s) == 0ms);
    CHECK(d.cut(30s, t0 + 400ms) == 600ms);
    CHECK(d.cut(100ms, t0 + 400ms) == 100ms);
    CHECK(d.cut(30s, t0 + 5s) == 1ms);  // libcurl reads 0 as "no timeout"
    CHECK(d.passed_after(600ms, t0 + 400ms));
    CHECK_FALSE(d.passed_after(599ms, t0 + 400ms));
  }
  SECTION("milliseconds::max() and other bounds past the clock's range mean no bound") {
    for (const milliseconds bound : {milliseconds::max(), milliseconds{std::chrono::hours{24 * 365 * 1000}},
                                     milliseconds::max() - milliseconds{1}}) {
      const detail::Deadline d(bound, t0);
      CHECK(d.unbounded());
      CHECK(d.left(t0 + 10s) == milliseconds::max());
      CHECK(d.cut(30s, t0 + 10s) == 30s);  // the request keeps its own timeout, not 1 ms
      CHECK(d.cut(milliseconds::max(), t0) == milliseconds::max());
      CHECK_FALSE(d.passed_after(milliseconds::max(), t0));
    }
  }
  SECTION("a bound of 100 years is kept as a bound, without overflow") {
    const detail::Deadline d(std::chrono::hours{24 * 365 * 100}, t0);
    CHECK_FALSE(d.unbounded());
    CHECK(d.left(t0) == std::chrono::hours{24 * 365 * 100});
    CHECK(d.cut(30s, t0) == 30s);
  }
  SECTION("zero or negative bounds are already over") {
    for (const milliseconds bound : {0ms, -5ms, milliseconds::min()}) {
      const detail::Deadline d(bound, t0);
      CHECK_FALSE(d.unbounded());
      CHECK(d.left(t0) == 0ms);
      CHECK(d.cut(30s, t0) == 1ms);
    }
  }
}

TEST_CASE("url_secrets: the userinfo of a URL, as written and percent-decoded", "[detail][redact]") {
  CHECK(detail::url_secrets("http://proxy.example:3128").empty());
  CHECK(detail::url_secrets("https://api.example.edu/p@th").empty());  // '@' in the path is not userinfo
  auto has = [](const detail::SecretList& v, std::string_view s) { return detail::holds_secret(v, s); };
  const auto a = detail::url_secrets("http://alice:PROXY-pass%40word@proxy.example:3128/");
  CHECK(has(a, "alice:PROXY-pass%40word"));
  CHECK(has(a, "alice:PROXY-pass@word"));
  CHECK(has(a, "PROXY-pass%40word"));
  CHECK(has(a, "PROXY-pass@word"));
  CHECK_FALSE(has(a, "alice"));  // a user name alone is not scrubbed: it would garble messages
  const auto b = detail::url_secrets("socks5h://only-a-token@proxy:1080");
  CHECK(has(b, "only-a-token"));
  std::string text = "could not connect to proxy http://alice:PROXY-pass%40word@proxy.example:3128 "
                     "(PROXY-pass@word)";
  detail::scrub(text, a);
  CHECK_THAT(text, !Catch::Contains("PROXY-pass"));
  CHECK_THAT(text, Catch::Contains("proxy.example:3128"));
}

TEST_CASE("json_nests_deeper_than stops at the limit, whatever the depth", "[detail][json]") {
  CHECK_FALSE(detail::json_nests_deeper_than(R"({"a":[{"b":1}]})", 3));
  CHECK(detail::json_nests_deeper_than(R"({"a":[{"b":[1]}]})", 3));
  CHECK_FALSE(detail::json_nests_deeper_than("not json [[[[[[", 2));  // not JSON: not "too deep"
  CHECK_FALSE(detail::json_nests_deeper_than(R"("[[[[[[[[")", 2));    // brackets in a string do not count
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  CHECK(detail::json_nests_deeper_than(deep, detail::max_json_depth));
  CHECK(detail::json_nests_deeper_than(std::string(1'000'000, '['), 64));  // truncated, still too deep
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  CHECK_FALSE(detail::json_nests_deeper_than(ok, 64));
  CHECK(detail::json_nests_deeper_than("[" + ok + "]", 64));
}

TEST_CASE("find_userinfo: one finder for url_secrets and strip_url_userinfo", "[detail][redact]") {
  auto text = [](std::string_view url, bool through_path = false) -> std::string {
    const auto span = detail::find_userinfo(url, through_path);
    return span ? std::string(url.substr(span->begin, span->at - span->begin)) : std::string("<none>");
  };
  CHECK(text("http://u:p@h:1/x") == "u:p");
  CHECK(text("u:p@h") == "u:p");                     // no scheme
  CHECK(text("'http://u:p@h'") == "u:p");
  CHECK(text("\"u:p@h\"") == "u:p");                 // an opening quote is not userinfo
  CHECK(text("http://u:p@ss@h") == "u:p@ss");        // an unencoded '@': up to the last one
  CHECK(text("http://h") == "<none>");
  CHECK(text("https://h/p@th") == "<none>");         // '@' in the path: not userinfo...
  CHECK(text("https://h/p@th", true) == "h/p");      // ...but scrubbed from a message all the same
  CHECK(text("https://h?q=a@b") == "<none>");
  CHECK(text("https://h#a@b") == "<none>");
  // In a message, a "://" after the last '@' is a later URL's: the word's userinfo is still found.
  CHECK(text("u:p@host/x://y", true) == "u:p");
  CHECK(detail::strip_url_userinfo("u:p@host/x://y") == "host/x://y");
}

TEST_CASE("base64_decode reverses base64_encode and refuses anything else", "[detail]") {
  using studentsvc::detail::base64_decode;
  using studentsvc::detail::base64_encode;
  for (const std::string& bytes : {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
                                  std::string("Aladdin:open sesame"), std::string("\xff\x00\x80", 3)}) {
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
  }
  CHECK_FALSE(base64_decode("abc"));    // not a multiple of 4
  CHECK_FALSE(base64_decode("ab!="));   // not the alphabet
  CHECK_FALSE(base64_decode("a=bc"));   // padding in the middle
  CHECK_FALSE(base64_decode("====="));
}

TEST_CASE("request_secrets finds a Basic password the AuthPolicy does not hold (a provider's)", "[detail]") {
  studentsvc::Headers headers;
  headers.set("Authorization", studentsvc::basic_authorization_value({"svc-acct", "PW-from-provider"}));
  const studentsvc::AuthPolicy no_fixed_credentials;
  const auto secrets = studentsvc::detail::request_secrets(headers, no_fixed_credentials);
  CHECK(std::find(secrets.begin(), secrets.end(), "PW-from-provider") != secrets.end());
  CHECK(std::find(secrets.begin(), secrets.end(), "svc-acct:PW-from-provider") != secrets.end());
  std::string echoed = "server said: bad password PW-from-provider";
  studentsvc::detail::scrub(echoed, secrets);
  CHECK(echoed.find("PW-from-provider") == std::string::npos);
}

}  // namespace detail_test

// Unit tests for retry.hpp: Retry-After and HTTP-date parsing, full-jitter
// backoff, should_retry, and send_with_retry on FakeTransport. Every wait here
// is a few milliseconds.

#include <catch2/catch.hpp>

#include <chrono>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <studentsvc/retry.hpp>
#include <studentsvc/testing/fake_transport.hpp>

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using studentsvc::ErrorKind;
using studentsvc::Headers;
using studentsvc::HttpRequest;
using studentsvc::HttpResponse;
using studentsvc::RetryPolicy;
using studentsvc::testing::FakeTransport;

namespace {

// Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example) as seconds since the epoch.
constexpr std::int64_t rfc_example_epoch = 784111777;

std::chrono::system_clock::time_point at(std::int64_t epoch_seconds) {
  return std::chrono::system_clock::time_point{std::chrono::seconds{epoch_seconds}};
}

/// A policy that retries without waiting, unless a test says otherwise.
RetryPolicy fast(int attempts) {
  RetryPolicy p;
  p.max_attempts = attempts;
  p.initial_backoff = 0ms;
  p.max_backoff = 0ms;
  p.jitter_seed = 42;
  return p;
}

struct Run {
  studentsvc::Result<HttpResponse> outcome;
  int attempts = 0;
  milliseconds elapsed{0};
};

Run run(FakeTransport& fake, const RetryPolicy& policy, bool idempotent = true, HttpRequest request = {}) {
  studentsvc::JitterSource jitter(policy.jitter_seed);
  const studentsvc::Logger logger;
  int attempts = -1;
  const auto start = std::chrono::steady_clock::now();
  auto outcome = studentsvc::send_with_retry(fake, std::move(request), policy, idempotent, jitter, logger, attempts);
  const auto elapsed = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
  return Run{std::move(outcome), attempts, elapsed};
}

}  // namespace

TEST_CASE("parse_http_date reads IMF-fixdate", "[retry]") {
  using studentsvc::parse_http_date;
  auto d = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT");
  REQUIRE(d);
  CHECK(d->time_since_epoch().count() == rfc_example_epoch);
  CHECK(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT")->time_since_epoch().count() == 0);
  CHECK(parse_http_date("Tue, 29 Feb 2028 23:59:59 GMT")->time_since_epoch().count() == 1835481599);
}

TEST_CASE("HTTP-date: every form RFC 9110 makes recipients accept", "[retry][http-date]") {
  namespace detail = studentsvc::detail;
  const auto now = at(rfc_example_epoch);
  struct Row {
    const char* text;
    std::int64_t epoch;
  };
  const Row rows[] = {
      {"Sun, 06 Nov 1994 08:49:37 GMT", rfc_example_epoch},   // IMF-fixdate
      {"Sunday, 06-Nov-94 08:49:37 GMT", rfc_example_epoch},  // obsolete RFC 850
      {"Sun Nov  6 08:49:37 1994", rfc_example_epoch},        // asctime, day as SP DIGIT
      {"Sun Nov 06 08:49:37 1994", rfc_example_epoch},        // asctime, day as 2DIGIT
      {"Wed Nov 16 08:49:37 1994", rfc_example_epoch + 10 * 86400},
      {"Wednesday, 16-Nov-94 08:49:37 GMT", rfc_example_epoch + 10 * 86400},
      {"Thu, 01 Jan 1970 00:00:00 GMT", 0},
      {"Thursday, 01-Jan-70 00:00:00 GMT", 0},
      {"Thu Jan  1 00:00:00 1970", 0},
      {"Tue, 29 Feb 2028 23:59:59 GMT", 1835481599},  // leap day
      {"Sat, 31 Dec 2016 23:59:60 GMT", 1483228800},  // leap second: IMF allows second 60
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const auto d = detail::parse_http_date(row.text, now);
    REQUIRE(d);
    CHECK(d->time_since_epoch().count() == row.epoch);
    // The public name forwards to the same parser (RFC 850 read against today's clock).
    if (std::string_view(row.text).find('-') == std::string_view::npos) {
      CHECK(studentsvc::parse_http_date(row.text) == d);
    }
  }
}

TEST_CASE("HTTP-date: RFC 850 two-digit years more than 50 years ahead are in the past century",
          "[retry][http-date]") {
  namespace detail = studentsvc::detail;
  using std::chrono::year_month_day;
  auto year_of = [](const char* text, std::int64_t now_epoch) {
    const auto d = detail::parse_http_date(text, at(now_epoch));
    REQUIRE(d);
    return static_cast<int>(year_month_day{std::chrono::floor<std::chrono::days>(*d)}.year());
  };
  constexpr std::int64_t jan_2026 = 1767225600;  // Thu, 01 Jan 2026 00:00:00 GMT
  CHECK(year_of("Sunday, 06-Nov-94 08:49:37 GMT", jan_2026) == 1994);   // 2094 is 68 years ahead
  CHECK(year_of("Monday, 06-Nov-30 08:49:37 GMT", jan_2026) == 2030);
  CHECK(year_of("Friday, 01-Jan-76 00:00:00 GMT", jan_2026) == 2076);   // exactly 50 years: not more
  CHECK(year_of("Friday, 01-Jan-77 00:00:00 GMT", jan_2026) == 1977);   // 51 years ahead
  CHECK(year_of("Friday, 01-Jan-26 00:00:00 GMT", jan_2026) == 2026);
  constexpr std::int64_t jan_2090 = 3786912000;  // Sun, 01 Jan 2090 00:00:00 GMT
  CHECK(year_of("Monday, 01-Jan-01 00:00:00 GMT", jan_2090) == 2101);   // the next century is under 50 years
  CHECK(year_of("Monday, 01-Jan-50 00:00:00 GMT", jan_2090) == 2050);
  constexpr std::int64_t jan_1970 = 0;
  CHECK(year_of("Sunday, 06-Nov-94 08:49:37 GMT", jan_1970) == 1994);
  CHECK(year_of("Thursday, 01-Jan-70 00:00:00 GMT", jan_1970) == 1970);
}

TEST_CASE("HTTP-date: invalid dates, times, names and trailing junk are refused", "[retry][http-date]") {
  namespace detail = studentsvc::detail;
  const auto now = at(rfc_example_epoch);
  for (const char* bad : {
           "",
           // IMF-fixdate
           "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 1994 08:49:37 GMT ", " Sun, 06 Nov 1994 08:49:37 GMT",
           "Sun, 06 Nov 1994 08:49:37 GMTx", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
           "Sun, 06 nov 1994 08:49:37 GMT", "sun, 06 Nov 1994 08:49:37 GMT", "Sun, 31 Feb 1994 08:49:37 GMT",
           "Sun, 30 Feb 2024 08:49:37 GMT", "Sun, 29 Feb 2023 08:49:37 GMT", "Sun, 31 Apr 1994 08:49:37 GMT",
           "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
           "Sun, 06 Nov 19x4 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08-49-37 GMT",
           "Sun, 32 Nov 1994 08:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
           "Su,  06 Nov 1994 08:49:37 GMT",  // weekday of the wrong length
           "Sunday, 06 Nov 1994 08:49:37 GMT",
           // RFC 850
           "Sun, 06-Nov-94 08:49:37 GMT",        // short weekday
           "Sundayy, 06-Nov-94 08:49:37 GMT",    // weekday of the wrong length
           "sunday, 06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sunday, 6-Nov-94 08:49:37 GMT",
           "Sunday, 30-Feb-94 08:49:37 GMT", "Sunday, 06-Nov-94 24:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT x",
           "Sunday, 06-Nov-94 08:49:37 UTC", "Sunday,06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-9x 08:49:37 GMT",
           // asctime
           "Sun Nov  6 08:49:37 1994 ", "Sun Nov 6 08:49:37 1994", "Sun Nov   6 08:49:37 1994",
           "Sunday Nov  6 08:49:37 1994", "Sun Feb 30 08:49:37 1994", "Sun Nov  6 24:00:00 1994",
           "Sun Nov  6 08:49:37 94", "Sun Nov  6 08:49:37 1994 GMT", "Sun Nov  0 08:49:37 1994",
           "Sun Xyz  6 08:49:37 1994", "Sun Nov  6 08:49:37 19944"}) {
    CAPTURE(bad);
    CHECK_FALSE(detail::parse_http_date(bad, now));
    // Retry-After ignores surrounding whitespace (OWS); otherwise it falls back to the backoff.
    const std::string_view text(bad);
    if (!text.starts_with(' ') && !text.ends_with(' ')) CHECK_FALSE(studentsvc::parse_retry_after(bad, now));
  }
}

TEST_CASE("Retry-After: each HTTP-date form, far future and far past", "[retry][http-date]") {
  using studentsvc::parse_retry_after;
  const auto now = at(rfc_example_epoch);
  for (const char* later : {"Sun, 06 Nov 1994 08:50:07 GMT", "Sunday, 06-Nov-94 08:50:07 GMT", "Sun Nov  6 08:50:07 1994"}) {
    CAPTURE(later);
    CHECK(parse_retry_after(later, now) == milliseconds{30000});
  }
  for (const char* past : {"Thu, 01 Jan 1970 00:00:00 GMT", "Thursday, 01-Jan-70 00:00:00 GMT",
                           "Thu Jan  1 00:00:00 1970", "Mon, 01 Jan 0001 00:00:00 GMT"}) {
    CAPTURE(past);
    CHECK(parse_retry_after(past, now) == milliseconds{0});
  }
  for (const char* far : {"Fri, 31 Dec 9999 23:59:59 GMT", "Fri Dec 31 23:59:59 9999"}) {
    CAPTURE(far);
    const auto w = parse_retry_after(far, now);
    REQUIRE(w);
    CHECK(*w > std::chrono::hours{24 * 365 * 8000});
  }
  // Overflow-sized delta-seconds mean "as long as allowed"; leading zeros do not count.
  CHECK(parse_retry_after("99999999999999999999999999999999", now) == milliseconds::max());
  CHECK(parse_retry_after("0000000000000000000000000000005", now) == milliseconds{5000});
  CHECK(parse_retry_after("999999999999", now) == std::chrono::seconds{999999999999});
}

TEST_CASE("parse_retry_after: delay-seconds", "[retry]") {
  using studentsvc::parse_retry_after;
  const auto now = at(rfc_example_epoch);
  CHECK(parse_retry_after("0", now) == milliseconds{0});
  CHECK(parse_retry_after("1", now) == milliseconds{1000});
  CHECK(parse_retry_after("120", now) == milliseconds{120000});
  CHECK(parse_retry_after(" 5\t", now) == milliseconds{5000});  // surrounding whitespace
  CHECK(parse_retry_after("007", now) == milliseconds{7000});
}

TEST_CASE("parse_retry_after: huge numbers do not overflow", "[retry]") {
  using studentsvc::parse_retry_after;
  const auto now = at(rfc_example_epoch);
  const auto nine = parse_retry_after("999999999", now);
  REQUIRE(nine);
  CHECK(*nine == std::chrono::seconds{999999999});
  for (const char* huge : {"1000000000", "99999999999999999999", "184467440737095516160000"}) {
    CAPTURE(huge);
    const auto w = parse_retry_after(huge, now);
    REQUIRE(w);
    CHECK(*w >= std::chrono::seconds{999999999});  // positive and very large; the cap applies later
    CHECK(std::min(*w, milliseconds{30000}) == milliseconds{30000});
  }
}

TEST_CASE("parse_retry_after: HTTP-date in the future and in the past", "[retry]") {
  using studentsvc::parse_retry_after;
  const auto now = at(rfc_example_epoch);
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now) == milliseconds{30000});
  CHECK(parse_retry_after("Mon, 07 Nov 1994 08:49:37 GMT", now) == milliseconds{86400000});
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now) == milliseconds{0});
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now) == milliseconds{0});  // past: no wait
  CHECK(parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT", now) == milliseconds{0});
  // Far-future dates (past the year 2262, where nanoseconds overflow) are still a long wait.
  const auto far = parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now);
  REQUIRE(far);
  CHECK(*far > std::chrono::hours{24 * 365 * 8000});
  // Sub-second precision of `now` is honoured.
  CHECK(parse_retry_after("Sun, 06 Nov 1994 08:49:38 GMT", now + 250ms) == milliseconds{750});
}

TEST_CASE("parse_retry_after: garbage is nullopt", "[retry]") {
  using studentsvc::parse_retry_after;
  const auto now = at(rfc_example_epoch);
  for (const char* bad : {"", "   ", "-1", "+5", "1.5", "5s", "soon", "0x10", "1 2", "Sun, 06 Nov 1994",
                          "06 Nov 1994 08:49:37 GMT"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_retry_after(bad, now));
  }
}

TEST_CASE("backoff_delay stays within the full-jitter bounds", "[retry]") {
  RetryPolicy p;
  p.initial_backoff = 100ms;
  p.max_backoff = 1000ms;
  std::mt19937_64 rng(7);
  for (int retry = 1; retry <= 8; ++retry) {
    const std::int64_t bound = std::min<std::int64_t>(100LL << (retry - 1), 1000);
    for (int i = 0; i < 200; ++i) {
      const auto d = studentsvc::backoff_delay(p, retry, rng);
      REQUIRE(d.count() >= 0);
      REQUIRE(d.count() <= bound);
    }
  }
  SECTION("the jitter really varies") {
    std::vector<std::int64_t> seen;
    for (int i = 0; i < 50; ++i) seen.push_back(studentsvc::backoff_delay(p, 4, rng).count());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    CHECK(seen.size() > 10);
  }
  SECTION("zero or negative backoff means no wait") {
    p.initial_backoff = 0ms;
    CHECK(studentsvc::backoff_delay(p, 3, rng) == 0ms);
    p.initial_backoff = -5ms;
    CHECK(studentsvc::backoff_delay(p, 1, rng) == 0ms);
    p.initial_backoff = 100ms;
    p.max_backoff = 0ms;
    CHECK(studentsvc::backoff_delay(p, 1, rng) == 0ms);
  }
  SECTION("a very late retry does not overflow") {
    p.max_backoff = milliseconds{std::numeric_limits<std::int32_t>::max()};
    const auto d = studentsvc::backoff_delay(p, 1000, rng);
    CHECK(d.count() >= 0);
    CHECK(d <= p.max_backoff);
    p.max_backoff = milliseconds::max();  // "no ceiling": doubling must saturate, not wrap
    for (const int retry : {60, 64, 100, 1000}) {
      CAPTURE(retry);
      const auto e = studentsvc::backoff_delay(p, retry, rng);
      CHECK(e > std::chrono::hours{1});  // uniform in [0, max]: a wrapped bound would give 0
    }
  }
}

TEST_CASE("backoff_delay is deterministic for a seed", "[retry]") {
  RetryPolicy p;
  p.initial_backoff = 50ms;
  p.max_backoff = 10s;
  auto sequence = [&p](std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> out;
    for (int retry = 1; retry <= 20; ++retry) out.push_back(studentsvc::backoff_delay(p, retry, rng).count());
    return out;
  };
  CHECK(sequence(1234) == sequence(1234));
  CHECK(sequence(1234) != sequence(4321));
  SECTION("JitterSource with a seed too") {
    studentsvc::JitterSource a(99);
    studentsvc::JitterSource b(99);
    for (int retry = 1; retry <= 20; ++retry) CHECK(a.backoff(p, retry) == b.backoff(p, retry));
  }
}

TEST_CASE("should_retry", "[retry]") {
  using studentsvc::should_retry;
  for (const int s : {408, 429, 500, 502, 503, 504}) {
    CAPTURE(s);
    CHECK(should_retry(HttpResponse{s, {}, {}}));
  }
  for (const int s : {200, 204, 301, 400, 401, 403, 404, 409, 501, 505}) {
    CAPTURE(s);
    CHECK_FALSE(should_retry(HttpResponse{s, {}, {}}));
  }
  CHECK(should_retry(studentsvc::make_error(ErrorKind::transport, "reset")));
  CHECK_FALSE(should_retry(studentsvc::make_error(ErrorKind::invalid_argument, "bad")));
  CHECK_FALSE(should_retry(studentsvc::make_error(ErrorKind::decode, "bad")));
}

TEST_CASE("send_with_retry retries transport errors and transient statuses", "[retry]") {
  FakeTransport fake;
  SECTION("success after failures") {
    fake.fail("connection reset");
    fake.respond(503);
    fake.respond(200, "ok");
    const auto r = run(fake, fast(3));
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 200);
    CHECK(r.outcome->body == "ok");
    CHECK(r.attempts == 3);
    CHECK(fake.request_count() == 3);
  }
  SECTION("each retryable status is retried up to max_attempts; the last outcome is returned") {
    const int status = GENERATE(408, 429, 500, 502, 503, 504);
    CAPTURE(status);
    fake.respond(status, "one");
    fake.respond(status, "two");
    fake.respond(status, "three");
    fake.respond(200, "never reached");
    const auto r = run(fake, fast(3));
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == status);
    CHECK(r.outcome->body == "three");
    CHECK(r.attempts == 3);
    CHECK(fake.request_count() == 3);
    CHECK(fake.pending() == 1);
  }
  SECTION("transport errors to the end: the last error is returned") {
    fake.fail("first");
    fake.fail("second");
    const auto r = run(fake, fast(2));
    REQUIRE_FALSE(r.outcome);
    CHECK(r.outcome.error().kind == ErrorKind::transport);
    CHECK(r.outcome.error().message == "second");
    CHECK(r.attempts == 2);
  }
  SECTION("the same request is sent each time") {
    fake.respond(500);
    fake.respond(200);
    HttpRequest req;
    req.url = "https://h/students/v2/students/1234567";
    req.headers.set("x-api-key", "k");
    const auto r = run(fake, fast(5), true, req);
    REQUIRE(r.outcome);
    const auto sent = fake.requests();
    REQUIRE(sent.size() == 2);
    CHECK(sent[0].url == sent[1].url);
    CHECK(sent[0].headers == sent[1].headers);
  }
}

TEST_CASE("send_with_retry never retries final statuses", "[retry]") {
  const int status = GENERATE(200, 201, 400, 401, 403, 404, 409, 501);
  CAPTURE(status);
  FakeTransport fake;
  fake.respond(status);
  fake.respond(200);
  const auto r = run(fake, fast(5));
  REQUIRE(r.outcome);
  CHECK(r.outcome->status == status);
  CHECK(r.attempts == 1);
  CHECK(fake.request_count() == 1);
}

TEST_CASE("send_with_retry: no retry when not idempotent", "[retry]") {
  FakeTransport fake;
  fake.respond(503);
  fake.respond(200);
  SECTION("status") {
    const auto r = run(fake, fast(5), false);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 503);
    CHECK(r.attempts == 1);
  }
  SECTION("transport error") {
    fake.clear();
    fake.fail("reset");
    fake.respond(200);
    const auto r = run(fake, fast(5), false);
    REQUIRE_FALSE(r.outcome);
    CHECK(r.attempts == 1);
  }
  CHECK(fake.request_count() == 1);
}

TEST_CASE("send_with_retry: max_attempts of 1, 0 or less makes one attempt", "[retry]") {
  const int max_attempts = GENERATE(1, 0, -3);
  FakeTransport fake;
  fake.respond(503);
  fake.respond(200);
  const auto r = run(fake, fast(max_attempts));
  CHECK(r.attempts == 1);
  CHECK(fake.request_count() == 1);
}

TEST_CASE("send_with_retry honours Retry-After", "[retry]") {
  FakeTransport fake;
  SECTION("Retry-After: 0 replaces a long backoff") {
    RetryPolicy p = fast(2);
    p.initial_backoff = 10s;
    p.max_backoff = 10s;
    p.jitter_seed = 1;
    {  // with this seed the backoff alone would wait over a second
      studentsvc::JitterSource probe(p.jitter_seed);
      REQUIRE(probe.backoff(p, 1) > 1s);
    }
    fake.respond(503, "", Headers{{"Retry-After", "0"}});
    fake.respond(200);
    const auto r = run(fake, p);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 200);
    CHECK(r.attempts == 2);
    CHECK(r.elapsed < 1s);
  }
  SECTION("Retry-After capped by max_retry_after") {
    RetryPolicy p = fast(2);
    p.max_retry_after = 40ms;
    fake.respond(429, "", Headers{{"retry-after", "3600"}});
    fake.respond(200);
    const auto r = run(fake, p);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 200);
    CHECK(r.elapsed >= 40ms);  // waited (backoff alone is 0 here)...
    CHECK(r.elapsed < 1s);     // ...but not the hour it asked for
  }
  SECTION("an HTTP-date far in the future is capped as well") {
    RetryPolicy p = fast(2);
    p.max_retry_after = 20ms;
    fake.respond(503, "", Headers{{"Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"}});
    fake.respond(200);
    const auto r = run(fake, p);
    REQUIRE(r.outcome);
    CHECK(r.elapsed >= 20ms);
    CHECK(r.elapsed < 1s);
  }
  SECTION("an unparsable Retry-After falls back to the backoff") {
    RetryPolicy p = fast(2);
    fake.respond(503, "", Headers{{"Retry-After", "later please"}});
    fake.respond(200);
    const auto r = run(fake, p);
    REQUIRE(r.outcome);
    CHECK(r.attempts == 2);
    CHECK(r.elapsed < 1s);
  }
}

TEST_CASE("send_with_retry keeps within max_total_time", "[retry]") {
  FakeTransport fake([](const HttpRequest&) -> studentsvc::Result<HttpResponse> { return HttpResponse{503, {}, {}}; });
  SECTION("a Retry-After past the deadline ends the loop at once") {
    RetryPolicy p = fast(10);
    p.max_total_time = 200ms;
    p.max_retry_after = 5s;
    fake.respond(503, "", Headers{{"Retry-After", "1"}});
    const auto r = run(fake, p);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 503);
    CHECK(r.attempts == 1);
    CHECK(r.elapsed < 200ms);
  }
  SECTION("backoff waits stop before the bound") {
    RetryPolicy p = fast(1000);
    p.initial_backoff = 30ms;
    p.max_backoff = 30ms;
    p.max_total_time = 150ms;
    const auto r = run(fake, p);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 503);
    CHECK(r.attempts > 1);
    CHECK(r.attempts < 1000);
    CHECK(r.elapsed <= 150ms + 100ms);  // the bound, plus scheduling slack
  }
  SECTION("each attempt's timeout is cut to the time left") {
    RetryPolicy p = fast(3);
    p.max_total_time = 500ms;
    HttpRequest req;
    req.timeout = 30s;
    const auto r = run(fake, p, true, req);
    const auto sent = fake.requests();
    REQUIRE(sent.size() == 3);
    for (const auto& s : sent) {
      CHECK(s.timeout <= 500ms);
      CHECK(s.timeout >= 1ms);
    }
  }
  SECTION("an unbounded max_total_time (milliseconds::max) still retries") {
    RetryPolicy p = fast(3);
    p.max_total_time = milliseconds::max();
    HttpRequest req;
    req.timeout = 250ms;
    const auto r = run(fake, p, true, req);
    CHECK(r.attempts == 3);
    CHECK(fake.last_request().timeout == 250ms);
  }
  SECTION("a backoff of centuries ends the loop instead of overflowing the clock") {
    RetryPolicy p = fast(3);
    p.jitter_seed = GENERATE(range(std::uint64_t{1}, std::uint64_t{17}));
    p.initial_backoff = std::chrono::hours{24 * 365 * 1000};
    p.max_backoff = milliseconds::max();
    p.max_total_time = 200ms;
    const auto r = run(fake, p);
    CHECK(r.attempts == 1);
    CHECK(r.elapsed < 200ms);
  }
  SECTION("a shorter request timeout is kept") {
    RetryPolicy p = fast(1);
    HttpRequest req;
    req.timeout = 250ms;
    const auto r = run(fake, p, true, req);
    CHECK(fake.last_request().timeout == 250ms);
  }
}

TEST_CASE("send_with_retry logs retries at info without secrets", "[retry]") {
  FakeTransport fake;
  fake.respond(503);
  fake.respond(200);
  std::vector<std::string> lines;
  const studentsvc::Logger logger{studentsvc::LogLevel::trace,
                                  [&lines](studentsvc::LogLevel, std::string_view l) { lines.emplace_back(l); }};
  studentsvc::JitterSource jitter(1);
  int attempts = 0;
  HttpRequest req;
  req.url = "https://h/students/v2/students/7654321";
  req.headers.set("x-api-key", "KEY-canary");
  auto outcome = studentsvc::send_with_retry(fake, req, fast(2), true, jitter, logger, attempts);
  REQUIRE(outcome);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains("attempt 1"));
  CHECK_THAT(lines[0], Catch::Contains("503"));
  CHECK_THAT(lines[0], !Catch::Contains("7654321"));
  CHECK_THAT(lines[0], !Catch::Contains("KEY-canary"));
}

TEST_CASE("send_with_retry refuses a zero or negative max_total_time without sending", "[retry]") {
  const milliseconds bad = GENERATE(milliseconds{0}, milliseconds{-1}, milliseconds::min());
  FakeTransport fake;
  fake.respond(200);
  RetryPolicy p = fast(3);
  p.max_total_time = bad;
  const auto r = run(fake, p);
  REQUIRE_FALSE(r.outcome);
  CHECK(r.outcome.error().kind == ErrorKind::invalid_argument);
  CHECK(r.attempts == 0);
  CHECK(fake.request_count() == 0);
}

TEST_CASE("milliseconds::max() in every duration of the policy means no bound, without overflow", "[retry]") {
  FakeTransport fake;
  fake.respond(503, "", Headers{{"Retry-After", "0"}});
  fake.respond(503, "", Headers{{"Retry-After", "Thu, 01 Jan 1970 00:00:00 GMT"}});
  fake.respond(200);
  RetryPolicy p = fast(3);
  p.max_total_time = milliseconds::max();
  p.max_retry_after = milliseconds::max();
  p.max_backoff = milliseconds::max();
  p.initial_backoff = 0ms;
  HttpRequest req;
  req.timeout = 1234ms;
  const auto r = run(fake, p, true, req);
  REQUIRE(r.outcome);
  CHECK(r.outcome->status == 200);
  CHECK(r.attempts == 3);
  for (const auto& s : fake.requests()) CHECK(s.timeout == 1234ms);
}

TEST_CASE("a negative max_retry_after counts as zero: no negative wait", "[retry]") {
  FakeTransport fake;
  fake.respond(503, "", Headers{{"Retry-After", "10"}});
  fake.respond(200);
  RetryPolicy p = fast(2);
  p.max_retry_after = -5s;
  std::vector<std::string> lines;
  const studentsvc::Logger logger{studentsvc::LogLevel::info,
                                  [&lines](studentsvc::LogLevel, std::string_view l) { lines.emplace_back(l); }};
  studentsvc::JitterSource jitter(1);
  int attempts = 0;
  const auto outcome = studentsvc::send_with_retry(fake, HttpRequest{}, p, true, jitter, logger, attempts);
  REQUIRE(outcome);
  CHECK(outcome->status == 200);
  CHECK(attempts == 2);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::EndsWith("waiting 0 ms"));
}

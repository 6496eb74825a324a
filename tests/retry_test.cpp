// Unit tests for retry.hpp: Retry-After and HTTP-date parsing, full-jitter
// backoff, should_retry, and the retry engine on FakeTransport, through both
// of its drivers (send_with_retry and the batch loop) on simulated time: no
// test here waits on the real clock.

#include <catch2/catch.hpp>

#include <chrono>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include <studentsvc/retry.hpp>
#include <studentsvc/testing/fake_transport.hpp>

#include "support/fast_retry.hpp"
#include "support/log_capture.hpp"
#include "support/simulated_time.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace retry_test {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using studentsvc::ErrorKind;
using studentsvc::Headers;
using studentsvc::HttpRequest;
using studentsvc::HttpResponse;
using studentsvc::RetryPolicy;
using studentsvc::testing::FakeTransport;
using studentsvc::test::LogCapture;
using studentsvc::test::SimulatedTime;

namespace {

// Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example) as seconds since the epoch.
constexpr std::int64_t rfc_example_epoch = 784111777;

std::chrono::system_clock::time_point at(std::int64_t epoch_seconds) {
  return std::chrono::system_clock::time_point{std::chrono::seconds{epoch_seconds}};
}

/// A policy that retries without waiting, unless a test says otherwise.
RetryPolicy fast(int attempts) {
  RetryPolicy p = studentsvc::test::fast_retry(attempts, milliseconds{30'000}, 42);
  p.initial_backoff = 0ms;
  p.max_backoff = 0ms;
  return p;
}

/// A student lookup carrying an API key.
HttpRequest lookup(std::string_view perm, std::string key) {
  HttpRequest req;
  req.url = "https://h/students/v2/students/" + std::string(perm);
  req.headers.set("x-api-key", std::move(key));
  return req;
}

/// The two runtimes of the one call pipeline: blocking (send_with_retry) and
/// asynchronous (the transport's send_async and run_after).
enum class Path { single, async };

std::string_view name(Path path) { return path == Path::single ? "blocking" : "asynchronous"; }

/// A transport whose waits (run_after) pass on simulated time, so the
/// asynchronous runtime runs here, with no real clock.
class OnSimulatedTime final : public studentsvc::Transport {
 public:
  OnSimulatedTime(studentsvc::Transport& inner, const studentsvc::detail::RetryClock& clock)
      : inner_(inner), clock_(clock) {}
  studentsvc::Result<HttpResponse> send(const HttpRequest& request) override { return inner_.send(request); }
  void run_after(milliseconds delay, std::function<void(bool)> fn, studentsvc::StopToken) override {
    clock_.sleep(delay);
    fn(true);
  }

 private:
  studentsvc::Transport& inner_;
  const studentsvc::detail::RetryClock& clock_;
};

struct Run {
  studentsvc::Result<HttpResponse> outcome;
  int attempts = 0;
  milliseconds elapsed{0};             // simulated
  std::vector<milliseconds> sleeps;    // simulated
  std::vector<std::string> logs;
};

/// One call on simulated time: no test here waits on the real clock.
Run run(FakeTransport& fake, const RetryPolicy& policy, Path path = Path::single, bool idempotent = true,
        const HttpRequest& request = {}, SimulatedTime* time = nullptr) {
  SimulatedTime own;
  SimulatedTime& sim = time != nullptr ? *time : own;
  studentsvc::JitterSource jitter(policy.jitter_seed);
  const LogCapture logs;
  const auto logger = logs.logger(studentsvc::LogLevel::info);
  int attempts = -1;
  studentsvc::Result<HttpResponse> outcome;
  if (path == Path::single) {
    outcome = studentsvc::send_with_retry(fake, request, policy, idempotent, jitter, logger, sim.clock(), attempts);
  } else {
    const auto clock = sim.clock();
    OnSimulatedTime transport(fake, clock);
    static const std::vector<std::string> no_ids;
    studentsvc::detail::CallContext context;
    context.runtime = studentsvc::detail::CallRuntime{&transport, &clock, false};
    context.logger = &logger;
    context.request_id_headers = &no_ids;
    context.jitter = &jitter;
    bool done = false;
    studentsvc::detail::start_call<HttpResponse>(
        std::move(context),
        {"retry", studentsvc::Endpoint::get_student, false, idempotent, policy, false, false,
         [&request]() -> studentsvc::Result<HttpRequest> { return request; }},
        [](studentsvc::Result<HttpResponse>&& o) { return std::move(o); },
        [&](studentsvc::Result<HttpResponse> r, int n) {
          outcome = std::move(r);
          attempts = n;
          done = true;
        },
        {});
    REQUIRE(done);  // a send-only transport runs the whole call before start returns
  }
  return Run{std::move(outcome), attempts, sim.elapsed(), sim.sleeps(), logs.texts()};
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


TEST_CASE("the engine retries transport errors and transient statuses", "[retry][engine]") {
  const Path path = GENERATE(Path::single, Path::async);
  CAPTURE(name(path));
  FakeTransport fake;
  SECTION("success after failures") {
    fake.fail("connection reset");
    fake.respond(503);
    fake.respond(200, "ok");
    const auto r = run(fake, fast(3), path);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 200);
    CHECK(r.outcome->body == "ok");
    CHECK(r.attempts == 3);
    CHECK(fake.request_count() == 3);
    CHECK(r.sleeps == std::vector<milliseconds>{0ms, 0ms});
  }
  SECTION("each retryable status is retried up to max_attempts; the last outcome is returned") {
    const int status = GENERATE(408, 429, 500, 502, 503, 504);
    CAPTURE(status);
    fake.respond(status, "one");
    fake.respond(status, "two");
    fake.respond(status, "three");
    fake.respond(200, "never reached");
    const auto r = run(fake, fast(3), path);
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
    const auto r = run(fake, fast(2), path);
    REQUIRE_FALSE(r.outcome);
    CHECK(r.outcome.error().kind == ErrorKind::transport);
    CHECK(r.outcome.error().message == "second");
    CHECK(r.attempts == 2);
  }
  SECTION("a transport error marked not retryable is final") {
    auto certificate = studentsvc::make_error(ErrorKind::transport, "certificate").error();
    certificate.retryable = false;  // fails the same way again
    fake.fail(certificate);
    fake.respond(200);
    const auto r = run(fake, fast(3), path);
    REQUIRE_FALSE(r.outcome);
    CHECK(r.attempts == 1);
  }
  SECTION("the same request is sent each time") {
    fake.respond(500);
    fake.respond(200);
    const auto r = run(fake, fast(5), path, true, lookup("1234567", "k"));
    REQUIRE(r.outcome);
    const auto sent = fake.requests();
    REQUIRE(sent.size() == 2);
    CHECK(sent[0].url == sent[1].url);
    CHECK(sent[0].headers == sent[1].headers);
  }
}

TEST_CASE("the engine never retries final statuses", "[retry][engine]") {
  const Path path = GENERATE(Path::single, Path::async);
  const int status = GENERATE(200, 201, 400, 401, 403, 404, 409, 501);
  CAPTURE(name(path), status);
  FakeTransport fake;
  fake.respond(status);
  fake.respond(200);
  const auto r = run(fake, fast(5), path);
  REQUIRE(r.outcome);
  CHECK(r.outcome->status == status);
  CHECK(r.attempts == 1);
  CHECK(fake.request_count() == 1);
  CHECK(r.sleeps.empty());
}

TEST_CASE("send_with_retry: no retry when not idempotent", "[retry][engine]") {
  FakeTransport fake;
  fake.respond(503);
  fake.respond(200);
  SECTION("status") {
    const auto r = run(fake, fast(5), Path::single, false);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 503);
    CHECK(r.attempts == 1);
  }
  SECTION("transport error") {
    fake.clear();
    fake.fail("reset");
    fake.respond(200);
    const auto r = run(fake, fast(5), Path::single, false);
    REQUIRE_FALSE(r.outcome);
    CHECK(r.attempts == 1);
  }
  CHECK(fake.request_count() == 1);
}

TEST_CASE("the engine: max_attempts of 1, 0 or less makes one attempt", "[retry][engine]") {
  const Path path = GENERATE(Path::single, Path::async);
  const int max_attempts = GENERATE(1, 0, -3, std::numeric_limits<int>::min());
  CAPTURE(name(path), max_attempts);
  FakeTransport fake;
  fake.respond(503);
  fake.respond(200);
  const auto r = run(fake, fast(max_attempts), path);
  CHECK(r.attempts == 1);
  CHECK(fake.request_count() == 1);
  CHECK(r.sleeps.empty());
  SECTION("RetryPolicy::none() too") {
    FakeTransport again;
    again.respond(503);
    again.respond(200);
    CHECK(run(again, RetryPolicy::none(), path).attempts == 1);
  }
}

TEST_CASE("the engine honours Retry-After in every form", "[retry][engine][http-date]") {
  const Path path = GENERATE(Path::single, Path::async);
  CAPTURE(name(path));
  FakeTransport fake;
  RetryPolicy p = fast(2);
  p.initial_backoff = 10s;
  p.max_backoff = 10s;
  p.jitter_seed = 1;
  {  // with this seed the backoff alone would wait over a second
    studentsvc::JitterSource probe(p.jitter_seed);
    REQUIRE(probe.backoff(p, 1) > 1s);
  }
  auto wait_for = [&](const std::string& value) {
    fake.clear();
    fake.respond(503, "", Headers{{"Retry-After", value}});
    fake.respond(200);
    SimulatedTime t;  // its wall clock reads Sun, 06 Nov 1994 08:49:37 GMT
    const auto r = run(fake, p, path, true, {}, &t);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 200);
    CHECK(r.attempts == 2);
    REQUIRE(r.sleeps.size() == 1);
    return r.sleeps.front();
  };
  studentsvc::JitterSource probe(p.jitter_seed);
  const auto backoff = probe.backoff(p, 1);
  CHECK(wait_for("0") == 0ms);  // replaces the long backoff
  CHECK(wait_for("3") == 3s);
  CHECK(wait_for(" 7\t") == 7s);
  CHECK(wait_for("Sun, 06 Nov 1994 08:49:39 GMT") == 2s);   // IMF-fixdate
  CHECK(wait_for("Sunday, 06-Nov-94 08:49:40 GMT") == 3s);  // RFC 850
  CHECK(wait_for("Sun Nov  6 08:49:41 1994") == 4s);        // asctime
  CHECK(wait_for("Thu, 01 Jan 1970 00:00:00 GMT") == 0ms);  // a date in the past: no wait
  CHECK(wait_for("later please") == backoff);               // unparsable: the backoff
  CHECK(wait_for("-1") == backoff);
  CHECK(wait_for("") == backoff);
  SECTION("capped by max_retry_after, in seconds or as a far date") {
    p.max_retry_after = 40ms;
    CHECK(wait_for("3600") == 40ms);
    CHECK(wait_for("Fri, 31 Dec 9999 23:59:59 GMT") == 40ms);
    CHECK(wait_for("99999999999999999999999999") == 40ms);
  }
  SECTION("a negative max_retry_after counts as zero") {
    p.max_retry_after = -5s;
    CHECK(wait_for("10") == 0ms);
  }
}

TEST_CASE("the engine keeps within max_total_time", "[retry][engine][total]") {
  const Path path = GENERATE(Path::single, Path::async);
  CAPTURE(name(path));
  SimulatedTime time;
  FakeTransport fake([](const HttpRequest&) -> studentsvc::Result<HttpResponse> { return HttpResponse{503, {}, {}}; });
  SECTION("a Retry-After past the deadline ends the loop at once") {
    RetryPolicy p = fast(10);
    p.max_total_time = 200ms;
    p.max_retry_after = 5s;
    fake.respond(503, "", Headers{{"Retry-After", "1"}});
    const auto r = run(fake, p, path, true, {}, &time);
    REQUIRE(r.outcome);
    CHECK(r.outcome->status == 503);
    CHECK(r.attempts == 1);
    CHECK(r.sleeps.empty());
    REQUIRE(r.logs.size() == 1);
    CHECK_THAT(r.logs[0], Catch::Contains("giving up"));
  }
  SECTION("backoff waits and attempts of 20 ms stop before the bound") {
    // An attempt takes 20 ms, or ends at its (cut) timeout like a real transport's.
    fake.set_handler([&time](const HttpRequest& req) -> studentsvc::Result<HttpResponse> {
      time.advance(std::min(20ms, req.timeout));
      if (req.timeout < 20ms) return studentsvc::make_error(ErrorKind::transport, "timeout");
      return HttpResponse{503, {}, {}};
    });
    RetryPolicy p = fast(1000);
    p.initial_backoff = 30ms;
    p.max_backoff = 30ms;
    p.max_total_time = 500ms;
    const auto r = run(fake, p, path, true, {}, &time);
    CHECK_FALSE((r.outcome && r.outcome->ok()));
    CHECK(r.attempts > 5);  // each attempt and wait is at most 50 ms
    CHECK(r.attempts < 1000);
    CHECK(r.elapsed <= 500ms);
    for (const auto w : r.sleeps) CHECK(w <= 30ms);
  }
  SECTION("each attempt's timeout is cut to the time left, never below 1 ms") {
    fake.set_handler([&time](const HttpRequest&) -> studentsvc::Result<HttpResponse> {
      time.advance(200ms);
      return HttpResponse{503, {}, {}};
    });
    RetryPolicy p = fast(5);
    p.max_total_time = 500ms;
    HttpRequest req;
    req.timeout = 30s;
    (void)run(fake, p, path, true, req, &time);
    const auto sent = fake.requests();
    REQUIRE(sent.size() == 3);  // at 0, 200 and 400 ms; at 600 ms the wait of 0 ms would pass the bound
    CHECK(sent[0].timeout == 500ms);
    CHECK(sent[1].timeout == 300ms);
    CHECK(sent[2].timeout == 100ms);
  }
  SECTION("a shorter request timeout is kept") {
    HttpRequest req;
    req.timeout = 250ms;
    (void)run(fake, fast(2), path, true, req, &time);
    for (const auto& s : fake.requests()) CHECK(s.timeout == 250ms);
  }
  SECTION("an unbounded max_total_time (milliseconds::max) still retries and keeps the timeout") {
    RetryPolicy p = fast(3);
    p.max_total_time = milliseconds::max();
    HttpRequest req;
    req.timeout = 250ms;
    const auto r = run(fake, p, path, true, req, &time);
    CHECK(r.attempts == 3);
    for (const auto& s : fake.requests()) CHECK(s.timeout == 250ms);
  }
  SECTION("a backoff of centuries ends the loop instead of overflowing the clock") {
    RetryPolicy p = fast(3);
    p.jitter_seed = GENERATE(range(std::uint64_t{1}, std::uint64_t{17}));
    p.initial_backoff = std::chrono::hours{24 * 365 * 1000};
    p.max_backoff = milliseconds::max();
    p.max_total_time = 200ms;
    const auto r = run(fake, p, path, true, {}, &time);
    CHECK(r.attempts == 1);
    CHECK(r.sleeps.empty());
  }
}

TEST_CASE("the engine refuses a zero or negative max_total_time without sending", "[retry][engine]") {
  const Path path = GENERATE(Path::single, Path::async);
  const milliseconds bad = GENERATE(milliseconds{0}, milliseconds{-1}, milliseconds::min());
  CAPTURE(name(path), bad.count());
  FakeTransport fake;
  fake.respond(200);
  RetryPolicy p = fast(3);
  p.max_total_time = bad;
  const auto r = run(fake, p, path);
  REQUIRE_FALSE(r.outcome);
  CHECK(r.outcome.error().kind == ErrorKind::invalid_argument);
  CHECK(r.attempts == 0);
  CHECK(fake.request_count() == 0);
}

TEST_CASE("milliseconds::max() in every duration of the policy means no bound, without overflow",
          "[retry][engine]") {
  const Path path = GENERATE(Path::single, Path::async);
  CAPTURE(name(path));
  FakeTransport fake;
  fake.respond(503, "", Headers{{"Retry-After", "0"}});
  fake.respond(503, "", Headers{{"Retry-After", "Thu, 01 Jan 1970 00:00:00 GMT"}});
  fake.respond(503, "", Headers{{"Retry-After", "99999999999999999999"}});  // "forever", capped by max()
  fake.respond(200);
  RetryPolicy p = fast(4);
  p.max_total_time = milliseconds::max();
  p.max_retry_after = milliseconds::max();
  p.max_backoff = milliseconds::max();
  p.initial_backoff = milliseconds::max();
  HttpRequest req;
  req.timeout = 1234ms;
  const auto r = run(fake, p, path, true, req);
  REQUIRE(r.outcome);
  CHECK(r.outcome->status == 200);
  CHECK(r.attempts == 4);
  CHECK(r.sleeps == std::vector<milliseconds>{0ms, 0ms, milliseconds::max()});
  for (const auto& s : fake.requests()) CHECK(s.timeout == 1234ms);
}

TEST_CASE("the engine's jitter is deterministic under a seed, the same on both paths, and bounded",
          "[retry][engine][jitter]") {
  auto sleeps = [](Path path, std::uint64_t seed) {
    FakeTransport fake([](const HttpRequest&) -> studentsvc::Result<HttpResponse> { return HttpResponse{500, {}, {}}; });
    RetryPolicy p = fast(8);
    p.initial_backoff = 100ms;
    p.max_backoff = 1s;
    p.jitter_seed = seed;
    return run(fake, p, path).sleeps;
  };
  const auto a = sleeps(Path::single, 42);
  REQUIRE(a.size() == 7);
  CHECK(a == sleeps(Path::single, 42));
  CHECK(a == sleeps(Path::async, 42));
  CHECK(a != sleeps(Path::single, 7));
  const milliseconds bounds[] = {100ms, 200ms, 400ms, 800ms, 1s, 1s, 1s};
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i] >= 0ms);
    CHECK(a[i] <= bounds[i]);
  }
}

TEST_CASE("the engine logs retries at info without secrets", "[retry][engine]") {
  const Path path = GENERATE(Path::single, Path::async);
  CAPTURE(name(path));
  FakeTransport fake;
  fake.respond(503);
  fake.respond(200);
  const auto r = run(fake, fast(2), path, true, lookup("7654321", "KEY-canary"));
  REQUIRE(r.outcome);
  REQUIRE(r.logs.size() == 1);
  CHECK_THAT(r.logs[0], Catch::Contains("attempt 1"));
  CHECK_THAT(r.logs[0], Catch::Contains("503"));
  CHECK_THAT(r.logs[0], Catch::EndsWith("waiting 0 ms"));
  CHECK_THAT(r.logs[0], !Catch::Contains("7654321"));
  CHECK_THAT(r.logs[0], !Catch::Contains("KEY-canary"));
}

TEST_CASE("send_with_retry without a clock still works on the real clock", "[retry]") {
  FakeTransport fake;
  fake.respond(503, "", Headers{{"Retry-After", "0"}});
  fake.respond(200);
  studentsvc::JitterSource jitter(1);
  int attempts = 0;
  const auto outcome = studentsvc::send_with_retry(fake, HttpRequest{}, fast(2), true, jitter, studentsvc::Logger{},
                                                   attempts);
  REQUIRE(outcome);
  CHECK(outcome->status == 200);
  CHECK(attempts == 2);
}

TEST_CASE("RetryRun: outcome in, decision out, with no clock of its own", "[retry][engine]") {
  using studentsvc::detail::RetryRun;
  const std::chrono::steady_clock::time_point t0{};
  const auto wall = at(rfc_example_epoch);
  RetryPolicy p = fast(3);
  studentsvc::JitterSource jitter(1);
  RetryRun run(p, true, t0);
  CHECK(run.timeout(30s, t0) == 30s);
  auto d = run.record(HttpResponse{503, {{"Retry-After", "2"}}, {}}, jitter, t0, wall);
  CHECK(d.retry);
  CHECK(d.wait == 2s);
  d = run.record(HttpResponse{200, {}, {}}, jitter, t0 + 2s, wall + 2s);
  CHECK_FALSE(d.retry);
  CHECK_FALSE(d.out_of_time);
  CHECK(run.attempts() == 2);
  RetryRun once(p, false, t0);  // not idempotent: one attempt, whatever the outcome
  CHECK_FALSE(once.record(HttpResponse{503, {}, {}}, jitter, t0, wall).retry);
}

}  // namespace retry_test

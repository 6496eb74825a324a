// Fuzzes the mapping from what the transport returned to each call's Result:
// any status, headers (Retry-After in both forms among them) and body must map
// to a value or an ApiError of the right kind, never a crash or a sanitizer
// report, and the retry decision must follow the status.

#include <fuzzer/FuzzedDataProvider.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/json.hpp>
#include <studentsvc/responses.hpp>
#include <studentsvc/retry.hpp>

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  studentsvc::HttpResponse response;
  response.status = in.ConsumeIntegralInRange<int>(0, 999);
  const int header_count = in.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < header_count; ++i) {
    std::string name = in.ConsumeBool() ? std::string("Retry-After") : in.ConsumeRandomLengthString(32);
    response.headers.add(std::move(name), in.ConsumeRandomLengthString(64));
  }
  const auto now = std::chrono::system_clock::time_point{} +
                   std::chrono::seconds{in.ConsumeIntegralInRange<std::int64_t>(0, 8'000'000'000)};  // to ~2223

  // An IMF-fixdate from fuzzed parts, years 0000-9999: far past and far future
  // dates must give a wait without overflow (system_clock's ticks end in 2262).
  {
    static constexpr const char* days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    char date[64];
    std::snprintf(date, sizeof date, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[in.ConsumeIntegralInRange(0, 6)],
                  in.ConsumeIntegralInRange(0, 99), months[in.ConsumeIntegralInRange(0, 11)],
                  in.ConsumeIntegralInRange(0, 9999), in.ConsumeIntegralInRange(0, 99),
                  in.ConsumeIntegralInRange(0, 99), in.ConsumeIntegralInRange(0, 99));
    if (const auto wait = studentsvc::parse_retry_after(date, now)) check(wait->count() >= 0);
    // The obsolete forms of the same fields (RFC 850 with a two-digit year, asctime).
    static constexpr const char* long_days[] = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                                "Friday", "Saturday", "Sunday"};
    std::snprintf(date, sizeof date, "%s, %02d-%s-%02d %02d:%02d:%02d GMT", long_days[in.ConsumeIntegralInRange(0, 6)],
                  in.ConsumeIntegralInRange(0, 99), months[in.ConsumeIntegralInRange(0, 11)],
                  in.ConsumeIntegralInRange(0, 99), in.ConsumeIntegralInRange(0, 99),
                  in.ConsumeIntegralInRange(0, 99), in.ConsumeIntegralInRange(0, 99));
    if (const auto wait = studentsvc::parse_retry_after(date, now)) check(wait->count() >= 0);
    std::snprintf(date, sizeof date, "%s %s %2d %02d:%02d:%02d %04d", days[in.ConsumeIntegralInRange(0, 6)],
                  months[in.ConsumeIntegralInRange(0, 11)], in.ConsumeIntegralInRange(0, 99),
                  in.ConsumeIntegralInRange(0, 99), in.ConsumeIntegralInRange(0, 99),
                  in.ConsumeIntegralInRange(0, 99), in.ConsumeIntegralInRange(0, 9999));
    if (const auto wait = studentsvc::parse_retry_after(date, now)) check(wait->count() >= 0);
  }

  response.body = in.ConsumeRemainingBytesAsString();

  // Retry-After in both forms, against an arbitrary "now".
  for (const auto& [name, value] : response.headers) {
    if (const auto wait = studentsvc::parse_retry_after(value, now)) check(wait->count() >= 0);
    // asctime is 24 characters, IMF-fixdate 29, RFC 850 30 to 33 (by weekday name).
    if (const auto date = studentsvc::parse_http_date(value)) check(value.size() >= 24 && value.size() <= 33);
  }

  const studentsvc::Result<studentsvc::HttpResponse> outcome(response);
  check(studentsvc::should_retry(outcome) == studentsvc::is_retryable_status(response.status));

  for (const auto endpoint : {studentsvc::Endpoint::get_student, studentsvc::Endpoint::current_student}) {
    const auto r = studentsvc::map_student_response(outcome, endpoint);
    if (r) {
      check(response.ok());
      if (endpoint == studentsvc::Endpoint::current_student) check(!r->first_name_legal && !r->nfr);
    } else {
      check(r.error().status == response.status);
      if (response.ok()) check(r.error().kind == studentsvc::ErrorKind::decode);
      check(r.error().kind != studentsvc::ErrorKind::transport);
      check(r.error().retry_after_ms >= -1);
    }
  }
  const auto c = studentsvc::map_conversation_response(studentsvc::Result<studentsvc::HttpResponse>(response));
  check(c.has_value() == response.ok());
  if (c) {
    check(c->body == response.body && c->status == response.status);
    (void)c->json();
  }

  // A transport failure passes through every mapping unchanged.
  const studentsvc::Result<studentsvc::HttpResponse> failed = studentsvc::make_error(
      studentsvc::ErrorKind::transport, response.body.substr(0, 16));
  const auto t = studentsvc::map_student_response(failed, studentsvc::Endpoint::get_student);
  check(!t && t.error() == failed.error());
  return 0;
}

#pragma once
/// @file detail/retry/http_date.hpp
/// @brief The one parser of HTTP-date (RFC 9110 section 5.6.7: IMF-fixdate, and
/// the obsolete RFC 850 and asctime forms recipients must accept) and of
/// `Retry-After` (section 10.2.3: HTTP-date or delay-seconds).

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

namespace studentsvc::detail {

namespace http_date {

inline constexpr std::array<std::string_view, 12> months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
inline constexpr std::array<std::string_view, 7> days = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
inline constexpr std::array<std::string_view, 7> long_days = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                              "Friday", "Saturday", "Sunday"};

/// `len` ASCII digits at `pos` as a number; -1 when any is not a digit.
[[nodiscard]] constexpr int digits(std::string_view s, std::size_t pos, std::size_t len) noexcept {
  if (pos + len > s.size()) return -1;
  int v = 0;
  for (std::size_t i = pos; i < pos + len; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

template <std::size_t N>
[[nodiscard]] constexpr bool one_of(const std::array<std::string_view, N>& names, std::string_view s) noexcept {
  return std::find(names.begin(), names.end(), s) != names.end();
}

/// 1..12 for a month name (case-sensitive, as the grammar says), 0 otherwise.
[[nodiscard]] constexpr unsigned month(std::string_view s) noexcept {
  const auto it = std::find(months.begin(), months.end(), s);
  return it == months.end() ? 0U : static_cast<unsigned>(it - months.begin() + 1);
}

/// "HH:MM:SS" at `pos`; second 60 is a leap second (IMF time-of-day allows it).
[[nodiscard]] constexpr std::optional<std::chrono::seconds> time_of_day(std::string_view s,
                                                                        std::size_t pos) noexcept {
  if (pos + 8 > s.size() || s[pos + 2] != ':' || s[pos + 5] != ':') return std::nullopt;
  const int hh = digits(s, pos, 2), mm = digits(s, pos + 3, 2), ss = digits(s, pos + 6, 2);
  if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) return std::nullopt;
  return std::chrono::hours{hh} + std::chrono::minutes{mm} + std::chrono::seconds{ss};
}

[[nodiscard]] inline std::optional<std::chrono::sys_seconds> make(int year, unsigned mon, int day,
                                                                  std::chrono::seconds time) {
  if (mon == 0 || day < 1) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{year}, std::chrono::month{mon},
                                        std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return std::nullopt;  // Feb 30, Apr 31, Feb 29 of a common year
  return std::chrono::sys_days{ymd} + time;
}

}  // namespace http_date

/// Parses an HTTP-date in any of its three forms (exactly: no leading or
/// trailing characters; names are case-sensitive; the weekday must be a valid
/// name but is not checked against the date):
///   IMF-fixdate  `Sun, 06 Nov 1994 08:49:37 GMT`
///   RFC 850      `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year that would
///                be more than 50 years after `now` is in the previous century)
///   asctime      `Sun Nov  6 08:49:37 1994`
[[nodiscard]] inline std::optional<std::chrono::sys_seconds> parse_http_date(std::string_view s,
                                                                             std::chrono::system_clock::time_point now) {
  using namespace http_date;
  if (s.size() == 29 && s[3] == ',') {  // IMF-fixdate
    if (!one_of(days, s.substr(0, 3)) || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
        s.substr(25) != " GMT") {
      return std::nullopt;
    }
    const auto time = time_of_day(s, 17);
    const int year = digits(s, 12, 4);
    if (!time || year < 0) return std::nullopt;
    return make(year, month(s.substr(8, 3)), digits(s, 5, 2), *time);
  }
  if (s.size() == 24 && s[3] == ' ') {  // asctime: day is 2DIGIT or SP DIGIT
    if (!one_of(days, s.substr(0, 3)) || s[7] != ' ' || s[10] != ' ' || s[19] != ' ') return std::nullopt;
    const int day = s[8] == ' ' ? digits(s, 9, 1) : digits(s, 8, 2);
    const auto time = time_of_day(s, 11);
    const int year = digits(s, 20, 4);
    if (!time || year < 0) return std::nullopt;
    return make(year, month(s.substr(4, 3)), day, *time);
  }
  // RFC 850: day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time-of-day SP "GMT"
  const std::size_t comma = s.find(',');
  if (comma == std::string_view::npos || !one_of(long_days, s.substr(0, comma))) return std::nullopt;
  const std::string_view rest = s.substr(comma + 1);
  if (rest.size() != 23 || rest[0] != ' ' || rest[3] != '-' || rest[7] != '-' || rest[10] != ' ' ||
      rest.substr(19) != " GMT") {
    return std::nullopt;
  }
  const auto time = time_of_day(rest, 11);
  const int yy = digits(rest, 8, 2);
  const unsigned mon = month(rest.substr(4, 3));
  const int day = digits(rest, 1, 2);
  if (!time || yy < 0) return std::nullopt;
  // RFC 9110: a date more than 50 years in the future means the most recent
  // past year with those two digits. Start in this century, then move by 100.
  // Fifty calendar years after now (Feb 29 moves to Feb 28 when that year has none).
  const auto today = std::chrono::floor<std::chrono::days>(now);
  const std::chrono::year_month_day ymd{today};
  auto in_fifty = ymd + std::chrono::years{50};
  if (!in_fifty.ok()) in_fifty = in_fifty.year() / in_fifty.month() / std::chrono::last;
  const auto limit = std::chrono::sys_days{in_fifty} + std::chrono::floor<std::chrono::seconds>(now - today);
  const int this_year = static_cast<int>(ymd.year());
  int year = this_year - this_year % 100 + yy;
  auto date = make(year, mon, day, *time);
  if (!date) return std::nullopt;
  if (*date > limit) {
    year -= 100;
  } else if (auto later = make(year + 100, mon, day, *time); later && *later <= limit) {
    year += 100;
  }
  return make(year, mon, day, *time);
}

/// The wait a `Retry-After` value asks for, relative to `now`: delay-seconds
/// (any number of digits; one too large for milliseconds is
/// milliseconds::max(), for the caller's cap), or an HTTP-date (one in the
/// past is zero). Surrounding spaces and tabs are ignored; anything else that
/// does not parse is std::nullopt (the caller falls back to its backoff).
[[nodiscard]] inline std::optional<std::chrono::milliseconds> parse_retry_after(
    std::string_view value, std::chrono::system_clock::time_point now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) return std::nullopt;
  if (value.find_first_not_of("0123456789") == std::string_view::npos) {
    value.remove_prefix(std::min(value.find_first_not_of('0'), value.size()));
    // 12 digits of seconds (over 31,000 years) fit milliseconds; more is "as long as allowed".
    if (value.size() > 12) return std::chrono::milliseconds::max();
    long long seconds = 0;
    for (const char c : value) seconds = seconds * 10 + (c - '0');
    return std::chrono::seconds{seconds};
  }
  const auto date = parse_http_date(value, now);
  if (!date) return std::nullopt;
  // In milliseconds: system_clock's nanoseconds overflow for dates past 2262.
  const auto wait = std::chrono::time_point_cast<std::chrono::milliseconds>(*date) -
                    std::chrono::time_point_cast<std::chrono::milliseconds>(now);
  return std::max(wait, std::chrono::milliseconds{0});
}

}  // namespace studentsvc::detail

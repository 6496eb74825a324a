#pragma once
/// @file testing/detail/content_negotiation.hpp
/// @brief detail::prefers_text_json: MockServer's choice between the two
/// response content types of the student endpoints, from the `Accept` header.

#include <cstddef>
#include <string>
#include <string_view>

namespace studentsvc::testing::detail {

/// How one of the two candidate types is ranked by an Accept header.
struct AcceptRank {
  int q = 0;                            ///< Quality in thousandths (0..1000); 0: not acceptable.
  int specificity = 0;                  ///< 3 exact, 2 `type/*`, 1 `*/*`, 0 no range matched.
  std::size_t position = std::string::npos;  ///< Index of the deciding range in the header.
};

[[nodiscard]] inline std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[nodiscard]] inline std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

/// RFC 9110 §12.4.2 qvalue ("0", "0.5", "1.000") in thousandths; -1 when malformed.
[[nodiscard]] inline int parse_qvalue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return -1;
  int whole = v[0] - '0';
  int frac = 0;
  if (v.size() > 1) {
    if (v[1] != '.' || v.size() > 5) return -1;
    int scale = 100;
    for (std::size_t i = 2; i < v.size(); ++i, scale /= 10) {
      if (v[i] < '0' || v[i] > '9') return -1;
      frac += (v[i] - '0') * scale;
    }
  }
  const int q = whole * 1000 + frac;
  return q > 1000 ? -1 : q;
}

/// How `accept` ranks `type/subtype` (lower case): the most specific matching
/// range decides (RFC 9110 §12.5.1), the first of equally specific ones.
/// Media-type parameters other than q are ignored.
[[nodiscard]] inline AcceptRank rank_in(std::string_view accept, std::string_view type, std::string_view subtype) {
  AcceptRank best;
  std::size_t position = 0;
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    std::string_view element = trim_ows(accept.substr(0, comma));
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    if (element.empty()) continue;  // "a, , b": empty list elements do not count (RFC 9110 §5.6.1)
    const auto semi = element.find(';');
    const std::string range = lower_ascii(trim_ows(element.substr(0, semi)));
    int q = 1000;
    for (std::string_view params = semi == std::string_view::npos ? std::string_view() : element.substr(semi + 1);
         !params.empty();) {
      const auto next = params.find(';');
      const std::string_view param = trim_ows(params.substr(0, next));
      params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
      if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') q = parse_qvalue(param.substr(2));
    }
    const std::size_t here = position++;
    if (q < 0) continue;  // a malformed q: the range is ignored
    const auto slash = range.find('/');
    if (slash == std::string::npos) continue;
    const std::string_view r_type = std::string_view(range).substr(0, slash);
    const std::string_view r_sub = std::string_view(range).substr(slash + 1);
    int specificity = 0;
    if (r_type == type && r_sub == subtype) {
      specificity = 3;
    } else if (r_type == type && r_sub == "*") {
      specificity = 2;
    } else if (r_type == "*" && r_sub == "*") {
      specificity = 1;
    }
    if (specificity > best.specificity) best = AcceptRank{q, specificity, here};
  }
  return best;
}

/// @brief True when `accept` ranks `text/json` above `application/json`: a
/// higher q, or an equal non-zero q from a range listed earlier. An absent or
/// empty header, `*/*`, equal ranks from the same range, and a header that
/// accepts neither all give false (the service's default, application/json).
[[nodiscard]] inline bool prefers_text_json(std::string_view accept) {
  const AcceptRank text = rank_in(accept, "text", "json");
  const AcceptRank application = rank_in(accept, "application", "json");
  if (text.q != application.q) return text.q > application.q;
  return text.q > 0 && text.position < application.position;
}

}  // namespace studentsvc::testing::detail

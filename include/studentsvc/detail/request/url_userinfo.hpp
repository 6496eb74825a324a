#pragma once
/// @file detail/request/url_userinfo.hpp
/// @brief Finds the `user:password@` part of a URL, and strips it from URLs
/// inside a text: libcurl echoes a proxy URL, credentials and all, in some of
/// its error messages ("Unsupported proxy scheme for 'http://user:pw@...'").

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace studentsvc::detail {

/// Where a URL's `user:password@` part is: the userinfo is [begin, at), `at` its '@'.
struct UserinfoSpan {
  std::size_t begin = 0;
  std::size_t at = 0;
};

/// Finds the userinfo of `url` (or of a URL-like word in a message): it
/// starts just after `scheme://`, or, without a scheme, past any opening
/// quote or bracket, and ends at the last '@' of the authority (up to the
/// first '/', '?' or '#'). With `through_path`, at the last '@' of the whole
/// text instead: scrubbing a message may remove too much, never too little.
[[nodiscard]] inline std::optional<UserinfoSpan> find_userinfo(std::string_view url, bool through_path = false) {
  std::size_t begin = 0;
  std::size_t scheme = url.find("://");
  // In a message, a "://" after the last '@' belongs to a later path, not to this URL.
  if (through_path && scheme != std::string_view::npos && scheme > url.rfind('@')) scheme = std::string_view::npos;
  if (scheme != std::string_view::npos) {
    begin = scheme + 3;
  } else {
    while (begin < url.size() && std::string_view("'\"<([`").find(url[begin]) != std::string_view::npos) ++begin;
  }
  const std::string_view rest = url.substr(begin);
  const std::size_t at = (through_path ? rest : rest.substr(0, rest.find_first_of("/?#"))).rfind('@');
  if (at == std::string_view::npos) return std::nullopt;
  return UserinfoSpan{begin, begin + at};
}

/// Removes the userinfo of every URL-like word in `text` (a run without
/// whitespace that holds an '@'; see find_userinfo, through the word's last
/// '@'). "'http://u:p@proxy:3128'" becomes "'http://proxy:3128'", "u:p@proxy"
/// becomes "proxy". A word with '@' in its path loses more than its userinfo:
/// over-scrubbing an error message is safe. Userinfo must be percent-encoded
/// (as URLs require): an unencoded space in a password splits the word.
[[nodiscard]] inline std::string strip_url_userinfo(std::string_view text) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; };
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (is_space(text[pos])) {
      out += text[pos++];
      continue;
    }
    std::size_t end = pos;
    while (end < text.size() && !is_space(text[end])) ++end;
    const std::string_view word = text.substr(pos, end - pos);
    pos = end;
    const auto userinfo = find_userinfo(word, /*through_path=*/true);
    if (!userinfo) {
      out += word;
      continue;
    }
    out += word.substr(0, userinfo->begin);
    out += word.substr(userinfo->at + 1);
  }
  return out;
}

}  // namespace studentsvc::detail

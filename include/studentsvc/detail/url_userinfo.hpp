#pragma once
/// @file detail/url_userinfo.hpp
/// @brief Strips the `user:password@` part of URLs inside a text: libcurl echoes
/// a proxy URL, credentials and all, in some of its error messages
/// ("Unsupported proxy scheme for 'http://user:pw@...'").

#include <cstddef>
#include <string>
#include <string_view>

namespace studentsvc::detail {

/// Removes the userinfo of every URL-like word in `text`: in a word (a run
/// without whitespace) that holds an '@', everything from just after
/// `scheme://` (or from the word's start, past any opening quote or bracket)
/// through the word's last '@'. "'http://u:p@proxy:3128'" becomes
/// "'http://proxy:3128'", "u:p@proxy" becomes "proxy". A word with '@' in its
/// path loses more than its userinfo: over-scrubbing an error message is safe.
/// Userinfo must be percent-encoded (as URLs require): an unencoded space in a
/// password splits the word.
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
    const std::size_t at = word.rfind('@');
    if (at == std::string_view::npos) {
      out += word;
      continue;
    }
    std::size_t start = 0;
    if (const std::size_t scheme = word.find("://"); scheme != std::string_view::npos && scheme < at) {
      start = scheme + 3;
    } else {
      while (start < at && (word[start] == '\'' || word[start] == '"' || word[start] == '<' || word[start] == '(' ||
                            word[start] == '[' || word[start] == '`')) {
        ++start;
      }
    }
    out += word.substr(0, start);
    out += word.substr(at + 1);
  }
  return out;
}

}  // namespace studentsvc::detail

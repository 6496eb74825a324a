// The tool's exit statuses and its one-line messages on stderr.

#include "exit_status.hpp"

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

namespace studentsvc_cli {

namespace {

/// Where the escape sequence that starts at `text[at]` (an ESC) ends (ECMA-48):
/// CSI `ESC [` to its final byte; OSC, DCS, SOS, PM and APC to BEL or `ESC \`;
/// any other to its final byte.
[[nodiscard]] std::size_t escape_end(std::string_view text, std::size_t at) {
  std::size_t i = at + 1;
  if (i >= text.size()) return i;
  const char kind = text[i++];
  if (kind == '[') {
    while (i < text.size() &&
           (static_cast<unsigned char>(text[i]) < 0x40 || static_cast<unsigned char>(text[i]) > 0x7e)) {
      ++i;
    }
    return std::min(i + 1, text.size());
  }
  if (kind == ']' || kind == 'P' || kind == 'X' || kind == '^' || kind == '_') {
    for (; i < text.size(); ++i) {
      if (text[i] == '\a') return i + 1;
      if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '\\') return i + 2;
    }
    return i;
  }
  if (static_cast<unsigned char>(kind) >= 0x20 && static_cast<unsigned char>(kind) <= 0x2f) {
    while (i < text.size() && static_cast<unsigned char>(text[i]) >= 0x20 &&
           static_cast<unsigned char>(text[i]) <= 0x2f) {
      ++i;
    }
    return std::min(i + 1, text.size());
  }
  return i;
}

/// The length of the UTF-8 sequence at `text[at]` and its code point; 0 when it is not valid UTF-8.
[[nodiscard]] std::size_t utf8_at(std::string_view text, std::size_t at, char32_t& code_point) {
  const auto lead = static_cast<unsigned char>(text[at]);
  const std::size_t length = lead >= 0xc2 && lead <= 0xdf   ? 2
                             : lead >= 0xe0 && lead <= 0xef ? 3
                             : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                            : 0;
  if (length == 0 || at + length > text.size()) return 0;
  code_point = lead & (0x7fU >> length);
  for (std::size_t k = 1; k < length; ++k) {
    const auto c = static_cast<unsigned char>(text[at + k]);
    if ((c & 0xc0U) != 0x80U) return 0;
    code_point = (code_point << 6U) | (c & 0x3fU);
  }
  const char32_t smallest = length == 3 ? 0x800 : length == 4 ? 0x10000 : 0x80;
  if (code_point < smallest || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) return 0;
  return length;
}

/// C1 controls (U+0080 to U+009F: 8-bit CSI, OSC, ...) and the bidirectional
/// embeddings, overrides and isolates that reorder what follows on the line.
[[nodiscard]] constexpr bool drives_the_terminal(char32_t c) {
  return (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

[[nodiscard]] std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == 0x1b) {
      i = escape_end(text, i);
    } else if (b < 0x20) {
      out += ' ';
      ++i;
    } else if (b < 0x7f) {
      out += static_cast<char>(b);
      ++i;
    } else if (b == 0x7f) {
      ++i;
    } else {
      char32_t c = 0;
      const std::size_t length = utf8_at(text, i, c);
      if (length == 0) {
        out += '?';
        ++i;
      } else {
        if (!drives_the_terminal(c)) out.append(text.substr(i, length));
        i += length;
      }
    }
  }
  return out;
}

[[nodiscard]] std::string printable_lines(std::string_view text) {
  std::string out;
  for (std::size_t start = 0; start <= text.size();) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out += printable(text.substr(start, end - start));
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

void error_line(std::ostream& err, std::string_view text) { err << "studentsvc: " << printable(text) << '\n'; }

/// Usage error: one line on stderr, pointing at the help.
int usage_error(std::ostream& err, std::string_view text) {
  err << "studentsvc: " << printable(text) << " (see 'studentsvc --help')\n";
  return exit_usage;
}

int report(std::ostream& err, std::string_view command, const studentsvc::ApiError& error) {
  error_line(err, std::string(command) + ": " + studentsvc::to_string(error));
  return exit_status(error.kind);
}

}  // namespace studentsvc_cli

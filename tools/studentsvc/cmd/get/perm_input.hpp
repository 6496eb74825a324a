#pragma once
// Where `studentsvc get` finds its perms: the arguments, or --from FILE|- as
// one perm per line or as a CSV file with --column NAME.

#include <cerrno>
#include <cstring>
#include <expected>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "csv.hpp"

namespace studentsvc_cli {

/// Whitespace (spaces, tabs, a CR of a CRLF file) trimmed from both ends.
[[nodiscard]] inline std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

/// The perms of a text: one a line (blank lines skipped), or, with `column`,
/// that column of a CSV whose first record names the columns. The error says
/// what is wrong in one line.
[[nodiscard]] inline std::expected<std::vector<std::string>, std::string> perms_from_text(
    std::string_view text, const std::optional<std::string>& column) {
  std::vector<std::string> perms;
  if (!column) {
    std::size_t start = 0;
    while (start <= text.size()) {
      auto end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      if (const auto line = trimmed(text.substr(start, end - start)); !line.empty()) perms.emplace_back(line);
      start = end + 1;
    }
    return perms;
  }
  const auto records = parse_csv(text);
  if (!records) return std::unexpected("the CSV input is malformed (an unclosed or stray quote)");
  if (records->empty()) return std::unexpected("the CSV input is empty: no header row");
  const auto& header = records->front();
  std::size_t index = header.size();
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (trimmed(header[i]) == *column) index = i;
  }
  if (index == header.size()) return std::unexpected("the CSV header has no column '" + *column + "'");
  for (std::size_t r = 1; r < records->size(); ++r) {
    const auto& record = (*records)[r];
    if (index >= record.size()) {
      return std::unexpected("CSV record " + std::to_string(r + 1) + " has no column '" + *column + "'");
    }
    perms.emplace_back(trimmed(record[index]));
  }
  return perms;
}

/// The perms of --from: a file, or stdin for "-".
[[nodiscard]] inline std::expected<std::vector<std::string>, std::string> perms_from(
    const std::string& from, const std::optional<std::string>& column) {
  std::string text;
  if (from == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) return std::unexpected("--from -: could not read stdin");
  } else {
    std::ifstream in(from, std::ios::binary);
    if (!in) return std::unexpected("--from " + from + ": cannot open the file (" + std::strerror(errno) + ")");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) return std::unexpected("--from " + from + ": could not read the file");
    text = std::move(buffer).str();
  }
  return perms_from_text(text, column);
}

}  // namespace studentsvc_cli

#include "perm_file.hpp"

#include <cstdint>
#include <vector>

#include "text.hpp"

namespace roster_sync {

namespace {
std::string trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

// All fields of one CSV record; `limit` stops after that many.
std::vector<std::string> csv_fields(const std::string& line, std::size_t limit) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      if (fields.size() == limit) break;
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}
}  // namespace

std::optional<std::string> csv_field(const std::string& line, std::size_t column) {
  auto fields = csv_fields(line, column + 1);
  if (fields.size() <= column) return std::nullopt;
  return trimmed(fields[column]);
}

std::expected<PermFile, std::string> PermFile::open(std::string path, std::optional<std::string> perm_column) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(cat("--perms ", path, ": cannot open the file"));
  if (!perm_column) return PermFile(std::move(path), std::nullopt);
  std::string header;
  if (!std::getline(in, header)) return std::unexpected(cat("--perms ", path, ": the CSV has no header line"));
  const auto names = csv_fields(header, static_cast<std::size_t>(-1));
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (trimmed(names[i]) == *perm_column) return PermFile(std::move(path), i);
  }
  return std::unexpected(cat("--perms ", path, ": the CSV header has no column \"", *perm_column, "\""));
}

std::string PermFile::digest() const {
  std::ifstream in(path_, std::ios::binary);
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 0x100000001b3ULL;
    }
  }
  return hex64(hash);
}

PermFile::Reader PermFile::read() const { return Reader(path_, column_); }

PermFile::Reader::Reader(const std::string& path, std::optional<std::size_t> column)
    : in_(path, std::ios::binary), column_(column) {
  if (column_) std::getline(in_, line_);  // the header
}

void PermFile::Reader::advance() {
  while (std::getline(in_, line_)) {
    std::string perm;
    if (column_) {
      if (trimmed(line_).empty()) continue;
      perm = csv_field(line_, *column_).value_or("");
    } else {
      perm = trimmed(line_);
      if (perm.empty() || perm.front() == '#') continue;
    }
    current_ = std::move(perm);
    ++position_;
    return;
  }
  done_ = true;
}

}  // namespace roster_sync

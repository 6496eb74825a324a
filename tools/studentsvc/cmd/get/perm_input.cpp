// Where `studentsvc get` finds its perms (perm_input.hpp).

#include "cmd/get/perm_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "csv.hpp"

namespace studentsvc_cli {

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

LineReader::~LineReader() {
  if (fd_ > STDERR_FILENO) ::close(fd_);
}

LineReader::Read LineReader::next(std::string& line) {
  line.clear();
  for (;;) {
    if (pos_ == end_ && !fill()) {
      if (failed_) return Read::failed;
      return line.empty() ? Read::end : Read::line;
    }
    const std::string_view chunk = buffered();
    const auto newline = chunk.find('\n');
    const std::size_t take = newline == std::string_view::npos ? chunk.size() : newline + 1;
    if (line.size() + take > max_input_line_bytes + 1) return Read::too_long;  // +1: the '\n' itself
    line.append(chunk.substr(0, take));
    pos_ += take;
    if (newline != std::string_view::npos) return Read::line;
  }
}

std::string_view LineReader::buffered() const {
  return text_ ? text_->substr(pos_, end_ - pos_) : std::string_view(buffer_.data() + pos_, end_ - pos_);
}

bool LineReader::fill() {
  if (text_) {
    if (end_ == text_->size() && started_) return false;
    end_ = text_->size();
  } else {
    ssize_t n = 0;
    do {
      n = ::read(fd_, buffer_.data(), buffer_.size());
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      failed_ = n < 0;
      return false;
    }
    pos_ = 0;
    end_ = static_cast<std::size_t>(n);
  }
  if (!started_) {
    started_ = true;
    if (buffered().starts_with("\xEF\xBB\xBF")) pos_ += 3;
  }
  return pos_ < end_ || fill();
}

PermSource::PermSource(std::unique_ptr<LineReader> lines, std::string name, std::optional<std::string> column)
    : lines_(std::move(lines)), name_(std::move(name)), column_(std::move(column)) {}

std::optional<std::string> PermSource::next() {
  if (error_) return std::nullopt;
  if (!column_) {
    std::string line;
    while (read_line(line)) {
      if (const auto perm = trimmed(line); !perm.empty()) return std::string(perm);
    }
    return std::nullopt;
  }
  if (!column_index_ && !read_header()) return std::nullopt;
  while (pending_.empty()) {
    if (!read_records()) return std::nullopt;
  }
  auto record = std::move(pending_.front());
  pending_.pop_front();
  ++record_number_;
  if (*column_index_ >= record.size()) {
    fail("CSV record " + std::to_string(record_number_) + " has no column '" + *column_ + "'");
    return std::nullopt;
  }
  return std::string(trimmed(record[*column_index_]));
}

bool PermSource::read_line(std::string& line) {
  switch (lines_->next(line)) {
    case LineReader::Read::line: ++line_number_; return true;
    case LineReader::Read::end: return false;
    case LineReader::Read::too_long:
      fail("line " + std::to_string(line_number_ + 1) + " is longer than " + std::to_string(max_input_line_bytes) +
           " bytes: not a perm list or CSV");
      return false;
    case LineReader::Read::failed: fail("could not read it"); return false;
  }
  return false;
}

bool PermSource::read_records() {
  std::string text;
  std::string line;
  std::size_t quotes = 0;
  do {
    if (!read_line(line)) {
      if (error_) return false;
      if (text.empty()) return false;
      break;  // the last record, without a line break (or with an unclosed quote: malformed below)
    }
    for (const char c : line) quotes += c == '"' ? 1 : 0;
    text += line;
    if (text.size() > max_input_line_bytes) {
      fail("CSV record " + std::to_string(record_number_ + 1) + " is longer than " +
           std::to_string(max_input_line_bytes) + " bytes");
      return false;
    }
  } while (quotes % 2 != 0);
  auto records = parse_csv(text);
  if (!records) {
    fail("the CSV input is malformed (an unclosed or stray quote)");
    return false;
  }
  for (auto& r : *records) pending_.push_back(std::move(r));
  return true;
}

bool PermSource::read_header() {
  while (pending_.empty()) {
    if (!read_records()) {
      if (!error_) fail("the CSV input is empty: no header row");
      return false;
    }
  }
  const auto header = std::move(pending_.front());
  pending_.pop_front();
  record_number_ = 1;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (trimmed(header[i]) == *column_) column_index_ = i;
  }
  if (!column_index_) fail("the CSV header has no column '" + *column_ + "'");
  return column_index_.has_value();
}

void PermSource::fail(const std::string& why) {
  if (!error_) error_ = name_.empty() ? why : name_ + ": " + why;
}

std::expected<std::unique_ptr<LineReader>, std::string> open_perm_file(const std::string& from, bool* regular) {
  if (regular != nullptr) *regular = false;
  const int fd = from == "-" ? STDIN_FILENO : ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected("--from " + from + ": cannot open the file (" + std::strerror(errno) + ")");
  auto reader = std::make_unique<LineReader>(fd);  // owns fd (not stdin) from here
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::unexpected("--from " + from + ": cannot read the file");
  if (S_ISDIR(st.st_mode)) return std::unexpected("--from " + from + ": is a directory, not a file of perms");
  if (regular != nullptr) *regular = S_ISREG(st.st_mode);
  return reader;
}

std::expected<std::vector<std::string>, std::string> perms_from_text(std::string_view text,
                                                                     const std::optional<std::string>& column) {
  PermSource source(std::make_unique<LineReader>(text), "", column);
  std::vector<std::string> perms;
  while (auto perm = source.next()) perms.push_back(std::move(*perm));
  if (source.error()) return std::unexpected(*source.error());
  return perms;
}

PermInput::PermInput(std::vector<std::string> arguments, std::unique_ptr<PermSource> from)
    : arguments_(std::move(arguments)), from_(std::move(from)) {}

void PermInput::iterator::read() const {
  if (!pending_ || input_ == nullptr) return;
  pending_ = false;
  if (auto next = input_->next()) {
    current_ = std::move(*next);
  } else {
    input_ = nullptr;
  }
}

std::optional<std::string> PermInput::error() const { return from_ ? from_->error() : std::nullopt; }

std::optional<std::string> PermInput::next() {
  std::optional<std::string> out;
  if (next_argument_ < arguments_.size()) {
    out = std::move(arguments_[next_argument_++]);
  } else if (from_) {
    out = from_->next();
  }
  if (out) {
    ++read_;
  } else {
    finished_ = true;
  }
  return out;
}

}  // namespace studentsvc_cli

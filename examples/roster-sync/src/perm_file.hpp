#pragma once
// The roster: a file of one perm a line, or a CSV whose perm column is named.
// Read as a stream (one line held at a time), as often as the run needs it.

#include <cstddef>
#include <expected>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

namespace roster_sync {

/// Splits one CSV record (RFC 4180 quoting; no line breaks inside a field)
/// and returns field `column`, or std::nullopt when the record is shorter.
[[nodiscard]] std::optional<std::string> csv_field(const std::string& line, std::size_t column);

/// Where the perms are, and in which form.
class PermFile {
 public:
  /// Opens `path` once to check it: readable, and, with `perm_column`, a CSV
  /// whose header names that column. The error says what is wrong.
  [[nodiscard]] static std::expected<PermFile, std::string> open(std::string path,
                                                                 std::optional<std::string> perm_column);

  /// A digest of the file's bytes: --resume refuses a file that changed.
  [[nodiscard]] std::string digest() const;

  class Reader;
  [[nodiscard]] Reader read() const;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  PermFile(std::string path, std::optional<std::size_t> column) : path_(std::move(path)), column_(column) {}
  std::string path_;
  std::optional<std::size_t> column_;  // CSV: the perm's column; none: the whole line
};

/// One pass over the perms as an input range of std::string: blank lines and
/// `#` comments are skipped; surrounding spaces and a CR are trimmed. Each
/// perm's position (0, 1, ...) in the file is position() after it is read.
class PermFile::Reader {
 public:
  class iterator {
   public:
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(Reader* reader) : reader_(reader) {}
    const std::string& operator*() const { return reader_->current_; }
    iterator& operator++() {
      reader_->advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    [[nodiscard]] bool at_end() const { return !reader_ || reader_->done_; }
    friend bool operator==(const iterator& it, std::default_sentinel_t) { return it.at_end(); }

   private:
    Reader* reader_ = nullptr;
  };

  Reader(const std::string& path, std::optional<std::size_t> column);
  Reader(Reader&&) = delete;  // iterators point at it
  iterator begin() {
    if (!started_) {
      started_ = true;
      advance();
    }
    return iterator(this);
  }
  std::default_sentinel_t end() const { return {}; }
  /// The position of the perm last read, counting perms only.
  [[nodiscard]] std::size_t position() const noexcept { return position_; }
  /// Whether the stream failed (not merely ended).
  [[nodiscard]] bool failed() const noexcept { return in_.bad(); }

 private:
  void advance();
  std::ifstream in_;
  std::optional<std::size_t> column_;
  std::string line_, current_;
  std::size_t position_ = static_cast<std::size_t>(-1);
  bool started_ = false, done_ = false;
};

}  // namespace roster_sync

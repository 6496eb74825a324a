#pragma once
// Where `studentsvc get` finds its perms: the arguments, or --from FILE|- as
// one perm per line or as a CSV file with --column NAME. The input is read as
// the batch goes (PermInput is a lazy input range), one bounded line at a
// time, so memory stays flat however long the list.

#include <array>
#include <cstddef>
#include <deque>
#include <expected>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace studentsvc_cli {

/// The longest line (or CSV record) --from reads: a perm list's line is 7
/// digits, a roster export's record a few hundred bytes; anything longer is not
/// such a file, and is refused rather than held (a 200 MB line would be).
inline constexpr std::size_t max_input_line_bytes = 64U * 1024U;

/// Whitespace (spaces, tabs, a CR of a CRLF file) trimmed from both ends.
[[nodiscard]] std::string_view trimmed(std::string_view s);

/// Bytes read a line at a time from a descriptor (or from a text, for tests),
/// each line at most `max_input_line_bytes`; a UTF-8 byte order mark at the
/// start (Excel's "CSV UTF-8") is skipped.
class LineReader {
 public:
  enum class Read { line, end, too_long, failed };

  explicit LineReader(int fd) : fd_(fd) {}
  explicit LineReader(std::string_view text) : text_(text) {}
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  ~LineReader();

  /// The next line into `line`, with its '\n' when it had one.
  [[nodiscard]] Read next(std::string& line);

 private:
  [[nodiscard]] std::string_view buffered() const;
  bool fill();

  int fd_ = -1;
  std::optional<std::string_view> text_;
  std::array<char, 16U * 1024U> buffer_{};
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool started_ = false;
  bool failed_ = false;
};

/// The perms of --from, one at a time: one a line (blank lines skipped), or,
/// with `column`, that column of a CSV whose first record names the columns.
/// A mistake (an over-long line, a malformed CSV record) ends the input with
/// error() saying what and where in one line.
class PermSource {
 public:
  PermSource(std::unique_ptr<LineReader> lines, std::string name, std::optional<std::string> column);

  /// The next perm, or nullopt at the end of the input (or at a mistake).
  [[nodiscard]] std::optional<std::string> next();
  [[nodiscard]] const std::optional<std::string>& error() const noexcept { return error_; }

 private:
  bool read_line(std::string& line);
  /// The records of the next lines that end outside a quoted field (a field may hold line breaks).
  bool read_records();
  bool read_header();
  void fail(const std::string& why);

  std::unique_ptr<LineReader> lines_;
  std::string name_;
  std::optional<std::string> column_;
  std::optional<std::size_t> column_index_;
  std::deque<std::vector<std::string>> pending_;
  std::size_t line_number_ = 0;
  std::size_t record_number_ = 0;
  std::optional<std::string> error_;
};

/// Opens --from: a file, a pipe (`<(...)`), or stdin for "-"; a directory or
/// an unopenable file is the one-line error.
[[nodiscard]] std::expected<std::unique_ptr<LineReader>, std::string> open_perm_file(const std::string& from,
                                                                                     bool* regular = nullptr);

/// Every perm of a text at once, or the first mistake (for tests and small inputs).
[[nodiscard]] std::expected<std::vector<std::string>, std::string> perms_from_text(
    std::string_view text, const std::optional<std::string>& column);

/// The perms of `get`: its arguments, then those of --from (read lazily). An
/// input range of std::string for Client::for_each_student: each perm is read
/// when the batch asks for it, and counted.
class PermInput {
 public:
  PermInput(std::vector<std::string> arguments, std::unique_ptr<PermSource> from);

  /// Reads a perm only when it is looked at (`*it`, `it == end`), not on `++it`:
  /// the batch increments right after taking a perm, before it sends it, and a
  /// pipe's next line may come only later.
  class iterator {
   public:
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(PermInput* input) : input_(input) {}
    const std::string& operator*() const {
      read();
      return current_;
    }
    iterator& operator++() {
      read();  // the current one is consumed; the next is read when asked for
      pending_ = true;
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& it, std::default_sentinel_t) {
      it.read();
      return it.input_ == nullptr;
    }

   private:
    void read() const;
    mutable PermInput* input_ = nullptr;
    mutable std::string current_;
    mutable bool pending_ = true;
  };

  [[nodiscard]] iterator begin() { return iterator(this); }
  [[nodiscard]] static std::default_sentinel_t end() noexcept { return {}; }

  /// How many perms were read so far.
  [[nodiscard]] std::size_t read() const noexcept { return read_; }
  /// Whether the input has ended (every perm read, or a mistake).
  [[nodiscard]] bool finished() const noexcept { return finished_; }
  /// The input's mistake, when one ended it.
  [[nodiscard]] std::optional<std::string> error() const;

 private:
  std::optional<std::string> next();

  std::vector<std::string> arguments_;
  std::size_t next_argument_ = 0;
  std::unique_ptr<PermSource> from_;
  std::size_t read_ = 0;
  bool finished_ = false;
};

/// What `get` looks up: the perms, and their count when it is known up front.
struct GetInput {
  std::vector<std::string> arguments;  ///< without --from: the perms (a perm given twice is looked up once)
  bool from = false;                   ///< with --from: `perms` reads the arguments, then the file
  PermInput perms{{}, nullptr};
  std::optional<std::size_t> total;  ///< the arguments and a regular file's perms; unknown for a pipe
  bool single = false;               ///< one perm argument and no --from: the record alone, not a batch
};

}  // namespace studentsvc_cli

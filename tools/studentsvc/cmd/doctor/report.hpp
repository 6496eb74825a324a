#pragma once
// What `studentsvc doctor` prints: one line per check (✓, ✗, ! or - for
// skipped) with its time, detail and hint, or one JSON object. Every text
// passes through the Redactor first, so no secret the tool knows can be shown.

#include <chrono>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace studentsvc_cli::doctor {

enum class Status { ok, failed, warning, skipped };

[[nodiscard]] std::string_view to_string(Status s);
/// ✓, ✗, ! or -.
[[nodiscard]] std::string_view mark(Status s);

struct Check {
  std::string name;
  Status status = Status::ok;
  std::chrono::microseconds time{};
  std::string detail;
  std::string hint;                ///< on failure or warning: the setting to change
  std::vector<std::string> lines;  ///< further detail lines (the configuration's settings)
  int exit = 0;                    ///< the exit status a failure means
};

/// Replaces every secret the tool holds (keys, password, Basic value, JWT, proxy
/// password) by REDACTED: a server that echoes one, or a message that quotes
/// one, still cannot put it on the screen or in a ticket.
class Redactor {
 public:
  void add(std::string_view secret) { replace(secret, "REDACTED"); }
  /// Shows `from` as `to` (a perm as its masked form).
  void replace(std::string_view from, std::string_view to);
  [[nodiscard]] std::string operator()(std::string text) const;

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

/// "12.3 ms".
[[nodiscard]] std::string millis(std::chrono::microseconds t);

void print_text(std::ostream& out, const std::vector<Check>& checks, const Redactor& clean);
void print_json(std::ostream& out, const std::vector<Check>& checks, int exit, const Redactor& clean);

}  // namespace studentsvc_cli::doctor

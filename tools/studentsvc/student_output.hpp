#pragma once
// How the tool writes students: json, ndjson, csv or table, one record or a
// stream of results (a failed lookup of a batch is written in place).

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/studentsvc.hpp>

#include "csv.hpp"
#include "format.hpp"

namespace studentsvc_cli {

/// A student as JSON, in the interface's key order (extended: every field).
[[nodiscard]] nlohmann::ordered_json student_json(const studentsvc::StudentExtended& s, bool extended);
/// A failed lookup as the batch writes it in json and ndjson.
[[nodiscard]] nlohmann::ordered_json error_json(const std::string& perm, const studentsvc::ApiError& e);

/// A two-column table: `title` and VALUE, then one row per pair.
void print_rows(std::ostream& out, std::string_view title,
                const std::vector<std::pair<std::string_view, std::string>>& rows);
/// One student as a table (the typed view after the fields when extended).
void print_student_table(std::ostream& out, const studentsvc::StudentExtended& s, bool extended);
/// One student, as `get PERM` and `current` print it (json or table).
void print_student(std::ostream& out, const studentsvc::StudentExtended& s, Format format, bool extended);

/// The header row: every field of the interface (nfr among them), then `error`.
[[nodiscard]] std::string csv_header();
/// One result as a CSV row (a failure: its perm and the error).
[[nodiscard]] std::string csv_row(const std::string& perm, const studentsvc::Result<studentsvc::StudentExtended>& r,
                                  CsvFormulas formulas = CsvFormulas::neutralise);

/// Writes a batch's results as they come: begin(), one result(), end().
class ResultWriter {
 public:
  ResultWriter(std::ostream& out, Format format, CsvFormulas formulas = CsvFormulas::neutralise)
      : out_(out), format_(format), formulas_(formulas) {}

  void begin();
  void result(const std::string& perm, const studentsvc::Result<studentsvc::StudentExtended>& r);
  void end();

 private:
  std::ostream& out_;
  Format format_;
  CsvFormulas formulas_;
  bool first_ = true;
};

}  // namespace studentsvc_cli

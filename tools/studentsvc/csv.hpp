#pragma once
// RFC 4180 CSV for the tool: quoting fields on output, splitting records on input.
// Bytes pass through as they are, so UTF-8 text is kept byte for byte.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace studentsvc_cli {

/// What csv output does with a cell a spreadsheet would run as a formula.
enum class CsvFormulas {
  neutralise,  ///< `'` put before it, and the cell quoted (OWASP's advice against CSV injection)
  keep,        ///< as it came (--csv-raw)
};

/// A cell Excel, LibreOffice or Google Sheets reads as a formula: one that
/// starts with `=`, `+`, `-`, `@`, a tab or a CR (OWASP's list).
[[nodiscard]] bool starts_like_formula(std::string_view value);

/// A field as RFC 4180 writes it: quoted (with `"` doubled) when it holds a comma,
/// a quote, CR or LF, or starts or ends with a space; as it is otherwise. With
/// CsvFormulas::neutralise a formula-like field is written as `"'=..."`.
[[nodiscard]] std::string csv_field(std::string_view value, CsvFormulas formulas = CsvFormulas::keep);

/// One record: the fields joined by commas, ended by CRLF (RFC 4180's line break).
[[nodiscard]] std::string csv_record(const std::vector<std::string>& fields, CsvFormulas formulas = CsvFormulas::keep);

/// The records of a CSV text (CRLF or LF line breaks, quoted fields may hold
/// either); std::nullopt when a quoted field is not closed or a quote stands
/// inside an unquoted field. Blank lines are skipped.
[[nodiscard]] std::optional<std::vector<std::vector<std::string>>> parse_csv(std::string_view text);

}  // namespace studentsvc_cli

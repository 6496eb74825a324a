// RFC 4180 CSV for the tool: quoting fields on output, splitting records on input.
// Bytes pass through as they are, so UTF-8 text is kept byte for byte.

#include "csv.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace studentsvc_cli {

bool starts_like_formula(std::string_view value) {
  return !value.empty() && std::string_view("=+-@\t\r").find(value.front()) != std::string_view::npos;
}

std::string csv_field(std::string_view value, CsvFormulas formulas) {
  const bool neutralise = formulas == CsvFormulas::neutralise && starts_like_formula(value);
  const bool quote = neutralise || value.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!value.empty() && (value.front() == ' ' || value.back() == ' '));
  if (!quote) return std::string(value);
  std::string out = neutralise ? "\"'" : "\"";
  for (const char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_record(const std::vector<std::string>& fields, CsvFormulas formulas) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i], formulas);
  }
  out += "\r\n";
  return out;
}

std::optional<std::vector<std::vector<std::string>>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the current field was quoted (only a separator may follow)
  bool any = false;         // the current record has content
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    was_quoted = false;
  };
  auto end_record = [&] {
    if (any || record.size() > 0 || !field.empty()) {
      end_field();
      records.push_back(std::move(record));
    }
    record.clear();
    any = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
          was_quoted = true;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == ',') {
      end_field();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
    } else if (c == '"') {
      if (!field.empty() || was_quoted) return std::nullopt;
      quoted = true;
      any = true;
    } else {
      if (was_quoted) return std::nullopt;
      field += c;
      any = true;
    }
  }
  if (quoted) return std::nullopt;
  end_record();
  return records;
}

}  // namespace studentsvc_cli

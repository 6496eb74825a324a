#pragma once
// RFC 4180 CSV for the tool: quoting fields on output, splitting records on input.
// Bytes pass through as they are, so UTF-8 text is kept byte for byte.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace studentsvc_cli {

/// A field as RFC 4180 writes it: quoted (with `"` doubled) when it holds a comma,
/// a quote, CR or LF, or starts or ends with a space; as it is otherwise.
[[nodiscard]] inline std::string csv_field(std::string_view value) {
  const bool quote = value.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!value.empty() && (value.front() == ' ' || value.back() == ' '));
  if (!quote) return std::string(value);
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

/// One record: the fields joined by commas, ended by CRLF (RFC 4180's line break).
[[nodiscard]] inline std::string csv_record(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  out += "\r\n";
  return out;
}

/// The records of a CSV text (CRLF or LF line breaks, quoted fields may hold
/// either); std::nullopt when a quoted field is not closed or a quote stands
/// inside an unquoted field. Blank lines are skipped.
[[nodiscard]] inline std::optional<std::vector<std::vector<std::string>>> parse_csv(std::string_view text) {
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

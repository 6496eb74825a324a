// How the tool writes students: json, ndjson, csv or table, one record or a
// stream of results (a failed lookup of a batch is written in place).

#include "student_output.hpp"

#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/json.hpp>
#include <studentsvc/student_fields.hpp>
#include <studentsvc/studentsvc.hpp>

#include "cli_json.hpp"
#include "csv.hpp"
#include "exit_status.hpp"
#include "format.hpp"

namespace studentsvc_cli {

namespace {

/// The SDK's to_json object (keys sorted) in the interface's order: the SDK's
/// field table's order, then any other key.
nlohmann::ordered_json in_interface_order(const nlohmann::json& j) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& field : studentsvc::student_fields) {
    if (const auto it = j.find(field.key); it != j.end()) out[std::string(field.key)] = nlohmann::ordered_json(*it);
  }
  for (const auto& [key, value] : j.items()) {
    if (!out.contains(key)) out[key] = nlohmann::ordered_json(value);
  }
  return out;
}

}  // namespace

nlohmann::ordered_json student_json(const studentsvc::StudentExtended& s, bool extended) {
  nlohmann::json j;
  if (extended) {
    to_json(j, s);
  } else {
    to_json(j, static_cast<const studentsvc::StudentMinimal&>(s));
  }
  return in_interface_order(j);
}

nlohmann::ordered_json error_json(const std::string& perm, const studentsvc::ApiError& e) {
  nlohmann::ordered_json error = nlohmann::ordered_json::object();
  error["kind"] = std::string(studentsvc::to_string(e.kind));
  error["status"] = e.status;
  error["message"] = studentsvc::to_string(e);
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  out["perm"] = perm;
  out["error"] = std::move(error);
  return out;
}

// ---------------------------------------------------------------- table

namespace {

std::string show(const std::optional<std::string>& v) {
  if (!v) return "null";
  if (v->empty()) return "\"\"";
  return printable(*v);
}
std::string show(const std::string& v) { return v.empty() ? "\"\"" : printable(v); }
std::string show(const std::optional<bool>& v) {
  if (!v) return "null";
  return *v ? "true" : "false";
}

std::string birth_date_view(const studentsvc::StudentExtended& s) {
  if (!s.birth_date) return "unknown";
  const auto ymd = s.birth_date_ymd();
  if (!ymd) return "not a valid date";
  std::ostringstream out;
  out << std::setfill('0') << std::setw(4) << static_cast<int>(ymd->year()) << '-' << std::setw(2)
      << static_cast<unsigned>(ymd->month()) << '-' << std::setw(2) << static_cast<unsigned>(ymd->day());
  return out.str();
}

}  // namespace

void print_rows(std::ostream& out, std::string_view title,
                const std::vector<std::pair<std::string_view, std::string>>& rows) {
  constexpr int width = 26;
  out << std::left << std::setw(width) << title << "VALUE\n";
  for (const auto& [name, value] : rows) out << std::left << std::setw(width) << name << value << '\n';
}

void print_student_table(std::ostream& out, const studentsvc::StudentExtended& s, bool extended) {
  std::vector<std::pair<std::string_view, std::string>> rows;
  for (const auto& field : studentsvc::student_fields_of(extended)) {
    studentsvc::with_student_field(field, s, [&](const auto& member) { rows.emplace_back(field.key, show(member)); });
  }
  // A not-for-release record says so on its first line, before any field is read.
  const bool nfr = extended && s.nfr.value_or(false);
  print_rows(out, nfr ? "FIELD [NOT FOR RELEASE]" : "FIELD", rows);
  if (!extended) return;
  out << '\n';
  print_rows(out, "TYPED VIEW",
             {{"gender", std::string(to_string(s.gender_kind()))},
              {"international status", std::string(to_string(s.international_status()))},
              {"admit level", std::string(to_string(s.admit_level_kind()))},
              {"birth date", birth_date_view(s)},
              {"release status", std::string(to_string(s.release_status()))}});
}

void print_student(std::ostream& out, const studentsvc::StudentExtended& s, Format format, bool extended) {
  if (format == Format::table) {
    print_student_table(out, s, extended);
    return;
  }
  out << dump_json(student_json(s, extended)) << '\n';
}

// ---------------------------------------------------------------- csv

namespace {

/// A field's text in a CSV cell: null → empty, true/false for flags, text byte for byte.
std::string csv_cell(const std::optional<std::string>& v) { return v.value_or(""); }
std::string csv_cell(const std::string& v) { return v; }
std::string csv_cell(const std::optional<bool>& v) {
  if (!v) return "";
  return *v ? "true" : "false";
}

/// One result's one-line JSON (ndjson).
std::string one_line_json(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

/// Each line of a pretty-printed element indented by two, as an array's element.
std::string indent(const std::string& text) {
  std::string out = "  ";
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

std::string csv_header() {
  std::vector<std::string> names;
  for (const auto& field : studentsvc::student_fields) names.emplace_back(field.key);
  names.emplace_back("error");
  return csv_record(names);
}

std::string csv_row(const std::string& perm, const studentsvc::Result<studentsvc::StudentExtended>& r,
                    CsvFormulas formulas) {
  std::vector<std::string> cells;
  for (const auto& field : studentsvc::student_fields) {
    if (r) {
      studentsvc::with_student_field(field, *r, [&](const auto& member) { cells.push_back(csv_cell(member)); });
    } else {
      cells.push_back(field.key == "perm" ? perm : std::string());
    }
  }
  cells.push_back(r ? std::string() : printable(studentsvc::to_string(r.error())));
  return csv_record(cells, formulas);
}

// ---------------------------------------------------------------- a batch's stream

void ResultWriter::begin() {
  if (format_ == Format::csv) out_ << csv_header();
  if (format_ == Format::json) out_ << "[";
}

void ResultWriter::result(const std::string& perm, const studentsvc::Result<studentsvc::StudentExtended>& r) {
  switch (format_) {
    case Format::csv: out_ << csv_row(perm, r, formulas_); break;
    case Format::ndjson: out_ << one_line_json(r ? student_json(*r, true) : error_json(perm, r.error())) << '\n'; break;
    case Format::json: {
      std::string item = dump_json(r ? student_json(*r, true) : error_json(perm, r.error()));
      out_ << (first_ ? "\n" : ",\n") << indent(item);
      break;
    }
    case Format::table:
      if (!first_) out_ << '\n';
      if (r) {
        print_student_table(out_, *r, true);
      } else {
        print_rows(out_, "FIELD", {{"perm", printable(perm)}, {"error", printable(studentsvc::to_string(r.error()))}});
      }
      break;
  }
  first_ = false;
}

void ResultWriter::end() {
  if (format_ == Format::json) out_ << (first_ ? "]\n" : "\n]\n");
  out_.flush();
}

}  // namespace studentsvc_cli

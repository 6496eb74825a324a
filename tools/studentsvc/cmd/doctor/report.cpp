// What `studentsvc doctor` prints: one line per check (✓, ✗, ! or - for
// skipped) with its time, detail and hint, or one JSON object. Every text
// passes through the Redactor first, so no secret the tool knows can be shown.

#include "cmd/doctor/report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "exit_status.hpp"

namespace studentsvc_cli::doctor {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::failed: return "failed";
    case Status::warning: return "warning";
    case Status::skipped: return "skipped";
  }
  return "failed";
}

std::string_view mark(Status s) {
  switch (s) {
    case Status::ok: return "\u2713";      // ✓
    case Status::failed: return "\u2717";  // ✗
    case Status::warning: return "!";
    case Status::skipped: return "-";
  }
  return "?";
}

void Redactor::replace(std::string_view from, std::string_view to) {
  if (from.size() >= 3) pairs_.emplace_back(std::string(from), std::string(to));
  // Longest first, so a secret that holds another is replaced whole.
  std::sort(pairs_.begin(), pairs_.end(), [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
}

std::string Redactor::operator()(std::string text) const {
  for (const auto& [from, to] : pairs_) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return printable(text);
}

std::string millis(std::chrono::microseconds t) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", static_cast<double>(t.count()) / 1000.0);
  return buffer;
}

void print_text(std::ostream& out, const std::vector<Check>& checks, const Redactor& clean) {
  std::vector<std::string> skipped;
  for (const Check& c : checks) {
    if (c.status == Status::skipped) skipped.push_back(c.name);
  }
  for (const Check& c : checks) {
    if (c.status == Status::skipped) continue;
    if (c.name == "total" && !skipped.empty()) {  // the skipped ones, then the total
      out << "- skipped (meaningless after the failure above): ";
      for (std::size_t i = 0; i < skipped.size(); ++i) out << (i == 0 ? "" : ", ") << skipped[i];
      out << '\n';
    }
    char head[96];
    std::snprintf(head, sizeof head, "%s %-20s %9s  ", std::string(mark(c.status)).c_str(), c.name.c_str(),
                  millis(c.time).c_str());
    out << head << clean(c.detail) << '\n';
    for (const auto& line : c.lines) out << "      " << clean(line) << '\n';
    if (!c.hint.empty()) out << "      hint: " << clean(c.hint) << '\n';
  }
}

void print_json(std::ostream& out, const std::vector<Check>& checks, int exit, const Redactor& clean) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["checks"] = nlohmann::ordered_json::array();
  for (const Check& c : checks) {
    nlohmann::ordered_json one = nlohmann::ordered_json::object();
    one["name"] = c.name;
    one["status"] = std::string(to_string(c.status));
    one["time_ms"] = static_cast<double>(c.time.count()) / 1000.0;
    std::string detail = clean(c.detail);
    for (const auto& line : c.lines) detail += "; " + clean(line);
    one["detail"] = detail;
    one["hint"] = clean(c.hint);
    j["checks"].push_back(std::move(one));
  }
  j["exit_status"] = exit;
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

}  // namespace studentsvc_cli::doctor

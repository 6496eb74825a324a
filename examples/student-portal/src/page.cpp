#include "page.hpp"

#include <optional>

namespace student_portal {
namespace {

constexpr std::string_view css = R"css(body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:40rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.5rem;margin-top:0}h2{font-size:1.1rem;margin-top:1.5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1.25rem;margin:0}
dt{font-weight:600;color:#4a5263}dd{margin:0;overflow-wrap:anywhere}
.withheld{color:#8a8f99;font-style:italic}
.notice{border-left:4px solid #b3261e;background:#fdecea;padding:.75rem 1rem;margin:1rem 0;border-radius:4px}
.notice h2{margin:0 0 .25rem;color:#b3261e}
.status{color:#4a5263}
)css";

std::string document(std::string_view title, std::string_view body) {
  std::string out;
  out.reserve(512 + body.size());
  out += "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  out += html_escape(title);
  out += "</title>\n<link rel=\"stylesheet\" href=\"";
  out += stylesheet_path;
  out += "\">\n</head>\n<body>\n<main>\n";
  out += body;
  out += "</main>\n</body>\n</html>\n";
  return out;
}

Page message_page(unsigned status, std::string_view title, std::string_view message) {
  std::string body = "<h1>" + html_escape(title) + "</h1>\n<p class=\"status\">" + html_escape(message) + "</p>\n";
  return Page{status, document(title, body)};
}

void add_row(std::string& out, std::string_view field, std::string_view label, const std::optional<std::string>& value) {
  out += "<dt>";
  out += html_escape(label);
  out += "</dt><dd data-field=\"";
  out += field;
  if (value) {
    out += "\">";
    out += html_escape(*value);
  } else {
    out += "\" class=\"withheld\">withheld";
  }
  out += "</dd>\n";
}

std::string display_name(const studentsvc::StudentMinimal& s) {
  std::string name = s.first_name;
  for (const std::string* part : {&s.last_name, &s.suffix}) {
    if (part->empty()) continue;
    if (!name.empty()) name += ' ';
    name += *part;
  }
  return name;
}

}  // namespace

std::string_view stylesheet() { return css; }

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Page student_page(const studentsvc::StudentExtended& s) {
  std::string body = "<h1>Your student record</h1>\n";
  if (s.release_status() == studentsvc::ReleaseStatus::not_for_release) {
    body +=
        "<section class=\"notice\" id=\"nfr-notice\" role=\"note\">\n<h2>Not for release</h2>\n"
        "<p>Your record is flagged not for release (NFR): the registrar's office must be consulted before any of "
        "your information is released to anyone other than you.</p>\n</section>\n";
  }
  body += "<dl class=\"identity\">\n";
  add_row(body, "name", "Name", display_name(s));
  add_row(body, "email", "E-mail", s.email);
  add_row(body, "perm", "Perm", s.perm);
  body += "</dl>\n<h2>Registration facts</h2>\n<dl class=\"facts\">\n";
  add_row(body, "firstNameLegal", "Legal first name", s.first_name_legal);
  add_row(body, "middleName", "Middle name", s.middle_name);
  add_row(body, "gender", "Gender", s.gender);
  add_row(body, "birthDate", "Birth date", s.birth_date);
  add_row(body, "internationalStudentCode", "International student code", s.international_student_code);
  add_row(body, "firstCensusQuarter", "First census quarter", s.first_census_quarter);
  add_row(body, "lastCensusQuarter", "Last census quarter", s.last_census_quarter);
  add_row(body, "lastRegisteredQuarter", "Last registered quarter", s.last_registered_quarter);
  add_row(body, "admitLevel", "Admit level", s.admit_level);
  add_row(body, "admitQuarter", "Admit quarter", s.admit_quarter);
  add_row(body, "pronounCode", "Pronoun code", s.pronoun_code);
  body += "</dl>\n";
  return Page{200, document("Your student record", body)};
}

Page sign_in_page() {
  return message_page(401, "Please sign in again",
                      "Your sign-in could not be confirmed or has expired. Sign in again to see your record.");
}

Page unavailable_page() {
  return message_page(503, "Student records are unavailable",
                      "The student record service cannot be reached right now. Please try again in a few minutes.");
}

Page error_page(const studentsvc::ApiError& error) {
  using studentsvc::ErrorKind;
  switch (error.kind) {
    case ErrorKind::unauthorized: return sign_in_page();
    case ErrorKind::transport:
    case ErrorKind::circuit_open:
    case ErrorKind::cancelled: return unavailable_page();
    case ErrorKind::not_found:
      return message_page(404, "No student record", "No student record is linked to the account you signed in with.");
    case ErrorKind::http_status:
      if (error.status == 429 || error.status >= 500) return unavailable_page();
      break;
    case ErrorKind::invalid_argument:
    case ErrorKind::bad_request:
    case ErrorKind::decode: break;
  }
  return message_page(502, "Something went wrong",
                      "The student record service gave an answer the portal could not use. Please try again later.");
}

Page not_found_page() { return message_page(404, "Page not found", "There is no page at this address."); }

Page method_not_allowed_page() {
  return message_page(405, "Method not allowed", "This page can only be read.");
}

Page bad_request_page() { return message_page(400, "Bad request", "The request could not be read."); }

}  // namespace student_portal

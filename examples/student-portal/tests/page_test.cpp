#include <string>

#include "catch.hpp"
#include "page.hpp"

using student_portal::error_page;
using student_portal::html_escape;
using student_portal::student_page;

namespace {

studentsvc::StudentExtended ana() {
  studentsvc::StudentExtended s;
  s.perm = "1234567";
  s.first_name = "Ana";
  s.last_name = "Núñez";
  s.email = "ana.nunez@example.edu";
  s.first_census_quarter = "20224";
  s.admit_level = "FR";
  s.nfr = false;
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("html_escape replaces the five markup characters") {
  CHECK(html_escape("<script>alert('x')</script> & \"q\"") ==
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  CHECK(html_escape("Zoë 🌟") == "Zoë 🌟");
}

TEST_CASE("the student page shows name, e-mail and perm, and the approved facts") {
  const auto page = student_page(ana());
  CHECK(page.status == 200);
  CHECK(contains(page.html, "<dd data-field=\"name\">Ana Núñez</dd>"));
  CHECK(contains(page.html, "<dd data-field=\"email\">ana.nunez@example.edu</dd>"));
  CHECK(contains(page.html, "<dd data-field=\"perm\">1234567</dd>"));
  CHECK(contains(page.html, "<dd data-field=\"firstCensusQuarter\">20224</dd>"));
  CHECK(contains(page.html, "<dd data-field=\"admitLevel\">FR</dd>"));
  CHECK_FALSE(contains(page.html, "Not for release"));
}

TEST_CASE("a fact the account is not approved for says withheld") {
  auto s = ana();
  s.middle_name.reset();
  s.first_name_legal.reset();
  const auto page = student_page(s);
  CHECK(contains(page.html, "<dd data-field=\"middleName\" class=\"withheld\">withheld</dd>"));
  CHECK(contains(page.html, "<dd data-field=\"firstNameLegal\" class=\"withheld\">withheld</dd>"));
}

TEST_CASE("every field of the record is HTML-escaped") {
  auto s = ana();
  s.first_name = "<b>Eve</b>";
  s.last_name = "O'Neil & \"Co\"";
  s.suffix = "JR";
  s.email = "<img src=x onerror=alert(1)>@example.edu";
  s.pronoun_code = "</dd><script>x()</script>";
  const auto page = student_page(s);
  CHECK(contains(page.html, "&lt;b&gt;Eve&lt;/b&gt; O&#39;Neil &amp; &quot;Co&quot; JR"));
  CHECK(contains(page.html, "&lt;img src=x onerror=alert(1)&gt;@example.edu"));
  CHECK(contains(page.html, "&lt;/dd&gt;&lt;script&gt;x()&lt;/script&gt;"));
  CHECK_FALSE(contains(page.html, "<b>"));
  CHECK_FALSE(contains(page.html, "<script"));
  CHECK_FALSE(contains(page.html, "<img"));
}

TEST_CASE("an NFR student sees the Not for release notice") {
  auto s = ana();
  s.nfr = true;
  const auto page = student_page(s);
  CHECK(contains(page.html, "id=\"nfr-notice\""));
  CHECK(contains(page.html, "<h2>Not for release</h2>"));
  s.nfr.reset();  // unknown is not NFR
  CHECK_FALSE(contains(student_page(s).html, "nfr-notice"));
}

TEST_CASE("failures map to sign-in, unavailable and error pages by kind") {
  using studentsvc::ErrorKind;
  auto error = [](ErrorKind kind, int status) {
    studentsvc::ApiError e;
    e.kind = kind;
    e.status = status;
    return e;
  };
  CHECK(error_page(error(ErrorKind::unauthorized, 401)).status == 401);
  CHECK(contains(error_page(error(ErrorKind::unauthorized, 401)).html, "sign in again"));
  CHECK(error_page(error(ErrorKind::transport, 0)).status == 503);
  CHECK(error_page(error(ErrorKind::circuit_open, 0)).status == 503);
  CHECK(error_page(error(ErrorKind::http_status, 502)).status == 503);
  CHECK(error_page(error(ErrorKind::http_status, 429)).status == 503);
  CHECK(error_page(error(ErrorKind::http_status, 403)).status == 502);
  CHECK(error_page(error(ErrorKind::decode, 200)).status == 502);
  CHECK(error_page(error(ErrorKind::not_found, 404)).status == 404);
}

TEST_CASE("an error page never shows the upstream's body or message") {
  studentsvc::ApiError e;
  e.kind = studentsvc::ErrorKind::http_status;
  e.status = 500;
  e.message = "upstream-secret-message";
  e.body_excerpt = "<html>stack trace: upstream-secret-body</html>";
  const auto page = error_page(e);
  CHECK_FALSE(contains(page.html, "upstream-secret"));
  CHECK_FALSE(contains(page.html, "stack trace"));
}

TEST_CASE("the security headers forbid caching, framing, sniffing and foreign content") {
  std::string csp;
  std::string cache;
  std::string sniff;
  for (const auto& [name, value] : student_portal::security_headers) {
    if (name == "Content-Security-Policy") csp = value;
    if (name == "Cache-Control") cache = value;
    if (name == "X-Content-Type-Options") sniff = value;
  }
  CHECK(cache == "no-store");
  CHECK(sniff == "nosniff");
  CHECK(csp.starts_with("default-src 'none';"));
  CHECK(contains(csp, "frame-ancestors 'none'"));
  CHECK(contains(csp, "style-src 'self'"));
  CHECK_FALSE(contains(csp, "unsafe-inline"));
  CHECK_FALSE(contains(csp, "script-src"));
}

#pragma once
// The portal's pages: every one a complete HTML document whose text is
// HTML-escaped. A page is built from the student record or from the kind of
// failure only, never from an upstream body, an error message or the token.

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/errors.hpp>
#include <studentsvc/models.hpp>

namespace student_portal {

struct Page {
  unsigned status = 200;  // the HTTP status the page is sent with
  std::string html;
};

// Headers every response carries. The stylesheet is a file this app serves
// (style-src 'self'), so the CSP needs no 'unsafe-inline' and no hash.
inline constexpr std::string_view content_security_policy =
    "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 5> security_headers{{
    {"Cache-Control", "no-store"},
    {"Content-Security-Policy", content_security_policy},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
    {"X-Frame-Options", "DENY"},
}};

// The path the stylesheet is served at, and its text.
inline constexpr std::string_view stylesheet_path = "/portal.css";
[[nodiscard]] std::string_view stylesheet();

// `text` with & < > " ' replaced by their character references.
[[nodiscard]] std::string html_escape(std::string_view text);

// The signed-in student's own record: name, e-mail and perm, the registration
// facts the account is approved for (each missing one says "withheld"), and a
// "Not for release" notice when the record is flagged NFR.
[[nodiscard]] Page student_page(const studentsvc::StudentExtended& student);

// 401: no token, or the service refused it.
[[nodiscard]] Page sign_in_page();
// 503: the service is down, slow, or the circuit breaker is open.
[[nodiscard]] Page unavailable_page();
// The page for a failed lookup, chosen by the error's kind and status alone.
[[nodiscard]] Page error_page(const studentsvc::ApiError& error);
// 404 for a path the portal does not serve; 405 for a method other than GET or HEAD.
[[nodiscard]] Page not_found_page();
[[nodiscard]] Page method_not_allowed_page();
// 400 for a request the portal could not parse.
[[nodiscard]] Page bad_request_page();

}  // namespace student_portal

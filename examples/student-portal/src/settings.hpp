#pragma once
// The portal's settings: its command line, exit statuses, and the ClientOptions
// it builds from the STUDENTSVC_* environment.

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <studentsvc/options.hpp>

namespace student_portal {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;  // could not listen
inline constexpr int exit_usage = 64;
inline constexpr int exit_config = 78;

inline constexpr std::string_view usage =
    "Usage: student-portal --listen HOST:PORT\n"
    "\n"
    "Serves the signed-in student's own record at / (and /healthz) on HOST:PORT\n"
    "(an IPv4 address, or an IPv6 one in brackets; port 0 picks a free one).\n"
    "The student's ID token comes from `Authorization: Bearer ...`, as the\n"
    "authenticating reverse proxy in front of the portal forwards it.\n"
    "The student service is configured by the STUDENTSVC_* environment\n"
    "(STUDENTSVC_BASE_URL, STUDENTSVC_API_KEY, ...). Stops on SIGTERM or SIGINT.\n";

struct Settings {
  std::string host;  // an IP address literal, without brackets
  std::uint16_t port = 0;
};

// Settings, or std::nullopt for --help, or the usage error in one line.
[[nodiscard]] std::expected<std::optional<Settings>, std::string> parse_arguments(
    std::span<const std::string_view> args);

// The environment's ClientOptions with the portal's resilience settings: the
// circuit breaker on, short timeouts and one retry, so a page is fast when the
// service is down.
[[nodiscard]] studentsvc::ClientOptions portal_client_options(studentsvc::ClientOptions options);

}  // namespace student_portal

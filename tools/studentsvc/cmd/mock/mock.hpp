#pragma once
// `studentsvc mock`: the bundled MockServer as a process, until SIGINT or SIGTERM,
// with fixture students and tokens from a JSON file in the interface's own keys.

#include <expected>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <studentsvc/studentsvc.hpp>

// Without a cpp-httplib that links, the tool is built with STUDENTSVC_CLI_WITH_MOCK=0:
// the command is still parsed, and says it is not available.
#ifndef STUDENTSVC_CLI_WITH_MOCK
#define STUDENTSVC_CLI_WITH_MOCK 1
#endif
#if STUDENTSVC_CLI_WITH_MOCK
#include <studentsvc/testing/mock_server.hpp>
#endif

#include "command.hpp"

namespace studentsvc_cli {

/// Fixture students and tokens, as the mock serves them.
struct MockFixtures {
  std::map<std::string, nlohmann::json> students;
  std::map<std::string, std::string> jwts;
};

/// Reads `{"students": [{...}, ...], "tokens": {"JWT": "PERM"}}` (both keys
/// optional; each student an object in the interface's keys with a 7-digit
/// "perm", each field of its JSON type); the error says what is wrong in one line.
[[nodiscard]] std::expected<MockFixtures, std::string> parse_mock_fixtures(
    std::string_view text, studentsvc::PermSyntax syntax = studentsvc::PermSyntax::digits);

/// A value as a POSIX shell reads it back: single-quoted, `'` as `'\''`.
[[nodiscard]] std::string shell_quoted(std::string_view value);

#if STUDENTSVC_CLI_WITH_MOCK
/// The mock's options for these flags: with --perm-syntax alphanumeric it
/// takes letters too and also serves the alphanumeric seed students.
[[nodiscard]] studentsvc::testing::MockServerOptions mock_server_options(const Args& a);
#endif

/// Runs the mock until SIGINT or SIGTERM: the exports on the session's out, its status on err.
[[nodiscard]] int run_mock(Session& s);

extern const Command mock_command;

}  // namespace studentsvc_cli

#pragma once
// `studentsvc conversation`: {base_url}/conversation[/SUBPATH], method and payloads passed through.

#include "command.hpp"

namespace studentsvc_cli {

/// Calls the endpoint with the session's client and prints the answer; the exit status.
[[nodiscard]] int run_conversation(Session& s);

extern const Command conversation_command;

}  // namespace studentsvc_cli

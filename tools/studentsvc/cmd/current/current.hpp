#pragma once
// `studentsvc current`: the student named by an end-user JWT (GET /students/v2/students/current).

#include "command.hpp"

namespace studentsvc_cli {

/// Looks up the JWT's student with the session's client and prints it; the exit status.
[[nodiscard]] int run_current(Session& s);

extern const Command current_command;

}  // namespace studentsvc_cli

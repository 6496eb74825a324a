#pragma once
// The tool's overview help: usage, common options, exit statuses, examples.
// Each command's own help is in its file (cmd/); help_text() in commands.cpp
// puts them together (also the source of the man page, through help2man).

#include <string_view>

namespace studentsvc_cli {

extern const std::string_view exit_status_help;
extern const std::string_view common_options_help;
extern const std::string_view main_help_intro;
/// In the overview (and so in the man page): doctor's statuses follow the same categories.
extern const std::string_view doctor_exit_help;
extern const std::string_view main_help_examples;

}  // namespace studentsvc_cli

// studentsvc — the command-line client of the Student Information and
// Conversation Service, built on the studentsvc C++ SDK. Each command is in
// its own folder under cmd/, collected in the table of commands.cpp; run_cli()
// (cli.cpp) parses, finds the command, sets up what it needs and runs it. The
// help texts are the reference: commands, options, exit statuses.
//
// This file only binds the tool's streams to std::cout and std::cerr: no
// command writes to them itself.

#include <unistd.h>

#include <exception>
#include <iostream>
#include <string>

#include "cli.hpp"
#include "exit_status.hpp"
#include "io_streams.hpp"
#include "standard_descriptors.hpp"

int main(int argc, char** argv) {
  studentsvc_cli::hold_standard_descriptors();  // first, before anything opens a descriptor
  try {
    return studentsvc_cli::run_cli(argc, argv,
                                   studentsvc_cli::IoStreams{std::cout, std::cerr, ::isatty(STDERR_FILENO) == 1});
  } catch (const std::exception& e) {
    studentsvc_cli::error_line(std::cerr, std::string("internal error: ") + e.what());
  } catch (...) {
    studentsvc_cli::error_line(std::cerr, "internal error");
  }
  return studentsvc_cli::exit_internal;
}

#pragma once
// The whole tool as a function: parses, finds the command, sets up what it
// needs (the mock, the profile, the Client) and runs it, writing only to `io`.
// main() binds `io` to std::cout and std::cerr; a test to string streams.

#include "io_streams.hpp"

namespace studentsvc_cli {

/// Runs the command line `argv` (argv[0] the program); the exit status. A
/// failed write to `io.out` (closed, a reader gone, a full disk) is reported
/// here, once, whichever command it was: exit_internal.
[[nodiscard]] int run_cli(int argc, const char* const* argv, IoStreams io);

}  // namespace studentsvc_cli

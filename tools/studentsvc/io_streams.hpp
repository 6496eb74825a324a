#pragma once
// Where a command writes, as the GitHub CLI's IOStreams: main() binds them to
// std::cout and std::cerr, a test to std::ostringstream. A command writes only
// to the streams it is given, and checks `out` for a write error itself.

#include <ostream>

namespace studentsvc_cli {

struct IoStreams {
  std::ostream& out;             ///< the records, the help, the exports of `mock`
  std::ostream& err;             ///< messages, the summary line, -v's log, --stats
  bool err_is_terminal = false;  ///< the progress bar is drawn only on a terminal's stderr
};

}  // namespace studentsvc_cli

// Descriptors 0, 1 and 2 held before anything else opens one: a program started
// with stdout closed (`studentsvc get 1234567 >&-`) would otherwise write its
// records into whatever took descriptor 1 next (libcurl's wake-up socketpair,
// the --failed-to file).

#include "standard_descriptors.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace studentsvc_cli {

void hold_standard_descriptors() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The lowest free descriptor: `fd` itself, the ones below it being open by now.
    const int opened = ::open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
  ::signal(SIGPIPE, SIG_IGN);
}

}  // namespace studentsvc_cli

// SIGINT and SIGTERM during a batch (interrupt.hpp).

#include "cmd/get/interrupt.hpp"

#include <semaphore.h>
#include <signal.h>

#include <cerrno>
#include <thread>

namespace studentsvc_cli {

namespace detail_interrupt {
// A signal handler may only post a semaphore (async-signal-safe) and store a sig_atomic_t.
sem_t wake;                          // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
volatile sig_atomic_t received = 0;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
extern "C" void on_stop_signal(int signal) {
  received = signal;
  const int saved = errno;
  ::sem_post(&wake);
  errno = saved;
}
}  // namespace detail_interrupt

StopOnSignal::StopOnSignal(BatchStop& stop) {
  detail_interrupt::received = 0;
  ::sem_init(&detail_interrupt::wake, 0, 0);
  watcher_ = std::thread([&stop] {
    while (::sem_wait(&detail_interrupt::wake) != 0 && errno == EINTR) {
    }
    if (detail_interrupt::received != 0) stop.request();
  });
  struct sigaction action {};
  action.sa_handler = detail_interrupt::on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = static_cast<int>(SA_RESETHAND);  // a second Ctrl-C ends the program at once
  ::sigaction(SIGINT, &action, &old_int_);
  ::sigaction(SIGTERM, &action, &old_term_);
  // A signal ignored on entry stays ignored (a shell's background job ignores SIGINT).
  if (old_int_.sa_handler == SIG_IGN) ::sigaction(SIGINT, &old_int_, nullptr);
  if (old_term_.sa_handler == SIG_IGN) ::sigaction(SIGTERM, &old_term_, nullptr);
}

StopOnSignal::~StopOnSignal() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sem_post(&detail_interrupt::wake);  // ends the watcher if no signal did
  watcher_.join();
  ::sem_destroy(&detail_interrupt::wake);
}

int StopOnSignal::received() noexcept { return detail_interrupt::received; }

}  // namespace studentsvc_cli

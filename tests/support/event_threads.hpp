#pragma once
// CurlTransport's event threads alive in this process, seen from outside: how
// a test checks that a loop whose last owner went on its own thread has ended
// by itself (Linux: /proc/self/task).

#include <filesystem>
#include <fstream>
#include <string>

namespace studentsvc::test {

/// Threads of this process named as the transport's event thread
/// (CurlEventLoop::thread_name, "studentsvc-curl").
[[nodiscard]] inline int event_threads() {
  int n = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name == "studentsvc-curl") ++n;
  }
  return n;
}

}  // namespace studentsvc::test

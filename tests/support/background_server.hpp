#pragma once
// A server program run in the background for one test (nginx, openssl
// s_server) on a port of 127.0.0.1: started with posix_spawnp, ready once it
// accepts a connection, tried again on a fresh port when it exits first (the
// port it was given was taken in between), and stopped with SIGTERM and reaped
// when the object goes. Beside process.hpp, which runs a program to its end.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "raw_server.hpp"  // free_loopback_port

extern "C" char** environ;  // NOLINT: POSIX, for posix_spawnp

namespace studentsvc::test {

/// True when something on 127.0.0.1:`port` accepts a TCP connection (closed at once).
[[nodiscard]] inline bool accepts_connections(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (fd >= 0) ::close(fd);
  return ok;
}

class BackgroundServer {
 public:
  /// The program's argv for a given port (argv[0] is looked up in PATH).
  using Command = std::function<std::vector<std::string>(int port)>;

  /// Starts `command(port)` with `env` ("NAME=value" lines; empty: this
  /// process's environment), stdout and stderr to /dev/null; waits up to
  /// `ready_within` per try for it to accept connections.
  explicit BackgroundServer(const Command& command, std::vector<std::string> env = {},
                            std::chrono::milliseconds ready_within = std::chrono::seconds{20}) {
    for (int tries = 0; tries < 5 && pid_ <= 0; ++tries) {
      const int port = free_loopback_port();
      const pid_t pid = spawn(command(port), env);
      if (pid <= 0) continue;
      if (wait_ready(pid, port, ready_within)) {
        pid_ = pid;
        port_ = port;
      } else {
        stop(pid);
      }
    }
  }
  ~BackgroundServer() {
    if (pid_ > 0) stop(pid_);
  }
  BackgroundServer(const BackgroundServer&) = delete;
  BackgroundServer& operator=(const BackgroundServer&) = delete;

  /// It started and accepted a connection.
  [[nodiscard]] bool running() const noexcept { return pid_ > 0; }
  /// Its port on 127.0.0.1 (0 when it never started).
  [[nodiscard]] int port() const noexcept { return port_; }

 private:
  static pid_t spawn(std::vector<std::string> args, const std::vector<std::string>& env) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_copy = env;
    std::vector<char*> envp;
    for (auto& e : env_copy) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), env.empty() ? environ : envp.data());
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
  }
  // Polls until the program accepts connections; false when it exits first or time runs out.
  static bool wait_ready(pid_t pid, int port, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (exited(pid)) return false;
      if (accepts_connections(port)) return !exited(pid);  // ours, not a process that took the port
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    return false;
  }
  static bool exited(pid_t pid) {
    int status = 0;
    return ::waitpid(pid, &status, WNOHANG) == pid;
  }
  static void stop(pid_t pid) {
    if (::kill(pid, SIGTERM) == 0) ::waitpid(pid, nullptr, 0);
  }

  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace studentsvc::test

#pragma once
// Runs a program (the studentsvc tool, an example) as a user would: a child
// process with exactly the environment given, stdin from /dev/null, stdout,
// stderr and exit status captured separately. Shared by cli_test and canary_test.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace studentsvc::test {

using Env = std::map<std::string, std::string>;
using Args = std::vector<std::string>;

/// What a child process left behind.
struct ProcessResult {
  int status = -1;  ///< Exit status; 128 + signal when killed.
  std::string out;  ///< Everything it wrote to stdout.
  std::string err;  ///< Everything it wrote to stderr.
};

/// Runs `program` with `args` and exactly `env` (plus sanitizer settings), stdin
/// from /dev/null; kills it after 60 s (and fails the test).
inline ProcessResult run_process(const std::string& program, const Args& args, const Env& env = {}) {
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  REQUIRE(::pipe2(out_pipe.data(), O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err_pipe.data(), O_CLOEXEC) == 0);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);

  std::vector<std::string> storage;
  storage.push_back(program);
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);

  std::vector<std::string> env_storage;
  for (const auto& [k, v] : env) env_storage.push_back(k + "=" + v);
  for (const char* pass : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"}) {
    if (const char* v = std::getenv(pass); v != nullptr) env_storage.push_back(std::string(pass) + "=" + v);
  }
  std::vector<char*> envp;
  for (auto& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    FAIL("posix_spawn " << program << " failed: " << spawned);
  }

  ProcessResult r;
  std::array<pollfd, 2> fds{pollfd{out_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks{&r.out, &r.err};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    if (std::chrono::steady_clock::now() > deadline && !killed) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      std::array<char, 4096> buf{};
      const ssize_t n = ::read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        sinks[i]->append(buf.data(), static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  REQUIRE_FALSE(killed);
  return r;
}

}  // namespace studentsvc::test

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
#include <functional>
#include <map>
#include <thread>
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

/// What a test does to a child beyond run_process's defaults.
struct ProcessControl {
  bool close_stdout = false;  ///< the child starts with descriptor 1 closed (out stays empty)
  bool stdin_pipe = false;    ///< stdin is a pipe that `input` is written to, then closed
  std::string input;          ///< the child's stdin (at most a pipe's buffer, 64 KiB... or read as it goes)
  /// Called whenever stdout or stderr got more, with the child's pid and what
  /// came so far. Return false to close the read end of stdout (the child's
  /// next write is EPIPE, as with `| head -c1`).
  std::function<bool(pid_t pid, const ProcessResult& so_far)> on_output;
};

/// Runs `program` with `args` and exactly `env` (plus sanitizer settings), stdin
/// from /dev/null; kills it after 60 s (and fails the test).
inline ProcessResult run_process(const std::string& program, const Args& args, const Env& env = {},
                                 const ProcessControl& control = {}) {
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  std::array<int, 2> in_pipe{-1, -1};
  REQUIRE(::pipe2(out_pipe.data(), O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err_pipe.data(), O_CLOEXEC) == 0);
  if (control.stdin_pipe) REQUIRE(::pipe2(in_pipe.data(), O_CLOEXEC) == 0);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (control.stdin_pipe) {
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  if (control.close_stdout) posix_spawn_file_actions_addclose(&actions, 1);

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
  if (control.stdin_pipe) {
    ::close(in_pipe[0]);
    // A thread of its own: the child may read its stdin only as it writes its output.
    std::thread([fd = in_pipe[1], input = control.input] {
      sigset_t pipe_signal;  // a child that stops reading is EPIPE here, not SIGPIPE for the test
      sigemptyset(&pipe_signal);
      sigaddset(&pipe_signal, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
      for (std::size_t done = 0; done < input.size();) {
        const ssize_t n = ::write(fd, input.data() + done, input.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the child closed it
        done += static_cast<std::size_t>(n);
      }
      ::close(fd);
    }).detach();
  }
  if (spawned != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    FAIL("posix_spawn " << program << " failed: " << spawned);
  }

  ProcessResult r;
  std::array<pollfd, 2> fds{pollfd{out_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks{&r.out, &r.err};
  // A guard against a hang, not a time the program is held to: an ASan build
  // on a loaded 2-core CI machine can be ten times slower than a quiet one.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(150);
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
        if (control.on_output && !control.on_output(pid, r) && fds[0].fd >= 0) {
          ::close(fds[0].fd);  // the reader goes away, as `| head -c1` does
          fds[0].fd = -1;
          --open_fds;
        }
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

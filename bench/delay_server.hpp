#pragma once
// DelayServer: a tiny HTTP/1.1 keep-alive server on 127.0.0.1 that answers
// every request with the same JSON body after a fixed delay, for measuring
// latency-bound batches. A lookup of /students/v2/students/{perm} gets the body
// with its own perm (the SDK refuses an answer for another student). One
// thread, epoll and a timer heap, so any number of requests can wait at once
// (the MockServer pins one of its 32 worker threads to each keep-alive
// connection, too few for concurrency 64).
//
// Linux only; for the benchmark, not for tests.

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

namespace studentsvc_bench {

class DelayServer {
 public:
  DelayServer(std::string body, std::chrono::milliseconds delay) : delay_(delay) {
    response_ = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body;
    const std::size_t key = response_.find(perm_key);
    if (key != std::string::npos && key + perm_key.size() + perm_digits < response_.size()) {
      perm_at_ = key + perm_key.size();
    }
  }
  ~DelayServer() { stop(); }
  /// Per-request delays: request n (0, 1, ...) waits `delay_of(n)` instead of
  /// the fixed delay. Set before start(); called on the server's thread.
  void set_delays(std::function<std::chrono::milliseconds(std::uint64_t)> delay_of) { delay_of_ = std::move(delay_of); }
  /// Requests answered or waiting so far.
  [[nodiscard]] std::uint64_t requests() const noexcept { return requests_.load(); }
  DelayServer(const DelayServer&) = delete;
  DelayServer& operator=(const DelayServer&) = delete;

  /// Binds 127.0.0.1 on a free port and starts the thread.
  bool start() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) return false;
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return false;
    if (::listen(listen_fd_, 1024) != 0) return false;
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) return false;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_fd_;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    running_ = true;
    thread_ = std::thread([this] { loop(); });
    return true;
  }

  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
    for (const auto& [fd, buffer] : connections_) ::close(fd);
    connections_.clear();
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    epoll_fd_ = listen_fd_ = -1;
  }

  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// The most requests waiting for their answer at one moment.
  [[nodiscard]] std::size_t max_in_flight() const { return max_in_flight_.load(); }
  /// Connections accepted so far.
  [[nodiscard]] std::size_t connections() const { return accepted_.load(); }

 private:
  using clock = std::chrono::steady_clock;
  struct Connection {
    std::string in;
    std::uint64_t generation = 0;  // tells a reused fd number from the connection that had it
  };
  struct Due {
    clock::time_point when;
    int fd;
    std::uint64_t generation;
    std::string answer;
    bool operator>(const Due& o) const { return when > o.when; }
  };

  static constexpr std::string_view perm_key = "\"perm\":\"";
  static constexpr std::size_t perm_digits = 7;

  // The answer to a request head: the body's perm replaced by the one at the
  // end of the request's path, when that is 7 digits.
  [[nodiscard]] std::string answer_to(std::string_view head) const {
    std::string answer = response_;
    const std::size_t line_end = head.find("\r\n");
    const std::string_view line = head.substr(0, line_end);
    const std::size_t target = line.find(' ');
    const std::size_t version = line.rfind(' ');
    if (perm_at_ == 0 || target == std::string_view::npos || version <= target) return answer;
    const std::string_view path = line.substr(target + 1, version - target - 1);
    const std::string_view perm = path.substr(path.rfind('/') + 1);
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (perm.size() == perm_digits && std::all_of(perm.begin(), perm.end(), digit)) {
      answer.replace(perm_at_, perm_digits, perm);
    }
    return answer;
  }

  void loop() {
    std::vector<epoll_event> events(256);
    std::size_t waiting = 0;
    while (running_) {
      const int n = wait(events);
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == listen_fd_) {
          accept_all();
          continue;
        }
        char buf[4096];
        const ssize_t got = ::recv(fd, buf, sizeof buf, 0);
        if (got <= 0) {
          close_connection(fd);
          continue;
        }
        auto it = connections_.find(fd);
        if (it == connections_.end()) continue;
        std::string& in = it->second.in;
        in.append(buf, static_cast<std::size_t>(got));
        // Every complete request head (GET, no body) gets an answer after the delay.
        for (std::size_t end = in.find("\r\n\r\n"); end != std::string::npos; end = in.find("\r\n\r\n")) {
          std::string answer = answer_to(std::string_view(in).substr(0, end));
          in.erase(0, end + 4);
          const std::uint64_t number = requests_.fetch_add(1);
          due_.push(Due{clock::now() + (delay_of_ ? delay_of_(number) : delay_), fd, it->second.generation,
                        std::move(answer)});
          ++waiting;
          std::size_t seen = max_in_flight_.load();
          if (waiting > seen) max_in_flight_ = waiting;
        }
      }
      const auto now = clock::now();
      while (!due_.empty() && due_.top().when <= now) {
        const int fd = due_.top().fd;
        const std::uint64_t generation = due_.top().generation;
        const std::string answer = due_.top().answer;
        due_.pop();
        --waiting;
        const auto it = connections_.find(fd);
        if (it == connections_.end() || it->second.generation != generation) continue;
        const ssize_t sent = ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
        if (sent != static_cast<ssize_t>(answer.size())) close_connection(fd);  // small answers fit the buffer
      }
    }
  }

  // Waits for sockets until the next answer is due (at most 100 ms, also how
  // often `running_` is checked). The wait is to the microsecond (epoll_pwait2):
  // epoll_wait's whole milliseconds would hold each answer up to 1 ms past its
  // delay, a 10 % error on a 10 ms latency, charged to the client measured.
  int wait(std::vector<epoll_event>& events) {
    auto left = std::chrono::nanoseconds(std::chrono::milliseconds(100));
    if (!due_.empty()) left = std::clamp<std::chrono::nanoseconds>(due_.top().when - clock::now(), {}, left);
    const int size = static_cast<int>(events.size());
    if (precise_wait_) {
      const timespec ts{static_cast<time_t>(left.count() / 1'000'000'000), static_cast<long>(left.count() % 1'000'000'000)};
      const int n = ::epoll_pwait2(epoll_fd_, events.data(), size, &ts, nullptr);
      if (n >= 0 || errno != ENOSYS) return n;
      precise_wait_ = false;  // a kernel before 5.11
    }
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return ::epoll_wait(epoll_fd_, events.data(), size, static_cast<int>(ms));
  }

  void accept_all() {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
      connections_[fd] = Connection{{}, ++generation_};
      ++accepted_;
    }
  }

  void close_connection(int fd) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    ::close(fd);
    connections_.erase(fd);
  }

  std::chrono::milliseconds delay_;
  std::function<std::chrono::milliseconds(std::uint64_t)> delay_of_;
  std::atomic<std::uint64_t> requests_{0};
  std::string response_;
  std::size_t perm_at_ = 0;  ///< Where the perm's digits start in response_; 0: no perm to replace.
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> running_{false};
  std::thread thread_;
  bool precise_wait_ = true;  // epoll_pwait2 works (the loop's thread only)
  std::map<int, Connection> connections_;
  std::uint64_t generation_ = 0;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  std::atomic<std::size_t> max_in_flight_{0};
  std::atomic<std::size_t> accepted_{0};
};

}  // namespace studentsvc_bench

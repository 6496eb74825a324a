#pragma once
// A raw-socket HTTP/1.1 fake on 127.0.0.1 for fault injection: each accepted
// connection runs the test's handler on its own thread with the socket, so a
// test can send a truncated body, close mid-body, stall, reset, or stream 50 MB.
// POSIX only (the reliability tests run on Linux).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <climits>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "wait.hpp"

namespace studentsvc::test {

/// A port on 127.0.0.1 that refuses every connect for as long as this lives:
/// bound and never listening, so no other socket takes it meanwhile (a port
/// released at once goes to the next bind(0) of a parallel suite's servers).
class RefusingPort {
 public:
  RefusingPort() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~RefusingPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;

  /// The port (0 when no socket could be bound).
  [[nodiscard]] int port() const noexcept { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

/// A port on 127.0.0.1 free right now (bound, then released), for a server
/// started next. Another bind may take it first: a caller retries (BackgroundServer).
inline int free_loopback_port() { return RefusingPort{}.port(); }

class RawServer {
 public:
  /// The handler gets the connected socket and the 0-based connection number;
  /// the server closes the socket when the handler returns.
  using Handler = std::function<void(int fd, int connection)>;

  explicit RawServer(Handler handler, int backlog = 64) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, backlog) != 0) {
      ::close(listen_fd_);
      listen_fd_ = -1;
      return;
    }
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    if (handler_) accept_thread_ = std::thread([this] { accept_loop(); });
  }

  ~RawServer() { stop(); }
  RawServer(const RawServer&) = delete;
  RawServer& operator=(const RawServer&) = delete;

  void stop() {
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
    if (accept_thread_.joinable()) accept_thread_.join();
    std::vector<std::thread> workers;
    {
      const std::lock_guard lock(mutex_);
      workers.swap(workers_);
    }
    for (auto& w : workers) w.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
  }

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] int listen_fd() const noexcept { return listen_fd_; }
  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] int connections() const noexcept { return connections_.load(); }
  /// Waits (eventually()) until `n` connections have come in: how a handler
  /// holds its first answers until a batch has opened them all. False if they never did.
  [[nodiscard]] bool wait_for_connections(int n) const {
    return eventually([&] { return connections() >= n; });
  }
  /// Requests read with next_request(), over every connection.
  [[nodiscard]] int requests() const noexcept { return requests_.load(); }

  /// read_request(), counting each request that came in requests().
  std::string next_request(int fd, std::chrono::milliseconds wait = std::chrono::milliseconds{5000}) {
    std::string request = read_request(fd, wait);
    if (!request.empty()) ++requests_;
    return request;
  }

  /// Keep-alive: answers up to `max` requests on this connection with
  /// `answer(request, n)` (n: 0-based number on this connection) until the
  /// peer closes; returns how many were answered.
  int serve(int fd, const std::function<std::string(const std::string& request, int n)>& answer, int max = INT_MAX) {
    int n = 0;
    for (; n < max; ++n) {
      const std::string request = next_request(fd);
      if (request.empty() || !write_all(fd, answer(request, n))) break;
    }
    return n;
  }

  /// Writes `bytes` after `delay` (an unsolicited answer on an idle
  /// connection); false when the server stopped first or the peer went away.
  bool write_later(int fd, std::chrono::milliseconds delay, std::string_view bytes) {
    return sleep_unless_stopped(delay) && write_all(fd, bytes);
  }

  /// Writes `unit` again and again, `total` bytes in all, as fast as the
  /// client reads; false when the peer went away first. Adds the bytes the
  /// kernel accepted to `sent` when given.
  static bool flood(int fd, std::string_view unit, std::size_t total, std::atomic<std::size_t>* sent = nullptr) {
    for (std::size_t done = 0; done < total; done += unit.size()) {
      std::size_t wrote = 0;
      const bool ok = write_all(fd, unit, &wrote);
      if (sent != nullptr) *sent += wrote;
      if (!ok) return false;
    }
    return true;
  }

  /// The request line's target ("/v1/students/1234567"), "" when there is none.
  static std::string target_of(std::string_view request) {
    const auto start = request.find(' ');
    if (start == std::string_view::npos) return {};
    const auto end = request.find(' ', start + 1);
    if (end == std::string_view::npos) return {};
    return std::string(request.substr(start + 1, end - start - 1));
  }

  /// Sleeps up to `d`, returning early (false) when the server is stopping.
  bool sleep_unless_stopped(std::chrono::milliseconds d) {
    std::unique_lock lock(mutex_);
    return !cv_.wait_for(lock, d, [this] { return stopping_; });
  }

  /// Reads one request head (through the blank line) and any Content-Length
  /// body; "" when the peer closed first or nothing came within `wait`.
  static std::string read_request(int fd, std::chrono::milliseconds wait = std::chrono::milliseconds{5000}) {
    std::string data;
    char buf[4096];
    std::size_t body_needed = std::string::npos;
    std::size_t head_end = std::string::npos;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
      if (head_end != std::string::npos && data.size() >= head_end + body_needed) return data;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return {};
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return {};
      data.append(buf, static_cast<std::size_t>(n));
      if (head_end == std::string::npos) {
        const auto end = data.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        head_end = end + 4;
        body_needed = 0;
        std::string lower;
        for (std::size_t i = 0; i < head_end; ++i) {
          lower += static_cast<char>(std::tolower(static_cast<unsigned char>(data[i])));
        }
        if (const auto cl = lower.find("\r\ncontent-length:"); cl != std::string::npos) {
          body_needed = std::stoul(lower.substr(cl + 17));
        }
      }
    }
  }

  /// Writes all of `data`; false when the peer went away. Adds the bytes
  /// actually written to `sent` when given.
  static bool write_all(int fd, std::string_view data, std::size_t* sent = nullptr) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        return false;
      }
      if (sent != nullptr) *sent += static_cast<std::size_t>(n);
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// The port of a "CONNECT 127.0.0.1:PORT ..." request head; 0 for any other head.
  static int connect_target_port(const std::string& head) {
    const auto colon = head.find(':');
    const auto space = head.find(' ', colon);
    if (!head.starts_with("CONNECT 127.0.0.1:") || colon == std::string::npos || space == std::string::npos) return 0;
    try {
      return std::stoi(head.substr(colon + 1, space - colon - 1));
    } catch (...) {
      return 0;
    }
  }

  /// A connection to 127.0.0.1:`port`; -1 when refused.
  static int connect_loopback(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  /// A proxy tunnel's inside: relays bytes both ways between `client` and
  /// `upstream` until either closes (or 10 s pass idle); `seen` gets what the
  /// client sends. Closes `upstream`.
  static void relay(int client, int upstream, const std::function<void(std::string_view)>& seen = {}) {
    char buf[16384];
    for (;;) {
      pollfd p[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
      if (::poll(p, 2, 10000) <= 0) break;
      if (p[0].revents != 0) {
        const ssize_t n = ::recv(client, buf, sizeof buf, 0);
        if (n <= 0) break;
        const std::string_view bytes(buf, static_cast<std::size_t>(n));
        if (seen) seen(bytes);
        if (!write_all(upstream, bytes)) break;
      }
      if (p[1].revents != 0) {
        const ssize_t n = ::recv(upstream, buf, sizeof buf, 0);
        if (n <= 0 || !write_all(client, std::string_view(buf, static_cast<std::size_t>(n)))) break;
      }
    }
    ::close(upstream);
  }

  /// Closes with a TCP RST instead of a FIN.
  static void reset(int fd) {
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  }

  /// A complete response with a chunked body (one chunk) and `trailers`
  /// ("Name: value\r\n" lines, may be empty).
  static std::string chunked_response(int status, std::string_view body, std::string_view trailers = {}) {
    char size_line[32];
    std::snprintf(size_line, sizeof size_line, "%zx\r\n", body.size());
    std::string out = "HTTP/1.1 " + std::to_string(status) +
                      " X\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    if (!body.empty()) out.append(size_line).append(body).append("\r\n");
    out.append("0\r\n").append(trailers).append("\r\n");
    return out;
  }

  /// A complete response with a Content-Length body.
  static std::string response(int status, std::string_view body, std::string_view extra_headers = {},
                              std::string_view content_type = "application/json") {
    std::string out = "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + std::string(content_type) +
                      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    out += extra_headers;
    out += "\r\n";
    out += body;
    return out;
  }

 private:
  void accept_loop() {
    for (;;) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // shut down
      }
      const int n = connections_++;
      const std::lock_guard lock(mutex_);
      if (stopping_) {
        ::close(fd);
        return;
      }
      workers_.emplace_back([this, fd, n] {
        handler_(fd, n);
        ::close(fd);
      });
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
};

}  // namespace studentsvc::test

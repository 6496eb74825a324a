#pragma once
// An HTTP CONNECT proxy on 127.0.0.1 for tests: one that refuses every tunnel
// with 407 Proxy Authentication Required, or one that tunnels to 127.0.0.1:PORT
// and relays bytes both ways (it sees only the CONNECT line and ciphertext).
// It records the CONNECT heads it got, so a test can check no secret reached it.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string>

#include "raw_server.hpp"

namespace studentsvc::test {

class ConnectProxy {
 public:
  enum class Mode { refuse_407, tunnel };

  explicit ConnectProxy(Mode mode) : server_([this, mode](int fd, int) { serve(fd, mode); }) {}

  [[nodiscard]] int port() const { return server_.port(); }
  /// `http://[userinfo]127.0.0.1:PORT`
  [[nodiscard]] std::string url(const std::string& userinfo = "") const {
    return "http://" + userinfo + "127.0.0.1:" + std::to_string(server_.port());
  }
  [[nodiscard]] std::string heads() const {
    const std::lock_guard lock(mutex_);
    return heads_;
  }
  void stop() { server_.stop(); }

 private:
  void serve(int fd, Mode mode) {
    const std::string head = RawServer::read_request(fd, std::chrono::milliseconds(5000));
    {
      const std::lock_guard lock(mutex_);
      heads_ += head;
    }
    if (mode == Mode::refuse_407) {
      RawServer::write_all(fd,
                           "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n"
                           "Content-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    const auto colon = head.find(':');
    const auto space = head.find(' ', colon);
    if (!head.starts_with("CONNECT 127.0.0.1:") || colon == std::string::npos || space == std::string::npos) {
      RawServer::write_all(fd, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    const int port = std::stoi(head.substr(colon + 1, space - colon - 1));
    const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(up);
      RawServer::write_all(fd, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    RawServer::write_all(fd, "HTTP/1.1 200 Connection established\r\n\r\n");
    char buf[16384];
    for (;;) {
      pollfd p[2] = {{fd, POLLIN, 0}, {up, POLLIN, 0}};
      if (::poll(p, 2, 10000) <= 0) break;
      if (p[0].revents != 0) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0 || !RawServer::write_all(up, std::string_view(buf, static_cast<std::size_t>(n)))) break;
      }
      if (p[1].revents != 0) {
        const ssize_t n = ::recv(up, buf, sizeof buf, 0);
        if (n <= 0 || !RawServer::write_all(fd, std::string_view(buf, static_cast<std::size_t>(n)))) break;
      }
    }
    ::close(up);
  }

  RawServer server_;
  mutable std::mutex mutex_;
  std::string heads_;
};

}  // namespace studentsvc::test

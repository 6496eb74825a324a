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
    const int port = RawServer::connect_target_port(head);
    if (port == 0) {
      RawServer::write_all(fd, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    const int up = RawServer::connect_loopback(port);
    if (up < 0) {
      RawServer::write_all(fd, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    RawServer::write_all(fd, "HTTP/1.1 200 Connection established\r\n\r\n");
    RawServer::relay(fd, up);
  }

  RawServer server_;
  mutable std::mutex mutex_;
  std::string heads_;
};

}  // namespace studentsvc::test

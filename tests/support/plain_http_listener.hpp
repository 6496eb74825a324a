#pragma once
// A plain-HTTP listener on 127.0.0.1 reached over https://: what a base URL
// with the wrong scheme (or port) meets. It answers whatever arrives with a
// 400 page, as a web server answers bytes that are not HTTP, so the client's
// TLS handshake reads HTTP text back ("wrong version number") on every
// connection: a handshake failure every further request would repeat.

#include <poll.h>
#include <sys/socket.h>

#include <string>

#include "raw_server.hpp"

namespace studentsvc::test {

class PlainHttpListener {
 public:
  PlainHttpListener()
      : server_([](int fd, int) {
          char buf[4096];
          pollfd p{fd, POLLIN, 0};
          if (::poll(&p, 1, 5000) > 0 && ::recv(fd, buf, sizeof buf, 0) > 0) {
            (void)RawServer::write_all(
                fd, RawServer::response(400, "<html><body>400 Bad Request</body></html>", "Connection: close\r\n",
                                        "text/html"));
          }
        }) {}

  /// The listener as an https:// base URL.
  [[nodiscard]] std::string https_url() const { return "https://127.0.0.1:" + std::to_string(server_.port()); }
  /// Connections accepted so far (one per TLS attempt).
  [[nodiscard]] int connections() const noexcept { return server_.connections(); }

 private:
  RawServer server_;
};

}  // namespace studentsvc::test

#pragma once
/// @file detail/curl/sockets.hpp
/// @brief The sockets a CurlTransport's connections use, so that a connection
/// with unread bytes while idle is never reused (see CurlSocketRegistry).

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <cerrno>
#include <mutex>
#include <vector>

#include <curl/curl.h>

#ifdef _WIN32
#include <winsock2.h>
#include <ws2tcpip.h>
#else
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

namespace studentsvc::detail {

/// Whether `fd` has bytes to read, a hang-up or an error pending right now.
/// On an idle HTTP/1.x connection any of these means it must not be reused:
/// bytes are an answer to no request of ours (a late 408, junk after a body),
/// and a hang-up means the server is gone.
[[nodiscard]] inline bool socket_has_input(curl_socket_t fd) noexcept {
#ifdef _WIN32
  WSAPOLLFD p{};
  p.fd = fd;
  p.events = POLLRDNORM;
  return WSAPoll(&p, 1, 0) != 0;  // ready, hung up, in error, or the poll failed
#else
  pollfd p{fd, POLLIN, 0};
  int r = 0;
  do {
    r = ::poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  return r != 0;  // ready, hung up, in error, or the poll failed
#endif
}

/// The local port `fd` is bound to; 0 when it has none or it cannot be told.
[[nodiscard]] inline int socket_local_port(curl_socket_t fd) noexcept {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

/// Every socket libcurl has open for one CurlTransport's handles (its
/// CURLOPT_OPENSOCKETFUNCTION and CURLOPT_CLOSESOCKETFUNCTION), so the
/// pre-request callback can find the socket of the connection libcurl chose,
/// by its local port, and look at it before a request goes out on it.
///
/// Why: libcurl 7.88 reuses an idle connection that has unread bytes (its
/// liveness check only rejects one the peer closed), so a late or extra
/// response would be read as the answer to the next request. Newer libcurl
/// rejects such a connection itself; this gives 7.88 the same rule.
/// Thread-safe: handles on many threads open and close sockets at once.
class CurlSocketRegistry {
 public:
  /// CURLOPT_OPENSOCKETFUNCTION: opens the socket as libcurl would and records it.
  static curl_socket_t open(void* self, curlsocktype, curl_sockaddr* addr) noexcept {
    int type = addr->socktype;
#ifdef SOCK_CLOEXEC
    type |= SOCK_CLOEXEC;  // not inherited by programs the application starts
#endif
    const curl_socket_t fd = ::socket(addr->family, type, addr->protocol);
    if (fd == CURL_SOCKET_BAD) return fd;
    auto* registry = static_cast<CurlSocketRegistry*>(self);
    try {
      const std::lock_guard lock(registry->mutex_);
      registry->sockets_.push_back({fd, 0});
    } catch (...) {
      close_fd(fd);
      return CURL_SOCKET_BAD;
    }
    return fd;
  }

  /// CURLOPT_CLOSESOCKETFUNCTION: forgets the socket, then closes it (in this
  /// order, so a number the system hands out again is never taken for it).
  static int close(void* self, curl_socket_t fd) noexcept {
    auto* registry = static_cast<CurlSocketRegistry*>(self);
    {
      const std::lock_guard lock(registry->mutex_);
      std::erase_if(registry->sockets_, [fd](const Entry& e) { return e.fd == fd; });
    }
    return close_fd(fd);
  }

  /// The open socket bound to local port `port`; CURL_SOCKET_BAD when none or
  /// more than one is (then the caller cannot tell which, and must not trust it).
  [[nodiscard]] curl_socket_t find_by_local_port(int port) {
    const std::lock_guard lock(mutex_);
    curl_socket_t found = CURL_SOCKET_BAD;
    for (Entry& e : sockets_) {
      // A socket's port is fixed once it connects: ask the system once.
      if (e.port == 0) e.port = socket_local_port(e.fd);
      if (e.port != port) continue;
      if (found != CURL_SOCKET_BAD) return CURL_SOCKET_BAD;
      found = e.fd;
    }
    return found;
  }

 private:
  static int close_fd(curl_socket_t fd) noexcept {
#ifdef _WIN32
    return ::closesocket(fd);
#else
    return ::close(fd);
#endif
  }

  struct Entry {
    curl_socket_t fd;
    int port;  ///< Local port; 0 until known.
  };
  std::mutex mutex_;
  std::vector<Entry> sockets_;
};

}  // namespace studentsvc::detail

#endif  // STUDENTSVC_WITH_CURL

#pragma once
/// @file testing/detail/header_tap.hpp
/// @brief detail::HeaderTapServer: an httplib::Server (plain HTTP, POSIX)
/// whose handlers see each request's header fields exactly as they were sent.
///
/// Why: cpp-httplib 0.11 drops a header field whose value is empty and
/// percent-decodes every value, so `x-api-key:` and `x-api-key: %41` cannot be
/// told apart from other requests through `Request::headers`. This server
/// keeps cpp-httplib's parsing and routing but runs each connection on its own
/// httplib::Stream (the public extension point: `process_and_close_socket` is
/// virtual and `process_request` protected), which records the bytes of the
/// request line and header block; the `setup_request` hook then replaces
/// `Request::headers` with the fields parsed from those bytes, before routing.
/// make_plain_server() uses it only with 0.11's `process_request` signature.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <httplib.h>

namespace studentsvc::testing::detail {

/// @brief The header fields of a raw request head ("request line CRLF
/// fields CRLF CRLF"), in order: every field kept, repeated and empty ones
/// included; the value without surrounding spaces or tabs, not decoded.
/// Lines without a colon are skipped (cpp-httplib skips them too).
[[nodiscard]] inline httplib::Headers parse_header_block(std::string_view head) {
  httplib::Headers fields;
  auto line_end = head.find('\n');  // past the request line
  while (line_end != std::string_view::npos && line_end + 1 < head.size()) {
    const auto start = line_end + 1;
    line_end = head.find('\n', start);
    std::string_view line = head.substr(start, line_end == std::string_view::npos ? head.npos : line_end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the blank line ends the head
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    fields.emplace(std::string(line.substr(0, colon)), std::string(value));  // multimap: equal names keep their order
  }
  return fields;
}

/// A buffered socket stream that records what it hands out while tapping.
class TapStream final : public httplib::Stream {
 public:
  TapStream(socket_t sock, std::chrono::microseconds read_timeout, std::chrono::microseconds write_timeout)
      : sock_(sock), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

  using httplib::Stream::write;

  bool is_readable() const override { return pos_ < len_ || wait(POLLIN, read_timeout_); }
  bool is_writable() const override { return wait(POLLOUT, write_timeout_); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      if (!wait(POLLIN, read_timeout_)) return -1;
      ssize_t n = 0;
      do {
        n = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<std::size_t>(n);
    }
    const std::size_t k = std::min(size, len_ - pos_);
    std::memcpy(ptr, buffer_.data() + pos_, k);
    if (tapping_) tap_.append(ptr, k);
    pos_ += k;
    return static_cast<ssize_t>(k);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n = 0;
    do {
      n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

  /// Waits for the next request on a kept-alive connection: false after
  /// `idle` without one, when the peer closed, or once the server stops
  /// (checked every 50 ms, so stop() does not wait out idle connections).
  bool wait_for_request(std::chrono::seconds idle, const std::atomic<socket_t>& listening) const {
    if (pos_ < len_) return true;
    const auto deadline = std::chrono::steady_clock::now() + idle;
    while (listening != INVALID_SOCKET && std::chrono::steady_clock::now() < deadline) {
      if (wait(POLLIN, std::chrono::milliseconds(50))) return true;
    }
    return false;
  }

  void start_tap() {
    tap_.clear();
    tapping_ = true;
  }
  std::string take_tap() {
    tapping_ = false;
    return std::move(tap_);
  }

 private:
  [[nodiscard]] bool wait(short events, std::chrono::microseconds timeout) const {
    pollfd p{sock_, events, 0};
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
    int r = 0;
    do {
      r = ::poll(&p, 1, static_cast<int>(ms));
    } while (r < 0 && errno == EINTR);
    return r > 0;
  }

  template <class Get>
  void address(Get get, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (get(sock_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
    std::array<char, INET6_ADDRSTRLEN> text{};
    if (addr.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
      ::inet_ntop(AF_INET, &a->sin_addr, text.data(), text.size());
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
      ::inet_ntop(AF_INET6, &a->sin6_addr, text.data(), text.size());
      port = ntohs(a->sin6_port);
    }
    ip = text.data();
  }

  socket_t sock_;
  std::chrono::microseconds read_timeout_;
  std::chrono::microseconds write_timeout_;
  std::array<char, 4096> buffer_{};
  std::size_t pos_ = 0;
  std::size_t len_ = 0;
  bool tapping_ = false;
  std::string tap_;
};

/// @brief An httplib::Server (or `Base`) whose `Request::headers` are the
/// header fields as sent (see the file comment); everything else is cpp-httplib's own.
template <class Base = httplib::Server>
class HeaderTapServer : public Base {
 private:
  bool process_and_close_socket(socket_t sock) override {
    using std::chrono::microseconds;
    using std::chrono::seconds;
    TapStream stream(sock, seconds(this->read_timeout_sec_) + microseconds(this->read_timeout_usec_),
                     seconds(this->write_timeout_sec_) + microseconds(this->write_timeout_usec_));
    bool ok = false;
    for (std::size_t left = this->keep_alive_max_count_; left > 0; --left) {
      if (!stream.wait_for_request(seconds(this->keep_alive_timeout_sec_), this->svr_sock_)) break;
      stream.start_tap();
      bool closed = false;
      ok = this->process_request(stream, left == 1, closed, [&stream](httplib::Request& req) {
        req.headers = parse_header_block(stream.take_tap());
      });
      if (!ok || closed) break;
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }
};

/// True when `Base` has cpp-httplib 0.11's protected
/// `process_request(Stream&, bool, bool&, setup_request)`; later releases
/// changed it (and keep empty header values themselves).
template <class Base>
struct HasTappableProcessRequest : Base {
  // A member function body sees the class complete and its protected members.
  static consteval bool check() {
    return requires(HasTappableProcessRequest& s, httplib::Stream& stream, bool& closed,
                    const std::function<void(httplib::Request&)>& setup) {
      { s.process_request(stream, false, closed, setup) } -> std::same_as<bool>;
    };
  }
};

/// @brief A plain-HTTP server for MockServer: the header tap where this
/// cpp-httplib allows it, else cpp-httplib's own parsing.
template <class Base = httplib::Server>
[[nodiscard]] std::unique_ptr<httplib::Server> make_plain_server() {
  if constexpr (HasTappableProcessRequest<Base>::check()) {
    return std::make_unique<HeaderTapServer<Base>>();
  } else {
    return std::make_unique<Base>();
  }
}

}  // namespace studentsvc::testing::detail

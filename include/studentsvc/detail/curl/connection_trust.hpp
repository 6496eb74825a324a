#pragma once
/// @file detail/curl/connection_trust.hpp
/// @brief Whether a connection may carry a request: the check libcurl runs on
/// the connection it chose, right before the request goes out (unsolicited
/// bytes on a reused idle connection; a non-idempotent request about to be
/// replayed), and the one way a request refused there is sent again.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <vector>

#include <curl/curl.h>

#include <studentsvc/detail/curl/exchange.hpp>
#include <studentsvc/detail/curl/sockets.hpp>

namespace studentsvc::detail {

/// The connections (by local port) that the transfers of one engine (a batch,
/// or a transport's event loop) have sent on and not yet finished; touched by
/// that engine's thread only. A second transfer on a port in use shares an
/// HTTP/2 connection: the other streams' frames waiting there are not stale.
class ConnectionsInUse {
 public:
  [[nodiscard]] bool contains(int port) const noexcept {
    for (const int p : ports_) {
      if (p == port) return true;
    }
    return false;
  }
  void add(int port) { ports_.push_back(port); }
  /// Removes one use of `port` (a transfer that finished).
  void remove(int port) noexcept {
    for (auto& p : ports_) {
      if (p == port) {
        p = ports_.back();
        ports_.pop_back();
        return;
      }
    }
  }

 private:
  std::vector<int> ports_;  // one entry per transfer in flight: at most the engine's concurrency
};

/// Gives up the exchange's place in its engine's ConnectionsInUse: its
/// transfer finished (or is about to be sent again).
inline void leave_connection(CurlExchange& ex) noexcept {
  if (ex.connections != nullptr && ex.port_in_use != 0) ex.connections->remove(ex.port_in_use);
  ex.port_in_use = 0;
}

/// CURLOPT_PREREQFUNCTION: runs on the connection libcurl chose, right before
/// the request is written, each time libcurl is about to write it.
inline int curl_before_send(void* user, char*, char*, int, int local_port) noexcept {
  auto* ex = static_cast<CurlExchange*>(user);
  if (ex == nullptr) return CURL_PREREQFUNC_OK;
  leave_connection(*ex);  // libcurl sending it again: its last connection is gone
  if (ex->sends > 0 && !ex->idempotent) {
    // libcurl's "Connection died, retrying a fresh connect" would replay it.
    // Refusing here keeps keep-alive for such requests (FRESH_CONNECT would
    // cost a handshake per call); the price is an error where libcurl resends.
    ex->replay_refused = true;
    return CURL_PREREQFUNC_ABORT;
  }
  long connects = 0;
  curl_easy_getinfo(ex->handle, CURLINFO_NUM_CONNECTS, &connects);
  if (connects == 0 && ex->sockets != nullptr) {  // a reused connection
    // Another transfer of the engine is on it: a multiplexed HTTP/2
    // connection, whose frames are framed per stream and not stale.
    const bool shared = ex->connections != nullptr && ex->connections->contains(local_port);
    if (!shared) {
      // Unread bytes on an idle connection answer no request of ours: using it
      // would hand them to this call. Nothing is sent yet; the caller runs the
      // request again on a new connection (libcurl closes this aborted one).
      const curl_socket_t fd = ex->sockets->find_by_local_port(local_port);
      if (fd == CURL_SOCKET_BAD || socket_has_input(fd)) {
        ex->stale_connection = true;
        return CURL_PREREQFUNC_ABORT;
      }
    }
  }
  if (ex->connections != nullptr) {
    try {
      ex->connections->add(local_port);
    } catch (...) {
      return CURL_PREREQFUNC_ABORT;  // out of memory: fails as a transport error
    }
    ex->port_in_use = local_port;
  }
  ++ex->sends;
  return CURL_PREREQFUNC_OK;
}

/// After a transfer that ended with `code`: true when it was refused on a
/// stale connection before anything was sent, and `h` is set to run it once
/// more on a new connection (the only case a request is sent again).
[[nodiscard]] inline bool send_again_on_fresh_connection(CURL* h, CURLcode code, CurlExchange& ex) noexcept {
  if (code != CURLE_ABORTED_BY_CALLBACK || !ex.stale_connection) return false;
  ex.stale_connection = false;
  ex.error[0] = '\0';
  curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
  return true;
}

}  // namespace studentsvc::detail

#endif  // STUDENTSVC_WITH_CURL

// The tests' failures that `studentsvc mock` will not serve: an HTTP/1.1
// proxy on 127.0.0.1 in front of the mock that forwards every request, but
// answers a lookup of a listed perm itself with a 200 whose body does not
// decode (firstName a number), as a service with a bad record would. The mock
// refuses such a record in its fixture file, so the tests put this in front.
//
//   roster_sync_fault_proxy UPSTREAM_PORT BAD_PERM[,BAD_PERM...]
// Prints `http://127.0.0.1:PORT` (a free port) on stdout, then serves until
// killed. One thread per connection; one upstream connection per downstream
// one (reopened when the mock has closed it). Requests have no body (GET);
// the mock's answers carry Content-Length.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace {

std::uint16_t upstream_port = 0;
std::set<std::string, std::less<>> bad_perms;

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads from `fd` into `buffer` until it holds "\r\n\r\n"; the head's length
// (with the blank line), or nullopt when the peer closed or failed first.
std::optional<std::size_t> read_head(int fd, std::string& buffer) {
  for (;;) {
    if (const auto end = buffer.find("\r\n\r\n"); end != std::string::npos) return end + 4;
    char chunk[16384];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return std::nullopt;
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

std::size_t content_length(std::string_view head) {
  std::size_t at = 0;
  while ((at = head.find("\r\n", at)) != std::string_view::npos) {
    at += 2;
    constexpr std::string_view name = "content-length:";
    if (head.size() - at < name.size()) break;
    bool match = true;
    for (std::size_t i = 0; i < name.size(); ++i) {
      const char c = head[at + i];
      if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != name[i]) match = false;
    }
    if (match) return std::strtoull(std::string(head.substr(at + name.size(), 20)).c_str(), nullptr, 10);
  }
  return 0;
}

int connect_upstream() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(upstream_port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// The upstream's answer to `request` (head and body), over `up` (reconnected
// once when the mock closed an idle connection); nullopt when it fails.
std::optional<std::string> forward(int& up, std::string_view request) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (up < 0) up = connect_upstream();
    if (up < 0) return std::nullopt;
    std::string answer;
    if (write_all(up, request)) {
      if (const auto head = read_head(up, answer)) {
        const std::size_t total = *head + content_length(std::string_view(answer).substr(0, *head));
        while (answer.size() < total) {
          char chunk[16384];
          const ssize_t n = ::recv(up, chunk, sizeof chunk, 0);
          if (n <= 0) break;
          answer.append(chunk, static_cast<std::size_t>(n));
        }
        if (answer.size() >= total) return answer;
      }
    }
    ::close(up);
    up = -1;
  }
  return std::nullopt;
}

void serve(int client) {
  int up = -1;
  std::string buffer;
  for (;;) {
    const auto head = read_head(client, buffer);
    if (!head) break;
    const std::string request = buffer.substr(0, *head);
    buffer.erase(0, *head);
    // GET /students/v2/students/<perm> HTTP/1.1
    const std::string_view line = std::string_view(request).substr(0, request.find("\r\n"));
    constexpr std::string_view lookup = " /students/v2/students/";
    std::string perm;
    if (const auto at = line.find(lookup); at != std::string_view::npos) {
      const std::string_view rest = line.substr(at + lookup.size());
      perm = std::string(rest.substr(0, rest.find_first_of(" ?")));
    }
    std::string answer;
    if (bad_perms.contains(perm)) {
      const std::string body = R"({"perm":")" + perm + R"(","firstName":42,"lastName":"Bad","email":"b@example.edu"})";
      answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\n\r\n" + body;
    } else if (auto forwarded = forward(up, request)) {
      answer = std::move(*forwarded);
    } else {
      break;  // the mock is gone: so is this connection, as if the service were down
    }
    if (!write_all(client, answer)) break;
  }
  if (up >= 0) ::close(up);
  ::close(client);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: roster_sync_fault_proxy UPSTREAM_PORT BAD_PERM[,BAD_PERM...]\n");
    return 2;
  }
  upstream_port = static_cast<std::uint16_t>(std::atoi(argv[1]));
  for (std::string_view list = argv[2]; !list.empty();) {
    const auto comma = list.find(',');
    bad_perms.emplace(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  std::signal(SIGPIPE, SIG_IGN);
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 256) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("roster_sync_fault_proxy: listen");
    return 1;
  }
  std::printf("http://127.0.0.1:%u\n", static_cast<unsigned>(ntohs(addr.sin_port)));
  std::fflush(stdout);
  for (;;) {
    const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const int one = 1;
    ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::thread(serve, client).detach();
  }
}

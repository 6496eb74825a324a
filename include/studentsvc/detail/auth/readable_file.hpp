#pragma once
/// @file detail/auth/readable_file.hpp
/// @brief open_regular_file and unreadable_file_reason: a configured file (the
/// CA bundle, a secret file) opened without ever waiting on a FIFO, and why it
/// cannot be read said up front, instead of a TLS error on the first request.

#include <fcntl.h>
#include <sys/stat.h>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

#include <cerrno>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>

namespace studentsvc::detail {

/// read(2) and close(2), or their MSVC names: -1 on an error (EINTR retried).
[[nodiscard]] inline long long read_file_bytes(int fd, char* buffer, std::size_t size) {
  for (;;) {
#ifdef _WIN32
    const long long n = ::_read(fd, buffer, static_cast<unsigned>(size));
#else
    const long long n = ::read(fd, buffer, size);
#endif
    if (n >= 0 || errno != EINTR) return n;
  }
}
inline void close_file(int fd) {
#ifdef _WIN32
  ::_close(fd);
#else
  ::close(fd);
#endif
}

/// A descriptor of the regular file at `path`, or why there is none ("does
/// not exist", "is a directory", ...). Opened with O_NONBLOCK and checked with
/// fstat before any read, so a FIFO (or a device) is refused, never waited on.
[[nodiscard]] inline std::expected<int, std::string> open_regular_file(const std::string& path) {
  if (path.empty()) return std::unexpected(std::string("is empty"));
  errno = 0;
#ifdef _WIN32
  const int fd = ::_open(path.c_str(), _O_RDONLY | _O_BINARY);
#else
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // NOLINT(cppcoreguidelines-pro-type-vararg)
#endif
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) return std::unexpected(std::string("does not exist"));
    if (error == EACCES || error == EPERM) {
      return std::unexpected(std::string("is not readable by this process (permission denied)"));
    }
    return std::unexpected("cannot be opened (errno " + std::to_string(error) + ")");
  }
  struct stat st {};
  std::optional<std::string> why;
  if (::fstat(fd, &st) != 0) {
    why = "cannot be read";
  } else if ((st.st_mode & S_IFMT) == S_IFDIR) {
    why = "is a directory";
  } else if ((st.st_mode & S_IFMT) != S_IFREG) {
    why = "is not a regular file (a FIFO, socket or device is never read)";
  }
  if (why) {
    close_file(fd);
    return std::unexpected(std::move(*why));
  }
  return fd;
}

/// Why the file at `path` cannot be read ("does not exist", ...), or
/// std::nullopt when its first byte can be.
[[nodiscard]] inline std::optional<std::string> unreadable_file_reason(const std::string& path) {
  const auto fd = open_regular_file(path);
  if (!fd) return fd.error();
  char first = 0;
  const long long n = read_file_bytes(*fd, &first, 1);
  close_file(*fd);
  if (n < 0) return std::string("cannot be read");
  if (n == 0) return std::string("is empty");
  return std::nullopt;
}

}  // namespace studentsvc::detail

#pragma once
/// @file detail/auth/readable_file.hpp
/// @brief unreadable_file_reason: says up front why a configured file (the CA
/// bundle) cannot be read, instead of a TLS error on the first request.

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>

namespace studentsvc::detail {

/// Why the file at `path` cannot be read ("does not exist", ...), or
/// std::nullopt when its first byte can be. Only <cstdio>: no <filesystem>
/// cost in the option headers.
[[nodiscard]] inline std::optional<std::string> unreadable_file_reason(const std::string& path) {
  if (path.empty()) return std::string("is empty");
  errno = 0;
  std::FILE* file = std::fopen(path.c_str(), "rb");  // NOLINT(cppcoreguidelines-owning-memory)
  if (file == nullptr) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) return std::string("does not exist");
    if (error == EACCES || error == EPERM) return std::string("is not readable by this process (permission denied)");
    return "cannot be opened (errno " + std::to_string(error) + ")";
  }
  const int first = std::fgetc(file);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);  // NOLINT(cppcoreguidelines-owning-memory)
  if (failed) return std::string("cannot be read (is it a directory?)");
  if (first == EOF) return std::string("is empty");
  return std::nullopt;
}

}  // namespace studentsvc::detail

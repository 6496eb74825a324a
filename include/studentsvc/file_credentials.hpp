#pragma once
/// @file file_credentials.hpp
/// @brief FileCredentialProvider: each secret read from its own file and
/// reloaded when the file changes, as secret managers and Kubernetes rotate them.

#include <sys/stat.h>  // stat: a file's identity, checked on every request

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/credential_provider.hpp>
#include <studentsvc/detail/auth/readable_file.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/secret.hpp>

namespace studentsvc {

/// @brief Where FileCredentialProvider finds each secret.
struct FileCredentialFiles {
  std::string api_key_file;      ///< Required: the API key.
  std::string svc_api_key_file;  ///< Optional: the `svc-api-key` (for SvcApiKeyMode::custom).
  std::string network_id;        ///< Optional: the service account for HTTP Basic (not a secret: a value).
  std::string password_file;     ///< Required with network_id: its password.
};

namespace detail {

/// What tells one version of a file from the next: a rename gives another
/// inode, an in-place rewrite another size or modification time.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = -1;
  std::int64_t mtime_ns = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

[[nodiscard]] inline std::optional<FileIdentity> file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FileIdentity id;
  id.device = static_cast<std::uint64_t>(st.st_dev);
  id.inode = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::int64_t>(st.st_size);
#if defined(__APPLE__)
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtimespec.tv_sec) * 1'000'000'000 + st.st_mtimespec.tv_nsec;
#elif defined(__unix__)
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
#else
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtime) * 1'000'000'000;
#endif
  return id;
}

/// The secret at `path`, or why it cannot be read. Secrets are small: more
/// than 64 KiB is refused rather than read; a FIFO or device is refused, never
/// waited on. Every trailing CR and LF is dropped (`echo KEY > file`, a
/// Windows editor's CRLF, a stray blank line).
[[nodiscard]] inline Result<Secret> read_secret_file(const std::string& path) {
  constexpr std::size_t max_secret_bytes = 64U * 1024U;
  const auto fd = open_regular_file(path);
  if (!fd) return make_error(ErrorKind::invalid_argument, fd.error());
  std::string bytes;
  std::array<char, 4096> chunk{};
  // Room for all it may read, so no reallocation leaves a copy behind.
  bytes.reserve(max_secret_bytes + chunk.size());
  bool too_large = false;
  bool failed = false;
  while (true) {
    const long long n = read_file_bytes(*fd, chunk.data(), chunk.size());
    if (n <= 0) {
      failed = n < 0;
      break;
    }
    bytes.append(chunk.data(), static_cast<std::size_t>(n));
    if (bytes.size() > max_secret_bytes) {
      too_large = true;
      break;
    }
  }
  close_file(*fd);
  wipe_bytes(chunk.data(), chunk.size());  // the last piece read
  Secret secret(std::move(bytes));  // wiped when done, whatever happens next
  if (failed) return make_error(ErrorKind::invalid_argument, "cannot be read");
  if (too_large) return make_error(ErrorKind::invalid_argument, "is larger than 64 KiB: not a secret");
  std::string_view value = secret.reveal();
  while (value.ends_with('\n') || value.ends_with('\r')) value.remove_suffix(1);
  if (value.empty()) return make_error(ErrorKind::invalid_argument, "is empty");
  return Secret(value);
}

/// One secret file and its last good value.
class WatchedSecretFile {
 public:
  WatchedSecretFile(std::string setting, std::string path) : setting_(std::move(setting)), path_(std::move(path)) {}

  /// The current value: the cached one while the file is unchanged, else read
  /// afresh (again if it changed during the read). An unreadable or empty file
  /// keeps the last good value (a rewrite caught half-way); with none, an error.
  [[nodiscard]] Result<Secret> current(bool force) {
    for (int tries = 0; tries < 3; ++tries) {
      const auto before = file_identity(path_);
      if (!force && value_ && before && *before == identity_) return *value_;
      auto read = read_secret_file(path_);
      const auto after = file_identity(path_);
      if (before != after) continue;  // changed while it was read: read it again
      if (read) {
        value_ = std::move(*read);
        identity_ = after.value_or(FileIdentity{});
        return *value_;
      }
      if (value_) return *value_;  // unreadable now: keep the last good value, look again next time
      return make_error(ErrorKind::invalid_argument, setting_ + " '" + path_ + "' " + read.error().message);
    }
    if (value_) return *value_;
    return make_error(ErrorKind::invalid_argument, setting_ + " '" + path_ + "' keeps changing while it is read");
  }

 private:
  std::string setting_;
  std::string path_;
  std::optional<Secret> value_;
  FileIdentity identity_;
};

}  // namespace detail

/// @brief Reads each secret from its own file and reloads a file when it
/// changes (another inode, size or modification time), which is how campus
/// secret managers and Kubernetes mount rotated secrets.
///
/// - A file holds the secret's bytes; every trailing newline (`\n`, `\r\n`,
///   a blank line after it) is dropped, so `echo KEY > file` works. A FIFO or
///   a device is refused, never waited on.
/// - Each request costs one `stat` per file; a file is read again only when it
///   changed, and again if it changed while it was read.
/// - Replace a file atomically (write a new file, then rename it over the old
///   one; Kubernetes swaps a symlink): an in-place rewrite can be seen half
///   written. A file found empty or unreadable after it was once read keeps
///   its last value until it is readable again, so a rewrite caught between
///   truncate and write never sends an empty key.
///
/// Thread-safe: one provider can serve any number of Clients and threads.
///
/// @sa CredentialProvider, AuthPolicy::provider
class FileCredentialProvider final : public CredentialProvider {
 public:
  /// @brief Reads every file once, and says which one cannot be used (naming
  /// the setting, the path and the reason, never the content).
  [[nodiscard]] static Result<std::shared_ptr<FileCredentialProvider>> create(FileCredentialFiles files) {
    if (files.api_key_file.empty()) return make_error(ErrorKind::invalid_argument, "api_key_file is not set");
    if (files.network_id.empty() != files.password_file.empty()) {
      return make_error(ErrorKind::invalid_argument, "network_id and password_file go together");
    }
    if (files.network_id.find(':') != std::string::npos) {
      return make_error(ErrorKind::invalid_argument, "network id must not contain ':'");
    }
    std::shared_ptr<FileCredentialProvider> provider(new FileCredentialProvider(std::move(files)));
    if (auto first = provider->credentials(); !first) return std::unexpected(std::move(first.error()));
    return provider;
  }

  [[nodiscard]] Result<Credentials> credentials() override {
    const std::lock_guard lock(mutex_);
    const bool force = std::exchange(invalidated_, false);
    Credentials out;
    auto api_key = api_key_.current(force);
    if (!api_key) return std::unexpected(std::move(api_key.error()));
    out.api_key = std::move(*api_key);
    if (svc_api_key_) {
      auto svc = svc_api_key_->current(force);
      if (!svc) return std::unexpected(std::move(svc.error()));
      out.svc_api_key = std::move(*svc);
    }
    if (password_) {
      auto password = password_->current(force);
      if (!password) return std::unexpected(std::move(password.error()));
      out.network_id = network_id_;
      out.password = std::move(*password);
    }
    return out;
  }

  void invalidate() override {
    const std::lock_guard lock(mutex_);
    invalidated_ = true;
  }

 private:
  explicit FileCredentialProvider(FileCredentialFiles files)
      : api_key_("api_key_file", std::move(files.api_key_file)), network_id_(std::move(files.network_id)) {
    if (!files.svc_api_key_file.empty()) svc_api_key_.emplace("svc_api_key_file", std::move(files.svc_api_key_file));
    if (!files.password_file.empty()) password_.emplace("password_file", std::move(files.password_file));
  }

  std::mutex mutex_;  // one reader at a time; a stat per file per request under it
  bool invalidated_ = false;
  detail::WatchedSecretFile api_key_;
  std::optional<detail::WatchedSecretFile> svc_api_key_;
  std::string network_id_;
  std::optional<detail::WatchedSecretFile> password_;
};

}  // namespace studentsvc

// Unit tests for file_credentials.hpp: FileCredentialProvider reads each
// secret from its file, notices a rename or a rewrite, never hands out an
// empty or half-read value, and is safe to share between threads.

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <unistd.h>  // geteuid

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <studentsvc/file_credentials.hpp>

#include "support/temp_dir.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace file_credentials_test {

using studentsvc::ErrorKind;
using studentsvc::FileCredentialFiles;
using studentsvc::FileCredentialProvider;
using studentsvc::test::TempDir;

namespace {

/// Replaces `path` atomically, as secret managers do: a new file renamed over it.
void rotate(const TempDir& dir, const std::string& path, const std::string& content) {
  static int n = 0;
  const std::string tmp = dir.write(".new-" + std::to_string(++n), content);
  std::filesystem::rename(tmp, path);
}

std::string key_of(FileCredentialProvider& p) {
  auto c = p.credentials();
  REQUIRE(c);
  return std::string(c->api_key.reveal());
}

}  // namespace

TEST_CASE("FileCredentialProvider reads every file, dropping every trailing newline", "[credentials]") {
  const TempDir dir;
  FileCredentialFiles files;
  files.api_key_file = dir.write("api-key", "KEY-file-1\n");
  files.svc_api_key_file = dir.write("svc-api-key", "SVC-file-1\r\n");
  files.network_id = "svc-acct";
  files.password_file = dir.write("password", "PW with spaces \r\n\r\n\n");
  auto p = FileCredentialProvider::create(files);
  REQUIRE(p);
  auto c = (*p)->credentials();
  REQUIRE(c);
  CHECK(c->api_key.reveal() == "KEY-file-1");
  CHECK(c->svc_api_key.reveal() == "SVC-file-1");
  CHECK(c->network_id == "svc-acct");
  CHECK(c->password.reveal() == "PW with spaces ");  // every CR and LF at the end goes, a space stays
}

TEST_CASE("FileCredentialProvider::create says which setting cannot be used", "[credentials]") {
  const TempDir dir;
  FileCredentialFiles files;
  files.api_key_file = dir.write("api-key", "KEY-file-2");
  SECTION("no API key file") {
    files.api_key_file.clear();
    auto p = FileCredentialProvider::create(files);
    REQUIRE_FALSE(p);
    CHECK(p.error().message == "api_key_file is not set");
  }
  SECTION("a missing file") {
    files.api_key_file = (dir.path() / "missing").string();
    auto p = FileCredentialProvider::create(files);
    REQUIRE_FALSE(p);
    CHECK(p.error().kind == ErrorKind::invalid_argument);
    CHECK(p.error().message == "api_key_file '" + files.api_key_file + "' does not exist");
  }
  SECTION("an empty file, or only a newline") {
    files.svc_api_key_file = dir.write("svc", GENERATE(std::string(), std::string("\n")));
    auto p = FileCredentialProvider::create(files);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::StartsWith("svc_api_key_file '") && Catch::EndsWith("' is empty"));
  }
  SECTION("a folder") {
    files.password_file = dir.path().string();
    files.network_id = "acct";
    auto p = FileCredentialProvider::create(files);
    REQUIRE_FALSE(p);
    CHECK(p.error().message == "password_file '" + files.password_file + "' is a directory");
  }
  SECTION("a FIFO: refused at once, never waited on for a writer") {
    files.api_key_file = (dir.path() / "key.fifo").string();
    REQUIRE(::mkfifo(files.api_key_file.c_str(), 0600) == 0);
    auto p = FileCredentialProvider::create(files);  // opened with O_NONBLOCK: returns even with no writer
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("is not a regular file"));
  }
  SECTION("larger than a secret can be") {
    files.api_key_file = dir.write("huge", std::string(70'000, 'k'));
    auto p = FileCredentialProvider::create(files);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("larger than 64 KiB"));
  }
  SECTION("network id without password file, and the reverse") {
    files.network_id = GENERATE(std::string("acct"), std::string());
    files.password_file = files.network_id.empty() ? dir.write("pw", "PW-file-2") : std::string();
    auto p = FileCredentialProvider::create(files);
    REQUIRE_FALSE(p);
    CHECK(p.error().message == "network_id and password_file go together");
  }
  SECTION("a ':' in the network id") {
    files.network_id = "a:b";
    files.password_file = dir.write("pw", "PW-file-2");
    auto p = FileCredentialProvider::create(files);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("':'"));
  }
  SECTION("no error message ever holds a file's content") {
    files.svc_api_key_file = dir.write("svc", "\n");
    auto p = FileCredentialProvider::create(files);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, !Catch::Contains("KEY-file-2"));
  }
}

TEST_CASE("FileCredentialProvider follows a rotated file", "[credentials]") {
  const TempDir dir;
  FileCredentialFiles files;
  files.api_key_file = dir.write("api-key", "KEY-old");
  auto created = FileCredentialProvider::create(files);
  REQUIRE(created);
  auto& p = **created;
  CHECK(key_of(p) == "KEY-old");
  SECTION("replaced by a rename (another inode)") {
    rotate(dir, files.api_key_file, "KEY-new");
    CHECK(key_of(p) == "KEY-new");
  }
  SECTION("rewritten in place with another size") {
    dir.write("api-key", "KEY-newer");
    CHECK(key_of(p) == "KEY-newer");
  }
  SECTION("rewritten in place with the same size: the modification time tells") {
    const auto before = std::filesystem::last_write_time(files.api_key_file);
    dir.write("api-key", "KEY-NEW");
    std::filesystem::last_write_time(files.api_key_file, before + std::chrono::seconds(1));
    CHECK(key_of(p) == "KEY-NEW");
  }
  SECTION("truncated (a rewrite caught half-way): the last good value stays until the file is whole") {
    dir.write("api-key", "");
    CHECK(key_of(p) == "KEY-old");
    dir.write("api-key", "KEY-whole");
    CHECK(key_of(p) == "KEY-whole");
  }
  SECTION("removed: the last good value stays") {
    std::filesystem::remove(files.api_key_file);
    CHECK(key_of(p) == "KEY-old");
  }
  SECTION("invalidate() reads the file again even when it looks unchanged") {
    const auto before = std::filesystem::last_write_time(files.api_key_file);
    dir.write("api-key", "KEY-NEW");  // same size as KEY-old
    std::filesystem::last_write_time(files.api_key_file, before);
    CHECK(key_of(p) == "KEY-old");  // size and time as before: no change seen
    p.invalidate();
    CHECK(key_of(p) == "KEY-NEW");
  }
}

TEST_CASE("FileCredentialProvider under concurrent rotation hands out only whole keys", "[credentials][concurrency]") {
  const TempDir dir;
  FileCredentialFiles files;
  files.api_key_file = dir.write("api-key", "KEY-generation-0000");
  auto created = FileCredentialProvider::create(files);
  REQUIRE(created);
  auto provider = *created;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 8; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        auto c = provider->credentials();
        const std::string key = c ? std::string(c->api_key.reveal()) : std::string();
        // Every key handed out is one whole generation: "KEY-generation-" and 4 digits.
        if (!c || key.size() != 19 || !key.starts_with("KEY-generation-")) ++bad;
        ++reads;
      }
    });
  }
  for (int g = 1; g <= 200; ++g) {
    char name[32];
    std::snprintf(name, sizeof name, "KEY-generation-%04d", g);
    rotate(dir, files.api_key_file, name);
  }
  done = true;
  for (auto& t : readers) t.join();
  CHECK(bad.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(key_of(*provider) == "KEY-generation-0200");
}

}  // namespace file_credentials_test

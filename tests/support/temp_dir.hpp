#pragma once
// A fresh temporary folder for one test, removed with everything in it when
// the test ends; write() puts a file in it with the permissions asked for.

#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace studentsvc::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "studentsvc-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  /// Writes `content` to `name` in the folder, with `permissions`; returns its path.
  std::string write(std::string_view name, std::string_view content,
                    std::filesystem::perms permissions = std::filesystem::perms::owner_read |
                                                         std::filesystem::perms::owner_write) const {
    const auto file = path_ / name;
    {
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out.write(content.data(), static_cast<std::streamsize>(content.size()));
      if (!out) throw std::runtime_error("cannot write " + file.string());
    }
    std::filesystem::permissions(file, permissions);
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace studentsvc::test

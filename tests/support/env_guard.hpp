#pragma once
// Environment variables set or unset for one test, each restored when the
// guard goes (libcurl and ClientOptions::from_env() read the environment).

#include <stdlib.h>  // setenv, unsetenv

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace studentsvc::test {

/// Sets or unsets environment variables, restoring every one it touched on destruction.
class EnvGuard {
 public:
  EnvGuard() = default;
  ~EnvGuard() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

  void set(const std::string& name, const std::string& value) {
    save(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    save(name);
    ::unsetenv(name.c_str());
  }

 private:
  void save(const std::string& name) {
    for (const auto& s : saved_) {
      if (s.first == name) return;
    }
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace studentsvc::test

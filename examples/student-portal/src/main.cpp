// student-portal: shows the signed-in student their own record (see README.md).
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "run.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  const auto env = [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  return student_portal::run(args, env, std::cout, std::cerr);
}

// Compiled once per case by tests/compile_fail.cmake with -DCASE=<n>; every
// case but 0 must fail to compile: a Secret never reaches text by accident.
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#if CASE == 6
#include <format>
#endif

#include <studentsvc/secret.hpp>

int main() {
  const studentsvc::Secret secret("PW-canary");
#if CASE == 0  // the control: reveal() is the way to the bytes, and it compiles
  std::ostringstream out;
  out << secret.reveal().size();
  return out.str() == "9" ? 0 : 1;
#elif CASE == 1
  std::cout << secret;
#elif CASE == 2
  std::ostringstream out;
  out << secret;
#elif CASE == 3
  const std::string text = secret;
#elif CASE == 4
  const std::string_view text = secret;
#elif CASE == 6
  const auto text = std::format("{}", secret);
#elif CASE == 7
  const std::string text = std::string("key=") + secret;
#endif
  return 0;
}

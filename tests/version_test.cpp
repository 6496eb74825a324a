// Unit tests for version.hpp: the macros, the version string and the User-Agent agree.

#include <catch2/catch.hpp>

#include <string>

#include <studentsvc/version.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace version_test {

TEST_CASE("version macros and string agree", "[version]") {
  const std::string from_macros = std::to_string(STUDENTSVC_VERSION_MAJOR) + "." +
                                  std::to_string(STUDENTSVC_VERSION_MINOR) + "." +
                                  std::to_string(STUDENTSVC_VERSION_PATCH);
  CHECK(from_macros == STUDENTSVC_VERSION_STRING);
  CHECK(studentsvc::version == STUDENTSVC_VERSION_STRING);
  CHECK(STUDENTSVC_VERSION_MAJOR >= 0);
  CHECK(STUDENTSVC_VERSION_MINOR >= 0);
  CHECK(STUDENTSVC_VERSION_PATCH >= 0);
}

TEST_CASE("version is MAJOR.MINOR.PATCH digits", "[version]") {
  const std::string v(studentsvc::version);
  int dots = 0;
  for (const char c : v) {
    if (c == '.') {
      ++dots;
    } else {
      CHECK((c >= '0' && c <= '9'));
    }
  }
  CHECK(dots == 2);
  CHECK(v.front() != '.');
  CHECK(v.back() != '.');
  CHECK(v.find("..") == std::string::npos);
}

TEST_CASE("user_agent is studentsvc-cpp/<version>", "[version]") {
  CHECK(studentsvc::user_agent == "studentsvc-cpp/" + std::string(studentsvc::version));
  CHECK(studentsvc::user_agent == "studentsvc-cpp/" STUDENTSVC_VERSION_STRING);
  static_assert(studentsvc::user_agent.starts_with("studentsvc-cpp/"));
}

}  // namespace version_test

// The smallest campus app: look a student up, here in the in-process
// MockServer. Every consumer test (tests/consumers) builds this file its own
// way (find_package, add_subdirectory, FetchContent, pkg-config) and runs it.
#include <cstdio>
#include <string>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

int main() {
  studentsvc::testing::MockServer server;
  if (!server.running()) {
    std::fputs("consumer: the mock server did not start\n", stderr);
    return 1;
  }
  const studentsvc::Client client(server.client_options());
  const auto student = client.get_student("1234567");
  if (!student) {
    std::fprintf(stderr, "consumer: get_student failed: %s\n", to_string(student.error()).c_str());
    return 1;
  }
  const std::string user_agent = server.last_request().header("user-agent").value_or("");
  std::printf("consumer: studentsvc %d.%d.%d (%s), curl %s: %s %s; User-Agent %s\n", STUDENTSVC_VERSION_MAJOR,
              STUDENTSVC_VERSION_MINOR, STUDENTSVC_VERSION_PATCH, STUDENTSVC_VERSION_STRING,
              STUDENTSVC_WITH_CURL ? "on" : "off", student->first_name.c_str(), student->last_name.c_str(),
              user_agent.c_str());
  if (student->first_name != "Ana" || user_agent != studentsvc::user_agent) return 1;
#ifdef CONSUMER_EXPECTED_VERSION
  // The version the build system found (CMake package or .pc) is the headers' version.
  if (studentsvc::version != CONSUMER_EXPECTED_VERSION) {
    std::fprintf(stderr, "consumer: package version %s, headers %s\n", CONSUMER_EXPECTED_VERSION,
                 STUDENTSVC_VERSION_STRING);
    return 1;
  }
#endif
  return 0;
}

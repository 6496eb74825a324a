// current_student: the student named by an end-user JWT (the app acts on the
// student's behalf after a campus login).
//
//   STUDENTSVC_USER_JWT=eyJ... current_student       (plus STUDENTSVC_BASE_URL, _API_KEY, ...)
//   current_student --mock [mock-jwt-li]              # against the bundled mock server
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>  // only for --mock

int main(int argc, char** argv) {
  const bool use_mock = argc > 1 && std::string_view(argv[1]) == "--mock";
  const int first = use_mock ? 2 : 1;
  const char* env_jwt = std::getenv("STUDENTSVC_USER_JWT");  // NOLINT(concurrency-mt-unsafe)
  std::string jwt = argc > first ? argv[first] : env_jwt != nullptr ? env_jwt : "";
  if (use_mock && jwt.empty()) jwt = "mock-jwt-ana";  // the mock's demo token

  std::optional<studentsvc::testing::MockServer> mock;
  auto options = use_mock ? mock.emplace().client_options() : studentsvc::ClientOptions::from_env();
  if (!options) {
    std::cerr << "configuration: " << to_string(options.error()) << '\n';
    return 1;
  }

  const studentsvc::Client client(*options);
  const auto student = client.current_student(jwt);  // the JWT is opaque: sent as is, never parsed
  if (!student) {
    std::cerr << "current_student: " << to_string(student.error()) << '\n';
    return 1;
  }
  std::cout << "signed in as " << student->first_name << ' ' << student->last_name << " (perm "
            << student->perm << ", " << student->email << ")\n";
  return 0;
}

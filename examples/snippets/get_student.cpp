// get_student: look up one student by perm and print the record.
//
//   STUDENTSVC_BASE_URL=https://... STUDENTSVC_API_KEY=... get_student 1234567
//   get_student --mock 1234567     # against the bundled mock server, no network
#include <iostream>
#include <optional>
#include <string_view>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>  // only for --mock

int main(int argc, char** argv) {
  const bool use_mock = argc > 1 && std::string_view(argv[1]) == "--mock";
  const int first = use_mock ? 2 : 1;
  if (argc <= first) {
    std::cerr << "usage: get_student [--mock] PERM\n";
    return 2;
  }
  const std::string_view perm = argv[first];

  std::optional<studentsvc::testing::MockServer> mock;
  auto options = use_mock ? mock.emplace().client_options() : studentsvc::ClientOptions::from_env();
  if (!options) {
    std::cerr << "configuration: " << to_string(options.error()) << '\n';
    return 1;
  }

  const studentsvc::Client client(*options);  // thread-safe: build one, share it
  const auto student = client.get_student(perm);
  if (!student) {  // never an exception: kind, status and message
    std::cerr << "get_student: " << to_string(student.error()) << '\n';
    return 1;
  }
  std::cout << student->perm << ": " << student->first_name << ' ' << student->last_name << " <"
            << student->email << ">\n"
            << "admit level: " << to_string(student->admit_level_kind())
            << ", international status: " << to_string(student->international_status())
            << ", release status: " << to_string(student->release_status()) << '\n';
  return 0;
}

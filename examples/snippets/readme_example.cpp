// The README's usage example: everything between the two markers is pasted
// into README.md verbatim, so keep it short and keep it compiling.
// [readme-example]
#include <iostream>
#include <studentsvc/studentsvc.hpp>

int main() {
  // STUDENTSVC_BASE_URL, STUDENTSVC_API_KEY, STUDENTSVC_NETWORK_ID, STUDENTSVC_PASSWORD, ...
  auto options = studentsvc::ClientOptions::from_env();
  if (!options) {
    std::cerr << to_string(options.error()) << '\n';
    return 1;
  }
  const studentsvc::Client client(*options);  // thread-safe: build one, share it
  const auto student = client.get_student("1234567");
  if (!student) {  // no exceptions: an ApiError, e.g. "not_found (404): Student not found."
    std::cerr << to_string(student.error()) << '\n';
    return 1;
  }
  std::cout << student->first_name << ' ' << student->last_name << " <" << student->email << ">\n";
  if (student->release_status() == studentsvc::ReleaseStatus::not_for_release) {
    std::cout << "Not for release: consult the registrar before sharing.\n";
  }
}
// [readme-example]

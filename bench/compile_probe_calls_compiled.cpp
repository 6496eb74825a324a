// Compile-time probe (f), compiled mode (STUDENTSVC_HEADER_ONLY=0): the same
// three calls as compile_probe_calls.cpp, the bodies being in the library.
// RawResponse::json() is left out: it is the opt-in <studentsvc/json.hpp>.
#include <studentsvc/client.hpp>  // all the three calls need

int compile_probe() {
  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "key";
  const studentsvc::Client client(options);
  const auto student = client.get_student("1234567");
  const auto me = client.current_student("jwt");
  const auto raw = client.conversation();
  return (student ? 1 : 0) + (me ? 2 : 0) + (raw && raw->status == 200 ? 4 : 0);
}

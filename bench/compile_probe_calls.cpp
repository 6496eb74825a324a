// Compile-time probe (f): a program that makes the three calls (everything
// instantiated: the decoders, the error bodies, the retry loop, CurlTransport).
#include <studentsvc/studentsvc.hpp>

int compile_probe() {
  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "key";
  const studentsvc::Client client(options);
  const auto student = client.get_student("1234567");
  const auto me = client.current_student("jwt");
  const auto raw = client.conversation();
  return (student ? 1 : 0) + (me ? 2 : 0) + (raw && raw->json() ? 4 : 0);
}

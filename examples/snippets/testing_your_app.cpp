// docs/testing.md's example: the two test
// doubles of studentsvc::testing, with no network beyond 127.0.0.1.
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

// [testing-example]
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/fake_transport.hpp>
#include <studentsvc/testing/mock_server.hpp>

// The app code under test.
std::string greeting(const studentsvc::Client& client, std::string_view perm) {
  const auto student = client.get_student(perm);
  return student ? "Hello, " + student->first_name + "!" : "Hello!";
}

int main() {
  // Unit level: FakeTransport answers from a queue and records what would be sent.
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  fake->respond(404, R"({"message":"Student not found."})");
  studentsvc::ClientOptions options;
  options.base_url = "https://registrar.example.edu";
  options.auth.api_key = "test-key";
  options.transport = fake;
  bool ok = greeting(studentsvc::Client(options), "7654321") == "Hello!" &&
            fake->last_request().url == "https://registrar.example.edu/students/v2/students/7654321";

  // End to end: MockServer serves the whole interface on 127.0.0.1 over real HTTP.
  const studentsvc::testing::MockServer server;
  ok = ok && greeting(studentsvc::Client(server.client_options()), "1234567") == "Hello, Ana!" &&
       server.last_request().header("svc-api-version") == "2.0";
  std::cout << (ok ? "testing example: ok\n" : "testing example: FAILED\n");
  return ok ? 0 : 1;
}
// [testing-example]

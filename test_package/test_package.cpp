// Conan test_package (also built against a CMake install by the consumer
// tests): the package's headers compile, and a call goes through the whole
// client path, answered by FakeTransport, so nothing touches the network.
#include <iostream>
#include <memory>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/fake_transport.hpp>

int main() {
  auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
  fake->respond(200, R"({"perm":"1234567","firstName":"Ana","lastName":"Núñez","suffix":null,)"
                     R"("email":"ana.nunez@example.edu"})",
                {{"Content-Type", "application/json"}});

  studentsvc::ClientOptions options;
  options.base_url = "https://api.example.edu";
  options.auth.api_key = "test-package-key";
  options.transport = fake;
  const studentsvc::Client client(options);

  const auto student = client.get_student("1234567");
  if (!student) {
    std::cerr << "get_student: " << to_string(student.error()) << '\n';
    return 1;
  }
  std::cout << "studentsvc " << studentsvc::version << ": " << student->first_name << ' ' << student->last_name
            << " (" << fake->requests().size() << " request sent to the fake transport)\n";
  return student->first_name == "Ana" ? 0 : 1;
}

// studentsvc::testing as a user's test links it: the TU includes
// <studentsvc/testing/mock_server.hpp>, starts one server and calls it. With
// the compiled library (STUDENTSVC_TESTING_SEPARATE=1) that header must not
// bring in cpp-httplib or MockServer's bodies: they are in the library.

#include <catch2/catch.hpp>

#include <studentsvc/testing/mock_server.hpp>

#if STUDENTSVC_TESTING_SEPARATE && defined(CPPHTTPLIB_HTTPLIB_H)
#error "<studentsvc/testing/mock_server.hpp> includes <httplib.h> with the compiled studentsvc::testing"
#endif

#include <studentsvc/client.hpp>

namespace testing_library_test {

TEST_CASE("studentsvc::testing: a TU that starts a MockServer links its bodies from the library", "[testing]") {
  const studentsvc::testing::MockServer server;
  REQUIRE(server.running());
  const studentsvc::Client client(server.client_options());
  const auto student = client.get_student("1234567");
  REQUIRE(student);
  CHECK(student->perm == "1234567");
  CHECK(server.request_count() == 1);
  CHECK(server.last_request().path == "/students/v2/students/1234567");
}

}  // namespace testing_library_test

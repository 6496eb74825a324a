// Compile-time probe (f), issue 36: an app's test TU that starts one MockServer
// and asks it for ClientOptions. compile_time.py compiles it header-only and
// with STUDENTSVC_TESTING_SEPARATE=1 (what linking the compiled
// studentsvc::testing sets), where the bodies and cpp-httplib are in the library.
#include <studentsvc/testing/mock_server.hpp>

int compile_probe() {
  const studentsvc::testing::MockServer server;
  const auto options = server.client_options();
  return server.running() && !options.base_url.empty() ? 0 : 1;
}

// MockServer's bodies, compiled once for this repository's tests, examples and
// tool (STUDENTSVC_TESTING_SEPARATE=1, set by the internal target
// studentsvc_testing_compiled; see <studentsvc/testing/mock_server.hpp>).
#define STUDENTSVC_TESTING_SOURCE 1
#include <studentsvc/testing/mock_server.hpp>

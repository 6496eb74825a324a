// Unit tests for stop_token.hpp: StopSource makes the StopTokens the calls take.

#include <catch2/catch.hpp>

#include <studentsvc/stop_token.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace stop_token_test {

TEST_CASE("StopSource makes the StopTokens the calls take, and stops them where the library can") {
  studentsvc::StopSource source;
  const studentsvc::StopToken token = source.get_token();
  CHECK_FALSE(token.stop_requested());
  CHECK_FALSE(source.stop_requested());
  CHECK(source.request_stop());
  CHECK_FALSE(source.request_stop());  // only the first request counts
  CHECK(source.stop_requested());
#if STUDENTSVC_HAS_STOP_TOKEN
  CHECK(token.stop_possible());
  CHECK(token.stop_requested());
#else
  CHECK_FALSE(token.stop_possible());  // the stand-in's tokens never stop (docs/async.md)
  CHECK_FALSE(token.stop_requested());
#endif
}

}  // namespace stop_token_test

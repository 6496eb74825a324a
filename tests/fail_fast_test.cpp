// Unit tests for detail/batch/fail_fast.hpp and studentsvc::stops_batch: which
// final errors stop a batch (401, TLS, an unresolvable host, a proxy's refusal,
// a 404 that is not the service's) and which do not, and the error of a lookup
// the batch then skips.

#include <catch2/catch.hpp>

#include <string>

#include <studentsvc/detail/json/error_body.hpp>
#include <studentsvc/detail/batch/fail_fast.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/responses.hpp>
#include <studentsvc/streaming.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace fail_fast_test {

using studentsvc::ApiError;
using studentsvc::ErrorKind;
using studentsvc::TransportFailure;
using studentsvc::detail::fail_fast_reason;
using studentsvc::detail::FailFastReason;
using studentsvc::detail::fails_every_request;

namespace {

ApiError transport_error(TransportFailure failure) {
  ApiError e = studentsvc::make_error(ErrorKind::transport, "x").error();
  e.transport_failure = failure;
  return e;
}

}  // namespace

TEST_CASE("fail-fast: a 401 stops the batch, in either body form", "[fail_fast]") {
  CHECK(fail_fast_reason(studentsvc::decode_error_body(401, R"({"detail":"Invalid API key."})")) ==
        FailFastReason::unauthorized);
  CHECK(fail_fast_reason(studentsvc::decode_error_body(401, R"({"message":"Authorization has been denied."})")) ==
        FailFastReason::unauthorized);
  CHECK(fail_fast_reason(studentsvc::decode_error_body(401, "<html>proxy</html>")) == FailFastReason::unauthorized);
  CHECK(fails_every_request(studentsvc::decode_error_body(401, "")));
}

TEST_CASE("fail-fast: TLS and name resolution failures stop the batch", "[fail_fast]") {
  CHECK(fail_fast_reason(transport_error(TransportFailure::tls_certificate)) == FailFastReason::tls);
  CHECK(fail_fast_reason(transport_error(TransportFailure::tls_handshake)) == FailFastReason::tls);
  CHECK(fail_fast_reason(transport_error(TransportFailure::name_resolution)) == FailFastReason::name_resolution);
  // The flag decides, not whether the transport thought it retryable.
  ApiError not_retryable = transport_error(TransportFailure::tls_certificate);
  not_retryable.retryable = false;
  CHECK(fails_every_request(not_retryable));
}

TEST_CASE("fail-fast: a 404 that is not the service's and a proxy's refusal stop the batch", "[fail_fast]") {
  // A web server's page for a wrong path prefix, as the student endpoint maps it.
  studentsvc::HttpResponse page;
  page.status = 404;
  page.body = "<html><body>404 Not Found</body></html>";
  const auto wrong_path = studentsvc::map_get_student_response(page, "1234567");
  REQUIRE_FALSE(wrong_path.has_value());
  CHECK(fail_fast_reason(wrong_path.error()) == FailFastReason::endpoint_not_found);
  CHECK(studentsvc::stops_batch(wrong_path.error()));
  // The service's own 404: that student is missing, the next one may not be.
  page.body = R"({"message":"No student with that perm."})";
  const auto missing = studentsvc::map_get_student_response(page, "1234567");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK_FALSE(studentsvc::stops_batch(missing.error()));
  // A proxy that refused the tunnel (403, 407: not retried) stops; one that may pass next time does not.
  ApiError refused = transport_error(TransportFailure::proxy);
  refused.retryable = false;
  CHECK(fail_fast_reason(refused) == FailFastReason::proxy_refused);
  refused.retryable = true;
  CHECK(fail_fast_reason(refused) == FailFastReason::none);
}

TEST_CASE("fail-fast: per-lookup errors and transient failures do not stop the batch", "[fail_fast]") {
  const auto failure = GENERATE(TransportFailure::unspecified, TransportFailure::connect, TransportFailure::timeout,
                                TransportFailure::connection_lost, TransportFailure::proxy,
                                TransportFailure::body_too_large);
  CAPTURE(studentsvc::to_string(failure));
  CHECK(fail_fast_reason(transport_error(failure)) == FailFastReason::none);
  const int status = GENERATE(400, 403, 404, 408, 429, 500, 502, 503, 504);
  CAPTURE(status);
  CHECK_FALSE(fails_every_request(studentsvc::decode_error_body(status, R"({"message":"m"})")));
}

TEST_CASE("fail-fast: a transport error whose message names TLS or DNS but whose cause is unspecified does not stop",
          "[fail_fast]") {
  // A custom Transport that does not fill transport_failure is not second-guessed from its text.
  ApiError e = transport_error(TransportFailure::unspecified);
  e.message = "TLS certificate verification failed: DNS lookup failed";
  CHECK_FALSE(fails_every_request(e));
}

TEST_CASE("fail-fast: cancelled, invalid_argument and decode never trigger", "[fail_fast]") {
  CHECK_FALSE(fails_every_request(studentsvc::make_error(ErrorKind::cancelled, "stopped").error()));
  CHECK_FALSE(fails_every_request(studentsvc::make_error(ErrorKind::invalid_argument, "perm").error()));
  CHECK_FALSE(fails_every_request(studentsvc::make_error(ErrorKind::decode, "field", 200).error()));
  // A stale transport_failure on a kind other than transport is ignored.
  ApiError odd = studentsvc::make_error(ErrorKind::not_found, "gone", 404).error();
  odd.transport_failure = TransportFailure::tls_certificate;
  CHECK_FALSE(fails_every_request(odd));
}

TEST_CASE("fail-fast: the skipped lookups' error is cancelled and names the trigger", "[fail_fast]") {
  const ApiError trigger = studentsvc::decode_error_body(401, R"({"detail":"Invalid API key."})");
  const ApiError skipped = studentsvc::detail::skipped_after(trigger);
  CHECK(skipped.kind == ErrorKind::cancelled);
  CHECK(skipped.status == 0);
  CHECK_FALSE(skipped.retryable);
  CHECK(skipped.attempts == 0);
  CHECK_THAT(skipped.message, Catch::Contains("fail-fast"));
  CHECK_THAT(skipped.message, Catch::Contains("unauthorized (401): Invalid API key."));
  CHECK_FALSE(fails_every_request(skipped));  // a skipped lookup never re-triggers
}

TEST_CASE("fail-fast: reason names", "[fail_fast]") {
  CHECK(studentsvc::detail::to_string(FailFastReason::none) == "none");
  CHECK(studentsvc::detail::to_string(FailFastReason::unauthorized) == "unauthorized");
  CHECK(studentsvc::detail::to_string(FailFastReason::tls) == "tls");
  CHECK(studentsvc::detail::to_string(FailFastReason::name_resolution) == "name_resolution");
  CHECK(studentsvc::detail::to_string(FailFastReason::endpoint_not_found) == "endpoint_not_found");
  CHECK(studentsvc::detail::to_string(FailFastReason::proxy_refused) == "proxy_refused");
}

}  // namespace fail_fast_test

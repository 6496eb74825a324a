// Unit tests for errors.hpp: decode_error_body for every documented error body
// and for bodies that are not JSON, the body excerpt, and to_string.

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>

#include <studentsvc/detail/json/error_body.hpp>
#include <studentsvc/errors.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace errors_test {

using studentsvc::ApiError;
using studentsvc::ErrorKind;

namespace {

bool has_control_character(const std::string& s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// True when `s` is well-formed UTF-8 (no truncated or stray sequence).
bool is_valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    if (b < 0x80) {
      len = 1;
    } else if ((b & 0xE0U) == 0xC0U) {
      len = 2;
    } else if ((b & 0xF0U) == 0xE0U) {
      len = 3;
    } else if ((b & 0xF8U) == 0xF0U) {
      len = 4;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0U) != 0x80U) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

TEST_CASE("400 WebApiInvalidModel: message and modelState arrays", "[errors]") {
  const auto e = studentsvc::decode_error_body(
      400, R"({"message":"The request is invalid.","modelState":{"perm":["too short","not a number"],"x":[]}})");
  CHECK(e.kind == ErrorKind::bad_request);
  CHECK(e.status == 400);
  CHECK(e.message == "The request is invalid.");
  REQUIRE(e.model_state.size() == 2);
  CHECK(e.model_state.at("perm") == std::vector<std::string>{"too short", "not a number"});
  CHECK(e.model_state.at("x").empty());
  CHECK_FALSE(e.retryable);
  CHECK(e.body_excerpt.empty());  // the body decoded: no excerpt needed
}

TEST_CASE("400 with a modelState value that is a string, or non-string entries", "[errors]") {
  const auto e = studentsvc::decode_error_body(
      400, R"({"message":"bad","modelState":{"perm":"must be 7 digits","n":[1,"kept",null]}})");
  CHECK(e.kind == ErrorKind::bad_request);
  CHECK(e.model_state.at("perm") == std::vector<std::string>{"must be 7 digits"});
  CHECK(e.model_state.at("n") == std::vector<std::string>{"kept"});
}

TEST_CASE("400 with modelState missing or not an object", "[errors]") {
  CHECK(studentsvc::decode_error_body(400, R"({"message":"bad"})").model_state.empty());
  CHECK(studentsvc::decode_error_body(400, R"({"message":"bad","modelState":["a"]})").model_state.empty());
  const auto e = studentsvc::decode_error_body(400, "{}");
  CHECK(e.kind == ErrorKind::bad_request);
  CHECK(e.message == "bad request");
}

TEST_CASE("error bodies: a key given twice counts as its last value, and nested and foreign values are skipped",
          "[errors]") {
  // Last one wins, as a DOM keeps it: for message, detail, modelState and its entries.
  auto e = studentsvc::decode_error_body(
      400, R"({"message":"first","message":"second","detail":"d","detail":7,)"
           R"("modelState":{"a":["gone"]},"modelState":{"p":["x"],"p":["y","z"],"q":{"r":["s"]},"t":[["u"],{"v":"w"},"kept"]}})");
  CHECK(e.message == "second");
  CHECK(e.detail.empty());
  CHECK(e.model_state == studentsvc::ModelState{{"p", {"y", "z"}}, {"q", {}}, {"t", {"kept"}}});
  // A message that is not a string is no message: the status says it.
  e = studentsvc::decode_error_body(404, R"({"message":"x","message":{"text":"y"}})");
  CHECK(e.message == "not found");
  // modelState replaced by a non-object is empty; look-alike keys below the top level count for nothing.
  e = studentsvc::decode_error_body(
      400, R"({"modelState":{"p":["x"]},"modelState":null,"inner":{"message":"no","modelState":{"q":["no"]}}})");
  CHECK(e.model_state.empty());
  CHECK(e.message == "bad request");
  // Not an object at the top, or not JSON to the end: nothing is read from it.
  for (const std::string_view body : {R"([{"message":"no"}])", R"("message")", R"({"message":"no"} trailing)",
                                      R"({"message":"no")", R"({"message":"no","modelState":{"p":["x"]},})"}) {
    e = studentsvc::decode_error_body(400, body);
    INFO(body);
    CHECK(e.message == "bad request");
    CHECK(e.model_state.empty());
    CHECK(e.body_excerpt == body);
  }
}

TEST_CASE("401 AuthErrorBody with detail", "[errors]") {
  const auto e = studentsvc::decode_error_body(401, R"({"detail":"Invalid API key."})");
  CHECK(e.kind == ErrorKind::unauthorized);
  CHECK(e.status == 401);
  CHECK(e.detail == "Invalid API key.");
  CHECK(e.message == "Invalid API key.");  // the message is never empty
  CHECK_FALSE(e.retryable);
}

TEST_CASE("401 SimpleMessageModel with message", "[errors]") {
  const auto e = studentsvc::decode_error_body(401, R"({"message":"Authorization has been denied."})");
  CHECK(e.kind == ErrorKind::unauthorized);
  CHECK(e.message == "Authorization has been denied.");
  CHECK(e.detail.empty());
  CHECK(e.model_state.empty());
}

TEST_CASE("404 SimpleMessageModel", "[errors]") {
  const auto e = studentsvc::decode_error_body(404, R"({"message":"Student not found"})");
  CHECK(e.kind == ErrorKind::not_found);
  CHECK(e.status == 404);
  CHECK(e.message == "Student not found");
  CHECK_FALSE(e.retryable);
  CHECK(e.model_state.empty());  // modelState is read only for 400
  CHECK(studentsvc::decode_error_body(404, R"({"message":"x","modelState":{"a":["b"]}})").model_state.empty());
}

TEST_CASE("other statuses are http_status, retryable only for 408/429/500/502/503/504", "[errors]") {
  struct Case {
    int status;
    bool retryable;
  };
  const auto c = GENERATE(Case{403, false}, Case{405, false}, Case{409, false}, Case{410, false}, Case{418, false},
                          Case{408, true}, Case{429, true}, Case{500, true}, Case{501, false}, Case{502, true},
                          Case{503, true}, Case{504, true}, Case{505, false}, Case{302, false});
  CAPTURE(c.status);
  const auto e = studentsvc::decode_error_body(c.status, R"({"message":"nope"})");
  CHECK(e.kind == ErrorKind::http_status);
  CHECK(e.status == c.status);
  CHECK(e.message == "nope");
  CHECK(e.retryable == c.retryable);
  CHECK(studentsvc::is_retryable_status(c.status) == c.retryable);
  CHECK(e.body_excerpt == R"({"message":"nope"})");  // http_status keeps the body's start
}

TEST_CASE("statuses with an empty body get a default message", "[errors]") {
  CHECK(studentsvc::decode_error_body(503, "").message == "service unavailable");
  CHECK(studentsvc::decode_error_body(403, "").message == "forbidden");
  CHECK(studentsvc::decode_error_body(404, "").message == "not found");
  CHECK(studentsvc::decode_error_body(401, "").message == "unauthorized");
  CHECK(studentsvc::decode_error_body(418, "").message == "HTTP status 418");
  CHECK(studentsvc::decode_error_body(503, "").body_excerpt.empty());
}

TEST_CASE("a body that is not JSON still maps by status, with an excerpt", "[errors]") {
  const std::string html = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>nginx</body>\r\n</html>";
  SECTION("502 from a proxy") {
    const auto e = studentsvc::decode_error_body(502, html);
    CHECK(e.kind == ErrorKind::http_status);
    CHECK(e.status == 502);
    CHECK(e.retryable);
    CHECK(e.message == "bad gateway");
    CHECK_THAT(e.body_excerpt, Catch::StartsWith("<html>"));
    CHECK_THAT(e.body_excerpt, Catch::Contains("502 Bad Gateway"));
    CHECK_FALSE(has_control_character(e.body_excerpt));
  }
  SECTION("the documented statuses keep their kind") {
    CHECK(studentsvc::decode_error_body(400, html).kind == ErrorKind::bad_request);
    CHECK(studentsvc::decode_error_body(401, html).kind == ErrorKind::unauthorized);
    const auto nf = studentsvc::decode_error_body(404, html);
    CHECK(nf.kind == ErrorKind::not_found);
    CHECK(nf.message == "not found");
    CHECK_THAT(nf.body_excerpt, Catch::Contains("nginx"));
  }
  SECTION("JSON that is not an object") {
    const auto e = studentsvc::decode_error_body(404, R"(["Student not found"])");
    CHECK(e.kind == ErrorKind::not_found);
    CHECK(e.message == "not found");
    CHECK(e.body_excerpt == R"(["Student not found"])");
  }
  SECTION("message of the wrong type") {
    const auto e = studentsvc::decode_error_body(401, R"({"message":42,"detail":["x"]})");
    CHECK(e.kind == ErrorKind::unauthorized);
    CHECK(e.message == "unauthorized");
    CHECK(e.detail.empty());
  }
}

TEST_CASE("the excerpt is cut at 256 bytes without splitting a UTF-8 sequence", "[errors]") {
  SECTION("ASCII: exactly the limit, then '...'") {
    const auto e = studentsvc::decode_error_body(500, std::string(1000, 'a'));
    CHECK(e.body_excerpt == std::string(256, 'a') + "...");
  }
  SECTION("a body of exactly 256 bytes is kept whole") {
    CHECK(studentsvc::decode_error_body(500, std::string(256, 'b')).body_excerpt == std::string(256, 'b'));
  }
  SECTION("multi-byte characters across the cut, at every offset") {
    const std::string euro = "\xE2\x82\xAC";        // 3 bytes
    const std::string star = "\xF0\x9F\x8C\x9F";    // U+1F31F, 4 bytes
    for (std::size_t prefix = 250; prefix <= 256; ++prefix) {
      for (const auto& ch : {euro, star, std::string("\xC3\xA9")}) {
        std::string body(prefix, 'x');
        for (int i = 0; i < 20; ++i) body += ch;
        const auto excerpt = studentsvc::decode_error_body(503, body).body_excerpt;
        CAPTURE(prefix, ch.size());
        REQUIRE(excerpt.size() >= 3);
        const std::string kept = excerpt.substr(0, excerpt.size() - 3);
        CHECK(excerpt.substr(excerpt.size() - 3) == "...");
        CHECK(kept.size() <= 256);
        CHECK(kept.size() > 256 - 4);
        CHECK(is_valid_utf8(kept));
        CHECK(body.compare(0, kept.size(), kept) == 0);
      }
    }
  }
  SECTION("no control characters") {
    std::string body = "line1\nline2\rline3\ttab\x01\x7f";
    body += '\0';
    body += "end";
    const auto e = studentsvc::decode_error_body(500, body);
    CHECK_FALSE(has_control_character(e.body_excerpt));
    CHECK(e.body_excerpt.size() == body.size());
    CHECK_THAT(e.body_excerpt, Catch::StartsWith("line1 line2 line3"));
  }
  SECTION("the detail helper on its own") {
    CHECK(studentsvc::detail::excerpt("").empty());
    CHECK(studentsvc::detail::excerpt("short") == "short");
    CHECK(studentsvc::detail::body_excerpt_limit == 256);
  }
}

TEST_CASE("to_string(ApiError) is one line", "[errors]") {
  SECTION("not_found") {
    const auto e = studentsvc::decode_error_body(404, R"({"message":"Student not found"})");
    CHECK(studentsvc::to_string(e) == "not_found (404): Student not found");
  }
  SECTION("bad_request lists modelState") {
    const auto e = studentsvc::decode_error_body(400, R"({"message":"invalid","modelState":{"perm":["short"]}})");
    const auto line = studentsvc::to_string(e);
    CHECK_THAT(line, Catch::StartsWith("bad_request (400): invalid"));
    CHECK_THAT(line, Catch::Contains("perm: short"));
  }
  SECTION("retryable is said") {
    CHECK_THAT(studentsvc::to_string(studentsvc::decode_error_body(503, "")), Catch::EndsWith("(retryable)"));
  }
  SECTION("status 0 is not printed") {
    ApiError e;
    e.kind = ErrorKind::invalid_argument;
    e.message = "perm must be exactly 7 ASCII digits";
    CHECK(studentsvc::to_string(e) == "invalid_argument: perm must be exactly 7 ASCII digits");
  }
  SECTION("server text with newlines and control characters stays on one line") {
    const auto e = studentsvc::decode_error_body(
        400, R"({"message":"first\nsecond\r\nthird","detail":"d\u0000e","modelState":{"a\nb":["x\ny"]}})");
    const auto line = studentsvc::to_string(e);
    CHECK(line.find('\n') == std::string::npos);
    CHECK(line.find('\r') == std::string::npos);
    CHECK_FALSE(has_control_character(line));
    CHECK_THAT(line, Catch::Contains("first"));
    CHECK_THAT(line, Catch::Contains("third"));
  }
  SECTION("a 401 detail is shown once") {
    const auto line = studentsvc::to_string(studentsvc::decode_error_body(401, R"({"detail":"Invalid API key"})"));
    CHECK(line == "unauthorized (401): Invalid API key");
  }
  SECTION("a 401 with message and detail shows both") {
    const auto line =
        studentsvc::to_string(studentsvc::decode_error_body(401, R"({"message":"Denied","detail":"key expired"})"));
    CHECK(line == "unauthorized (401): Denied [key expired]");
  }
}

TEST_CASE("to_string(ErrorKind) for all kinds", "[errors]") {
  CHECK(studentsvc::to_string(ErrorKind::invalid_argument) == "invalid_argument");
  CHECK(studentsvc::to_string(ErrorKind::transport) == "transport");
  CHECK(studentsvc::to_string(ErrorKind::bad_request) == "bad_request");
  CHECK(studentsvc::to_string(ErrorKind::unauthorized) == "unauthorized");
  CHECK(studentsvc::to_string(ErrorKind::not_found) == "not_found");
  CHECK(studentsvc::to_string(ErrorKind::http_status) == "http_status");
  CHECK(studentsvc::to_string(ErrorKind::decode) == "decode");
  static_assert(studentsvc::to_string(ErrorKind::decode) == "decode");
}

TEST_CASE("make_error and ApiError defaults", "[errors]") {
  const auto u = studentsvc::make_error(ErrorKind::decode, "field 'perm' ...", 200);
  CHECK(u.error().kind == ErrorKind::decode);
  CHECK(u.error().status == 200);
  CHECK(u.error().message == "field 'perm' ...");
  CHECK(u.error().retry_after_ms == -1);
  CHECK(u.error().attempts == 0);
  CHECK_FALSE(u.error().retryable);
  const studentsvc::Result<int> r = studentsvc::make_error(ErrorKind::invalid_argument, "x");
  REQUIRE_FALSE(r);
  CHECK(r.error().status == 0);
}

TEST_CASE("an error body nested a million deep maps by status, without a DOM of it", "[errors]") {
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  const ApiError e = studentsvc::decode_error_body(503, deep);
  CHECK(e.kind == ErrorKind::http_status);
  CHECK(e.status == 503);
  CHECK(e.retryable);
  CHECK(e.message == "service unavailable");
  CHECK(e.body_excerpt.size() <= studentsvc::detail::body_excerpt_limit + 3);
  const std::string deep_object = R"({"message":"m","x":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}";
  const ApiError o = studentsvc::decode_error_body(404, deep_object);
  CHECK(o.kind == ErrorKind::not_found);
  CHECK(o.message == "m");  // the deep value is skipped, the message beside it kept
}

namespace {

/// An unknown JSON value nested `levels` deep: arrays, or objects of arrays.
std::string deep_value(std::size_t levels, bool objects) {
  if (!objects) return std::string(levels, '[') + std::string(levels, ']');
  std::string v;
  for (std::size_t i = 0; i < levels / 2; ++i) v += R"({"k":[)";
  for (std::size_t i = 0; i < levels / 2; ++i) v += "]}";
  return v;
}

}  // namespace

TEST_CASE("an error body keeps its documented fields beside an unknown value of any depth", "[errors][deep]") {
  // 200,000 levels: 400 KB, well inside the 4 MiB body cap.
  const bool objects = GENERATE(false, true);
  const std::string deep = deep_value(200'000, objects);
  CAPTURE(objects);
  const std::string model = R"("message":"The request is invalid.","modelState":{"perm":["too short"]})";
  const studentsvc::ModelState perm_state{{"perm", {"too short"}}};

  SECTION("400: before, after and between message and modelState") {
    for (const std::string& body : {"{\"x\":" + deep + "," + model + "}", "{" + model + ",\"x\":" + deep + "}",
                                    R"({"message":"The request is invalid.","x":)" + deep +
                                        R"(,"modelState":{"perm":["too short"]}})"}) {
      const ApiError e = studentsvc::decode_error_body(400, body);
      CHECK(e.kind == ErrorKind::bad_request);
      CHECK(e.status == 400);
      CHECK(e.message == "The request is invalid.");
      CHECK(e.model_state == perm_state);
      CHECK(e.body_excerpt.empty());  // decoded, as a shallow body is
    }
  }
  SECTION("400: an unknown deep value inside modelState, as an entry or an entry's element") {
    ApiError e = studentsvc::decode_error_body(
        400, R"({"message":"m","modelState":{"deep":)" + deep + R"(,"perm":["too short"]}})");
    CHECK(e.message == "m");
    CHECK(e.model_state == studentsvc::ModelState{{"deep", {}}, {"perm", {"too short"}}});
    e = studentsvc::decode_error_body(400, R"({"modelState":{"perm":["a",)" + deep + R"(,"b"]},"message":"m"})");
    CHECK(e.message == "m");
    CHECK(e.model_state == studentsvc::ModelState{{"perm", {"a", "b"}}});
  }
  SECTION("401: AuthErrorBody and SimpleMessageModel") {
    ApiError e = studentsvc::decode_error_body(401, R"({"x":)" + deep + R"(,"detail":"Invalid API key."})");
    CHECK(e.kind == ErrorKind::unauthorized);
    CHECK(e.detail == "Invalid API key.");
    CHECK(e.message == "Invalid API key.");
    e = studentsvc::decode_error_body(401, R"({"message":"Authorization has been denied.","x":)" + deep + "}");
    CHECK(e.message == "Authorization has been denied.");
  }
  SECTION("404: SimpleMessageModel, the deep value before or after") {
    for (const std::string& body : {R"({"x":)" + deep + R"(,"message":"Student not found"})",
                                    R"({"message":"Student not found","x":)" + deep + "}"}) {
      const ApiError e = studentsvc::decode_error_body(404, body);
      CHECK(e.kind == ErrorKind::not_found);
      CHECK(e.message == "Student not found");
    }
  }
  SECTION("the rules that hold for a shallow body hold beside a deep one") {
    // The last of two keys counts, even when the first held the deep value.
    ApiError e = studentsvc::decode_error_body(400, R"({"message":)" + deep + R"(,"message":"second"})");
    CHECK(e.message == "second");
    // ...and a deep last value is no message.
    e = studentsvc::decode_error_body(404, R"({"message":"first","message":)" + deep + "}");
    CHECK(e.message == "not found");
    // Look-alike keys inside the deep value count for nothing.
    const std::string inner = std::string(1'000, '[') + R"({"message":"no","modelState":{"q":["no"]}})" +
                              std::string(1'000, ']');
    e = studentsvc::decode_error_body(400, R"({"x":)" + inner + "}");
    CHECK(e.message == "bad request");
    CHECK(e.model_state.empty());
    // A top-level array, a body cut short inside the deep value, or bytes after
    // the object: nothing is read, the status speaks and the excerpt shows the start.
    for (const std::string& body : {"[" + deep + R"(,{"message":"no"}])",
                                    R"({"message":"no","x":)" + deep.substr(0, deep.size() - 1),
                                    R"({"message":"no","x":)" + deep + "} trailing"}) {
      e = studentsvc::decode_error_body(400, body);
      CHECK(e.message == "bad request");
      CHECK(e.model_state.empty());
      CHECK_FALSE(e.body_excerpt.empty());
    }
  }
}

TEST_CASE("cancelled: its name, status 0 and never retryable", "[errors][cancelled]") {
  CHECK(studentsvc::to_string(ErrorKind::cancelled) == "cancelled");
  static_assert(studentsvc::to_string(ErrorKind::cancelled) == "cancelled");
  const auto u = studentsvc::make_error(ErrorKind::cancelled, "stopped by the caller's stop_token");
  CHECK(u.error().kind == ErrorKind::cancelled);
  CHECK(u.error().status == 0);
  CHECK_FALSE(u.error().retryable);
  CHECK(studentsvc::to_string(u.error()) == "cancelled: stopped by the caller's stop_token");
}

TEST_CASE("TransportFailure: unspecified by default, a stable name for each", "[errors]") {
  using studentsvc::TransportFailure;
  CHECK(ApiError{}.transport_failure == TransportFailure::unspecified);
  CHECK(studentsvc::make_error(ErrorKind::transport, "x").error().transport_failure == TransportFailure::unspecified);
  CHECK(studentsvc::to_string(TransportFailure::unspecified) == "unspecified");
  CHECK(studentsvc::to_string(TransportFailure::name_resolution) == "name_resolution");
  CHECK(studentsvc::to_string(TransportFailure::connect) == "connect");
  CHECK(studentsvc::to_string(TransportFailure::tls_handshake) == "tls_handshake");
  CHECK(studentsvc::to_string(TransportFailure::tls_certificate) == "tls_certificate");
  CHECK(studentsvc::to_string(TransportFailure::timeout) == "timeout");
  CHECK(studentsvc::to_string(TransportFailure::connection_lost) == "connection_lost");
  CHECK(studentsvc::to_string(TransportFailure::proxy) == "proxy");
  CHECK(studentsvc::to_string(TransportFailure::body_too_large) == "body_too_large");
  // It takes part in equality, like every other field.
  ApiError a;
  ApiError b;
  b.transport_failure = TransportFailure::timeout;
  CHECK_FALSE(a == b);
}

}  // namespace errors_test

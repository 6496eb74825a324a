// Unit tests for responses.hpp: every row of DESIGN.md's error table as the
// mapping functions see it, and RawResponse::json().

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>

#include <studentsvc/json.hpp>
#include <studentsvc/responses.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace responses_test {

using studentsvc::Endpoint;
using studentsvc::ErrorKind;
using studentsvc::Headers;
using studentsvc::HttpResponse;
using studentsvc::Result;

namespace {

Result<HttpResponse> response(int status, std::string body, Headers headers = {}) {
  return HttpResponse{status, std::move(headers), std::move(body)};
}

constexpr const char* full_student = R"({"perm":"1234567","firstName":"Ana","lastName":"Lopez","suffix":"",
  "email":"ana@example.edu","firstNameLegal":"Anabel","middleName":"M","gender":"F","birthDate":"20010315",
  "nfr":false,"internationalStudentCode":null,"admitLevel":"FR","pronounCode":"SHE"})";

}  // namespace

TEST_CASE("2xx student body maps to the model", "[responses]") {
  const int status = GENERATE(200, 203);
  auto r = studentsvc::map_student_response(response(status, full_student), Endpoint::get_student);
  REQUIRE(r);
  CHECK(r->perm == "1234567");
  CHECK(r->first_name_legal == std::optional<std::string>("Anabel"));
  CHECK(r->nfr == std::optional<bool>(false));
  CHECK(r->admit_level_kind() == studentsvc::AdmitLevel::freshman);
}

TEST_CASE("/current keeps only the minimal fields even if the server sent more", "[responses]") {
  auto r = studentsvc::map_student_response(response(200, full_student), Endpoint::current_student);
  REQUIRE(r);
  CHECK(r->perm == "1234567");
  CHECK(r->first_name == "Ana");
  CHECK(r->last_name == "Lopez");
  CHECK(r->email == "ana@example.edu");
  CHECK_FALSE(r->first_name_legal);
  CHECK_FALSE(r->middle_name);
  CHECK_FALSE(r->gender);
  CHECK_FALSE(r->birth_date);
  CHECK_FALSE(r->nfr);
  CHECK_FALSE(r->admit_level);
  CHECK_FALSE(r->pronoun_code);
  SECTION("and does not fail on a wrongly typed extended field it ignores") {
    auto x = studentsvc::map_student_response(response(200, R"({"perm":"1234567","nfr":"yes"})"),
                                              Endpoint::current_student);
    REQUIRE(x);
    CHECK(x->perm == "1234567");
  }
}

TEST_CASE("a transport error passes through unchanged", "[responses]") {
  studentsvc::ApiError e;
  e.kind = ErrorKind::transport;
  e.message = "Could not resolve host";
  e.retryable = true;
  const Result<HttpResponse> outcome = std::unexpected(e);
  for (const auto ep : {Endpoint::get_student, Endpoint::current_student}) {
    auto r = studentsvc::map_student_response(outcome, ep);
    REQUIRE_FALSE(r);
    CHECK(r.error() == e);
  }
  auto c = studentsvc::map_conversation_response(Result<HttpResponse>(std::unexpected(e)));
  REQUIRE_FALSE(c);
  CHECK(c.error() == e);
}

TEST_CASE("400 maps to bad_request with model_state", "[responses]") {
  auto r = studentsvc::map_student_response(
      response(400, R"({"message":"The request is invalid.","modelState":{"perm":["Invalid perm"]}})"),
      Endpoint::get_student);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::bad_request);
  CHECK(r.error().status == 400);
  CHECK(r.error().message == "The request is invalid.");
  CHECK(r.error().model_state.at("perm") == std::vector<std::string>{"Invalid perm"});
  CHECK_FALSE(r.error().retryable);
}

TEST_CASE("401 maps to unauthorized in both shapes", "[responses]") {
  SECTION("AuthErrorBody") {
    auto r = studentsvc::map_student_response(response(401, R"({"detail":"Invalid API key"})"), Endpoint::get_student);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::unauthorized);
    CHECK(r.error().status == 401);
    CHECK(r.error().detail == "Invalid API key");
  }
  SECTION("SimpleMessageModel") {
    auto r = studentsvc::map_student_response(response(401, R"({"message":"Authorization has been denied"})"),
                                              Endpoint::current_student);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::unauthorized);
    CHECK(r.error().message == "Authorization has been denied");
  }
  SECTION("conversation") {
    auto r = studentsvc::map_conversation_response(response(401, R"({"detail":"Invalid API key"})"));
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::unauthorized);
    CHECK(r.error().detail == "Invalid API key");
  }
}

TEST_CASE("404 maps to not_found", "[responses]") {
  auto r = studentsvc::map_student_response(response(404, R"({"message":"Student not found"})"), Endpoint::get_student);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::not_found);
  CHECK(r.error().status == 404);
  CHECK(r.error().message == "Student not found");
}

TEST_CASE("any other non-2xx maps to http_status with an excerpt", "[responses]") {
  const int status = GENERATE(301, 403, 409, 418, 500, 503);
  CAPTURE(status);
  auto r = studentsvc::map_student_response(response(status, "<html>proxy says no</html>"), Endpoint::get_student);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::http_status);
  CHECK(r.error().status == status);
  CHECK(r.error().body_excerpt == "<html>proxy says no</html>");
  CHECK(r.error().retryable == studentsvc::is_retryable_status(status));
  auto c = studentsvc::map_conversation_response(response(status, "x"));
  REQUIRE_FALSE(c);
  CHECK(c.error().kind == ErrorKind::http_status);
  CHECK(c.error().status == status);
}

TEST_CASE("a student endpoint's 404 without a SimpleMessageModel is a wrong address, not a missing student",
          "[responses]") {
  const auto endpoint = GENERATE(Endpoint::get_student, Endpoint::current_student);
  const std::string body = GENERATE(std::string("<html><body>Not Found</body></html>"), std::string(),
                                    std::string("{}"), std::string(R"({"message":404})"),
                                    std::string(R"({"detail":"no route"})"), std::string(R"(["Student not found"])"),
                                    std::string(R"({"message":"Student not found","message":null})"),
                                    std::string(R"({"error":{"message":"Student not found"}})"));
  CAPTURE(body);
  auto r = studentsvc::map_student_response(response(404, body), endpoint);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::http_status);
  CHECK(r.error().status == 404);
  CHECK_FALSE(r.error().retryable);
  CHECK(r.error().message == studentsvc::detail::endpoint_not_found_message);
  CHECK_THAT(r.error().message, Catch::Contains("base URL") && Catch::Contains("path prefix"));
  CHECK(r.error().body_excerpt == studentsvc::detail::excerpt(body));
  // get_student's own check (perm) never turns it back into something else.
  if (endpoint == Endpoint::get_student) {
    auto g = studentsvc::map_get_student_response(response(404, body), "1234567");
    REQUIRE_FALSE(g);
    CHECK(g.error().kind == ErrorKind::http_status);
  }
}

TEST_CASE("a student endpoint's 404 with a SimpleMessageModel stays not_found, whatever the message", "[responses]") {
  const auto endpoint = GENERATE(Endpoint::get_student, Endpoint::current_student);
  auto r = studentsvc::map_student_response(
      response(404, R"({"message":"No HTTP resource was found that matches the request URI."})"), endpoint);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::not_found);
  auto empty_message = studentsvc::map_student_response(response(404, R"({"message":""})"), endpoint);
  REQUIRE_FALSE(empty_message);
  CHECK(empty_message.error().kind == ErrorKind::not_found);
  CHECK(empty_message.error().message == "not found");
}

TEST_CASE("/conversation's 404 maps by status alone: the interface shows none of its bodies", "[responses]") {
  auto c = studentsvc::map_conversation_response(response(404, "<html><body>Not Found</body></html>"));
  REQUIRE_FALSE(c);
  CHECK(c.error().kind == ErrorKind::not_found);
  CHECK_THAT(c.error().body_excerpt, Catch::Contains("Not Found"));
}

TEST_CASE("2xx whose body is not the documented JSON is decode with the status", "[responses]") {
  struct Case {
    int status;
    const char* body;
    const char* mentions;
  };
  const auto c = GENERATE(Case{200, R"({"perm":1234567})", "perm"}, Case{200, R"({"nfr":"no"})", "nfr"},
                          Case{200, "<html>login page</html>", "JSON"}, Case{201, "[]", "object"},
                          Case{200, "", "JSON"}, Case{204, "", "JSON"});
  CAPTURE(c.body);
  auto r = studentsvc::map_student_response(response(c.status, c.body), Endpoint::get_student);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::decode);
  CHECK(r.error().status == c.status);
  CHECK_THAT(r.error().message, Catch::Contains(c.mentions));
  CHECK_FALSE(r.error().retryable);
}

TEST_CASE("an unknown value of any depth is skipped in every answer a student endpoint maps", "[responses][deep]") {
  // 200,000 levels (400 KB, well inside the 4 MiB body cap), before or after the documented fields.
  const std::string deep = std::string(200'000, '[') + std::string(200'000, ']');
  const auto endpoint = GENERATE(Endpoint::get_student, Endpoint::current_student);
  const bool first = GENERATE(true, false);
  CAPTURE(first);
  const auto with_deep = [&](std::string_view fields) {
    return first ? R"({"x":)" + deep + "," + std::string(fields) + "}"
                 : "{" + std::string(fields) + R"(,"x":)" + deep + "}";
  };
  SECTION("2xx: the student decodes") {
    auto r = studentsvc::map_student_response(
        response(200, with_deep(R"("perm":"1234567","firstName":"Ana","email":"ana@example.edu","nfr":true)")),
        endpoint);
    REQUIRE(r);
    CHECK(r->perm == "1234567");
    CHECK(r->first_name == "Ana");
    CHECK(r->email == "ana@example.edu");
    CHECK(r->nfr == (endpoint == Endpoint::get_student ? std::optional<bool>(true) : std::nullopt));
    // A deep value where a student field belongs is still that field's type error.
    auto wrong = studentsvc::map_student_response(response(200, with_deep(R"("email":)" + deep)), endpoint);
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error().kind == ErrorKind::decode);
    CHECK_THAT(wrong.error().message, Catch::Contains("'email'") && Catch::Contains("array"));
  }
  SECTION("400: message and modelState") {
    auto r = studentsvc::map_student_response(
        response(400, with_deep(R"("message":"The request is invalid.","modelState":{"perm":["Invalid perm"]})")),
        endpoint);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::bad_request);
    CHECK(r.error().message == "The request is invalid.");
    CHECK(r.error().model_state == studentsvc::ModelState{{"perm", {"Invalid perm"}}});
  }
  SECTION("401: detail") {
    auto r = studentsvc::map_student_response(response(401, with_deep(R"("detail":"Invalid API key")")), endpoint);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::unauthorized);
    CHECK(r.error().detail == "Invalid API key");
  }
  SECTION("404: still the service's SimpleMessageModel, so not_found") {
    auto r = studentsvc::map_student_response(response(404, with_deep(R"("message":"Student not found")")), endpoint);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::not_found);
    CHECK(r.error().message == "Student not found");
  }
}

TEST_CASE("/current with an undecodable basic field is decode too", "[responses]") {
  auto r = studentsvc::map_student_response(response(200, R"({"email":["a@b"]})"), Endpoint::current_student);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::decode);
  CHECK(r.error().status == 200);
  CHECK_THAT(r.error().message, Catch::Contains("email"));
}

TEST_CASE("Retry-After is surfaced in retry_after_ms", "[responses]") {
  SECTION("seconds") {
    auto r = studentsvc::map_student_response(response(503, "", Headers{{"Retry-After", "7"}}), Endpoint::get_student);
    REQUIRE_FALSE(r);
    CHECK(r.error().retry_after_ms == 7000);
    CHECK(r.error().retryable);
  }
  SECTION("header name in any case, on 429") {
    auto e = studentsvc::error_from_response(HttpResponse{429, Headers{{"retry-after", "0"}}, ""});
    CHECK(e.retry_after_ms == 0);
    CHECK(e.kind == ErrorKind::http_status);
  }
  SECTION("HTTP-date in the past means no wait") {
    auto e = studentsvc::error_from_response(
        HttpResponse{503, Headers{{"Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"}}, ""});
    CHECK(e.retry_after_ms == 0);
  }
  SECTION("HTTP-date in the future") {
    auto e = studentsvc::error_from_response(
        HttpResponse{503, Headers{{"Retry-After", "Fri, 31 Dec 2100 23:59:59 GMT"}}, ""});
    CHECK(e.retry_after_ms > 1000LL * 3600 * 24 * 365 * 50);
  }
  SECTION("absent or garbage: -1") {
    CHECK(studentsvc::error_from_response(HttpResponse{503, {}, ""}).retry_after_ms == -1);
    CHECK(studentsvc::error_from_response(HttpResponse{503, Headers{{"Retry-After", "soon"}}, ""}).retry_after_ms ==
          -1);
  }
  SECTION("conversation too") {
    auto c = studentsvc::map_conversation_response(response(429, "", Headers{{"Retry-After", "2"}}));
    REQUIRE_FALSE(c);
    CHECK(c.error().retry_after_ms == 2000);
  }
}

TEST_CASE("map_conversation_response returns a 2xx as it came", "[responses]") {
  auto r = studentsvc::map_conversation_response(
      response(202, "not json at all", Headers{{"Content-Type", "text/plain"}, {"X-Id", "9"}}));
  REQUIRE(r);
  CHECK(r->status == 202);
  CHECK(r->body == "not json at all");
  CHECK(r->headers.find("x-id") == std::optional<std::string_view>("9"));
  CHECK(r->headers.size() == 2);
}

TEST_CASE("RawResponse::json()", "[responses]") {
  SECTION("valid JSON of any type") {
    studentsvc::RawResponse raw{200, {}, R"({"a":[1,2,{"b":null}],"s":"\u00e9"})"};
    auto j = raw.json();
    REQUIRE(j);
    CHECK(j->at("a").size() == 3);
    CHECK(j->at("s") == "\xC3\xA9");
    studentsvc::RawResponse arr{200, {}, "[1,2]"};
    REQUIRE(arr.json());
    CHECK(arr.json()->is_array());
    CHECK(studentsvc::json_body(raw) == j);  // the free function in json.hpp, the same answer
  }
  SECTION("not JSON: decode with the status") {
    for (const char* body : {"", "<html/>", "{", "[1,]"}) {
      CAPTURE(body);
      studentsvc::RawResponse raw{201, {}, body};
      auto j = raw.json();
      REQUIRE_FALSE(j);
      CHECK(j.error().kind == ErrorKind::decode);
      CHECK(j.error().status == 201);
    }
  }
}

TEST_CASE("get_student's answer must be the student asked for", "[responses]") {
  SECTION("the same perm maps to the record") {
    const auto r = studentsvc::map_get_student_response(response(200, full_student), "1234567");
    REQUIRE(r);
    CHECK(r->perm == "1234567");
  }
  SECTION("another perm, or none, is a decode error naming the field but neither value") {
    struct Row {
      const char* body;
      const char* why;
    };
    for (const Row row : {Row{R"({"perm":"7654321","firstName":"Eve"})", "does not match"},
                          Row{R"({"firstName":"Eve"})", "missing"}, Row{R"({"perm":null,"firstName":"Eve"})", "missing"},
                          Row{R"({"perm":"","firstName":"Eve"})", "missing"},
                          Row{R"({"perm":"1234567 ","firstName":"Eve"})", "does not match"},
                          Row{R"({"perm":"01234567","firstName":"Eve"})", "does not match"}}) {
      CAPTURE(row.body);
      const auto r = studentsvc::map_get_student_response(response(200, row.body), "1234567");
      REQUIRE_FALSE(r);
      CHECK(r.error().kind == ErrorKind::decode);
      CHECK(r.error().status == 200);
      CHECK_THAT(r.error().message, Catch::Contains("'perm'"));
      CHECK_THAT(r.error().message, Catch::Contains(row.why));
      CHECK_THAT(r.error().message, !Catch::Contains("1234567"));
      CHECK_THAT(r.error().message, !Catch::Contains("7654321"));
      CHECK_THAT(r.error().message, !Catch::Contains("Eve"));
      CHECK(r.error().body_excerpt.empty());  // the other student's record is not kept either
    }
  }
  SECTION("errors and other decode failures pass through unchanged") {
    const auto nf = studentsvc::map_get_student_response(response(404, R"({"message":"Student not found"})"), "1234567");
    REQUIRE_FALSE(nf);
    CHECK(nf.error().kind == ErrorKind::not_found);
    const auto bad = studentsvc::map_get_student_response(response(200, "[]"), "1234567");
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains("JSON object"));
  }
}

TEST_CASE("RawResponse::json() refuses a body nested past 64 levels", "[responses]") {
  const studentsvc::RawResponse deep{200, {}, std::string(1'000'000, '[') + std::string(1'000'000, ']')};
  const auto j = deep.json();
  REQUIRE_FALSE(j);
  CHECK(j.error().kind == ErrorKind::decode);
  CHECK_THAT(j.error().message, Catch::Contains("64"));
  const studentsvc::RawResponse ok{200, {}, std::string(64, '[') + std::string(64, ']')};
  CHECK(ok.json());
}

TEST_CASE("the server's request id is kept in the ApiError and printed by to_string", "[responses]") {
  const auto header = GENERATE(as<std::string>{}, "x-request-id", "Request-Id", "x-amzn-RequestId", "X-Correlation-ID");
  CAPTURE(header);
  auto r = studentsvc::map_student_response(response(503, "busy", Headers{{header, "req-7f3a"}}), Endpoint::get_student);
  REQUIRE_FALSE(r);
  CHECK(r.error().request_id == "req-7f3a");
  CHECK_THAT(studentsvc::to_string(r.error()), Catch::EndsWith("[request id req-7f3a]"));
  auto c = studentsvc::map_conversation_response(response(500, "", Headers{{header, "req-7f3a"}}));
  REQUIRE_FALSE(c);
  CHECK(c.error().request_id == "req-7f3a");
}

TEST_CASE("request id: the first of the known headers wins, empty ones are skipped, a huge one is cut", "[responses]") {
  auto r = studentsvc::map_student_response(
      response(500, "", Headers{{"x-correlation-id", "corr"}, {"x-request-id", ""}, {"request-id", "rid"}}),
      Endpoint::get_student);
  REQUIRE_FALSE(r);
  CHECK(r.error().request_id == "rid");
  auto none = studentsvc::map_student_response(response(500, ""), Endpoint::get_student);
  REQUIRE_FALSE(none);
  CHECK(none.error().request_id.empty());
  CHECK_THAT(studentsvc::to_string(none.error()), !Catch::Contains("request id"));
  auto huge = studentsvc::map_student_response(response(500, "", Headers{{"x-request-id", std::string(100'000, 'r')}}),
                                               Endpoint::get_student);
  REQUIRE_FALSE(huge);
  CHECK(huge.error().request_id.size() == 128);
  auto control = studentsvc::map_student_response(response(500, "", Headers{{"x-request-id", "a\x01z"}}),
                                                  Endpoint::get_student);
  REQUIRE_FALSE(control);
  CHECK_THAT(studentsvc::to_string(control.error()), Catch::EndsWith("[request id a z]"));
}

}  // namespace responses_test

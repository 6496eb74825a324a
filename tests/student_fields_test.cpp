// <studentsvc/student_fields.hpp>: the record's fields in the interface's order,
// as a program walks them to write rows; and json_nests_deeper_than from
// <studentsvc/json.hpp>, the check before pretty-printing a server's body.

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include <studentsvc/json.hpp>
#include <studentsvc/student_fields.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace student_fields_test {

TEST_CASE("student_fields: every key in the interface's order, the basic five first", "[student_fields]") {
  std::vector<std::string> keys;
  for (const auto& f : studentsvc::student_fields) keys.emplace_back(f.key);
  REQUIRE(keys.size() == 17);
  CHECK(keys.front() == "perm");
  CHECK(keys.at(9) == "nfr");
  CHECK(keys.back() == "pronounCode");
  CHECK(studentsvc::student_fields_of(false).size() == 5);
  CHECK(studentsvc::student_fields_of(true).size() == 17);
  CHECK(studentsvc::student_fields[9].type == studentsvc::FieldType::flag);
}

TEST_CASE("with_student_field hands each row's member, typed", "[student_fields]") {
  studentsvc::StudentExtended s;
  s.perm = "1234567";
  s.nfr = true;
  s.middle_name = "Q";
  std::vector<std::string> seen;
  for (const auto& f : studentsvc::student_fields) {
    studentsvc::with_student_field(f, s, [&](const auto& member) {
      using M = std::decay_t<decltype(member)>;
      if constexpr (std::is_same_v<M, std::string>) {
        seen.push_back(member);
      } else if constexpr (std::is_same_v<M, std::optional<bool>>) {
        seen.push_back(member ? (*member ? "true" : "false") : "null");
      } else {
        seen.push_back(member.value_or("null"));
      }
    });
  }
  CHECK(seen.at(0) == "1234567");
  CHECK(seen.at(6) == "Q");
  CHECK(seen.at(9) == "true");
  // A StudentMinimal has only the basic rows: the callback is not called for the others.
  const studentsvc::StudentMinimal minimal = s;
  int calls = 0;
  for (const auto& f : studentsvc::student_fields) studentsvc::with_student_field(f, minimal, [&](const auto&) { ++calls; });
  CHECK(calls == 5);
}

TEST_CASE("json_nests_deeper_than counts arrays and objects, not text", "[json]") {
  CHECK_FALSE(studentsvc::json_nests_deeper_than(R"({"a":[1,{"b":2}]})", 3));
  CHECK(studentsvc::json_nests_deeper_than(R"({"a":[1,{"b":2}]})", 2));
  CHECK(studentsvc::json_nests_deeper_than(std::string(100000, '['), 64));
  CHECK_FALSE(studentsvc::json_nests_deeper_than("<html>not json</html>", 1));
}

}  // namespace student_fields_test

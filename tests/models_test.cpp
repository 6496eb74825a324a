// Unit tests for models.hpp: StudentMinimal / StudentExtended decoding with the
// interface's JSON keys (section 2), typed views, JSON round trips, is_valid_perm.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include <studentsvc/json.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace models_test {

using studentsvc::AdmitLevel;
using studentsvc::ErrorKind;
using studentsvc::Gender;
using studentsvc::InternationalStatus;
using studentsvc::ReleaseStatus;
using studentsvc::StudentExtended;
using studentsvc::StudentMinimal;

namespace {

// Every field of section 2.2 with a distinct value, under the interface's own keys.
constexpr const char* full_body = R"({
  "perm": "1234567",
  "firstName": "Ana",
  "lastName": "Lopez",
  "suffix": "JR",
  "email": "ana@example.edu",
  "firstNameLegal": "Anabel",
  "middleName": "Maria",
  "gender": "F",
  "birthDate": "20010315",
  "nfr": true,
  "internationalStudentCode": "R",
  "firstCensusQuarter": "20194",
  "lastCensusQuarter": "20231",
  "lastRegisteredQuarter": "20232",
  "admitLevel": "TR",
  "admitQuarter": "20194",
  "pronounCode": "SHE"
})";

StudentExtended decode_ok(const std::string& body) {
  auto r = studentsvc::decode_student(body);
  if (!r) FAIL("decode failed: " << r.error().message);
  return *r;
}

StudentExtended with_birth_date(std::optional<std::string> v) {
  StudentExtended s;
  s.birth_date = std::move(v);
  return s;
}

}  // namespace

TEST_CASE("every field of StudentExtended decodes from its interface key", "[models]") {
  const auto s = decode_ok(full_body);
  CHECK(s.perm == "1234567");
  CHECK(s.first_name == "Ana");
  CHECK(s.last_name == "Lopez");
  CHECK(s.suffix == "JR");
  CHECK(s.email == "ana@example.edu");
  CHECK(s.first_name_legal == std::optional<std::string>("Anabel"));
  CHECK(s.middle_name == std::optional<std::string>("Maria"));
  CHECK(s.gender == std::optional<std::string>("F"));
  CHECK(s.birth_date == std::optional<std::string>("20010315"));
  CHECK(s.nfr == std::optional<bool>(true));
  CHECK(s.international_student_code == std::optional<std::string>("R"));
  CHECK(s.first_census_quarter == std::optional<std::string>("20194"));
  CHECK(s.last_census_quarter == std::optional<std::string>("20231"));
  CHECK(s.last_registered_quarter == std::optional<std::string>("20232"));
  CHECK(s.admit_level == std::optional<std::string>("TR"));
  CHECK(s.admit_quarter == std::optional<std::string>("20194"));
  CHECK(s.pronoun_code == std::optional<std::string>("SHE"));
}

TEST_CASE("StudentMinimal decodes the five basic fields", "[models]") {
  auto r = studentsvc::decode_student_minimal(full_body);
  REQUIRE(r);
  CHECK(*r == StudentMinimal{"1234567", "Ana", "Lopez", "JR", "ana@example.edu"});
}

TEST_CASE("snake_case keys are not the interface's keys and are ignored", "[models]") {
  const auto s = decode_ok(R"({"perm":"1234567","first_name":"X","last_name":"Y","first_name_legal":"Z"})");
  CHECK(s.first_name.empty());
  CHECK(s.last_name.empty());
  CHECK_FALSE(s.first_name_legal.has_value());
}

TEST_CASE("null and absent basic fields decode as empty strings", "[models]") {
  SECTION("null") {
    const auto s = decode_ok(R"({"perm":null,"firstName":null,"lastName":null,"suffix":null,"email":null})");
    CHECK(s.perm.empty());
    CHECK(s.first_name.empty());
    CHECK(s.last_name.empty());
    CHECK(s.suffix.empty());
    CHECK(s.email.empty());
  }
  SECTION("absent") {
    const auto s = decode_ok("{}");
    CHECK(s == StudentExtended{});
    auto m = studentsvc::decode_student_minimal("{}");
    REQUIRE(m);
    CHECK(*m == StudentMinimal{});
  }
  SECTION("minimal decoder, null") {
    auto m = studentsvc::decode_student_minimal(R"({"perm":"1234567","firstName":null,"suffix":null})");
    REQUIRE(m);
    CHECK(m->perm == "1234567");
    CHECK(m->first_name.empty());
    CHECK(m->suffix.empty());
  }
}

TEST_CASE("null and absent extended fields decode as nullopt", "[models]") {
  const auto check_all_empty = [](const StudentExtended& s) {
    CHECK_FALSE(s.first_name_legal);
    CHECK_FALSE(s.middle_name);
    CHECK_FALSE(s.gender);
    CHECK_FALSE(s.birth_date);
    CHECK_FALSE(s.nfr);
    CHECK_FALSE(s.international_student_code);
    CHECK_FALSE(s.first_census_quarter);
    CHECK_FALSE(s.last_census_quarter);
    CHECK_FALSE(s.last_registered_quarter);
    CHECK_FALSE(s.admit_level);
    CHECK_FALSE(s.admit_quarter);
    CHECK_FALSE(s.pronoun_code);
  };
  SECTION("null") {
    check_all_empty(decode_ok(R"({"perm":"1234567","firstNameLegal":null,"middleName":null,"gender":null,
      "birthDate":null,"nfr":null,"internationalStudentCode":null,"firstCensusQuarter":null,
      "lastCensusQuarter":null,"lastRegisteredQuarter":null,"admitLevel":null,"admitQuarter":null,
      "pronounCode":null})"));
  }
  SECTION("absent") { check_all_empty(decode_ok(R"({"perm":"1234567","firstName":"Ana"})")); }
  SECTION("an empty string is a value, not null") {
    const auto s = decode_ok(R"({"admitLevel":"","middleName":""})");
    CHECK(s.admit_level == std::optional<std::string>(""));
    CHECK(s.middle_name == std::optional<std::string>(""));
  }
}

TEST_CASE("gender view", "[models]") {
  StudentExtended s;
  CHECK(s.gender_kind() == Gender::not_provided);
  s.gender = "M";
  CHECK(s.gender_kind() == Gender::male);
  s.gender = "F";
  CHECK(s.gender_kind() == Gender::female);
  s.gender = "";
  CHECK(s.gender_kind() == Gender::not_provided);
  SECTION("an unknown code decodes, stays raw and reads as unrecognized") {
    const auto x = decode_ok(R"({"gender":"X"})");
    CHECK(x.gender == std::optional<std::string>("X"));
    CHECK(x.gender_kind() == Gender::unrecognized);
    CHECK(studentsvc::to_string(x.gender_kind()) == "unrecognized");
  }
  SECTION("codes are case-sensitive, as the interface lists them") {
    s.gender = "m";
    CHECK(s.gender_kind() == Gender::unrecognized);
  }
  CHECK(studentsvc::to_string(Gender::male) == "male");
  CHECK(studentsvc::to_string(Gender::female) == "female");
  CHECK(studentsvc::to_string(Gender::not_provided) == "not_provided");
}

TEST_CASE("international status view", "[models]") {
  StudentExtended s;
  CHECK(s.international_status() == InternationalStatus::domestic);
  s.international_student_code = "F";
  CHECK(s.international_status() == InternationalStatus::foreign);
  s.international_student_code = "R";
  CHECK(s.international_status() == InternationalStatus::resident_alien);
  s.international_student_code = "";
  CHECK(s.international_status() == InternationalStatus::domestic);
  s.international_student_code = "Q";
  CHECK(s.international_status() == InternationalStatus::unrecognized);
  CHECK(s.international_student_code == std::optional<std::string>("Q"));
  CHECK(decode_ok(R"({"internationalStudentCode":null})").international_status() == InternationalStatus::domestic);
  CHECK(studentsvc::to_string(InternationalStatus::foreign) == "foreign");
  CHECK(studentsvc::to_string(InternationalStatus::resident_alien) == "resident_alien");
  CHECK(studentsvc::to_string(InternationalStatus::domestic) == "domestic");
  CHECK(studentsvc::to_string(InternationalStatus::unrecognized) == "unrecognized");
}

TEST_CASE("admit level view", "[models]") {
  StudentExtended s;
  CHECK(s.admit_level_kind() == AdmitLevel::none);
  s.admit_level = "FR";
  CHECK(s.admit_level_kind() == AdmitLevel::freshman);
  s.admit_level = "TR";
  CHECK(s.admit_level_kind() == AdmitLevel::transfer);
  s.admit_level = "";
  CHECK(s.admit_level_kind() == AdmitLevel::none);
  s.admit_level = "GR";
  CHECK(s.admit_level_kind() == AdmitLevel::unrecognized);
  CHECK(decode_ok(R"({"admitLevel":""})").admit_level_kind() == AdmitLevel::none);
  CHECK(decode_ok(R"({"admitLevel":null})").admit_level_kind() == AdmitLevel::none);
  CHECK(studentsvc::to_string(AdmitLevel::freshman) == "freshman");
  CHECK(studentsvc::to_string(AdmitLevel::transfer) == "transfer");
  CHECK(studentsvc::to_string(AdmitLevel::none) == "none");
  CHECK(studentsvc::to_string(AdmitLevel::unrecognized) == "unrecognized");
}

TEST_CASE("birth date as std::chrono::year_month_day", "[models]") {
  using namespace std::chrono;
  SECTION("valid dates") {
    CHECK(with_birth_date("20010315").birth_date_ymd() == year_month_day{year{2001}, March, day{15}});
    CHECK(with_birth_date("20000229").birth_date_ymd() == year_month_day{year{2000}, February, day{29}});
    CHECK(with_birth_date("19991231").birth_date_ymd() == year_month_day{year{1999}, December, day{31}});
  }
  SECTION("invalid calendar dates") {
    CHECK_FALSE(with_birth_date("20230230").birth_date_ymd());
    CHECK_FALSE(with_birth_date("19000229").birth_date_ymd());  // 1900 is not a leap year
    CHECK_FALSE(with_birth_date("20231301").birth_date_ymd());
    CHECK_FALSE(with_birth_date("20230100").birth_date_ymd());
    CHECK_FALSE(with_birth_date("20230001").birth_date_ymd());
  }
  SECTION("wrong length") {
    CHECK_FALSE(with_birth_date("2001031").birth_date_ymd());
    CHECK_FALSE(with_birth_date("200103150").birth_date_ymd());
    CHECK_FALSE(with_birth_date("2001-03-15").birth_date_ymd());
    CHECK_FALSE(with_birth_date("").birth_date_ymd());
  }
  SECTION("non-digits") {
    CHECK_FALSE(with_birth_date("2001O315").birth_date_ymd());
    CHECK_FALSE(with_birth_date("+2010315").birth_date_ymd());
    CHECK_FALSE(with_birth_date("2001 315").birth_date_ymd());
    CHECK_FALSE(with_birth_date("abcdefgh").birth_date_ymd());
  }
  SECTION("absent") { CHECK_FALSE(with_birth_date(std::nullopt).birth_date_ymd()); }
  SECTION("an invalid date still decodes, raw") {
    const auto s = decode_ok(R"({"birthDate":"20230230"})");
    CHECK(s.birth_date == std::optional<std::string>("20230230"));
    CHECK_FALSE(s.birth_date_ymd());
  }
}

TEST_CASE("release status from nfr", "[models]") {
  CHECK(decode_ok(R"({"nfr":true})").release_status() == ReleaseStatus::not_for_release);
  CHECK(decode_ok(R"({"nfr":false})").release_status() == ReleaseStatus::releasable);
  CHECK(decode_ok(R"({"nfr":null})").release_status() == ReleaseStatus::unknown);
  CHECK(decode_ok("{}").release_status() == ReleaseStatus::unknown);
  CHECK(studentsvc::to_string(ReleaseStatus::not_for_release) == "not_for_release");
  CHECK(studentsvc::to_string(ReleaseStatus::releasable) == "releasable");
  CHECK(studentsvc::to_string(ReleaseStatus::unknown) == "unknown");
}

TEST_CASE("unknown extra JSON fields are ignored", "[models]") {
  const auto s = decode_ok(
      R"({"perm":"1234567","firstName":"Ana","studentLevel":{"a":[1,2]},"extra":42,"future":null,"list":[true]})");
  CHECK(s.perm == "1234567");
  CHECK(s.first_name == "Ana");
  auto m = studentsvc::decode_student_minimal(R"({"perm":"1234567","nfr":"not a bool","gender":7})");
  REQUIRE(m);  // the minimal decoder does not look at extended keys at all
  CHECK(m->perm == "1234567");
}

TEST_CASE("a wrong JSON type is ErrorKind::decode naming the field", "[models]") {
  struct Case {
    const char* body;
    const char* field;
  };
  const auto c = GENERATE(Case{R"({"nfr":"true"})", "nfr"}, Case{R"({"perm":1234567})", "perm"},
                          Case{R"({"firstName":{"given":"Ana"}})", "firstName"},
                          Case{R"({"middleName":false})", "middleName"}, Case{R"({"gender":["M"]})", "gender"},
                          Case{R"({"email":1.5})", "email"}, Case{R"({"nfr":1})", "nfr"},
                          Case{R"({"admitQuarter":true})", "admitQuarter"});
  CAPTURE(c.body);
  auto r = studentsvc::decode_student(c.body);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::decode);
  CHECK_THAT(r.error().message, Catch::Contains(std::string("'") + c.field + "'"));
}

TEST_CASE("the minimal decoder reports wrong basic field types too", "[models]") {
  auto r = studentsvc::decode_student_minimal(R"({"lastName":["Lopez"]})");
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::decode);
  CHECK_THAT(r.error().message, Catch::Contains("lastName"));
}

TEST_CASE("non-object bodies and invalid JSON are decode errors", "[models]") {
  const std::string body = GENERATE(as<std::string>{}, "[]", "[{\"perm\":\"1234567\"}]", "\"1234567\"", "42", "null",
                                    "true", "", "{", "{\"perm\":\"1234567\",}", "<html>Bad gateway</html>",
                                    "{\"perm\":\"1234567\"} trailing");
  CAPTURE(body);
  auto r = studentsvc::decode_student(body);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::decode);
  CHECK_FALSE(r.error().message.empty());
  auto m = studentsvc::decode_student_minimal(body);
  REQUIRE_FALSE(m);
  CHECK(m.error().kind == ErrorKind::decode);
}

TEST_CASE("decode_student_json refuses a non-object value", "[models]") {
  auto r = studentsvc::decode_student_json(nlohmann::json::array({1, 2}));
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == ErrorKind::decode);
  CHECK_THAT(r.error().message, Catch::Contains("array"));
  auto m = studentsvc::decode_student_minimal_json(nlohmann::json("text"));
  REQUIRE_FALSE(m);
  CHECK(m.error().kind == ErrorKind::decode);
}

TEST_CASE("UTF-8 comes back byte for byte", "[models]") {
  // "José Ñúñez 🌟" with the emoji U+1F31F as its 4-byte UTF-8 sequence.
  const std::string first = "Jos\xC3\xA9";
  const std::string last = "\xC3\x91\xC3\xBA\xC3\xB1" "ez \xF0\x9F\x8C\x9F";
  SECTION("raw UTF-8 in the body") {
    const auto s = decode_ok(R"({"firstName":")" + first + R"(","lastName":")" + last + R"(","middleName":")" +
                             last + R"("})");
    CHECK(s.first_name == first);
    CHECK(s.last_name == last);
    CHECK(s.middle_name == std::optional<std::string>(last));
  }
  SECTION("\\u escapes, including a surrogate pair") {
    const auto s = decode_ok(R"({"firstName":"Jos\u00e9","lastName":"\u00d1\u00fa\u00f1ez \ud83c\udf1f"})");
    CHECK(s.first_name == first);
    CHECK(s.last_name == last);
  }
  SECTION("through to_json and back") {
    StudentExtended s;
    s.first_name = first;
    s.pronoun_code = last;
    const auto back = nlohmann::json::parse(nlohmann::json(s).dump()).get<StudentExtended>();
    CHECK(back.first_name == first);
    CHECK(back.pronoun_code == std::optional<std::string>(last));
  }
}

TEST_CASE("to_json writes the interface keys", "[models]") {
  StudentExtended s;
  s.perm = "7654321";
  s.first_name = "Bo";
  s.nfr = false;
  s.admit_level = "FR";
  const nlohmann::json j = s;
  CHECK(j.at("perm") == "7654321");
  CHECK(j.at("firstName") == "Bo");
  CHECK(j.at("nfr") == false);
  CHECK(j.at("admitLevel") == "FR");
  CHECK(j.at("middleName").is_null());
  CHECK(j.at("internationalStudentCode").is_null());
  CHECK(j.size() == 17);  // 5 basic + 12 extended
  const nlohmann::json minimal = static_cast<const StudentMinimal&>(s);
  CHECK(minimal.size() == 5);
  CHECK(minimal.at("lastName") == "");
}

TEST_CASE("to_json / from_json round trip both models", "[models]") {
  SECTION("StudentExtended, every field set") {
    const auto original = decode_ok(full_body);
    const nlohmann::json j = original;
    CHECK(j.get<StudentExtended>() == original);
    CHECK(nlohmann::json::parse(j.dump()).get<StudentExtended>() == original);
  }
  SECTION("StudentExtended, extended fields empty") {
    StudentExtended original;
    original.perm = "1234567";
    original.email = "a@example.edu";
    const nlohmann::json j = original;
    CHECK(j.get<StudentExtended>() == original);
  }
  SECTION("StudentMinimal") {
    const StudentMinimal original{"1234567", "Ana", "Lopez", "SR", "ana@example.edu"};
    const nlohmann::json j = original;
    CHECK(j.get<StudentMinimal>() == original);
    CHECK(nlohmann::json::parse(j.dump()).get<StudentMinimal>() == original);
  }
}

TEST_CASE("nlohmann get<>() throws json::type_error on a wrong type", "[models]") {
  const auto wrong = nlohmann::json::parse(R"({"perm":"1234567","nfr":"yes"})");
  CHECK_THROWS_AS(wrong.get<StudentExtended>(), nlohmann::json::type_error);
  try {
    (void)wrong.get<StudentExtended>();
  } catch (const nlohmann::json::type_error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("nfr"));
  }
  CHECK_THROWS_AS(nlohmann::json::array().get<StudentExtended>(), nlohmann::json::type_error);
  CHECK_THROWS_AS(nlohmann::json::parse(R"({"email":5})").get<StudentMinimal>(), nlohmann::json::type_error);
  CHECK_THROWS_AS(nlohmann::json(42).get<StudentMinimal>(), nlohmann::json::type_error);
}

TEST_CASE("is_valid_perm with a PermSyntax", "[models][perm_syntax]") {
  using studentsvc::PermSyntax;
  for (const PermSyntax syntax : {PermSyntax::digits, PermSyntax::alphanumeric}) {
    CAPTURE(studentsvc::to_string(syntax));
    CHECK(studentsvc::is_valid_perm("1234567", syntax));
    // Never a URL's or a path's special character, a space, a control or a non-ASCII letter.
    for (const std::string_view bad : {"A1B2C3/", "A1B2%41", "A1B2.3D", "A1B 2C3", "A1B2C3\n", "A1B2Cé", "ÅB2C3D",
                                       "A1B2C3", "A1B2C3D4", "", "A1B2C3-", "A1B2C3_", "A1B2C3?"}) {
      CAPTURE(bad);
      CHECK_FALSE(studentsvc::is_valid_perm(bad, syntax));
    }
  }
  CHECK_FALSE(studentsvc::is_valid_perm("A1B2C3D", PermSyntax::digits));
  CHECK(studentsvc::is_valid_perm("A1B2C3D", PermSyntax::alphanumeric));
  CHECK(studentsvc::is_valid_perm("z9y8x7w", PermSyntax::alphanumeric));
  CHECK(studentsvc::is_valid_perm("ABCDEFG", PermSyntax::alphanumeric));
  CHECK(studentsvc::is_valid_perm("1234567") == studentsvc::is_valid_perm("1234567", PermSyntax::digits));
  CHECK(studentsvc::parse_perm_syntax("alphanumeric") == PermSyntax::alphanumeric);
  CHECK(studentsvc::parse_perm_syntax("digits") == PermSyntax::digits);
  CHECK_FALSE(studentsvc::parse_perm_syntax("Digits"));
  CHECK(studentsvc::to_string(PermSyntax::alphanumeric) == "alphanumeric");
  static_assert(studentsvc::is_valid_perm("A1B2C3D", PermSyntax::alphanumeric));
}

TEST_CASE("is_valid_perm accepts exactly 7 ASCII digits", "[models]") {
  CHECK(studentsvc::is_valid_perm("1234567"));
  CHECK(studentsvc::is_valid_perm("0000000"));
  CHECK(studentsvc::is_valid_perm("9999999"));
  CHECK_FALSE(studentsvc::is_valid_perm("123456"));
  CHECK_FALSE(studentsvc::is_valid_perm("12345678"));
  CHECK_FALSE(studentsvc::is_valid_perm("12345a7"));
  CHECK_FALSE(studentsvc::is_valid_perm("abcdefg"));
  CHECK_FALSE(studentsvc::is_valid_perm(" 123456"));
  CHECK_FALSE(studentsvc::is_valid_perm("123456 "));
  CHECK_FALSE(studentsvc::is_valid_perm("123 567"));
  CHECK_FALSE(studentsvc::is_valid_perm("-123456"));
  CHECK_FALSE(studentsvc::is_valid_perm(""));
  CHECK_FALSE(studentsvc::is_valid_perm(std::string_view("123456\0", 7)));
  // Arabic-Indic digits U+0661..U+0667 and full-width digits U+FF11..U+FF17, in UTF-8.
  CHECK_FALSE(studentsvc::is_valid_perm("\xD9\xA1\xD9\xA2\xD9\xA3\xD9\xA4\xD9\xA5\xD9\xA6\xD9\xA7"));
  CHECK_FALSE(studentsvc::is_valid_perm("\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x93\xEF\xBC\x94\xEF\xBC\x95\xEF\xBC\x96"
                                        "\xEF\xBC\x97"));
  CHECK_FALSE(studentsvc::is_valid_perm("123456\xD9\xA7"));  // 6 ASCII digits + one Arabic-Indic
  static_assert(studentsvc::is_valid_perm("1234567"), "usable in constant expressions");
}

TEST_CASE("a student key that comes twice is a decode error naming it, never resolved", "[models]") {
  struct Row {
    const char* body;
    const char* key;
  };
  const Row rows[] = {
      {R"({"perm":"1234567","nfr":true,"nfr":false})", "nfr"},
      {R"({"perm":"1234567","nfr":false,"nfr":true})", "nfr"},
      {R"({"perm":"1234567","perm":"7654321"})", "perm"},
      {R"({"perm":"1234567","firstName":"Ana","firstName":"Ana"})", "firstName"},  // even with equal values
      {R"({"perm":"1234567","gender":null,"gender":"F"})", "gender"},
      {R"({"perm":"1234567","nfr":"yes","nfr":true})", "nfr"},  // a wrong type does not hide the duplicate
      {R"({"perm":"1234567","pronounCode":"SHE","x":1,"pronounCode":"HE"})", "pronounCode"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.body);
    const auto r = studentsvc::decode_student(row.body);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::decode);
    CHECK_THAT(r.error().message, Catch::Contains(std::string("'") + row.key + "'"));
    CHECK_THAT(r.error().message, Catch::Contains("more than once"));
    CHECK_THAT(r.error().message, !Catch::Contains("1234567"));  // student values stay out of errors
    CHECK_THAT(r.error().message, !Catch::Contains("7654321"));
  }
  SECTION("the minimal decoder refuses its own keys twice") {
    const auto r = studentsvc::decode_student_minimal(R"({"perm":"1234567","email":"a@x","email":"b@x"})");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == ErrorKind::decode);
    CHECK_THAT(r.error().message, Catch::Contains("'email'"));
  }
  SECTION("the same key in nested objects, and unknown keys twice, are not ambiguous student data") {
    CHECK(studentsvc::decode_student(R"({"perm":"1234567","x":{"nfr":1,"nfr":2},"y":[{"perm":1},{"perm":2}]})"));
    CHECK(studentsvc::decode_student(R"({"perm":"1234567","extra":1,"extra":2})"));
    // /current reads only the five basic keys.
    CHECK(studentsvc::decode_student_minimal(R"({"perm":"1234567","nfr":true,"nfr":false})"));
  }
}

TEST_CASE("one field table drives the decoder and to_json: every member once, the interface's keys", "[models]") {
  namespace d = studentsvc::detail;
  StudentExtended s;
  int n = 0;
  for (const auto& field : d::student_fields) {
    CAPTURE(field.key);
    CHECK(std::count_if(d::student_fields.begin(), d::student_fields.end(),
                        [&](const auto& other) { return other.key == field.key; }) == 1);
    // A distinct value per row: two rows sharing a member would lose one in the round trip.
    d::with_field(field, s, [&](auto& member) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(member)>, std::optional<bool>>) {
        member = true;
      } else {
        member = "v" + std::to_string(n);
      }
    });
    ++n;
  }
  n = 0;
  for (const auto& field : d::student_fields) {  // each row reads back its own value: no two share a member
    CAPTURE(field.key);
    d::with_field(field, std::as_const(s), [&](const auto& member) {
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(member)>, std::optional<bool>>) {
        CHECK(member == std::optional<bool>(true));
      } else {
        CHECK(member == "v" + std::to_string(n));
      }
    });
    ++n;
  }
  CHECK(s.admit_quarter == "v15");  // and the struct's members, by name, hold what their rows wrote
  CHECK(s.first_name == "v1");
  CHECK(s.international_student_code == "v10");
  CHECK(d::student_fields_of(false).size() == 5);
  for (const auto& field : d::student_fields_of(false)) CHECK(field.type == d::FieldType::basic);
  const nlohmann::json j = s;
  CHECK(j.size() == d::student_fields.size());
  CHECK(j.at("pronounCode") == "v16");
  CHECK(j.at("nfr") == true);
  CHECK(j.at("perm") == "v0");
  const auto sax = studentsvc::decode_student(j.dump());
  REQUIRE(sax);
  CHECK(*sax == s);
  CHECK(j.get<StudentExtended>() == s);
}

TEST_CASE("the SAX and DOM decoders name the same first wrong field, in the interface's order", "[models]") {
  for (const char* body : {R"({"pronounCode":1,"nfr":"x","perm":2})", R"({"admitLevel":[],"nfr":0})",
                           R"({"email":false,"perm":1})"}) {
    CAPTURE(body);
    const auto sax = studentsvc::decode_student(body);
    const auto dom = studentsvc::decode_student_json(nlohmann::json::parse(body));
    REQUIRE_FALSE(sax);
    REQUIRE_FALSE(dom);
    CHECK(sax.error().message == dom.error().message);
  }
  CHECK_THAT(studentsvc::decode_student(R"({"pronounCode":1,"nfr":"x"})").error().message,
             Catch::StartsWith("field 'nfr' must be a boolean or null, got string"));
}

}  // namespace models_test

namespace models_test {
namespace {

// LLVM issue 68552: libc++ 16/17 keeps std::expected's has_value flag in the
// value's tail padding, so a StudentExtended with tail padding made every use
// below lose it (a crash or an "error" holding nothing). Built and run in CI's
// clang-16 + libc++ stage as well as with libstdc++.
TEST_CASE("Result<StudentExtended> holds what it was given in every ordinary use", "[models][libcxx]") {
  using studentsvc::Result;
  SECTION("value-initialised, alone and in a vector") {
    Result<StudentExtended> r;
    REQUIRE(r.has_value());
    CHECK(*r == StudentExtended{});
    std::vector<Result<StudentExtended>> v(5);
    for (const auto& x : v) CHECK(x.has_value());
  }
  SECTION("resize and emplace_back") {
    std::vector<Result<StudentExtended>> v;
    v.resize(3);
    v.emplace_back();
    v.resize(9);
    REQUIRE(v.size() == 9);
    for (const auto& x : v) {
      REQUIRE(x.has_value());
      CHECK(x->nfr == std::nullopt);
      CHECK(x->perm.empty());
    }
  }
  SECTION("fields set after construction, through value()") {
    Result<StudentExtended> r;
    r.value().nfr = true;
    r.value().perm = "A1B2C3D";
    r.value().pronoun_code = "HE";
    r->first_name = "Sam";
    REQUIRE(r.has_value());
    CHECK(r->nfr == std::optional<bool>{true});
    CHECK(r->release_status() == ReleaseStatus::not_for_release);
    CHECK(r->perm == "A1B2C3D");
    CHECK(r->pronoun_code == std::optional<std::string>{"HE"});
    CHECK(r->first_name == "Sam");
    r.value() = StudentExtended{};
    r->nfr = false;
    REQUIRE(r.has_value());
    CHECK(r->release_status() == ReleaseStatus::releasable);
  }
  SECTION("an error stays an error") {
    Result<StudentExtended> e = studentsvc::make_error(ErrorKind::not_found, "no such student");
    REQUIRE_FALSE(e.has_value());
    CHECK(e.error().kind == ErrorKind::not_found);
    e = StudentExtended{};
    CHECK(e.has_value());
  }
}

}  // namespace
}  // namespace models_test

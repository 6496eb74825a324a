// The studentsvc tool's parts on their own: RFC 4180 CSV, perm input, the
// progress and summary lines, argument parsing, fail-fast's rule and the mock's
// fixture file (tools/studentsvc/*.hpp).

#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>

#include "cli_args.hpp"
#include "commands.hpp"
#include "csv.hpp"
#include "cmd/mock.hpp"
#include "cmd/get/perm_input.hpp"
#include "cmd/get/progress.hpp"
#include "cmd/get/roster.hpp"
#include "student_output.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace tool_units_test {

using namespace studentsvc_cli;

TEST_CASE("csv_field quotes only what RFC 4180 needs and keeps bytes", "[tool][csv]") {
  CHECK(csv_field("Ana") == "Ana");
  CHECK(csv_field("") == "");
  CHECK(csv_field("Núñez 🌟") == "Núñez 🌟");
  CHECK(csv_field("Wei, Li") == "\"Wei, Li\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(csv_field("cr\r") == "\"cr\r\"");
  CHECK(csv_field(" padded") == "\" padded\"");
  CHECK(csv_record({"a", "b,c", ""}) == "a,\"b,c\",\r\n");
}

TEST_CASE("parse_csv reads what csv_record writes, and refuses stray quotes", "[tool][csv]") {
  const std::vector<std::string> fields = {"Zoë \"Z\"", "a,b", "line\r\nbreak", "", " x "};
  const auto parsed = parse_csv(csv_record(fields) + csv_record({"1", "2", "3", "4", "5"}));
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 2);
  CHECK(parsed->front() == fields);
  CHECK(parse_csv("a,b\n\n\nc,d\n")->size() == 2);      // blank lines skipped
  CHECK(parse_csv("a,\"b\n")  == std::nullopt);         // not closed
  CHECK(parse_csv("a,b\"c\"\n") == std::nullopt);       // quote inside an unquoted field
  CHECK(parse_csv("\"a\"b,c\n") == std::nullopt);       // text after a closing quote
  CHECK(parse_csv("")->empty());
  CHECK(parse_csv("a,,\n")->front() == std::vector<std::string>{"a", "", ""});
}

TEST_CASE("perms_from_text: lines or a named CSV column", "[tool]") {
  CHECK(perms_from_text("1234567\r\n\n  2345678 \n\t3456789", std::nullopt).value() ==
        std::vector<std::string>{"1234567", "2345678", "3456789"});
  CHECK(perms_from_text("", std::nullopt).value().empty());
  const std::string roster = "name,perm\r\n\"Wei, Li\",2345678\r\nAna, 1234567 \r\n";
  CHECK(perms_from_text(roster, std::string("perm")).value() == std::vector<std::string>{"2345678", "1234567"});
  CHECK_THAT(perms_from_text(roster, std::string("id")).error(), Catch::Contains("no column 'id'"));
  CHECK_THAT(perms_from_text("perm,name\n1234567\n", std::string("name")).error(), Catch::Contains("record 2"));
  CHECK_THAT(perms_from_text("", std::string("perm")).error(), Catch::Contains("no header row"));
  CHECK_THAT(perms_from_text("perm\n\"1", std::string("perm")).error(), Catch::Contains("malformed"));
}

TEST_CASE("progress_line shows done/total, percent, rate, ETA and failures, summary_line the totals", "[tool]") {
  using std::chrono::seconds;
  const auto half = progress_line({2500, 5000, 3}, seconds(10));
  CHECK(half == "[############------------] 2500/5000  50%  250/s  ETA 10s  3 failed");
  CHECK_THAT(progress_line({0, 5000, 0}, seconds(0)), Catch::Contains("0/5000  0%  0.0/s  ETA ?  0 failed"));
  CHECK_THAT(progress_line({10, 100000, 0}, seconds(1)), Catch::Contains("ETA 2h46m"));
  CHECK_THAT(progress_line({10, 1000, 0}, seconds(2)), Catch::Contains("5.0/s  ETA 3m18s"));
  CHECK(progress_line({5, 5, 0}, seconds(1)).starts_with("[########################] 5/5  100%"));
  CHECK(summary_line({5000, 5000, 10}, seconds(4), false) == "5000 looked up, 4990 found, 10 failed in 4.0s (1250/s)");
  CHECK(summary_line({16, 400, 16}, seconds(1), true) ==
        "16 looked up, 0 found, 16 failed in 1.0s (16.0/s); stopped, 384 not sent");
}

TEST_CASE("fail-fast stops on errors every lookup would repeat, not on a missing student", "[tool]") {
  using studentsvc::ErrorKind;
  studentsvc::ApiError e;
  e.kind = ErrorKind::unauthorized;
  CHECK(repeats_for_every_lookup(e));
  e.kind = ErrorKind::transport;
  e.retryable = false;  // TLS, certificate, a host that does not resolve
  CHECK(repeats_for_every_lookup(e));
  e.retryable = true;  // a timeout, a reset: the next lookup may well succeed
  CHECK_FALSE(repeats_for_every_lookup(e));
  for (const auto kind : {ErrorKind::not_found, ErrorKind::invalid_argument, ErrorKind::http_status, ErrorKind::decode,
                          ErrorKind::bad_request}) {
    e.kind = kind;
    CHECK_FALSE(repeats_for_every_lookup(e));
  }
}

TEST_CASE("a batch names a failed input by itself when it looks like a perm, else by position", "[tool]") {
  CHECK(shown_perm("1234567", 0) == "1234567");
  CHECK(shown_perm("12", 4) == "12");
  CHECK(shown_perm("CANARY-KEY", 1) == "#2");
  CHECK(shown_perm("", 0) == "#1");
  CHECK(shown_perm(std::string(40, '1'), 2) == "#3");
}

namespace {
Args parse(std::vector<const char*> words) {
  words.insert(words.begin(), "studentsvc");
  return parse_args(static_cast<int>(words.size()), words.data());
}
}  // namespace

TEST_CASE("parse_args: options before or after the command, per-command options, no value echoed", "[tool]") {
  const auto a = parse({"--mock", "get", "1234567", "-o", "csv", "2345678", "--from", "f.txt", "--concurrency", "8",
                        "--fail-fast", "-q", "--timeout", "500"});
  CHECK_FALSE(a.first_error);
  CHECK(a.command == "get");
  CHECK(a.positionals == std::vector<std::string>{"1234567", "2345678"});
  CHECK(a.format == Format::csv);
  CHECK(a.from == "f.txt");
  CHECK(a.concurrency == 8);
  CHECK(a.fail_fast);
  CHECK(a.quiet);
  CHECK(a.mock);
  CHECK(a.timeout == std::chrono::milliseconds(500));

  const auto m = parse({"mock", "--students", "s.json", "--latency", "25", "--tls-cert", "c.pem", "--tls-key", "k.pem"});
  CHECK_FALSE(m.first_error);
  CHECK(m.students_file == "s.json");
  CHECK(m.latency == std::chrono::milliseconds(25));

  CHECK(parse({"--base-url", "https://x.example.edu", "config"}).env_overrides.at("STUDENTSVC_BASE_URL") ==
        "https://x.example.edu");
  CHECK(parse({"get", "1", "--concurrency", "0"}).first_error);
  CHECK(parse({"get", "1", "--concurrency", "257"}).first_error);
  CHECK(parse({"current", "--from", "x"}).first_error);
  CHECK(parse({"mock", "--latency", "-1"}).first_error);

  const auto twice = parse({"--api-key", "first", "get", "1234567", "--api-key", "second", "--timeout", "9", "--timeout", "10"});
  CHECK_FALSE(twice.first_error);
  CHECK(twice.env_overrides.at("STUDENTSVC_API_KEY") == "second");  // the last one wins
  CHECK(twice.timeout == std::chrono::milliseconds(10));

  const auto secret = parse({"--timeout", "SECRET-VALUE", "get", "1234567"});
  REQUIRE(secret.first_error);
  CHECK(secret.first_error->find("SECRET-VALUE") == std::string::npos);
  CHECK_THAT(*secret.first_error, Catch::Contains("--timeout"));
  const auto positional = parse({"current", "SECRET-JWT"});
  REQUIRE(positional.first_error);
  CHECK(positional.first_error->find("SECRET-JWT") == std::string::npos);
}

TEST_CASE("ResultWriter: a json array, ndjson lines or table blocks as results come", "[tool]") {
  studentsvc::StudentExtended s;
  s.perm = "1234567";
  s.first_name = "Ana";
  s.nfr = true;
  const studentsvc::Result<studentsvc::StudentExtended> ok = s;
  const studentsvc::Result<studentsvc::StudentExtended> missing =
      studentsvc::make_error(studentsvc::ErrorKind::not_found, "Student not found.", 404);

  std::ostringstream json;
  ResultWriter array(json, Format::json);
  array.begin();
  array.end();
  CHECK(json.str() == "[]\n");

  std::ostringstream lines;
  ResultWriter ndjson(lines, Format::ndjson);
  ndjson.begin();
  ndjson.result("1234567", ok);
  ndjson.result("7654321", missing);
  ndjson.end();
  const auto text = lines.str();
  CHECK_THAT(text, Catch::StartsWith("{\"perm\":\"1234567\",\"firstName\":\"Ana\""));
  CHECK_THAT(text, Catch::EndsWith(
                       "\n{\"perm\":\"7654321\",\"error\":{\"kind\":\"not_found\",\"status\":404,"
                       "\"message\":\"not_found (404): Student not found.\"}}\n"));

  std::ostringstream table;
  ResultWriter blocks(table, Format::table);
  blocks.begin();
  blocks.result("1234567", ok);
  blocks.result("7654321", missing);
  blocks.end();
  CHECK_THAT(table.str(), Catch::Contains("release status            not_for_release"));
  CHECK_THAT(table.str(), Catch::Contains("error                     not_found (404): Student not found."));
  // A not-for-release record says so on its first line; the others do not.
  CHECK_THAT(table.str(), Catch::StartsWith("FIELD [NOT FOR RELEASE]   VALUE\n"));
  CHECK(table.str().find("\nFIELD                     VALUE\nperm                      7654321") != std::string::npos);
  CHECK_THAT(text, Catch::Contains("\"nfr\":true"));  // ndjson keeps the value
  s.nfr = false;
  std::ostringstream releasable;
  print_student_table(releasable, s, true);
  CHECK_THAT(releasable.str(), Catch::StartsWith("FIELD                     VALUE\n"));
}

TEST_CASE("get --failed-to keeps only the failures worth retrying", "[tool]") {
  using studentsvc::ErrorKind;
  using studentsvc::make_error;
  CHECK(worth_retrying(make_error(ErrorKind::transport, "connection reset").error()));
  CHECK(worth_retrying(make_error(ErrorKind::http_status, "Too Many Requests", 429).error()));
  CHECK(worth_retrying(make_error(ErrorKind::http_status, "Bad Gateway", 502).error()));
  CHECK_FALSE(worth_retrying(make_error(ErrorKind::not_found, "Student not found.", 404).error()));
  CHECK_FALSE(worth_retrying(make_error(ErrorKind::unauthorized, "denied", 401).error()));
  CHECK_FALSE(worth_retrying(make_error(ErrorKind::invalid_argument, "not 7 digits").error()));
  studentsvc::ApiError open;  // what the SDK's circuit breaker answers while the service is down
  open.kind = ErrorKind::circuit_open;
  open.retryable = true;
  CHECK(worth_retrying(open));
  CHECK(exit_status(ErrorKind::circuit_open) == exit_status(ErrorKind::transport));
}

TEST_CASE("mock fixtures: students and tokens in the interface's keys, each mistake named", "[tool][mock]") {
  const auto ok = parse_mock_fixtures(R"({"students": [{"perm": "7000001", "firstName": "Zoë"}],
                                          "tokens": {"jwt-z": "7000001"}})");
  REQUIRE(ok);
  CHECK(ok->students.at("7000001").at("firstName") == "Zoë");
  CHECK(ok->jwts.at("jwt-z") == "7000001");
  CHECK(parse_mock_fixtures("{}").value().students.empty());

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[", "not valid JSON"},
      {"[]", "top level must be an object"},
      {R"({"students": {}})", "must be an array"},
      {R"({"students": [1]})", "students[0] is not an object"},
      {R"({"students": [{"firstName": "x"}]})", "no 7-digit \"perm\""},
      {R"({"students": [{"perm": "12"}]})", "no 7-digit \"perm\""},
      {R"({"students": [{"perm": "7000001"}, {"perm": "7000001"}]})", "appears twice"},
      {R"({"tokens": []})", "JWT: perm"},
      {R"({"tokens": {"t": 7000001}})", "must be a perm string"},
      {R"({"studnets": []})", "unknown key \"studnets\""},
  };
  for (const auto& [text, why] : bad) {
    INFO(text);
    const auto r = parse_mock_fixtures(text);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), Catch::Contains(why));
  }
  CHECK(shell_quoted("it's") == "'it'\\''s'");
}

}  // namespace tool_units_test

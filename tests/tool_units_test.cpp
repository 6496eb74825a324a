// The studentsvc tool's parts on their own: RFC 4180 CSV, perm input, the
// progress and summary lines, argument parsing, fail-fast's rule and the mock's
// fixture file (tools/studentsvc/, through the studentsvc_cli_lib library).

#include <catch2/catch.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>

#include "cli_args.hpp"
#include "cmd/get/get.hpp"
#include "cmd/get/perm_input.hpp"
#include "cmd/get/progress.hpp"
#include "cmd/get/roster.hpp"
#include "cmd/mock/mock.hpp"
#include "commands.hpp"
#include "csv.hpp"
#include "exit_status.hpp"
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

TEST_CASE("csv output neutralises a cell a spreadsheet would run as a formula, unless --csv-raw", "[tool][csv]") {
  // OWASP's CSV injection list: =, +, -, @, tab and CR; the cell gets a ' and is quoted.
  for (const std::string cell : {"=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"}) {
    INFO(cell);
    const auto written = csv_field(cell, CsvFormulas::neutralise);
    CHECK(written.starts_with("\"'"));
    CHECK(written.ends_with("\""));
    CHECK(parse_csv(written + "\r\n")->front().front() == "'" + cell);
    CHECK(csv_field(cell, CsvFormulas::keep) == csv_field(cell));  // --csv-raw: as RFC 4180 alone writes it
  }
  CHECK(csv_field("Ana", CsvFormulas::neutralise) == "Ana");
  CHECK(csv_field("O'Brien-Núñez", CsvFormulas::neutralise) == "O'Brien-Núñez");
  CHECK(csv_field("", CsvFormulas::neutralise).empty());

  // A hostile server's record, row by row: every field of it neutralised in csv_row, none with --csv-raw.
  studentsvc::StudentExtended s;
  s.perm = "1234567";
  s.first_name = "=cmd|' /C calc'!A0";
  s.last_name = "@evil";
  const auto row = csv_row("1234567", s);
  CHECK_THAT(row, Catch::Contains(",\"'=cmd|' /C calc'!A0\",\"'@evil\","));
  const auto raw = csv_row("1234567", s, CsvFormulas::keep);
  CHECK_THAT(raw, Catch::Contains(",=cmd|' /C calc'!A0,@evil,"));
  std::ostringstream out;
  ResultWriter writer(out, Format::csv);
  writer.result("1234567", s);
  CHECK_THAT(out.str(), Catch::Contains("\"'@evil\""));
}

TEST_CASE("printable strips escape sequences, C1 controls and bidi overrides, and keeps UTF-8", "[tool]") {
  CHECK(printable("Zoë Núñez 🌟") == "Zoë Núñez 🌟");
  CHECK(printable("red\x1b[31mtext\x1b[0m") == "redtext");                      // CSI
  CHECK(printable("a\x1b]0;owned title\x07" "b") == "ab");                          // OSC to BEL
  CHECK(printable("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b") == "alinkb");    // OSC to ST (a hyperlink)
  CHECK(printable("a\x1b" "cb") == "ab");                                         // ESC c: reset
  CHECK(printable("a\x1b(0b") == "ab");                                           // a charset switch
  CHECK(printable("a\xc2\x9b" "31mb") == "a31mb");                                 // U+009B, the 8-bit CSI
  CHECK(printable("a\xc2\x85" "b") == "ab");                                       // U+0085, another C1
  CHECK(printable("abc\xe2\x80\xae" "evil.exe") == "abcevil.exe");                   // U+202E RIGHT-TO-LEFT OVERRIDE
  CHECK(printable("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad") == "");          // U+202A..U+202D
  CHECK(printable("x\xe2\x81\xa6y\xe2\x81\xa9z") == "xyz");                        // U+2066 ... U+2069 isolates
  CHECK(printable("\xe2\x80\x8e") == "\xe2\x80\x8e");                                // U+200E (a mark, not an override) stays
  CHECK(printable("raw\x9b" "byte\xff") == "raw?byte?");                          // not UTF-8
  CHECK(printable("two\nlines\tand\x7f") == "two lines and");
  CHECK(printable_lines("a\x1b[2J\nb\n") == "a\nb\n");

  // The table output and the batch's table blocks go through it.
  studentsvc::StudentExtended s;
  s.perm = "1234567";
  s.first_name = "Ana\x1b]0;pwned\x07\xe2\x80\xae";
  std::ostringstream table;
  print_student_table(table, s, true);
  CHECK(table.str().find('\x1b') == std::string::npos);
  CHECK(table.str().find("\xe2\x80\xae") == std::string::npos);
  CHECK_THAT(table.str(), Catch::Contains("Ana\n"));
  // JSON and NDJSON stay byte for byte (JSON escapes the C0 controls itself).
  std::ostringstream ndjson;
  ResultWriter writer(ndjson, Format::ndjson);
  writer.result("1234567", s);
  CHECK_THAT(ndjson.str(), Catch::Contains(R"("firstName":"Ana\u001b]0;pwned\u0007)" "\xe2\x80\xae\""));
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

TEST_CASE("perm input skips a UTF-8 BOM (Excel's CSV UTF-8) and refuses an over-long line", "[tool]") {
  const std::string bom = "\xEF\xBB\xBF";
  CHECK(perms_from_text(bom + "1234567\r\n2345678\r\n", std::nullopt).value() ==
        std::vector<std::string>{"1234567", "2345678"});
  CHECK(perms_from_text(bom + "name,perm\r\nAna,1234567\r\n", std::string("name")).value() ==
        std::vector<std::string>{"Ana"});
  CHECK(perms_from_text(bom + "perm\r\n1234567\r\n", std::string("perm")).value() ==
        std::vector<std::string>{"1234567"});
  CHECK(perms_from_text(bom, std::nullopt).value().empty());
  // Only at the start: a BOM inside is the line's own bytes.
  CHECK(perms_from_text("1234567\n" + bom + "2345678\n", std::nullopt).value().back() == bom + "2345678");

  // A line (or CSV record) over the cap is refused with its number, not held.
  const std::string huge(max_input_line_bytes + 1, '1');
  const auto long_line = perms_from_text("1234567\n" + huge + "\n2345678\n", std::nullopt);
  REQUIRE_FALSE(long_line);
  CHECK_THAT(long_line.error(), Catch::Contains("line 2 is longer than 65536 bytes"));
  CHECK(perms_from_text(std::string(max_input_line_bytes, '1') + "\n", std::nullopt).value().size() == 1);
  const auto long_record = perms_from_text("perm,notes\n1234567,\"" + std::string(40'000, 'x') + "\n" +
                                               std::string(40'000, 'x') + "\"\n",
                                           std::string("perm"));
  REQUIRE_FALSE(long_record);
  CHECK_THAT(long_record.error(), Catch::Contains("CSV record 2 is longer than 65536 bytes"));
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
  CHECK(worth_retrying(make_error(ErrorKind::unauthorized, "denied", 401).error()));  // every lookup repeats it: retry once fixed
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
      // Each student as the interface types it (what the SDK would refuse to decode is never served).
      {R"({"students": [{"perm": "7000001", "nfr": "yes"}]})", "students[0] does not match the interface: field 'nfr'"},
      {R"({"students": [{"perm": "7000001", "firstName": 5}]})", "field 'firstName'"},
      {R"({"students": [{"perm": "7000001", "firstname": "Zoë"}]})", "\"firstname\" is not a field of the interface"},
  };
  for (const auto& [text, why] : bad) {
    INFO(text);
    const auto r = parse_mock_fixtures(text);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error(), Catch::Contains(why));
  }
  CHECK(shell_quoted("it's") == "'it'\\''s'");
}

TEST_CASE("mock fixtures follow --perm-syntax", "[tool][mock][perm_syntax]") {
  const std::string text = R"({"students": [{"perm": "A1B2C3D", "firstName": "Avery"}], "tokens": {"jwt-a": "A1B2C3D"}})";
  const auto digits = parse_mock_fixtures(text);
  REQUIRE_FALSE(digits);
  CHECK_THAT(digits.error(), Catch::Contains("no 7-digit \"perm\""));
  const auto alphanumeric = parse_mock_fixtures(text, studentsvc::PermSyntax::alphanumeric);
  REQUIRE(alphanumeric);
  CHECK(alphanumeric->students.at("A1B2C3D").at("firstName") == "Avery");
  const auto slash = parse_mock_fixtures(R"({"students": [{"perm": "A1B2C3/"}]})", studentsvc::PermSyntax::alphanumeric);
  REQUIRE_FALSE(slash);
  CHECK_THAT(slash.error(), Catch::Contains("7 letters or digits"));
}

}  // namespace tool_units_test

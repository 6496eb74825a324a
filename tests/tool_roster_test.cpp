// `studentsvc get` as roster work: thousands of perms through the tool (a child
// process) against a MockServer on 127.0.0.1, every output row checked; --from
// a file, stdin or a CSV column; failures in place and exit 10; --fail-fast.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <studentsvc/testing/mock_server.hpp>

#include "csv.hpp"
#include "support/plain_http_listener.hpp"
#include "support/process.hpp"
#include "support/raw_server.hpp"
#include "support/temp_dir.hpp"
#include "support/test_pki.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace tool_roster_test {

namespace {

using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;
using Args = studentsvc::test::Args;

const std::string cli = STUDENTSVC_CLI_PATH;

studentsvc::test::ProcessResult tool(const Args& args) { return studentsvc::test::run_process(cli, args, {}); }

Args flags_for(const MockServer& server) {
  const auto o = server.client_options();
  return {"--base-url", server.base_url(), "--insecure-loopback", "--api-key", std::string(o.auth.api_key.reveal()),
          "--svc-api-key", std::string(o.auth.svc_api_key.reveal()), "--network-id", "svc-registrar-app", "--password", "mock-password",
          "--retries", "0"};
}

Args concat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string perm_of(std::size_t i) { return std::to_string(1'000'000 + i); }

/// Student i: names that need CSV quoting and 2- and 4-byte UTF-8; every 500th perm is missing.
std::map<std::string, std::string> roster_bodies(std::size_t count) {
  std::map<std::string, std::string> bodies;
  const auto model = MockServerOptions::default_students().at("1234567");
  for (std::size_t i = 0; i < count; ++i) {
    if (i % 500 == 499) continue;
    auto s = model;
    s["perm"] = perm_of(i);
    s["firstName"] = "Zoë \"" + std::to_string(i) + "\" 🌟";
    s["lastName"] = "Núñez, " + std::to_string(i);
    s["nfr"] = i % 3 == 0;
    bodies[perm_of(i)] = s.dump();
  }
  return bodies;
}

/// A mock serving the roster. The students are answered from `intercept` once
/// the request carries the mock's credentials (any other request goes on to the
/// mock's own checks): MockServer copies its options, students included, for
/// every request it dispatches, which makes thousands of students slow.
MockServerOptions roster_options(std::size_t count) {
  MockServerOptions o;
  const std::string prefix = "/students/v2/students/";
  // Shared, not captured by value: the mock copies `intercept` for every request.
  o.intercept = [bodies = std::make_shared<const std::map<std::string, std::string>>(roster_bodies(count)), prefix,
                 api_key = o.api_key, svc = *o.svc_api_key](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("x-api-key") != api_key || req.get_header_value("svc-api-key") != svc ||
        !req.has_header("Authorization") || !req.path.starts_with(prefix)) {
      return false;
    }
    const auto it = bodies->find(req.path.substr(prefix.size()));
    if (it == bodies->end()) {
      res.status = 404;
      res.set_content(R"({"message":"Student not found."})", "application/json; charset=utf-8");
    } else {
      res.status = 200;
      res.set_content(it->second, "application/json; charset=utf-8");
    }
    return true;
  };
  return o;
}

std::vector<std::string> roster_perms(std::size_t count) {
  std::vector<std::string> perms;
  for (std::size_t i = 0; i < count; ++i) perms.push_back(perm_of(i));
  return perms;
}

std::string lines_of(const std::vector<std::string>& perms) {
  std::string out;
  for (const auto& p : perms) out += p + "\n";
  return out;
}

/// A mock behind a web server that answers any path under /wrong/ with its own
/// HTML 404 (a base URL with the wrong path prefix); `slow_path`, if set, is
/// answered 400 ms late.
MockServerOptions behind_a_web_server(std::string slow_path = {}) {
  MockServerOptions options;
  options.intercept = [slow_path = std::move(slow_path)](const httplib::Request& req, httplib::Response& res) {
    if (!req.path.starts_with("/wrong/")) return false;
    if (req.path == slow_path) std::this_thread::sleep_for(std::chrono::milliseconds(400));
    res.status = 404;
    res.set_content("<html><body><h1>404 Not Found</h1></body></html>", "text/html");
    return true;
  };
  return options;
}

/// The numbers of the summary line "N looked up, F found, X failed in ...".
struct SummaryCounts {
  std::size_t looked_up = 0;
  std::size_t found = 0;
  std::size_t failed = 0;
};
std::optional<SummaryCounts> summary_counts(const std::string& err) {
  // (No <regex>: GCC 12 warns inside libstdc++'s regex under -O1 with the sanitizers.)
  const auto at = err.find(" looked up, ");
  if (at == std::string::npos) return std::nullopt;
  auto start = err.find_last_not_of("0123456789", at - 1);
  start = start == std::string::npos ? 0 : start + 1;
  SummaryCounts c;
  char tail[8] = {};
  if (std::sscanf(err.c_str() + start, "%zu looked up, %zu found, %zu failed %2s", &c.looked_up, &c.found, &c.failed,
                  tail) != 4 || std::string_view(tail) != "in") {
    return std::nullopt;
  }
  return c;
}

}  // namespace

TEST_CASE("tool get: 5,000 perms to CSV, every row checked, failures as rows, exit 10", "[tool]") {
  constexpr std::size_t count = 5000;
  MockServer server(roster_options(count));
  REQUIRE(server.running());
  const studentsvc::test::TempDir dir;
  const auto perms = roster_perms(count);
  const auto file = dir.write("perms.txt", lines_of(perms));

  const auto started = std::chrono::steady_clock::now();
  const auto r = tool(concat(flags_for(server), {"get", "--from", file, "-o", "csv", "--concurrency", "16"}));
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  WARN("5,000 perms to CSV in " << seconds << " s");
  CHECK(r.status == 10);  // ten perms are missing

  // stderr is not a terminal: no progress bar, only the summary line.
  CHECK(r.err.find('\r') == std::string::npos);
  CHECK_THAT(r.err, Catch::StartsWith("studentsvc: get: 5000 looked up, 4990 found, 10 failed in "));
  CHECK(r.err.find('\n') == r.err.size() - 1);

  const auto records = studentsvc_cli::parse_csv(r.out);
  REQUIRE(records);
  REQUIRE(records->size() == count + 1);
  const auto& header = records->front();
  REQUIRE(header.size() == 18);
  CHECK(header.front() == "perm");
  CHECK(header.at(9) == "nfr");
  CHECK(header.back() == "error");
  for (std::size_t i = 0; i < count; ++i) {
    const auto& row = (*records)[i + 1];
    INFO("row " << i);
    REQUIRE(row.size() == header.size());
    CHECK(row.at(0) == perm_of(i));  // input order
    if (i % 500 == 499) {
      CHECK(row.at(1).empty());
      CHECK(row.back() == "not_found (404): Student not found.");
      continue;
    }
    CHECK(row.at(1) == "Zoë \"" + std::to_string(i) + "\" 🌟");  // UTF-8 byte for byte, quotes kept
    CHECK(row.at(2) == "Núñez, " + std::to_string(i));
    CHECK(row.at(9) == (i % 3 == 0 ? "true" : "false"));
    CHECK(row.at(10).empty());  // internationalStudentCode null
    CHECK(row.back().empty());
  }
  // RFC 4180 on the wire: CRLF line ends, quoted fields with doubled quotes.
  CHECK_THAT(r.out, Catch::StartsWith("perm,firstName,lastName,suffix,email,"));
  CHECK_THAT(r.out, Catch::Contains("\r\n1000001,\"Zoë \"\"1\"\" 🌟\",\"Núñez, 1\","));
}

TEST_CASE("tool get: many perms default to ndjson, one object a line, errors in place", "[tool]") {
  constexpr std::size_t count = 1200;
  MockServer server(roster_options(count));
  auto perms = roster_perms(count);
  const auto r = tool(concat(concat(flags_for(server), {"get", "--quiet"}), perms));
  CHECK(r.status == 10);
  CHECK(r.err.empty());  // --quiet: not even the summary
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const auto end = r.out.find('\n', start);
    REQUIRE(end != std::string::npos);
    const auto j = nlohmann::json::parse(r.out.substr(start, end - start));
    INFO("line " << line_no);
    REQUIRE(line_no < count);
    CHECK(j.at("perm") == perm_of(line_no));
    if (line_no % 500 == 499) {
      CHECK(j.at("error").at("kind") == "not_found");
      CHECK(j.at("error").at("status") == 404);
    } else {
      CHECK(j.at("lastName") == "Núñez, " + std::to_string(line_no));
      CHECK(j.at("nfr") == (line_no % 3 == 0));
    }
    ++line_no;
    start = end + 1;
  }
  CHECK(line_no == count);

  // -o json: one array of the same objects.
  const auto array = tool(concat(flags_for(server), {"get", "-q", "-o", "json", perm_of(0), perm_of(499), perm_of(1)}));
  CHECK(array.status == 10);
  const auto j = nlohmann::json::parse(array.out);
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 3);
  CHECK(j[0].at("perm") == perm_of(0));
  CHECK(j[1].at("error").at("kind") == "not_found");
  CHECK(j[2].at("perm") == perm_of(1));

  // All found: exit 0; an empty array for nothing is not possible (no perms is a usage error).
  const auto ok = tool(concat(flags_for(server), {"get", "-q", perm_of(0), perm_of(1)}));
  CHECK(ok.status == 0);
  CHECK(tool(concat(flags_for(server), {"get"})).status == 2);

  // A perm listed twice (far apart, at any concurrency) is looked up once; each place gets its result.
  const std::size_t before = server.request_count();
  const auto twice = tool(concat(flags_for(server), {"get", "-q", "-o", "json", "--concurrency", "1", perm_of(2),
                                                     perm_of(3), perm_of(4), perm_of(2)}));
  CHECK(twice.status == 0);
  const auto rows = nlohmann::json::parse(twice.out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].at("perm") == perm_of(2));
  CHECK(rows[3].at("perm") == perm_of(2));
  CHECK(rows[3] == rows[0]);
  CHECK(server.request_count() - before == 3);
}

TEST_CASE("tool get --from: lines, stdin, a CSV column, and bad input", "[tool]") {
  MockServer server(roster_options(10));
  const studentsvc::test::TempDir dir;
  const auto flags = flags_for(server);

  // Blank lines, spaces and CRLF are tolerated.
  const auto text = dir.write("perms.txt", "1000000\r\n\n  1000001  \n1000002");
  const auto lines = tool(concat(flags, {"get", "-q", "-o", "csv", "--from", text}));
  CHECK(lines.status == 0);
  const auto lines_csv = studentsvc_cli::parse_csv(lines.out);
  REQUIRE(lines_csv);
  CHECK(lines_csv->size() == 4);

  // A CSV roster: the perm column by name, quoted fields and an embedded newline.
  const auto roster = dir.write("roster.csv",
                                "name,perm,notes\r\n\"Wei, Li\",1000003,\"line one\nline two\"\r\nAna,1000004,\r\n");
  const auto by_column = tool(concat(flags, {"get", "-q", "--from", roster, "--column", "perm"}));
  CHECK(by_column.status == 0);
  CHECK_THAT(by_column.out, Catch::StartsWith("{\"perm\":\"1000003\""));
  CHECK_THAT(by_column.out, Catch::Contains("\n{\"perm\":\"1000004\""));

  // stdin.
  std::string shell_args;
  for (const auto& f : flags) shell_args += "'" + f + "' ";
  const auto piped = studentsvc::test::run_process(
      "/bin/sh", {"-c", "printf '1000005\\n1000006\\n' | \"$0\" " + shell_args + "get -q --from - -o csv", cli});
  CHECK(piped.status == 0);
  CHECK_THAT(piped.out, Catch::Contains("\r\n1000005,"));
  CHECK_THAT(piped.out, Catch::Contains("\r\n1000006,"));

  // Bad input: one line on stderr, nothing on stdout.
  struct Case {
    Args args;
    int status;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"get", "--from", (dir.path() / "missing.txt").string()}, 3, "cannot open the file"},
      {{"get", "--from", roster, "--column", "email"}, 3, "no column 'email'"},
      {{"get", "--from", dir.write("bad.csv", "perm\n\"1000000\n")}, 0, ""},  // without --column: lines
      {{"get", "--from", dir.write("bad2.csv", "perm\n\"1000000\n"), "--column", "perm"}, 3, "malformed"},
      {{"get", "--from", dir.write("empty.txt", "\n\n")}, 3, "no perms"},
      {{"get", "1000000", "--column", "perm"}, 2, "--column needs --from"},
  };
  for (const auto& c : cases) {
    if (c.status == 0) continue;
    INFO(c.message);
    const auto r = tool(concat(flags, c.args));
    CHECK(r.status == c.status);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(c.message));
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
}

TEST_CASE("tool get --fail-fast stops sending after a 401, without it every lookup is tried", "[tool]") {
  // The credential is refused from the 101st lookup on (revoked mid-run), so the first chunk succeeds.
  MockServerOptions options = roster_options(400);
  options.intercept = [roster = options.intercept](const httplib::Request& req, httplib::Response& res) {
    if (req.path >= "/students/v2/students/1000100") {
      res.status = 401;
      res.set_content(R"({"message":"Authorization has been denied for this request."})", "application/json");
      return true;
    }
    return roster(req, res);
  };
  MockServer server(options);
  const auto flags = flags_for(server);
  const auto perms = roster_perms(400);

  const auto fast = tool(concat(concat(flags, {"get", "-o", "csv", "--concurrency", "4", "--fail-fast"}), perms));
  CHECK(fast.status == 6);  // unauthorized
  CHECK_THAT(fast.err, Catch::Contains("get: stopped by --fail-fast: unauthorized (401)"));
  // The contract, not one quiet run: every lookup before the first 401 (in input
  // order) is written, found or, when it was in flight as a 401 arrived and the
  // stop cancelled it, failed; the 401 is the last row. With 4 in flight at most
  // 3 others were under way when the first 401 came back.
  const auto counts = summary_counts(fast.err);
  REQUIRE(counts);
  CHECK(counts->looked_up == counts->found + counts->failed);
  CHECK(counts->looked_up >= 101);
  CHECK(counts->looked_up <= 100 + 4);
  CHECK(counts->found >= 100 - 3);
  CHECK(counts->found <= 100);
  CHECK(counts->failed >= 1);
  const auto sent = server.request_count();
  CHECK(sent <= 112);  // up to the chunk (4 x concurrency) that held the first 401, not 400
  const auto rows = studentsvc_cli::parse_csv(fast.out);
  REQUIRE(rows);
  REQUIRE(rows->size() == counts->looked_up + 1);  // the header, then one row per lookup written
  std::size_t found_rows = 0;
  for (std::size_t i = 1; i < rows->size(); ++i) {
    INFO("row " << i);
    CHECK(rows->at(i).at(0) == perm_of(i - 1));  // input order, no gap
    if (rows->at(i).back().empty()) {
      ++found_rows;
      CHECK(rows->at(i).at(0) < perm_of(100));  // only the perms the service still answers
    }
  }
  CHECK(found_rows == counts->found);
  CHECK_THAT(rows->back().back(), Catch::StartsWith("unauthorized (401)"));  // the row that stopped it

  const auto all = tool(concat(concat(flags, {"get", "-q", "-o", "csv", "--concurrency", "4"}), perms));
  CHECK(all.status == 10);
  // Every lookup is sent; lookups the --fail-fast run had in flight (at most 3)
  // may reach the server late and count here too.
  CHECK(server.request_count() - sent >= 400);
  CHECK(server.request_count() - sent <= 400 + 3);

  // Refused from the first lookup on: the first chunk is all 401, a configuration error, --fail-fast or not.
  auto wrong = flags;
  wrong.at(4) = "wrong-api-key";
  const auto before_wrong = server.request_count();
  const auto refused = tool(concat(concat(wrong, {"get", "-q", "--concurrency", "4"}), perms));
  CHECK(refused.status == 6);
  // The first 16 answers decide; the stream keeps 4 in flight, so up to 3 more went out meanwhile.
  CHECK(server.request_count() - before_wrong >= 16);
  CHECK(server.request_count() - before_wrong <= 16 + 3);
  CHECK_THAT(refused.err, Catch::Contains("the first 16 lookups all failed the same way, a configuration error"));

  // A batch whose configuration cannot work fails once, before anything is sent.
  // A server of its own: lookups the runs above left in flight as they exited
  // may still reach `server` late, and count there.
  MockServer quiet(roster_options(400));
  const auto unconfigured = tool(concat({"--base-url", quiet.base_url(), "--api-key", "k", "get"}, perms));
  CHECK(unconfigured.status == 3);
  CHECK(unconfigured.out.empty());
  CHECK(unconfigured.err.find('\n') == unconfigured.err.size() - 1);
  CHECK(quiet.request_count() == 0);
}

TEST_CASE("tool get draws a progress bar when stderr is a terminal, and not with --quiet", "[tool]") {
  REQUIRE(std::filesystem::exists("/usr/bin/script"));  // util-linux (bsdutils, essential on Debian)
  MockServer server(roster_options(600));
  const studentsvc::test::TempDir dir;
  const auto perms = dir.write("perms.txt", lines_of(roster_perms(600)));
  const auto csv = (dir.path() / "out.csv").string();
  std::string command = "'" + cli + "'";
  for (const auto& f : flags_for(server)) command += " '" + f + "'";
  command += " get --concurrency 4 -o csv --from '" + perms + "'";
  // script(1) runs the tool on a pseudo-terminal; stdout goes to a file, so the terminal shows only stderr.
  const auto shown = studentsvc::test::run_process("/usr/bin/script", {"-qec", command + " > '" + csv + "'", "/dev/null"});
  CHECK(shown.status == 10);  // script -e passes on the tool's status: one perm is missing
  CHECK_THAT(shown.out, Catch::Contains("\r\033[K["));                     // a redrawn line
  CHECK_THAT(shown.out, Catch::Contains("] 600/600  100%  "));             // done/total and percent
  CHECK_THAT(shown.out, Catch::Matches("(.|\\s)*/s  ETA [0-9hms?]+  1 failed(.|\\s)*"));  // rate, ETA, failures
  CHECK_THAT(shown.out, Catch::Contains("studentsvc: get: 600 looked up, 599 found, 1 failed in "));
  const auto rows = studentsvc_cli::parse_csv(studentsvc::test::run_process("/bin/cat", {csv}).out);
  REQUIRE(rows);
  CHECK(rows->size() == 601);  // the bar never reaches stdout

  const auto quiet = studentsvc::test::run_process("/usr/bin/script", {"-qec", command + " --quiet > /dev/null", "/dev/null"});
  CHECK(quiet.out.empty());
}

TEST_CASE("tool get with a wrong base URL path stops after the first chunk with one configuration error", "[tool]") {
  MockServer server(behind_a_web_server());
  auto flags = flags_for(server);
  flags.at(1) = server.base_url() + "/wrong";
  const auto perms = roster_perms(300);

  const auto r = tool(concat(concat(flags, {"get", "-o", "csv", "--concurrency", "4"}), perms));
  CHECK(r.status == 8);  // http_status: not 300 "not found" rows and exit 10
  // The first 16 answers decide (up to 3 more were in flight then), not 300 lookups.
  CHECK(server.request_count() >= 16);
  CHECK(server.request_count() <= 16 + 3);
  CHECK_THAT(r.err, Catch::Contains("get: stopped: the first 16 lookups all failed the same way, a configuration error"));
  CHECK_THAT(r.err, Catch::Contains("check the base URL and its path prefix (base URL " + server.base_url() + "/wrong)"));
  CHECK_THAT(r.err, Catch::Contains("16 looked up, 0 found, 16 failed"));
  CHECK(r.out.find("not_found") == std::string::npos);

  const auto before = server.request_count();
  const auto fast = tool(concat(concat(flags, {"get", "-q", "--concurrency", "1", "--fail-fast"}), perms));
  CHECK(fast.status == 8);
  CHECK(server.request_count() - before <= 4);  // the first chunk at most, stopped at its first result
  CHECK_THAT(fast.err, Catch::StartsWith("studentsvc: get: stopped by --fail-fast: http_status (404): endpoint not found"));

  // One perm: the same hint, with the base URL.
  const auto one = tool(concat(flags, {"get", "1234567"}));
  CHECK(one.status == 8);
  CHECK_THAT(one.err, Catch::Contains("(base URL " + server.base_url() + "/wrong)"));

  // A batch where only some lookups fail that way is not stopped (the first chunk is not all errors).
  const auto right = tool(concat(flags_for(server), {"get", "-q", "1234567", "7654321"}));
  CHECK(right.status == 10);
}

TEST_CASE("tool get stops at a host that does not resolve and at a failed TLS handshake, as at a 401", "[tool]") {
  // Each lookup fails alike (after its retries, the tool's default): every
  // further lookup would repeat it. --fail-fast stops at the first row; without
  // it the first chunk (4 x --concurrency answers) decides. Not 100 rows and exit 10.
  const studentsvc::test::PlainHttpListener listener;
  struct Target {
    std::string name;
    std::string base_url;
    std::string message;
  };
  // An index: the generator outlives this run, the listener (and its port) does not.
  const std::vector<Target> targets{{"no such host", "https://no-such-host.invalid", "transport: DNS lookup failed: "},
                                    {"https:// to plain HTTP", listener.https_url(), "transport: TLS handshake failed: "}};
  const Target& t = targets.at(GENERATE(0U, 1U));
  CAPTURE(t.name);
  const auto perms = roster_perms(100);
  const Args flags{"--base-url", t.base_url, "--api-key", "k"};

  const auto fast = tool(concat(concat(flags, {"get", "-o", "csv", "--concurrency", "2", "--fail-fast"}), perms));
  CHECK(fast.status == 4);  // transport
  CHECK_THAT(fast.err, Catch::Contains("get: stopped by --fail-fast: " + t.message));
  const auto fast_counts = summary_counts(fast.err);
  REQUIRE(fast_counts);
  CHECK(fast_counts->looked_up == 1);  // in input order the first row already stops it
  CHECK(fast_counts->failed == 1);
  const auto fast_rows = studentsvc_cli::parse_csv(fast.out);
  REQUIRE(fast_rows);
  REQUIRE(fast_rows->size() == 2);  // the header and that row
  CHECK(fast_rows->at(1).at(0) == perm_of(0));
  CHECK_THAT(fast_rows->at(1).back(), Catch::StartsWith(t.message));
  const int after_fast = listener.connections();
  if (t.base_url == listener.https_url()) CHECK(after_fast <= 2 * 3);  // 2 in flight, 3 attempts each

  const auto chunk = tool(concat(concat(flags, {"get", "-o", "csv", "--concurrency", "2"}), perms));
  CHECK(chunk.status == 4);
  CHECK_THAT(chunk.err, Catch::Contains("get: stopped: the first 8 lookups all failed the same way, a configuration "
                                        "error: " + t.message));
  const auto counts = summary_counts(chunk.err);
  REQUIRE(counts);
  CHECK(counts->looked_up == 8);
  CHECK(counts->failed == 8);
  const auto rows = studentsvc_cli::parse_csv(chunk.out);
  REQUIRE(rows);
  CHECK(rows->size() == 8 + 1);
  // The 8 answers and the one still in flight then, 3 attempts each: not 100 lookups.
  if (t.base_url == listener.https_url()) CHECK(listener.connections() - after_fast <= 9 * 3);
}

TEST_CASE("tool get: a slow first lookup does not let more be sent before the first answers decide", "[tool]") {
  // The first perm's answer comes late; the first 16 answers to arrive (all the
  // web server's 404) decide, not the first 16 in input order.
  MockServer server(behind_a_web_server("/wrong/students/v2/students/" + perm_of(0)));
  auto flags = flags_for(server);
  flags.at(1) = server.base_url() + "/wrong";
  const auto r = tool(concat(concat(flags, {"get", "-o", "ndjson", "--concurrency", "4"}), roster_perms(300)));
  CHECK(r.status == 8);
  CHECK(server.request_count() >= 16);
  CHECK(server.request_count() <= 16 + 3);
  CHECK_THAT(r.err, Catch::Contains("get: stopped: the first 16 lookups all failed the same way, a configuration error"));
  // The answers already in are written, in input order; the slow first one was cancelled, so not among them.
  std::size_t rows = 0;
  std::string last;
  for (std::size_t start = 0; start < r.out.size();) {
    const auto end = r.out.find('\n', start);
    REQUIRE(end != std::string::npos);
    const auto perm = nlohmann::json::parse(r.out.substr(start, end - start)).at("perm").get<std::string>();
    CHECK(perm > last);  // ascending: perm_of is increasing in the index
    last = perm;
    ++rows;
    start = end + 1;
  }
  CHECK(rows >= 16);
  CHECK(rows <= 16 + 3);
}

TEST_CASE("tool get --stats prints the run's attempt metrics on stderr, and nothing of the students", "[tool]") {
  constexpr std::size_t count = 600;
  MockServer server(roster_options(count));
  const auto perms = roster_perms(count);
  const auto r = tool(concat(concat(flags_for(server), {"get", "-o", "csv", "--stats", "--quiet"}), perms));
  CHECK(r.status == 10);  // perm_of(499) is not found
  CHECK_THAT(r.err, Catch::Contains("# TYPE studentsvc_attempts_total counter\n"));
  CHECK_THAT(r.err, Catch::Contains("studentsvc_attempts_total{operation=\"get_student\",outcome=\"ok\"} 599\n"));
  CHECK_THAT(r.err,
             Catch::Contains("studentsvc_attempts_total{operation=\"get_student\",outcome=\"not_found\"} 1\n"));
  CHECK_THAT(r.err, Catch::Contains("studentsvc_attempt_seconds_count{operation=\"get_student\"} 600\n"));
  CHECK_THAT(r.err, Catch::Contains("studentsvc_attempt_seconds_bucket{operation=\"get_student\",le=\"+Inf\"} 600\n"));
  CHECK(r.err.find("looked up") == std::string::npos);  // --quiet still leaves out the summary line
  for (const auto& perm : perms) {
    if (r.err.find(perm) != std::string::npos) FAIL("perm " << perm << " in the stats");
  }
  const auto o = server.client_options();
  CHECK(r.err.find(o.auth.api_key.reveal()) == std::string::npos);
  CHECK(r.err.find("mock-password") == std::string::npos);
  const auto rows = studentsvc_cli::parse_csv(r.out);
  REQUIRE(rows);
  CHECK(rows->size() == count + 1);  // stdout is the data only

  // Without --stats, no metrics; with it, a single lookup has them too.
  const auto plain = tool(concat(flags_for(server), {"get", perm_of(0), perm_of(1)}));
  CHECK(plain.status == 0);
  CHECK(plain.err.find("studentsvc_attempts_total") == std::string::npos);
  const auto one = tool(concat(flags_for(server), {"--stats", "get", perm_of(0)}));
  CHECK(one.status == 0);
  CHECK_THAT(one.err, Catch::Contains("studentsvc_attempts_total{operation=\"get_student\",outcome=\"ok\"} 1\n"));
}

TEST_CASE("tool get --failed-to writes the perms worth retrying, and --from re-runs just those", "[tool]") {
  // Perms 1000000..1000029: every 5th answers 503, every 7th 429 (no retries), perm_of(499) is not in the roster.
  MockServerOptions options = roster_options(30);
  auto healthy = std::make_shared<std::atomic<bool>>(false);
  options.intercept = [roster = options.intercept, healthy](const httplib::Request& req, httplib::Response& res) {
    const std::string prefix = "/students/v2/students/10000";
    if (!*healthy && req.path.starts_with(prefix)) {
      const int i = std::stoi(req.path.substr(prefix.size()));
      if (i % 5 == 4) {
        res.status = 503;
        res.set_content(R"({"message":"Service Unavailable"})", "application/json");
        return true;
      }
      if (i % 7 == 6) {
        res.status = 429;
        res.set_content(R"({"message":"Too Many Requests"})", "application/json");
        return true;
      }
    }
    return roster(req, res);
  };
  MockServer server(options);
  const studentsvc::test::TempDir dir;
  auto perms = roster_perms(30);
  perms.push_back(perm_of(499));  // 404: not worth retrying
  const auto failed = (dir.path() / "failed.txt").string();
  const auto r = tool(concat(concat(flags_for(server), {"get", "-q", "-o", "csv", "--failed-to", failed}), perms));
  CHECK(r.status == 10);
  const auto list = studentsvc::test::run_process("/bin/cat", {failed}).out;
  std::string expected;
  for (int i = 0; i < 30; ++i) {
    if (i % 5 == 4 || i % 7 == 6) expected += perm_of(static_cast<std::size_t>(i)) + "\n";
  }
  CHECK(list == expected);  // in input order, one a line, not the 404

  // The nightly re-run: just those, now answered.
  healthy->store(true);
  const auto again = tool(concat(flags_for(server), {"get", "-q", "-o", "csv", "--from", failed, "--failed-to", failed}));
  CHECK(again.status == 0);
  const auto rows = studentsvc_cli::parse_csv(again.out);
  REQUIRE(rows);
  CHECK(rows->size() == 1 + 10);  // 4, 9, 14, 19, 24, 29 (503) and 6, 13, 20, 27 (429)
  CHECK(studentsvc::test::run_process("/bin/cat", {failed}).out.empty());  // written, empty: none left

  // A file that cannot be written: one line, exit 3, nothing sent.
  const auto before = server.request_count();
  const auto bad = tool(concat(flags_for(server), {"get", perm_of(0), perm_of(1), "--failed-to", "/nonexistent/dir/f.txt"}));
  CHECK(bad.status == 3);
  CHECK_THAT(bad.err, Catch::Contains("--failed-to /nonexistent/dir/f.txt: cannot write the file"));
  CHECK(server.request_count() == before);
}

TEST_CASE("tool get --concurrency 100 has 100 lookups in flight at once, not 64", "[tool]") {
  // Each answer is held until 100 requests are in at once (or 30 s pass), so
  // the peak is what the tool really keeps in flight.
  constexpr int wanted = 100;
  std::mutex mutex;
  std::condition_variable all_in;
  int in_flight = 0;
  int peak = 0;
  studentsvc::test::RawServer server([&](int fd, int) {
    for (;;) {
      const auto head = studentsvc::test::RawServer::read_request(fd, std::chrono::milliseconds(30000));
      if (head.empty()) return;
      {
        std::unique_lock lock(mutex);
        peak = std::max(peak, ++in_flight);
        all_in.notify_all();
        all_in.wait_for(lock, std::chrono::seconds(30), [&] { return peak >= wanted; });
        --in_flight;
      }
      if (!studentsvc::test::RawServer::write_all(
              fd, studentsvc::test::RawServer::response(404, R"({"message":"Student not found."})"))) {
        return;
      }
    }
  });
  const auto perms = roster_perms(static_cast<std::size_t>(wanted));
  const auto r = tool(concat(concat({"--base-url", "http://127.0.0.1:" + std::to_string(server.port()), "--insecure-loopback",
                                     "--api-key", "k", "--retries", "0", "--timeout", "60000"},
                                    {"get", "-q", "-o", "csv", "--concurrency", std::to_string(wanted)}),
                             perms));
  server.stop();
  CHECK(r.status == 10);  // every perm "not found"
  CHECK(peak == wanted);
  const auto rows = studentsvc_cli::parse_csv(r.out);
  REQUIRE(rows);
  CHECK(rows->size() == static_cast<std::size_t>(wanted) + 1);
}

}  // namespace tool_roster_test

namespace tool_roster_test {

namespace {

std::vector<std::string> lines_in(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

/// The "perm" of each ndjson line of `out`.
std::vector<std::string> perms_written(const std::string& out) {
  std::vector<std::string> perms;
  std::size_t start = 0;
  for (auto end = out.find('\n'); end != std::string::npos; start = end + 1, end = out.find('\n', start)) {
    perms.push_back(nlohmann::json::parse(out.substr(start, end - start)).at("perm").get<std::string>());
  }
  return perms;
}

Args with_api_key(Args flags, const std::string& key) {
  for (std::size_t i = 0; i + 1 < flags.size(); ++i) {
    if (flags[i] == "--api-key") flags[i + 1] = key;
  }
  return flags;
}

}  // namespace

TEST_CASE("tool get --failed-to keeps every perm not looked up, and may name its own input", "[tool]") {
  MockServer server(roster_options(200));
  const studentsvc::test::TempDir dir;
  const auto perms = roster_perms(200);

  // A refused key: the first chunk fails with 401, the rest is not sent; all 200 are there to re-run.
  const auto retry = dir.write("retry.txt", lines_of(perms));
  const auto refused = tool(concat(with_api_key(flags_for(server), "wrong-key"),
                                   {"get", "--from", retry, "--failed-to", retry, "-q"}));
  CHECK(refused.status == 6);
  CHECK(sorted(lines_in(retry)) == perms);  // before: 200 lines became 0

  // An untrusted CA: the first chunk fails the certificate check, the rest is not sent.
  const studentsvc::test::TestPki pki;
  MockServer tls(roster_options(200), pki.server_cert.string(), pki.server_key.string());
  Args tls_flags = flags_for(tls);
  tls_flags[1] = tls.base_url();
  const auto retry_tls = dir.write("retry-tls.txt", lines_of(perms));
  // Four at a time: 16 TLS handshakes at once against an ASan-built mock on a
  // loaded machine can time out, which is not the certificate error checked here.
  const auto untrusted =
      tool(concat(tls_flags, {"get", "--from", retry_tls, "--failed-to", retry_tls, "-q", "--concurrency", "4"}));
  CHECK(untrusted.status == 4);
  CHECK(sorted(lines_in(retry_tls)) == perms);  // before: 64 of 200
  CHECK(tls.request_count() == 0);

  // Once fixed, the file re-runs; what is found leaves it, the input itself rewritten (renamed over).
  const auto again = tool(concat(flags_for(server), {"get", "--from", retry, "--failed-to", retry, "-q"}));
  CHECK(again.status == 0);
  CHECK(sorted(perms_written(again.out)) == perms);
  CHECK(lines_in(retry).empty());
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()) == 2);
}

TEST_CASE("tool get --failed-to is complete when the reader goes away (EPIPE) and on SIGINT", "[tool]") {
  // Perm i, i % 500 == 499, is not in the roster: a 404, written in place, never worth retrying.
  MockServerOptions options = roster_options(2000);
  options.latency = std::chrono::milliseconds(5);
  MockServer server(options);
  const studentsvc::test::TempDir dir;
  const auto perms = roster_perms(2000);
  const auto many = dir.write("many.txt", lines_of(perms));

  SECTION("| head -c1: the reader goes away") {
    const auto failed = (dir.path() / "f.txt").string();
    studentsvc::test::ProcessControl control;
    control.on_output = [](pid_t, const studentsvc::test::ProcessResult& r) { return r.out.empty(); };
    const auto r = studentsvc::test::run_process(
        cli, concat(flags_for(server), {"get", "--from", many, "--failed-to", failed, "-q"}), {}, control);
    CHECK(r.status == 1);  // a write error, not death by SIGPIPE (141)
    CHECK(r.err == "studentsvc: could not write the output\n");
    // Every perm from the one whose record could not be written on is listed.
    const auto listed = sorted(lines_in(failed));
    REQUIRE_FALSE(listed.empty());
    const auto from = std::find(perms.begin(), perms.end(), listed.front());
    REQUIRE(from != perms.end());
    CHECK(listed == std::vector<std::string>(from, perms.end()));  // a 404 not written is listed too: not looked up
  }

  SECTION("Ctrl-C: the batch stops, the file is still written") {
    const auto failed = (dir.path() / "g.txt").string();
    studentsvc::test::ProcessControl control;
    bool sent = false;
    control.on_output = [&](pid_t pid, const studentsvc::test::ProcessResult& r) {
      if (!sent && r.out.size() > 1000) {
        ::kill(pid, SIGINT);
        sent = true;
      }
      return true;
    };
    const auto r = studentsvc::test::run_process(
        cli, concat(flags_for(server), {"get", "--from", many, "--failed-to", failed, "-q"}), {}, control);
    REQUIRE(sent);
    CHECK(r.status == 130);
    CHECK_THAT(r.err, Catch::Contains("get: interrupted by SIGINT; the perms not looked up are in " + failed));
    // Each perm is written (found, or its 404 row) or listed, never both, never neither.
    const auto written = perms_written(r.out);
    const auto listed = lines_in(failed);
    CHECK(written.size() < perms.size());
    auto all = written;
    all.insert(all.end(), listed.begin(), listed.end());
    CHECK(sorted(all) == perms);
  }
}

namespace {

/// How many entries `dir` holds: a FILE.XXXXXX left behind by --failed-to shows here.
std::size_t entries_in(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(
      std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
}

}  // namespace

TEST_CASE("tool get --fail-fast --failed-to lists every perm not looked up, and SIGTERM stops a batch as SIGINT does",
          "[tool]") {
  const studentsvc::test::TempDir dir;
  const auto perms = roster_perms(200);
  const auto many = dir.write("many.txt", lines_of(perms));

  SECTION("--fail-fast after a 401: the failed and the never sent are all listed") {
    MockServer server(roster_options(200));
    const auto failed = (dir.path() / "f.txt").string();
    const auto r = tool(concat(with_api_key(flags_for(server), "wrong-key"),
                               {"get", "--from", many, "--fail-fast", "--failed-to", failed, "-q", "--concurrency", "4"}));
    CHECK(r.status == 6);  // the 401's own status
    CHECK_THAT(r.err, Catch::Contains("stopped by --fail-fast"));
    CHECK(server.request_count() < perms.size());  // it did stop sending
    CHECK(sorted(lines_in(failed)) == perms);
    CHECK(entries_in(dir.path()) == 2);  // many.txt and f.txt: no temporary file left
  }

  SECTION("SIGTERM: the batch stops, the file is still written, exit 143") {
    MockServerOptions options = roster_options(2000);
    options.latency = std::chrono::milliseconds(5);
    MockServer server(options);
    const auto long_list = dir.write("long.txt", lines_of(roster_perms(2000)));
    const auto failed = (dir.path() / "t.txt").string();
    studentsvc::test::ProcessControl control;
    bool sent = false;
    control.on_output = [&](pid_t pid, const studentsvc::test::ProcessResult& r) {
      if (!sent && r.out.size() > 1000) {
        ::kill(pid, SIGTERM);
        sent = true;
      }
      return true;
    };
    const auto r = studentsvc::test::run_process(
        cli, concat(flags_for(server), {"get", "--from", long_list, "--failed-to", failed, "-q"}), {}, control);
    REQUIRE(sent);
    CHECK(r.status == 143);
    CHECK_THAT(r.err, Catch::Contains("get: interrupted by SIGTERM; the perms not looked up are in " + failed));
    const auto written = perms_written(r.out);
    const auto listed = lines_in(failed);
    CHECK(written.size() < 2000);
    auto all = written;
    all.insert(all.end(), listed.begin(), listed.end());
    CHECK(sorted(all) == roster_perms(2000));
    CHECK(entries_in(dir.path()) == 3);  // many.txt, long.txt, t.txt
  }
}

TEST_CASE("tool get of one perm with --failed-to: SIGINT and SIGTERM cancel it, the file lists it, none left behind",
          "[tool]") {
  // The server holds the request until the tool hangs up: the lookup is in
  // flight when the signal comes. Before, the one-perm path had no handler:
  // the tool died, leaving f.txt.XXXXXX and no f.txt.
  studentsvc::test::RawServer server([](int fd, int) {
    if (studentsvc::test::RawServer::read_request(fd, std::chrono::milliseconds(30000)).empty()) return;
    char byte = 0;
    pollfd p{fd, POLLIN, 0};
    for (int i = 0; i < 300 && ::poll(&p, 1, 100) == 0; ++i) {
    }
    (void)!::recv(fd, &byte, 1, 0);  // the peer hung up (or 30 s passed)
  });
  const Args flags{"--base-url", server.base_url(), "--insecure-loopback", "--api-key", "k", "--retries", "0",
                   "--timeout", "60000"};
  for (const int signal : {SIGINT, SIGTERM}) {
    INFO("signal " << signal);
    const studentsvc::test::TempDir dir;
    const auto failed = (dir.path() / "f.txt").string();
    studentsvc::test::ProcessControl control;
    bool sent = false;
    control.on_output = [&](pid_t pid, const studentsvc::test::ProcessResult& r) {
      // -v -v logs the request's (redacted) headers as it is made: the handler is in place by then.
      if (!sent && r.err.find("headers:") != std::string::npos) {
        ::kill(pid, signal);
        sent = true;
      }
      return true;
    };
    const auto r = studentsvc::test::run_process(
        cli, concat(flags, {"-v", "-v", "get", "1234567", "--failed-to", failed}), {}, control);
    REQUIRE(sent);
    CHECK(r.status == 128 + signal);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains(std::string("get: interrupted by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") +
                                      "; the perms not looked up are in " + failed));
    CHECK(lines_in(failed) == std::vector<std::string>{"1234567"});
    CHECK(entries_in(dir.path()) == 1);  // f.txt only: no f.txt.XXXXXX left
  }
}

TEST_CASE("tool get --from streams its input: lookups start before it ends, a line is bounded", "[tool]") {
  MockServer server(roster_options(10));
  const studentsvc::test::TempDir dir;

  // A FIFO: the second perm is written only once the first one was sent (the whole list was read first before).
  const auto fifo = (dir.path() / "perms.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  bool sent_before_the_end = false;
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);  // waits for the tool to open it
    const std::string first = perm_of(0) + "\n";
    const std::string second = perm_of(1) + "\n";
    (void)!::write(fd, first.data(), first.size());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (server.request_count() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    sent_before_the_end = server.request_count() > 0;
    (void)!::write(fd, second.data(), second.size());
    ::close(fd);
  });
  const auto streamed = tool(concat(flags_for(server), {"get", "--from", fifo, "-q"}));
  writer.join();
  CHECK(sent_before_the_end);
  CHECK(streamed.status == 0);
  CHECK(perms_written(streamed.out) == std::vector<std::string>{perm_of(0), perm_of(1)});

  // A line longer than 64 KiB is not a perm list: refused with its number, before anything is sent.
  const auto before = server.request_count();
  const auto huge = dir.write("huge.txt", perm_of(0) + "\n" + std::string(100'000, '7') + "\n");
  const auto refused = tool(concat(flags_for(server), {"get", "--from", huge}));
  CHECK(refused.status == 3);
  CHECK(refused.err == "studentsvc: get: --from " + huge + ": line 2 is longer than 65536 bytes: not a perm list or CSV\n");
  CHECK(server.request_count() == before);
  // On stdin, found mid-way: the perms before it are looked up, then the error, exit 3.
  studentsvc::test::ProcessControl control;
  control.stdin_pipe = true;
  control.input = perm_of(2) + "\n" + std::string(100'000, '7') + "\n" + perm_of(3) + "\n";
  const auto piped = studentsvc::test::run_process(cli, concat(flags_for(server), {"get", "--from", "-", "-q"}), {},
                                                   control);
  CHECK(piped.status == 3);
  CHECK(perms_written(piped.out) == std::vector<std::string>{perm_of(2)});
  CHECK_THAT(piped.err, Catch::Contains("--from -: line 2 is longer than 65536 bytes"));

  // A directory says so; a BOM (Excel's "CSV UTF-8") is skipped.
  const auto folder = tool(concat(flags_for(server), {"get", "--from", dir.path().string()}));
  CHECK(folder.status == 3);
  CHECK_THAT(folder.err, Catch::Contains("is a directory"));
  const auto bom = dir.write("bom.csv", "\xEF\xBB\xBFperm,name\r\n" + perm_of(4) + ",Zoë\r\n");
  const auto excel = tool(concat(flags_for(server), {"get", "--from", bom, "--column", "perm", "-q"}));
  CHECK(excel.status == 0);
  CHECK(perms_written(excel.out) == std::vector<std::string>{perm_of(4)});
}

}  // namespace tool_roster_test

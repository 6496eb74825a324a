// The studentsvc tool's commands run in-process, as the GitHub CLI tests its
// pkg/cmd/<command>/: each command's run function with string streams for its
// output and errors, against a MockServer; run_cli() for what main() does
// before a command (a usage error, a write error). The end-to-end runs of the
// binary are in cli_test.cpp and tool_*_test.cpp.

#include <catch2/catch.hpp>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>
#include <studentsvc/version.hpp>

#include "cli.hpp"
#include "cmd/config/config.hpp"
#include "cmd/get/get.hpp"
#include "cmd/version/version.hpp"
#include "commands.hpp"
#include "config_sources.hpp"
#include "exit_status.hpp"
#include "io_streams.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace tool_commands_test {

using namespace studentsvc_cli;

namespace {

/// The tool's command line, argv[0] first.
Args parse(std::vector<const char*> words) {
  words.insert(words.begin(), "studentsvc");
  return parse_args(static_cast<int>(words.size()), words.data());
}

int run(std::vector<const char*> words, IoStreams io) {
  words.insert(words.begin(), "studentsvc");
  return run_cli(static_cast<int>(words.size()), words.data(), io);
}

}  // namespace

TEST_CASE("tool in-process: version writes to the stream it is given", "[tool][in_process]") {
  std::ostringstream out;
  std::ostringstream err;
  const Args a = parse({"version"});
  Session s(a, IoStreams{out, err});
  CHECK(run_version(s) == exit_ok);
  CHECK(out.str() == "studentsvc " + std::string(studentsvc::version) + " (" + std::string(studentsvc::user_agent) + ")\n");
  CHECK(err.str().empty());
}

TEST_CASE("tool in-process: config against a MockServer masks secrets and checks the settings", "[tool][in_process]") {
  studentsvc::testing::MockServer mock;
  REQUIRE(mock.running());
  std::ostringstream out;
  std::ostringstream err;
  const Args a = parse({"config"});
  REQUIRE_FALSE(a.first_error);
  const ConfigSources sources(a, mock.client_options());
  Session s(a, IoStreams{out, err});
  s.sources = &sources;
  CHECK(run_config(s) == exit_ok);
  const std::string text = out.str();
  CHECK_THAT(text, Catch::StartsWith("SETTING"));
  CHECK_THAT(text, Catch::Contains(mock.client_options().base_url));
  CHECK_THAT(text, Catch::Contains("the mock server"));
  CHECK_THAT(text, Catch::Contains("****"));
  CHECK(text.find(std::string(mock.client_options().auth.api_key.reveal())) == std::string::npos);
  CHECK_THAT(text, Catch::EndsWith("check: ok\n"));
  CHECK(err.str().empty());
}

TEST_CASE("tool in-process: get against a MockServer, one record and a batch", "[tool][in_process]") {
  studentsvc::testing::MockServer mock;
  REQUIRE(mock.running());
  auto client = studentsvc::Client::create(mock.client_options());
  REQUIRE(client);

  SECTION("one perm: the record as JSON, nothing on stderr") {
    std::ostringstream out;
    std::ostringstream err;
    const Args a = parse({"get", "1234567"});
    REQUIRE_FALSE(a.first_error);
    Session s(a, IoStreams{out, err});
    REQUIRE_FALSE(prepare_get(s));
    s.client = &*client;
    CHECK(run_get(s) == exit_ok);
    const auto j = nlohmann::json::parse(out.str());
    CHECK(j.at("perm") == "1234567");
    CHECK(j.at("firstName") == "Ana");
    CHECK(err.str().empty());
  }

  SECTION("a batch with an unknown perm: ndjson in input order, exit 10, the summary on stderr") {
    std::ostringstream out;
    std::ostringstream err;
    const Args a = parse({"get", "1234567", "7654321", "2345678"});
    Session s(a, IoStreams{out, err});
    REQUIRE_FALSE(prepare_get(s));
    s.client = &*client;
    CHECK(run_get(s) == exit_some_failed);
    std::istringstream lines(out.str());
    std::vector<nlohmann::json> records;
    for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
    REQUIRE(records.size() == 3);
    CHECK(records[0].at("perm") == "1234567");
    CHECK(records[1].at("perm") == "7654321");
    CHECK(records[1].at("error").at("kind") == "not_found");
    CHECK(records[2].at("perm") == "2345678");
    CHECK_THAT(err.str(), Catch::StartsWith("studentsvc: get: 3 looked up, 2 found, 1 failed"));
  }

  SECTION("a write error on the output stream stops a batch: exit 1") {
    std::ostringstream out;
    std::ostringstream err;
    out.setstate(std::ios::badbit);
    const Args a = parse({"get", "1234567", "2345678", "-q"});
    Session s(a, IoStreams{out, err});
    REQUIRE_FALSE(prepare_get(s));
    s.client = &*client;
    CHECK(run_get(s) == exit_internal);
  }
}

TEST_CASE("tool in-process: run_cli reports a usage error and a write error once", "[tool][in_process]") {
  std::ostringstream out;
  std::ostringstream err;
  CHECK(run({"get"}, IoStreams{out, err}) == exit_usage);
  CHECK(out.str().empty());
  CHECK(err.str() == "studentsvc: get takes at least one PERM (or --from FILE) (see 'studentsvc --help')\n");

  std::ostringstream unknown_out;
  std::ostringstream unknown_err;
  CHECK(run({"--bogus", "version"}, IoStreams{unknown_out, unknown_err}) == exit_ok);  // version always answers
  CHECK(run({"frobnicate"}, IoStreams{unknown_out, unknown_err}) == exit_usage);
  CHECK_THAT(unknown_err.str(), Catch::Contains("unknown command"));

  std::ostringstream help;
  std::ostringstream help_err;
  CHECK(run({"help", "get"}, IoStreams{help, help_err}) == exit_ok);
  CHECK_THAT(help.str(), Catch::StartsWith("Usage: studentsvc [OPTIONS] get PERM..."));
  CHECK(help_err.str().empty());

  std::ostringstream closed;
  std::ostringstream closed_err;
  closed.setstate(std::ios::badbit);
  CHECK(run({"version"}, IoStreams{closed, closed_err}) == exit_internal);
  CHECK(closed_err.str() == "studentsvc: could not write the output\n");
}

}  // namespace tool_commands_test

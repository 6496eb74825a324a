// `studentsvc doctor` against real failures started on 127.0.0.1: the mock over
// HTTPS (every check passes), a wrong API key, an unapproved Basic account, a
// refused API version, untrusted / wrong-host / expired certificates, a plain
// web server's HTML 404, a closed port, a CONNECT proxy that refuses (407) and
// one that tunnels, and a host that does not resolve (in a network namespace
// of its own: nothing leaves the machine). Each output is checked for secrets.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <studentsvc/auth.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "cmd/doctor/probe.hpp"
#include "cmd/doctor/report.hpp"
#include "support/cert_maker.hpp"
#include "support/connect_proxy.hpp"
#include "support/process.hpp"
#include "support/test_pki.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace tool_doctor_test {

namespace {

using studentsvc::testing::MockServer;
using studentsvc::testing::MockServerOptions;
using Args = studentsvc::test::Args;
using studentsvc::test::ProcessResult;

const std::string cli = STUDENTSVC_CLI_PATH;

/// The canaries: every secret doctor is given, and a perm that must show masked only.
const std::string api_key = "mock-api-key";
const std::string svc_key = "mock-svc-api-key";
const std::string password = "mock-password";
const std::string jwt = "mock-jwt-ana";
const std::string proxy_password = "Pr0xyCanary";

/// Fails the test when any secret, the Basic value or a student field is in `text`.
void check_clean(const std::string& text, bool perm_shown = false) {
  std::vector<std::string> secrets = {api_key, svc_key, password, jwt, proxy_password};
  const std::string basic = studentsvc::basic_authorization_value({"svc-registrar-app", studentsvc::Secret(password)});
  secrets.push_back(basic.substr(basic.find(' ') + 1));
  for (const auto& s : secrets) {
    INFO("secret " << s);
    CHECK(text.find(s) == std::string::npos);
  }
  const auto ana = MockServerOptions::default_students().at("1234567");
  for (const char* field : {"firstName", "lastName", "email", "birthDate"}) {
    if (!ana.contains(field) || !ana[field].is_string()) continue;
    const auto value = ana[field].get<std::string>();
    INFO("student field " << field);
    if (value.size() >= 3) CHECK(text.find(value) == std::string::npos);
  }
  if (!perm_shown) CHECK(text.find("1234567") == std::string::npos);
}

Args flags(const std::string& base_url, const std::string& ca_bundle = "") {
  Args a = {"--base-url", base_url, "--api-key", api_key, "--svc-api-key", svc_key, "--network-id", "svc-registrar-app",
            "--password", password, "--retries", "0", "--timeout", "20000"};
  if (!ca_bundle.empty()) {
    a.push_back("--ca-bundle");
    a.push_back(ca_bundle);
  }
  if (base_url.starts_with("http://")) a.push_back("--insecure-loopback");
  return a;
}

Args concat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

ProcessResult doctor(const Args& args, const studentsvc::test::Env& env = {}) {
  auto r = studentsvc::test::run_process(cli, concat({"doctor"}, args), env);  // common options may follow the command
  check_clean(r.out);
  check_clean(r.err);
  return r;
}

nlohmann::json doctor_json(const Args& args, int expected_status, const studentsvc::test::Env& env = {}) {
  const auto r = doctor(concat(args, {"--json"}), env);
  CHECK(r.status == expected_status);
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  REQUIRE(j.at("exit_status") == expected_status);
  return j;
}

/// The check named `name` of a --json output.
nlohmann::json check_of(const nlohmann::json& j, const std::string& name) {
  for (const auto& c : j.at("checks")) {
    if (c.at("name") == name) return c;
  }
  FAIL("no check " << name << " in " << j.dump());
  return {};
}

/// The line of the text output that starts with `mark name`.
std::string line_of(const std::string& out, const std::string& mark, const std::string& name) {
  const auto at = out.find(mark + " " + name + " ");
  if (at == std::string::npos) return {};
  return out.substr(at, out.find('\n', at) - at);
}

/// The PKI, with a certificate valid for a year (no expiry warning) and an expired one.
struct Pki {
  studentsvc::test::TestPki pki;
  studentsvc::test::IssuedCert good = studentsvc::test::issue_certificate(pki, "year", 400);
  studentsvc::test::IssuedCert expired = studentsvc::test::issue_expired_certificate(pki);
};

}  // namespace

TEST_CASE("doctor against the mock over HTTPS: every check passes, in order, with times", "[tool][doctor]") {
  Pki p;
  MockServer server(MockServerOptions{}, p.good.cert.string(), p.good.key.string());
  REQUIRE(server.running());
  const auto base = flags(server.base_url(), p.pki.ca_cert.string());

  const auto r = doctor(concat(base, {"--perm", "1234567", "--jwt", jwt}));
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  std::size_t last = 0;
  for (const char* name : {"configuration", "base_url", "dns", "connect", "tls", "base_path", "api_key",
                           "student_credentials", "api_version", "lookup", "total"}) {
    INFO(name);
    const auto at = r.out.find("\u2713 " + std::string(name) + " ");
    REQUIRE(at != std::string::npos);
    CHECK(at >= last);  // in order
    last = at;
  }
  CHECK(r.out.find("\u2717") == std::string::npos);
  CHECK_THAT(r.out, Catch::Contains(" ms  "));
  // Configuration: where each setting came from, secrets as set / not set only.
  CHECK_THAT(r.out, Catch::Contains("STUDENTSVC_API_KEY = set  (from --api-key)"));
  CHECK_THAT(r.out, Catch::Contains("STUDENTSVC_API_VERSION = not set  (from default)"));
  // TLS: protocol, ALPN, the certificate and the CA bundle that verified it.
  const auto tls = line_of(r.out, "\u2713", "tls");
  CHECK_THAT(tls, Catch::Contains("TLSv1."));
  CHECK_THAT(tls, Catch::Contains("ALPN http/1.1"));
  CHECK_THAT(tls, Catch::Contains("subject CN = localhost") || Catch::Contains("subject CN=localhost"));
  CHECK_THAT(tls, Catch::Contains("studentsvc test CA"));
  CHECK_THAT(tls, Catch::Contains("expires in 399 days") || Catch::Contains("expires in 400 days"));  // 400 days from now
  CHECK_THAT(tls, Catch::Contains("verified by the CA bundle " + p.pki.ca_cert.string()));
  // The lookup: found, the perm masked, no field of the record.
  CHECK_THAT(line_of(r.out, "\u2713", "lookup"), Catch::Contains("perm 12345** with the user JWT: found (200)"));
  CHECK_THAT(r.out, Catch::Contains("STUDENTSVC_USER_JWT = set  (from --jwt)"));

  // --show-perms shows it; --json has each check's name, status, time, detail and hint.
  const auto shown = studentsvc::test::run_process(cli, concat(base, {"doctor", "--perm", "1234567", "--show-perms"}));
  CHECK(shown.status == 0);
  CHECK_THAT(shown.out, Catch::Contains("perm 1234567: found (200)"));
  const auto j = doctor_json(concat(base, {"--perm", "7654321"}), 0);
  for (const auto& c : j.at("checks")) {
    CHECK(c.contains("name"));
    CHECK(c.contains("time_ms"));
    CHECK(c.contains("detail"));
    CHECK(c.contains("hint"));
  }
  CHECK(check_of(j, "lookup").at("status") == "warning");  // not found is shown, not a failure
  CHECK_THAT(check_of(j, "lookup").at("detail").get<std::string>(), Catch::Contains("76543**: not found (404)"));
  CHECK(check_of(j, "tls").at("status") == "ok");

  // -v adds the SDK's log lines on stderr: still no secret, the perm still masked (check_clean in doctor()).
  const auto verbose = doctor(concat(base, {"-v", "--perm", "1234567", "--jwt", jwt}));
  CHECK(verbose.status == 0);
}

TEST_CASE("doctor: a certificate under 30 days from expiry is a warning, not a failure", "[tool][doctor]") {
  studentsvc::test::TestPki pki;  // its certificates last 2 days
  MockServer server(MockServerOptions{}, pki.server_cert.string(), pki.server_key.string());
  const auto j = doctor_json(flags(server.base_url(), pki.ca_cert.string()), 0);
  const auto tls = check_of(j, "tls");
  CHECK(tls.at("status") == "warning");
  CHECK_THAT(tls.at("hint").get<std::string>(), Catch::Contains("expires in"));
}

TEST_CASE("doctor: untrusted, wrong-host and expired certificates each get their own hint", "[tool][doctor]") {
  Pki p;
  struct Case {
    std::string cert, key;
    const char* why;
    const char* hint;
  };
  const std::vector<Case> cases = {
      {p.pki.self_cert.string(), p.pki.self_key.string(), "not trusted", "STUDENTSVC_CA_BUNDLE"},
      {p.pki.other_cert.string(), p.pki.other_key.string(), "for another host", "does not name 127.0.0.1"},
      {p.expired.cert.string(), p.expired.key.string(), "has expired", "expired"},
  };
  for (const auto& c : cases) {
    INFO(c.why);
    MockServer server(MockServerOptions{}, c.cert, c.key);
    REQUIRE(server.running());
    const auto r = doctor(flags(server.base_url(), p.pki.ca_cert.string()));
    CHECK(r.status == 4);
    const auto tls = line_of(r.out, "\u2717", "tls");
    CHECK_THAT(tls, Catch::Contains(c.why));
    CHECK_THAT(r.out, Catch::Contains("hint: "));
    CHECK_THAT(r.out.substr(r.out.find("\u2717 tls")), Catch::Contains(c.hint));
    CHECK_THAT(r.out, Catch::Contains("skipped (meaningless after the failure above): base_path, api_key, "
                                      "student_credentials, api_version"));
    CHECK(server.request_count() == 0);  // no request went over a connection that was not verified
  }
}

TEST_CASE("doctor: a wrong API key, an unapproved Basic account, a refused API version", "[tool][doctor]") {
  MockServer server;
  const auto base = flags(server.base_url());

  auto wrong_key = base;
  wrong_key.at(3) = "key-for-staging";
  const auto key = doctor(wrong_key);
  CHECK(key.status == 6);
  CHECK_THAT(line_of(key.out, "\u2717", "api_key"), Catch::Contains("x-api-key refused: 401 AuthErrorBody"));
  CHECK_THAT(line_of(key.out, "!", "base_path"), Catch::Contains("checked only once the key is accepted"));  // not proven
  CHECK_THAT(key.out, Catch::Contains("hint: set STUDENTSVC_API_KEY"));
  CHECK_THAT(key.out, Catch::Contains("skipped (meaningless after the failure above): student_credentials, api_version"));
  CHECK(key.out.find("key-for-staging") == std::string::npos);

  auto unapproved = base;
  unapproved.at(7) = "svc-not-yet-approved";
  const auto basic = doctor(unapproved);
  CHECK(basic.status == 6);
  CHECK_THAT(line_of(basic.out, "\u2713", "api_key"), Catch::Contains("x-api-key accepted"));
  CHECK_THAT(line_of(basic.out, "\u2717", "student_credentials"), Catch::Contains("refused: 401"));
  CHECK_THAT(basic.out, Catch::Contains("STUDENTSVC_NETWORK_ID"));

  const auto version = doctor(concat(base, {"--api-version", "9.9"}));
  CHECK(version.status == 5);
  CHECK_THAT(line_of(version.out, "\u2713", "student_credentials"), Catch::Contains("accepted: 404 for perm 0000000"));
  CHECK_THAT(line_of(version.out, "\u2717", "api_version"), Catch::Contains("svc-api-version 9.9 refused: 400"));
  CHECK_THAT(version.out, Catch::Contains("hint: set STUDENTSVC_API_VERSION"));

  const auto j = doctor_json(concat(base, {"--api-version", "9.9"}), 5);
  CHECK(check_of(j, "api_version").at("status") == "failed");
  CHECK_THAT(check_of(j, "api_version").at("hint").get<std::string>(), Catch::Contains("STUDENTSVC_API_VERSION"));
}

TEST_CASE("doctor: a web server's HTML 404 for the prefix, and a closed port", "[tool][doctor]") {
  MockServerOptions web;
  web.intercept = [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content("<html><body><h1>404 Not Found</h1></body></html>", "text/html");
    return true;
  };
  MockServer server(web);
  const auto html = doctor(flags(server.base_url() + "/api"));
  CHECK(html.status == 8);
  const auto path = line_of(html.out, "\u2717", "base_path");
  CHECK_THAT(path, Catch::Contains("not the service's (404 text/html)"));
  CHECK_THAT(path, Catch::Contains(server.base_url() + "/api/students/v2/students/current"));
  CHECK_THAT(html.out, Catch::Contains("path prefix of STUDENTSVC_BASE_URL is probably wrong"));

  // The mock itself, under a prefix the base URL leaves out: its own JSON 404.
  MockServerOptions prefixed;
  prefixed.path_prefix = "/registrar";
  MockServer behind(prefixed);
  const auto no_prefix = doctor(flags(behind.base_url().substr(0, behind.base_url().find("/registrar"))));
  CHECK(no_prefix.status == 8);
  CHECK_THAT(line_of(no_prefix.out, "\u2717", "base_path"), Catch::Contains("the service does not know"));

  const studentsvc::test::RefusingPort refusing;
  const auto closed = doctor(flags("http://127.0.0.1:" + std::to_string(refusing.port())));
  CHECK(closed.status == 4);
  CHECK_THAT(line_of(closed.out, "\u2717", "connect"), Catch::Contains("cannot connect to 127.0.0.1:"));
  CHECK_THAT(closed.out, Catch::Contains("hint: check the host and port in STUDENTSVC_BASE_URL"));
}

TEST_CASE("doctor through a CONNECT proxy: refused with 407, and tunnelling", "[tool][doctor]") {
  Pki p;
  MockServer server(MockServerOptions{}, p.good.cert.string(), p.good.key.string());
  const auto base = flags(server.base_url(), p.pki.ca_cert.string());

  studentsvc::test::ConnectProxy refusing(studentsvc::test::ConnectProxy::Mode::refuse_407);
  const auto refused = doctor(concat(base, {"--proxy", refusing.url("user:" + proxy_password + "@")}));
  CHECK(refused.status == 4);
  CHECK_THAT(line_of(refused.out, "\u2713", "base_url"), Catch::Contains("through proxy " + refusing.url() + " (from --proxy, with credentials)"));
  CHECK_THAT(line_of(refused.out, "\u2717", "connect"), Catch::Contains("refused the tunnel"));
  CHECK_THAT(line_of(refused.out, "\u2717", "connect"), Catch::Contains("(407)"));
  CHECK_THAT(refused.out, Catch::Contains("hint: the proxy wants credentials"));

  // From the environment, as libcurl reads it; no_proxy that names another host does not exempt this one.
  studentsvc::test::ConnectProxy tunnel(studentsvc::test::ConnectProxy::Mode::tunnel);
  const auto through = doctor(base, {{"https_proxy", tunnel.url()}, {"no_proxy", "example.edu"}});
  INFO(through.out);
  CHECK(through.status == 0);
  CHECK_THAT(line_of(through.out, "\u2713", "base_url"), Catch::Contains("from https_proxy"));
  CHECK_THAT(line_of(through.out, "\u2713", "connect"), Catch::Contains("tunnel to 127.0.0.1:" + std::to_string(server.port()) + " established"));
  tunnel.stop();
  CHECK(tunnel.heads().starts_with("CONNECT 127.0.0.1:"));
  check_clean(tunnel.heads());  // the proxy saw the CONNECT head only

  // no_proxy naming the host exempts it.
  const auto exempt = doctor(base, {{"https_proxy", "http://127.0.0.1:9"}, {"no_proxy", "127.0.0.1"}});
  CHECK(exempt.status == 0);
  CHECK_THAT(line_of(exempt.out, "\u2713", "base_url"), Catch::Contains("not used: no_proxy=127.0.0.1 exempts 127.0.0.1"));
}

TEST_CASE("doctor: a host that does not resolve, tested in a network namespace of its own", "[tool][doctor]") {
  // unshare -rn: a new user and network namespace with no interface up, so the
  // resolver's query cannot leave the machine.
  const auto probe = studentsvc::test::run_process("/usr/bin/unshare", {"-rn", "/bin/true"});
  if (probe.status != 0) {
    FAIL("unshare -rn is not permitted here: name resolution cannot be tested without leaving the machine");
  }
  const auto r = studentsvc::test::run_process(
      "/usr/bin/unshare", concat({"-rn", cli}, concat(flags("https://registrar.studentsvc.invalid"), {"doctor"})));
  check_clean(r.out);
  CHECK(r.status == 4);
  CHECK_THAT(line_of(r.out, "\u2717", "dns"), Catch::Contains("cannot resolve registrar.studentsvc.invalid"));
  CHECK_THAT(r.out, Catch::Contains("hint: check the host name in STUDENTSVC_BASE_URL"));
  CHECK_THAT(r.out, Catch::Contains("skipped (meaningless after the failure above): connect, tls, base_path"));
}

TEST_CASE("doctor: configuration failures name the setting, before anything is sent", "[tool][doctor]") {
  const auto none = studentsvc::test::run_process(cli, {"doctor"});
  CHECK(none.status == 3);
  CHECK_THAT(line_of(none.out, "\u2717", "configuration"), Catch::Contains("no base URL"));
  CHECK_THAT(none.out, Catch::Contains("hint: set STUDENTSVC_BASE_URL"));
  CHECK_THAT(none.out, Catch::Contains("skipped (meaningless after the failure above): base_url, dns, connect"));

  const auto half = studentsvc::test::run_process(
      cli, {"--base-url", "https://api.example.edu", "--api-key", api_key, "--network-id", "x", "doctor"});
  CHECK(half.status == 3);
  CHECK_THAT(half.out, Catch::Contains("hint: set both STUDENTSVC_NETWORK_ID and STUDENTSVC_PASSWORD"));
  check_clean(half.out);

  CHECK(studentsvc::test::run_process(cli, {"doctor", "extra"}).status == 2);
  CHECK(studentsvc::test::run_process(cli, {"doctor", "-o", "table"}).status == 2);
  const auto help = studentsvc::test::run_process(cli, {"doctor", "--help"});
  CHECK(help.status == 0);
  CHECK_THAT(help.out, Catch::Contains("Doctor's exit status"));
}

TEST_CASE("doctor --mock: the demo runs every check against the bundled mock", "[tool][doctor]") {
  const auto r = studentsvc::test::run_process(cli, {"--mock", "doctor", "--perm", "1234567"});
  CHECK(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("\u2713 student_credentials"));
  check_clean(r.out);
}

TEST_CASE("doctor's pieces: no_proxy matching, the proxy choice, the redactor", "[tool][doctor]") {
  using studentsvc_cli::doctor::no_proxy_match;
  CHECK(no_proxy_match("example.edu", "api.example.edu") == "example.edu");
  CHECK(no_proxy_match(".example.edu", "api.example.edu") == ".example.edu");
  CHECK(no_proxy_match("localhost, 127.0.0.1", "127.0.0.1") == "127.0.0.1");
  CHECK(no_proxy_match("*", "anything") == "*");
  CHECK_FALSE(no_proxy_match("ample.edu", "api.example.edu"));
  CHECK_FALSE(no_proxy_match("", "api.example.edu"));

  const auto parts = studentsvc_cli::doctor::url_parts("https://api.example.edu/registrar");
  REQUIRE(parts);
  CHECK(parts->host == "api.example.edu");
  CHECK(parts->port == "443");
  const auto choice = studentsvc_cli::doctor::choose_proxy("http://u:" + proxy_password + "@proxy:3128", *parts);
  CHECK(choice.url == "http://proxy:3128");
  CHECK(choice.has_credentials);
  CHECK(choice.from == "--proxy");

  studentsvc_cli::doctor::Redactor clean;
  clean.add(api_key);
  clean.replace("1234567", "12345**");
  CHECK(clean("key mock-api-key perm 1234567\x1b[2J") == "key REDACTED perm 12345**");  // the whole sequence goes
}

}  // namespace tool_doctor_test

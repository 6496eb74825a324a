// Unit tests for the TLS settings' checks (tls.hpp, detail/request/tls_options.hpp):
// the client certificate, the CA as PEM text and the pinned public key are
// refused before any request, by Client::create and by from_env, with a
// message naming the setting (the variable, for from_env) and never the key
// password. No network: the Client runs on a FakeTransport.

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>  // geteuid

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/detail/request/tls_options.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/testing/fake_transport.hpp>
#include <studentsvc/tls.hpp>

#include "support/skip.hpp"
#include "support/temp_dir.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace tls_options_test {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using studentsvc::ClientCertificate;
using studentsvc::ClientOptions;
using studentsvc::ErrorKind;

namespace {

const std::string password = "TLS-KEY-PASSWORD-CANARY-71c3";
// A syntactically valid pin (the base64 of 32 bytes) and its form with two.
const std::string pin = "sha256//AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

const std::string cert_text =
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const std::string key_text = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";

struct Files {
  studentsvc::test::TempDir dir;
  std::string cert = dir.write("client.pem", cert_text);
  std::string key = dir.write("client.key", key_text);
  std::string encrypted_key =
      dir.write("encrypted.key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n-----END ENCRYPTED PRIVATE KEY-----\n");
  std::string not_pem = dir.write("client.der", std::string("\x30\x82\x01\x0a", 4));
  std::string empty = dir.write("empty.pem", "");
  std::string missing = (dir.path() / "missing.pem").string();
};

ClientOptions base_options() {
  ClientOptions o;
  o.base_url = "https://registrar.example.edu";
  o.auth.api_key = "unit-test-api-key";
  o.transport = std::make_shared<studentsvc::testing::FakeTransport>();
  return o;
}

/// Client::create's error for these options (the call must fail).
studentsvc::ApiError create_error(const ClientOptions& o) {
  auto client = studentsvc::Client::create(o);
  REQUIRE_FALSE(client.has_value());
  CHECK(client.error().kind == ErrorKind::invalid_argument);
  CHECK(client.error().message.find(password) == std::string::npos);
  return client.error();
}

using Env = std::map<std::string, std::string, std::less<>>;

Env base_env() { return {{"STUDENTSVC_BASE_URL", "https://registrar.example.edu"}, {"STUDENTSVC_API_KEY", "k-123456"}}; }

studentsvc::Result<ClientOptions> from(const Env& env) {
  return ClientOptions::from_env([&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

std::string env_error(const Env& env) {
  auto o = from(env);
  REQUIRE_FALSE(o.has_value());
  CHECK(o.error().kind == ErrorKind::invalid_argument);
  CHECK(o.error().message.find(password) == std::string::npos);
  return o.error().message;
}

}  // namespace

TEST_CASE("TLS options: usable settings build a client that sends", "[tls][options]") {
  const Files files;
  auto o = base_options();
  o.client_certificate = ClientCertificate{files.cert, files.encrypted_key, password};
  o.ca_pem = cert_text + cert_text;
  o.pinned_public_key = pin + ";" + pin;
  auto client = studentsvc::Client::create(o);
  REQUIRE(client.has_value());
  auto fake = std::static_pointer_cast<studentsvc::testing::FakeTransport>(o.transport);
  fake->respond(200, R"({"perm":"1234567","firstName":"A","lastName":"B","suffix":null,"email":"a@b"})");
  CHECK(client->get_student("1234567").has_value());
  CHECK(fake->requests().size() == 1);
}

TEST_CASE("TLS options: Client::create refuses an unusable client certificate", "[tls][options]") {
  const Files files;
  auto o = base_options();
  SECTION("a certificate without a key") {
    o.client_certificate = ClientCertificate{files.cert, "", password};
    CHECK_THAT(create_error(o).message,
               StartsWith("client_certificate.key_file is not set") && Contains("private key"));
  }
  SECTION("a key without a certificate") {
    o.client_certificate = ClientCertificate{"", files.key, password};
    CHECK_THAT(create_error(o).message, StartsWith("client_certificate.cert_file is not set"));
  }
  SECTION("neither") {
    o.client_certificate = ClientCertificate{};
    CHECK_THAT(create_error(o).message, StartsWith("client_certificate is set but names no certificate file"));
  }
  SECTION("a certificate file that does not exist") {
    o.client_certificate = ClientCertificate{files.missing, files.key, password};
    CHECK(create_error(o).message == "client_certificate.cert_file: the file does not exist");
  }
  SECTION("a key file that does not exist") {
    o.client_certificate = ClientCertificate{files.cert, files.missing, password};
    CHECK(create_error(o).message == "client_certificate.key_file: the file does not exist");
  }
  SECTION("an empty certificate file") {
    o.client_certificate = ClientCertificate{files.empty, files.key, {}};
    CHECK(create_error(o).message == "client_certificate.cert_file: the file is empty");
  }
  SECTION("a directory") {
    o.client_certificate = ClientCertificate{files.cert, files.dir.path().string(), {}};
    CHECK_THAT(create_error(o).message, StartsWith("client_certificate.key_file: the file is a directory"));
  }
  SECTION("a certificate that is not PEM (DER)") {
    o.client_certificate = ClientCertificate{files.not_pem, files.key, {}};
    CHECK_THAT(create_error(o).message, StartsWith("client_certificate.cert_file: the file is not a PEM certificate"));
  }
  SECTION("a key file that holds a certificate") {
    o.client_certificate = ClientCertificate{files.cert, files.cert, password};
    CHECK_THAT(create_error(o).message, StartsWith("client_certificate.key_file: the file is not a PEM private key"));
  }
  SECTION("a password with a NUL byte") {
    o.client_certificate = ClientCertificate{files.cert, files.key, std::string("abc\0def", 7)};
    CHECK(create_error(o).message == "client_certificate: the key password contains a NUL byte");
  }
}

TEST_CASE("TLS options: an unreadable key file is refused", "[tls][options]") {
  if (::geteuid() == 0) STUDENTSVC_SKIP("running as root, which reads any file: the refusal cannot happen");
  const Files files;
  const std::string locked = files.dir.write("locked.key", key_text, std::filesystem::perms::none);
  auto o = base_options();
  o.client_certificate = ClientCertificate{files.cert, locked, password};
  CHECK_THAT(create_error(o).message, StartsWith("client_certificate.key_file: the file is not readable"));
}

TEST_CASE("TLS options: Client::create refuses CA text that is not PEM, or with a CA file", "[tls][options]") {
  const Files files;
  auto o = base_options();
  SECTION("a path where PEM text belongs") {
    o.ca_pem = files.cert;
    CHECK_THAT(create_error(o).message,
               StartsWith("ca_pem is not PEM text (no -----BEGIN CERTIFICATE----- line)") && Contains("ca_bundle"));
  }
  SECTION("a private key") {
    o.ca_pem = key_text;
    CHECK_THAT(create_error(o).message, StartsWith("ca_pem is not PEM text"));
  }
  SECTION("both forms") {
    o.ca_pem = cert_text;
    o.ca_bundle = files.cert;
    CHECK_THAT(create_error(o).message, StartsWith("ca_pem and ca_bundle are both set"));
  }
}

TEST_CASE("TLS options: Client::create refuses a pin not in sha256// form", "[tls][options]") {
  auto o = base_options();
  for (const std::string& bad : std::vector<std::string>{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "/etc/ssl/server-key.pem",
                                "sha1//AAECAwQFBgcICQoLDA0ODxAREhM=", "sha256//", "sha256//not base64!",
                                "sha256//AAECAwQFBgcICQoLDA0ODxAREhM=", pin + "; " + pin, pin + ";", " " + pin}) {
    INFO(bad);
    o.pinned_public_key = bad;
    CHECK_THAT(create_error(o).message, StartsWith("pinned_public_key: "));
  }
  o.pinned_public_key = pin + ";sha256//AAEC";
  CHECK_THAT(create_error(o).message, Contains("(pin 2)"));
}

TEST_CASE("TLS options: refused with an http:// loopback base URL", "[tls][options]") {
  const Files files;
  auto o = base_options();
  o.base_url = "http://127.0.0.1:8080";
  o.allow_insecure_loopback = true;
  REQUIRE(studentsvc::Client::create(o).has_value());
  SECTION("client certificate") { o.client_certificate = ClientCertificate{files.cert, files.key, password}; }
  SECTION("CA text") { o.ca_pem = cert_text; }
  SECTION("pin") { o.pinned_public_key = pin; }
  CHECK_THAT(create_error(o).message, Contains(" applies to https:// only, and base_url is http://"));
}

TEST_CASE("TLS options: a Client built with bad TLS settings sends nothing", "[tls][options]") {
  auto o = base_options();
  o.pinned_public_key = "sha256//short";
  const studentsvc::Client client(o);
  const auto r = client.get_student("1234567");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().kind == ErrorKind::invalid_argument);
  CHECK_THAT(r.error().message, StartsWith("pinned_public_key: "));
  CHECK(std::static_pointer_cast<studentsvc::testing::FakeTransport>(o.transport)->requests().empty());
}

TEST_CASE("TLS options: from_env reads the TLS variables", "[tls][options]") {
  const Files files;
  auto env = base_env();
  env["STUDENTSVC_CLIENT_CERT"] = files.cert;
  env["STUDENTSVC_CLIENT_KEY"] = files.key;
  env["STUDENTSVC_CLIENT_KEY_PASSWORD"] = password;
  env["STUDENTSVC_CA_PEM"] = cert_text;
  env["STUDENTSVC_PINNED_PUBLIC_KEY"] = pin;
  auto o = from(env);
  REQUIRE(o.has_value());
  REQUIRE(o->client_certificate.has_value());
  CHECK(o->client_certificate->cert_file == files.cert);
  CHECK(o->client_certificate->key_file == files.key);
  CHECK(o->client_certificate->key_password.reveal() == password);
  CHECK(o->ca_pem == cert_text);
  CHECK(o->pinned_public_key == pin);

  env.erase("STUDENTSVC_CLIENT_KEY_PASSWORD");
  o = from(env);
  REQUIRE(o.has_value());
  CHECK(o->client_certificate->key_password.empty());

  const auto plain = from(base_env());
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->client_certificate.has_value());
  CHECK(plain->ca_pem.empty());
  CHECK(plain->pinned_public_key.empty());
}

TEST_CASE("TLS options: from_env names the variable of each mistake", "[tls][options]") {
  const Files files;
  auto env = base_env();
  SECTION("a certificate without its key") {
    env["STUDENTSVC_CLIENT_CERT"] = files.cert;
    env["STUDENTSVC_CLIENT_KEY_PASSWORD"] = password;
    CHECK_THAT(env_error(env), StartsWith("STUDENTSVC_CLIENT_KEY is not set") && Contains("STUDENTSVC_CLIENT_CERT"));
  }
  SECTION("a key without its certificate") {
    env["STUDENTSVC_CLIENT_KEY"] = files.key;
    CHECK_THAT(env_error(env), StartsWith("STUDENTSVC_CLIENT_CERT is not set"));
  }
  SECTION("a password alone") {
    env["STUDENTSVC_CLIENT_KEY_PASSWORD"] = password;
    CHECK_THAT(env_error(env), StartsWith("STUDENTSVC_CLIENT_KEY_PASSWORD: set without STUDENTSVC_CLIENT_CERT"));
  }
  SECTION("a certificate file that does not exist") {
    env["STUDENTSVC_CLIENT_CERT"] = files.missing;
    env["STUDENTSVC_CLIENT_KEY"] = files.key;
    env["STUDENTSVC_CLIENT_KEY_PASSWORD"] = password;
    CHECK(env_error(env) == "STUDENTSVC_CLIENT_CERT: the file does not exist");
  }
  SECTION("a key file that is not PEM") {
    env["STUDENTSVC_CLIENT_CERT"] = files.cert;
    env["STUDENTSVC_CLIENT_KEY"] = files.not_pem;
    CHECK_THAT(env_error(env), StartsWith("STUDENTSVC_CLIENT_KEY: the file is not a PEM private key"));
  }
  SECTION("CA text that is a file name") {
    env["STUDENTSVC_CA_PEM"] = files.cert;
    CHECK_THAT(env_error(env), StartsWith("STUDENTSVC_CA_PEM is not PEM text") && Contains("STUDENTSVC_CA_BUNDLE"));
  }
  SECTION("CA text and a CA file") {
    env["STUDENTSVC_CA_PEM"] = cert_text;
    env["STUDENTSVC_CA_BUNDLE"] = files.cert;
    CHECK_THAT(env_error(env), StartsWith("STUDENTSVC_CA_PEM and STUDENTSVC_CA_BUNDLE are both set"));
  }
  SECTION("a pin in another form") {
    env["STUDENTSVC_PINNED_PUBLIC_KEY"] = "/etc/ssl/server.pub";
    CHECK_THAT(env_error(env), StartsWith("STUDENTSVC_PINNED_PUBLIC_KEY: expected sha256//"));
  }
  SECTION("TLS settings with an http:// loopback URL") {
    env["STUDENTSVC_BASE_URL"] = "http://127.0.0.1:8080";
    env["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = "1";
    REQUIRE(from(env).has_value());
    env["STUDENTSVC_PINNED_PUBLIC_KEY"] = pin;
    CHECK(env_error(env) ==
          "STUDENTSVC_PINNED_PUBLIC_KEY applies to https:// only, and STUDENTSVC_BASE_URL is http:// (the loopback "
          "opt-in): remove it, or use https://");
  }
}

TEST_CASE("TLS options: pinned_key_problem accepts curl's list form only", "[tls][options]") {
  using studentsvc::detail::pinned_key_problem;
  CHECK_FALSE(pinned_key_problem(pin).has_value());
  CHECK_FALSE(pinned_key_problem(pin + ";" + pin + ";" + pin).has_value());
  CHECK(pinned_key_problem("").has_value());
  CHECK(pinned_key_problem(pin + ";;" + pin).has_value());
  CHECK(pinned_key_problem("SHA256//AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").has_value());
}

}  // namespace tls_options_test

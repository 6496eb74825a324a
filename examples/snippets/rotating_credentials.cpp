// docs/credentials.md's example: a Client whose keys come from
// files that a secret manager replaces, run against the mock server, which
// accepts the new key from the moment the files are rotated.
#include <unistd.h>  // getpid

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <studentsvc/file_credentials.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

namespace {

/// What a secret manager does: write the new file, then rename it over the old one.
void write_secret(const std::filesystem::path& file, const studentsvc::Secret& value) {
  const auto next = file.string() + ".new";
  std::ofstream(next) << value.reveal() << '\n';
  std::filesystem::rename(next, file);
}

}  // namespace

int main() {
  studentsvc::testing::MockServer server;
  const auto dir = std::filesystem::temp_directory_path() / ("studentsvc-rotation-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto mock = server.client_options();
  write_secret(dir / "api-key", mock.auth.api_key);
  write_secret(dir / "svc-api-key", mock.auth.svc_api_key);
  write_secret(dir / "password", mock.auth.basic->password);

  // [rotating-credentials]
  studentsvc::FileCredentialFiles files;
  files.api_key_file = dir / "api-key";  // e.g. /run/secrets/studentsvc/api-key
  files.svc_api_key_file = dir / "svc-api-key";
  files.network_id = mock.auth.basic->network_id;
  files.password_file = dir / "password";
  auto provider = studentsvc::FileCredentialProvider::create(files);
  if (!provider) {
    std::cerr << studentsvc::to_string(provider.error()) << '\n';  // names the file, never its content
    return 1;
  }
  auto options = server.client_options();  // or ClientOptions::from_env()
  options.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
  options.auth.provider = *provider;  // asked on every request; reloads a file when it changes
  const studentsvc::Client client(options);
  // [rotating-credentials]

  bool ok = client.get_student("1234567").has_value();
  // The registrar rotates the key: the service takes the new one, the file follows.
  server.update([](studentsvc::testing::MockServerOptions& o) { o.api_key = "rotated-api-key"; });
  write_secret(dir / "api-key", "rotated-api-key");
  ok = ok && client.get_student("1234567").has_value() &&
       server.last_request().header("x-api-key") == "rotated-api-key";
  std::filesystem::remove_all(dir);
  std::cout << (ok ? "rotating credentials example: ok\n" : "rotating credentials example: FAILED\n");
  return ok ? 0 : 1;
}

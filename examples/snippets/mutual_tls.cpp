// mutual_tls: one lookup through a gateway that requires a client certificate
// (mutual TLS), trusting the gateway's CA given as PEM text and pinning its
// public key.
//
//   export STUDENTSVC_BASE_URL=https://... STUDENTSVC_API_KEY=... REGISTRAR_KEY_PASSWORD=...
//   mutual_tls client.pem client.key gateway-ca.pem 'sha256//...' 1234567
//
// from_env() alone reads the same settings from STUDENTSVC_CLIENT_CERT,
// STUDENTSVC_CLIENT_KEY, STUDENTSVC_CLIENT_KEY_PASSWORD, STUDENTSVC_CA_PEM and
// STUDENTSVC_PINNED_PUBLIC_KEY; this program sets them in code.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <studentsvc/studentsvc.hpp>

namespace {

std::string read_text(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: mutual_tls CERT.pem KEY.pem CA.pem sha256//PIN PERM\n";
    return 2;
  }
  auto options = studentsvc::ClientOptions::from_env();
  if (!options) {
    std::cerr << "configuration: " << to_string(options.error()) << '\n';
    return 1;
  }
  const char* key_password = std::getenv("REGISTRAR_KEY_PASSWORD");  // NOLINT(concurrency-mt-unsafe)
  const std::string ca_pem_text = read_text(argv[3]);
  const char* pin = argv[4];

  // The certificate and key the gateway asks for; the key's password is a
  // Secret: never printed, logged or put in an error.
  options->client_certificate =
      studentsvc::ClientCertificate{argv[1], argv[2], key_password != nullptr ? key_password : ""};
  options->ca_pem = ca_pem_text;      // the gateway's CA as PEM text (instead of a file: ca_bundle)
  options->pinned_public_key = pin;   // "sha256//<base64>", several separated by ';'
  auto client = studentsvc::Client::create(*options);  // checks the files, the PEM and the pin now
  if (!client) {
    std::cerr << "configuration: " << to_string(client.error()) << '\n';
    return 1;
  }

  const auto student = client->get_student(argv[5]);
  if (!student) {
    // A refused certificate, a wrong key password or a key that does not
    // match the pin: ErrorKind::transport, with a message that says which.
    std::cerr << to_string(student.error()) << '\n';
    return 1;
  }
  std::cout << student->first_name << ' ' << student->last_name << '\n';
  return 0;
}

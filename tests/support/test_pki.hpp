#pragma once
// A throwaway PKI for TLS tests, generated with the `openssl` command-line tool
// into a fresh temporary folder: a CA; a server certificate it signs for
// localhost and 127.0.0.1 (subjectAltName); a self-signed certificate for the
// same names; and a certificate the CA signs for another host name.
// add_client_pki() adds, for mutual TLS: a client CA, a client certificate it
// signs (its key also encrypted with a password), a client certificate the
// server CA signs instead (not trusted for clients), and the sha256// pins of
// the server's and the self-signed certificate's public keys.

#include <stdlib.h>  // mkdtemp

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace studentsvc::test {

namespace fs = std::filesystem;

/// The generated PKI; the folder is removed when the object goes.
struct TestPki {
  fs::path dir;
  fs::path ca_cert, server_cert, server_key, self_cert, self_key, other_cert, other_key;

  TestPki() {
    std::string tmpl = (fs::temp_directory_path() / "studentsvc-tls-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
    ca_cert = dir / "ca.pem";
    server_cert = dir / "server.pem";
    server_key = dir / "server.key";
    self_cert = dir / "self.pem";
    self_key = dir / "self.key";
    other_cert = dir / "other.pem";
    other_key = dir / "other.key";
    write("server.ext",
          "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
          "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n");
    write("other.ext",
          "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
          "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:registrar.other-university.example\n");
    make_ca("ca", "studentsvc test CA");
    issue("server", "localhost", "ca", "server.ext");  // localhost / 127.0.0.1, signed by the CA
    // The same names, self-signed (not trusted).
    openssl("req -x509" + std::string(ec_key) + " -keyout self.key -out self.pem -days 2 -subj '/CN=localhost'"
            " -addext subjectAltName=DNS:localhost,IP:127.0.0.1");
    issue("other", "registrar.other-university.example", "ca", "other.ext");  // another host name, the trusted CA
  }
  // Filled by add_client_pki().
  fs::path client_ca_cert, client_cert, client_key, client_key_encrypted, rogue_client_cert, rogue_client_key;
  std::string client_key_password;
  std::string server_pin;  ///< `sha256//<base64>` of server_cert's public key.
  std::string self_pin;    ///< The same for self_cert: a pin the server does not match.

  /// Generates the client side of a mutual-TLS PKI (see the file comment).
  void add_client_pki(const std::string& key_password = "client-key-passphrase-5e2b") {
    client_key_password = key_password;
    client_ca_cert = dir / "client-ca.pem";
    client_cert = dir / "client.pem";
    client_key = dir / "client.key";
    client_key_encrypted = dir / "client-encrypted.key";
    rogue_client_cert = dir / "rogue-client.pem";
    rogue_client_key = dir / "rogue-client.key";
    write("client.ext",
          "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n");
    make_ca("client-ca", "studentsvc test client CA");
    issue("client", "registrar-app", "client-ca", "client.ext");
    openssl("pkey -in client.key -aes256 -passout 'pass:" + key_password + "' -out client-encrypted.key");
    // Signed by the server CA: a real certificate, from a CA the server does not take for clients.
    issue("rogue-client", "registrar-app", "ca", "client.ext");
    server_pin = pin_of("server.pem");
    self_pin = pin_of("self.pem");
  }

  /// `<name>.key` and `<name>.pem` for the common name `cn`, signed by the CA
  /// `<ca>.pem` with the extensions file `ext`, valid `days` from now.
  void issue(const std::string& name, const std::string& cn, const std::string& ca, const std::string& ext,
             int days = 2) const {
    openssl("req" + std::string(ec_key) + " -keyout " + name + ".key -out " + name + ".csr -subj '/CN=" + cn + "'");
    openssl("x509 -req -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca + ".key -CAcreateserial -out " + name +
            ".pem -days " + std::to_string(days) + " -extfile " + ext);
  }
  /// Runs `openssl <args>` in the folder; throws with openssl's output when it fails.
  void openssl(const std::string& args) const {
    const std::string cmd = "cd '" + dir.string() + "' && openssl " + args + " > openssl.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {  // NOLINT(cert-env33-c): a fixed command line
      std::ifstream log(dir / "openssl.log");
      const std::string why((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      throw std::runtime_error("openssl " + args + " failed: " + why);
    }
  }

  ~TestPki() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

 private:
  static constexpr const char* ec_key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

  void write(const char* name, const std::string& text) const { std::ofstream(dir / name) << text; }
  /// A self-signed CA, `<name>.key` and `<name>.pem`.
  void make_ca(const std::string& name, const std::string& cn) const {
    openssl("req -x509" + std::string(ec_key) + " -keyout " + name + ".key -out " + name + ".pem -days 2 -subj '/CN=" +
            cn + "' -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
  }
  /// curl's `sha256//<base64>` pin of a certificate's public key (SHA-256 of its DER SubjectPublicKeyInfo).
  std::string pin_of(const std::string& cert) const {
    openssl("x509 -in " + cert + " -pubkey -noout -out pin.pub");
    openssl("pkey -pubin -in pin.pub -outform der -out pin.der");
    openssl("dgst -sha256 -binary -out pin.bin pin.der");
    openssl("base64 -A -in pin.bin -out pin.b64");
    std::ifstream in(dir / "pin.b64");
    std::string b64;
    in >> b64;
    return "sha256//" + b64;
  }
};

}  // namespace studentsvc::test

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
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    // The CA.
    run("req -x509" + ec + " -keyout ca.key -out ca.pem -days 2 -subj '/CN=studentsvc test CA'"
        " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
    // localhost / 127.0.0.1, signed by the CA.
    run("req" + ec + " -keyout server.key -out server.csr -subj '/CN=localhost'");
    run("x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2"
        " -extfile server.ext");
    // The same names, self-signed (not trusted).
    run("req -x509" + ec + " -keyout self.key -out self.pem -days 2 -subj '/CN=localhost'"
        " -addext subjectAltName=DNS:localhost,IP:127.0.0.1");
    // Another host name, signed by the trusted CA.
    run("req" + ec + " -keyout other.key -out other.csr -subj '/CN=registrar.other-university.example'");
    run("x509 -req -in other.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out other.pem -days 2"
        " -extfile other.ext");
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
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run("req -x509" + ec + " -keyout client-ca.key -out client-ca.pem -days 2 -subj '/CN=studentsvc test client CA'"
        " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign");
    run("req" + ec + " -keyout client.key -out client.csr -subj '/CN=registrar-app'");
    run("x509 -req -in client.csr -CA client-ca.pem -CAkey client-ca.key -CAcreateserial -out client.pem -days 2"
        " -extfile client.ext");
    run("pkey -in client.key -aes256 -passout 'pass:" + key_password + "' -out client-encrypted.key");
    // Signed by the server CA: a real certificate, from a CA the server does not take for clients.
    run("req" + ec + " -keyout rogue-client.key -out rogue-client.csr -subj '/CN=registrar-app'");
    run("x509 -req -in rogue-client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out rogue-client.pem -days 2"
        " -extfile client.ext");
    server_pin = pin_of("server.pem");
    self_pin = pin_of("self.pem");
  }

  ~TestPki() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

 private:
  void write(const char* name, const std::string& text) const { std::ofstream(dir / name) << text; }
  /// curl's `sha256//<base64>` pin of a certificate's public key (SHA-256 of its DER SubjectPublicKeyInfo).
  std::string pin_of(const std::string& cert) const {
    run("x509 -in " + cert + " -pubkey -noout -out pin.pub");
    run("pkey -pubin -in pin.pub -outform der -out pin.der");
    run("dgst -sha256 -binary -out pin.bin pin.der");
    run("base64 -A -in pin.bin -out pin.b64");
    std::ifstream in(dir / "pin.b64");
    std::string b64;
    in >> b64;
    return "sha256//" + b64;
  }
  void run(const std::string& args) const {
    const std::string cmd = "cd '" + dir.string() + "' && openssl " + args + " > openssl.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {  // NOLINT(cert-env33-c): a fixed command line
      std::ifstream log(dir / "openssl.log");
      const std::string why((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      throw std::runtime_error("openssl " + args + " failed: " + why);
    }
  }
};

}  // namespace studentsvc::test

#pragma once
// A throwaway PKI for TLS tests, generated with the `openssl` command-line tool
// into a fresh temporary folder: a CA; a server certificate it signs for
// localhost and 127.0.0.1 (subjectAltName); a self-signed certificate for the
// same names; and a certificate the CA signs for another host name.

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
  ~TestPki() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

 private:
  void write(const char* name, const std::string& text) const { std::ofstream(dir / name) << text; }
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

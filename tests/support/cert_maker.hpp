#pragma once
// More certificates from a TestPki's CA, made with the `openssl` tool: one for
// localhost and 127.0.0.1 valid for as many days as asked, and one that has
// already expired (openssl ca with -startdate/-enddate in the past).

#include <filesystem>
#include <fstream>
#include <string>

#include "test_pki.hpp"

namespace studentsvc::test {

struct IssuedCert {
  std::filesystem::path cert, key;
};

/// A certificate for localhost and 127.0.0.1 that the PKI's CA signs, valid `days` from now.
inline IssuedCert issue_certificate(const TestPki& pki, const std::string& name, int days) {
  pki.issue(name, "localhost", "ca", "server.ext", days);
  return {pki.dir / (name + ".pem"), pki.dir / (name + ".key")};
}

/// A certificate for localhost and 127.0.0.1 that the PKI's CA signed, expired since 2020.
inline IssuedCert issue_expired_certificate(const TestPki& pki) {
  const auto dir = pki.dir;
  std::ofstream(dir / "ca.cnf") << "[ ca ]\ndefault_ca = here\n[ here ]\ndir = .\ndatabase = index.txt\n"
                                   "new_certs_dir = .\nserial = expired.srl\ndefault_md = sha256\npolicy = any\n"
                                   "copy_extensions = copy\n[ any ]\ncommonName = supplied\n";
  std::ofstream(dir / "index.txt").close();
  std::ofstream(dir / "expired.srl") << "1000\n";
  pki.openssl("req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout expired.key "
              "-out expired.csr -subj '/CN=localhost'");
  pki.openssl("ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem "
              "-startdate 20200101000000Z -enddate 20200102000000Z -extfile server.ext -notext");
  return {dir / "expired.pem", dir / "expired.key"};
}

}  // namespace studentsvc::test

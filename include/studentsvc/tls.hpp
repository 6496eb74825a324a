#pragma once
/// @file tls.hpp
/// @brief ClientCertificate: the certificate and key a client presents to a
/// gateway that requires mutual TLS.

#include <string>

#include <studentsvc/secret.hpp>

namespace studentsvc {

/// @brief A client certificate for mutual TLS: a PEM certificate (chain) file
/// and its PEM private key file, the key optionally encrypted.
///
/// Both files are required; a Client checks once, when built, that each can
/// be read and looks like PEM. The password is a Secret: never printed,
/// logged or put in an ApiError, and scrubbed from text a server sends back.
/// A wrong password shows on the first request, as ErrorKind::transport
/// ("the client certificate or key could not be used ...").
///
/// @sa ClientOptions::client_certificate, CurlTransportOptions::client_certificate
struct ClientCertificate {
  std::string cert_file{};  ///< PEM certificate, optionally followed by its intermediates.
  std::string key_file{};   ///< PEM private key (PKCS#8 or traditional, encrypted or not).
  Secret key_password{};    ///< The key's pass phrase; empty for a key that is not encrypted.

  friend bool operator==(const ClientCertificate&, const ClientCertificate&) = default;
};

}  // namespace studentsvc

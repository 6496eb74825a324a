#pragma once
/// @file detail/request/tls_options.hpp
/// @brief validate_tls: checks the client certificate, the CA as PEM text and
/// the pinned public key once, before any request, so a mistake is named here
/// rather than as a TLS error on the first call. Never quotes the key password.

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <studentsvc/detail/text/ascii.hpp>
#include <studentsvc/detail/text/base64.hpp>
#include <studentsvc/detail/auth/readable_file.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/tls.hpp>

namespace studentsvc::detail {

/// What each setting is called in messages: the ClientOptions field, or the
/// environment variable from_env() read it from.
struct TlsOptionNames {
  std::string_view client_certificate, cert_file, key_file, ca_pem, ca_bundle, pinned_public_key, base_url;
};
inline constexpr TlsOptionNames tls_option_names{"client_certificate",
                                                 "client_certificate.cert_file",
                                                 "client_certificate.key_file",
                                                 "ca_pem",
                                                 "ca_bundle",
                                                 "pinned_public_key",
                                                 "base_url"};
inline constexpr TlsOptionNames tls_env_names{"STUDENTSVC_CLIENT_CERT", "STUDENTSVC_CLIENT_CERT",
                                              "STUDENTSVC_CLIENT_KEY",  "STUDENTSVC_CA_PEM",
                                              "STUDENTSVC_CA_BUNDLE",   "STUDENTSVC_PINNED_PUBLIC_KEY",
                                              "STUDENTSVC_BASE_URL"};

inline constexpr std::string_view pem_certificate_marker = "-----BEGIN CERTIFICATE-----";

/// Whether the first `limit` bytes of the (readable) file at `path` hold `needle`.
[[nodiscard]] inline bool file_head_contains(const std::string& path, std::string_view needle,
                                             std::size_t limit = std::size_t{64} << 10U) {
  std::FILE* file = std::fopen(path.c_str(), "rb");  // NOLINT(cppcoreguidelines-owning-memory)
  if (file == nullptr) return false;
  std::string head(limit, '\0');
  head.resize(std::fread(head.data(), 1, head.size(), file));
  std::fclose(file);  // NOLINT(cppcoreguidelines-owning-memory)
  return head.find(needle) != std::string::npos;
}

/// Why `pins` is not curl's `sha256//<base64>[;sha256//<base64>...]` form
/// (each a padded base64 SHA-256 digest), or std::nullopt when it is.
[[nodiscard]] inline std::optional<std::string> pinned_key_problem(std::string_view pins) {
  constexpr std::string_view prefix = "sha256//";
  std::size_t n = 0;
  while (true) {
    const std::size_t semi = pins.find(';');
    const std::string_view pin = pins.substr(0, semi);
    ++n;
    const std::string which = n == 1 && semi == std::string_view::npos ? "" : " (pin " + std::to_string(n) + ")";
    if (!pin.starts_with(prefix)) {
      return "expected sha256//<base64 SHA-256 of the server's public key>, several separated by ';'" + which +
             "; a key file or another hash is not accepted";
    }
    const auto digest = base64_decode(pin.substr(prefix.size()));
    if (!digest || digest->size() != 32) {
      return "the part after sha256// must be the padded base64 of a 32-byte SHA-256 digest (44 characters)" + which;
    }
    if (semi == std::string_view::npos) return std::nullopt;
    pins.remove_prefix(semi + 1);
  }
}

/// The TLS settings' problem, as ErrorKind::invalid_argument naming the
/// setting by `names`; success when they are usable. Files are checked for
/// being readable and PEM; the key password only for a NUL byte (libcurl
/// takes a C string); whether it opens the key shows on the first request.
/// With an `http://` base URL (the loopback opt-in) the three settings would
/// do nothing, so they are refused rather than silently dropped.
[[nodiscard]] inline Result<void> validate_tls(const std::optional<ClientCertificate>& certificate,
                                               const std::string& ca_pem, const std::string& ca_bundle,
                                               const std::string& pinned_public_key, std::string_view base_url,
                                               const TlsOptionNames& names) {
  auto invalid = [](std::string_view name, const std::string& why) {
    return make_error(ErrorKind::invalid_argument, std::string(name) + why);
  };
  if (certificate) {
    const ClientCertificate& c = *certificate;
    if (c.cert_file.empty() && c.key_file.empty()) {
      return invalid(names.client_certificate, " is set but names no certificate file and no key file");
    }
    if (c.cert_file.empty()) {
      return invalid(names.cert_file, " is not set: the client key (" + std::string(names.key_file) +
                                          ") needs its certificate file (PEM) too");
    }
    if (c.key_file.empty()) {
      return invalid(names.key_file, " is not set: the client certificate (" + std::string(names.cert_file) +
                                         ") needs its private key file (PEM) too");
    }
    if (auto why = unreadable_file_reason(c.cert_file)) return invalid(names.cert_file, ": the file " + *why);
    if (!file_head_contains(c.cert_file, pem_certificate_marker)) {
      return invalid(names.cert_file, ": the file is not a PEM certificate (no -----BEGIN CERTIFICATE----- line)");
    }
    if (auto why = unreadable_file_reason(c.key_file)) return invalid(names.key_file, ": the file " + *why);
    if (!file_head_contains(c.key_file, "PRIVATE KEY-----")) {
      return invalid(names.key_file, ": the file is not a PEM private key (no -----BEGIN ... PRIVATE KEY----- line)");
    }
    if (c.key_password.reveal().find('\0') != std::string_view::npos) {
      return invalid(names.client_certificate, ": the key password contains a NUL byte");
    }
  }
  if (!ca_pem.empty()) {
    if (ca_pem.find(pem_certificate_marker) == std::string::npos) {
      return invalid(names.ca_pem, " is not PEM text (no -----BEGIN CERTIFICATE----- line); for a file of CAs, use " +
                                       std::string(names.ca_bundle));
    }
    if (!ca_bundle.empty()) {
      return invalid(names.ca_pem, " and " + std::string(names.ca_bundle) +
                                       " are both set: give the trusted CAs one way (join the PEM texts into one)");
    }
  }
  if (!pinned_public_key.empty()) {
    if (auto why = pinned_key_problem(pinned_public_key)) return invalid(names.pinned_public_key, ": " + *why);
  }
  const bool plain_http = base_url.size() >= 5 && iequals(base_url.substr(0, 5), "http:");
  if (plain_http) {
    const std::string_view set = certificate           ? names.client_certificate
                                 : !ca_pem.empty()     ? names.ca_pem
                                 : !pinned_public_key.empty() ? names.pinned_public_key
                                                               : std::string_view{};
    if (!set.empty()) {
      return invalid(set, " applies to https:// only, and " + std::string(names.base_url) +
                              " is http:// (the loopback opt-in): remove it, or use https://");
    }
  }
  return {};
}

}  // namespace studentsvc::detail

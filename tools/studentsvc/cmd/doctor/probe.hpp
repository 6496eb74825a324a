#pragma once
// The network half of `studentsvc doctor`, on libcurl directly: which proxy
// libcurl would use and whether no_proxy exempts the host, name resolution,
// and one probe request whose phases (connect, TLS, first answer) are timed
// and whose certificate is read. The SDK's Client does the API checks.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <curl/curl.h>

namespace studentsvc_cli::doctor {

/// The parts of a URL the checks name.
struct UrlParts {
  std::string scheme;
  std::string host;
  std::string port;
  std::string path;
};

[[nodiscard]] std::optional<UrlParts> url_parts(const std::string& url);

/// The proxy a call to `scheme://host` goes through, as the SDK's transport
/// chooses it: none for http:// (loopback only), else --proxy, else libcurl's
/// environment (https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY) unless
/// no_proxy / NO_PROXY names the host.
struct ProxyChoice {
  std::string url;          ///< without user:password; empty: none
  std::string from;         ///< "--proxy", "https_proxy", ...
  std::string exempted_by;  ///< the no_proxy entry that exempts the host, when one does
  bool has_credentials = false;
};

/// Whether a no_proxy list exempts `host` (libcurl's rules: `*` is every host;
/// an entry names the host or a domain it is in, a leading dot optional).
[[nodiscard]] std::optional<std::string> no_proxy_match(std::string_view list, std::string_view host);

[[nodiscard]] ProxyChoice choose_proxy(const std::string& explicit_proxy, const UrlParts& target);

/// Name resolution of `host`: its addresses, or getaddrinfo's reason.
struct Resolved {
  std::vector<std::string> addresses;
  std::string error;
  std::chrono::microseconds time{};
};

[[nodiscard]] Resolved resolve(const std::string& host, const std::string& port);

/// The server certificate as libcurl read it (CURLINFO_CERTINFO, first in the chain).
struct Certificate {
  std::string subject;
  std::string issuer;
  std::string expire_date;             ///< as libcurl prints it
  std::optional<long long> days_left;  ///< negative: expired
};

/// What one probe request found: the phase times, the TLS facts, the answer.
struct ProbeResult {
  CURLcode code = CURLE_OK;
  std::string error;      ///< libcurl's error buffer, userinfo stripped
  long connect_code = 0;  ///< the proxy's answer to CONNECT
  long status = 0;
  std::string content_type;
  std::string body;  ///< the first 4 KiB
  std::string primary_ip;
  long primary_port = 0;
  std::string tls_version;  ///< "TLSv1.3", from libcurl's handshake text
  std::string alpn;         ///< "h2" or "http/1.1"
  std::string ca_file, ca_path;
  std::optional<Certificate> certificate;
  std::chrono::microseconds dns{}, connect{}, tls{}, answer{}, total{};
};

/// The probe's settings.
struct ProbeSettings {
  std::string url;
  std::string ca_bundle;
  std::string ca_pem;                   ///< trusted CAs as PEM text (beside ca_bundle)
  std::string client_cert, client_key;  ///< mutual TLS: the gateway refuses a handshake without them
  std::string client_key_password;
  std::string pinned_public_key;
  std::string proxy;                 ///< explicit proxy, with its userinfo (libcurl needs it); empty: the environment
  bool no_proxy = false;             ///< http:// (loopback): never a proxy, as the transport does
  std::vector<std::string> headers;  ///< e.g. "x-api-key: ..."; libcurl's text never shows them
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds timeout{30'000};
  bool verify = true;  ///< false: only read the certificate (connect only, nothing sent)
};

/// One GET (or, with verify off, a TLS handshake only) with the phases timed.
[[nodiscard]] ProbeResult run_probe(const ProbeSettings& p);

}  // namespace studentsvc_cli::doctor

// The network half of `studentsvc doctor`, on libcurl directly: which proxy
// libcurl would use and whether no_proxy exempts the host, name resolution,
// and one probe request whose phases (connect, TLS, first answer) are timed
// and whose certificate is read. The SDK's Client does the API checks.

#include "cmd/doctor/probe.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <curl/curl.h>

#include <studentsvc/url.hpp>

#include "config_sources.hpp"

namespace studentsvc_cli::doctor {

std::optional<UrlParts> url_parts(const std::string& url) {
  CURLU* u = curl_url();
  if (u == nullptr) return std::nullopt;
  std::optional<UrlParts> out;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK) {
    UrlParts p;
    auto get = [&](CURLUPart part, std::string& into, unsigned flags = 0) {
      char* v = nullptr;
      if (curl_url_get(u, part, &v, flags) == CURLUE_OK && v != nullptr) into = v;
      curl_free(v);
    };
    get(CURLUPART_SCHEME, p.scheme);
    get(CURLUPART_HOST, p.host);
    get(CURLUPART_PORT, p.port, CURLU_DEFAULT_PORT);
    get(CURLUPART_PATH, p.path);
    if (!p.host.empty()) out = std::move(p);
  }
  curl_url_cleanup(u);
  return out;
}

std::optional<std::string> no_proxy_match(std::string_view list, std::string_view host) {
  std::size_t start = 0;
  while (start <= list.size()) {
    auto end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view entry = list.substr(start, end - start);
    while (!entry.empty() && (entry.front() == ' ' || entry.front() == '\t')) entry.remove_prefix(1);
    while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\t')) entry.remove_suffix(1);
    const std::string_view named = entry;
    if (entry.starts_with('.')) entry.remove_prefix(1);
    if (named == "*") return std::string(named);
    if (!entry.empty()) {
      const bool same =
          host.size() == entry.size() && std::equal(host.begin(), host.end(), entry.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
          });
      const bool inside =
          host.size() > entry.size() && host[host.size() - entry.size() - 1] == '.' &&
          std::equal(
              entry.begin(), entry.end(), host.end() - static_cast<std::ptrdiff_t>(entry.size()), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
              });
      if (same || inside) return std::string(named);
    }
    start = end + 1;
  }
  return std::nullopt;
}

ProxyChoice choose_proxy(const std::string& explicit_proxy, const UrlParts& target) {
  ProxyChoice out;
  if (target.scheme != "https") return out;  // the transport never proxies http:// (loopback)
  std::string raw;
  if (!explicit_proxy.empty()) {
    raw = explicit_proxy;
    out.from = "--proxy";
  } else {
    for (const char* name : {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
      if (auto v = getenv_string(name); v && !v->empty()) {
        raw = *v;
        out.from = name;
        break;
      }
    }
    if (raw.empty()) return out;
    for (const char* name : {"no_proxy", "NO_PROXY"}) {
      if (auto v = getenv_string(name); v && !v->empty()) {
        if (auto entry = no_proxy_match(*v, target.host)) {
          out.exempted_by = std::string(name) + "=" + *entry;
          break;
        }
      }
    }
  }
  out.has_credentials = studentsvc::has_url_userinfo(raw);
  out.url = studentsvc::strip_url_userinfo(raw);
  return out;
}

Resolved resolve(const std::string& host, const std::string& port) {
  Resolved out;
  const auto started = std::chrono::steady_clock::now();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  std::string bare = host;
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') bare = bare.substr(1, bare.size() - 2);
  const int rc = ::getaddrinfo(bare.c_str(), port.c_str(), &hints, &list);
  out.time = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  if (rc != 0) {
    out.error = ::gai_strerror(rc);
    return out;
  }
  for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* where = a->ai_family == AF_INET6
                            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr)
                            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr);
    if (::inet_ntop(a->ai_family, where, text, sizeof text) != nullptr) {
      const std::string address(text);
      if (std::find(out.addresses.begin(), out.addresses.end(), address) == out.addresses.end())
        out.addresses.push_back(address);
    }
  }
  ::freeaddrinfo(list);
  return out;
}

namespace {

std::size_t keep_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* body = static_cast<std::string*>(user);
  const std::size_t bytes = size * n;
  if (body->size() < 4096) body->append(data, std::min(bytes, 4096 - body->size()));
  return bytes;
}

/// Only libcurl's own informational text: never a header or data (no credential reaches it).
int read_text(CURL*, curl_infotype type, char* data, std::size_t size, void* user) {
  if (type != CURLINFO_TEXT) return 0;
  auto* r = static_cast<ProbeResult*>(user);
  const std::string_view line(data, size);
  if (const auto at = line.find("SSL connection using "); at != std::string_view::npos) {
    auto v = line.substr(at + 21);
    r->tls_version = std::string(v.substr(0, v.find_first_of(" /\r\n")));
  }
  return 0;
}

/// "Jan  2 03:04:05 2027 GMT" (OpenSSL's ASN1_TIME_print) or "2027-01-02 03:04:05 GMT" → days from now.
std::optional<long long> days_until(const std::string& text) {
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%b %d %H:%M:%S %Y", &tm);
  if (end == nullptr) end = ::strptime(text.c_str(), "%Y-%m-%d %H:%M:%S", &tm);
  if (end == nullptr) return std::nullopt;
  const std::time_t when = ::timegm(&tm);
  const double seconds = std::difftime(when, std::time(nullptr));
  return static_cast<long long>(seconds >= 0 ? seconds / 86400.0 : (seconds / 86400.0) - 1.0);
}

void read_certificate(CURL* h, ProbeResult& r) {
  curl_certinfo* info = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_CERTINFO, &info) != CURLE_OK || info == nullptr || info->num_of_certs < 1) return;
  Certificate c;
  for (curl_slist* s = info->certinfo[0]; s != nullptr; s = s->next) {
    const std::string_view line(s->data);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto key = line.substr(0, colon);
    const std::string value(line.substr(colon + 1));
    if (key == "Subject") c.subject = value;
    if (key == "Issuer") c.issuer = value;
    if (key == "Expire date") c.expire_date = value;
  }
  c.days_left = days_until(c.expire_date);
  r.certificate = std::move(c);
}

std::chrono::microseconds info_time(CURL* h, CURLINFO what) {
  curl_off_t us = 0;
  (void)curl_easy_getinfo(h, what, &us);
  return std::chrono::microseconds(us);
}

}  // namespace

ProbeResult run_probe(const ProbeSettings& p) {
  ProbeResult r;
  CURL* h = curl_easy_init();
  if (h == nullptr) {
    r.code = CURLE_FAILED_INIT;
    r.error = "libcurl could not start";
    return r;
  }
  char error[CURL_ERROR_SIZE] = {};
  curl_slist* headers = nullptr;
  for (const auto& line : p.headers) headers = curl_slist_append(headers, line.c_str());
  curl_easy_setopt(h, CURLOPT_URL, p.url.c_str());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(p.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(p.timeout.count()));
  curl_easy_setopt(h, CURLOPT_USERAGENT, "studentsvc-doctor");
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, read_text);
  curl_easy_setopt(h, CURLOPT_DEBUGDATA, &r);
  curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);  // to the callback above only: libcurl's own text, no header
  if (!p.ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, p.ca_bundle.c_str());
  curl_blob ca_blob{const_cast<char*>(p.ca_pem.data()), p.ca_pem.size(),
                    CURL_BLOB_NOCOPY};  // NOLINT: libcurl only reads it
  if (!p.ca_pem.empty()) curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca_blob);
  if (!p.client_cert.empty()) curl_easy_setopt(h, CURLOPT_SSLCERT, p.client_cert.c_str());
  if (!p.client_key.empty()) curl_easy_setopt(h, CURLOPT_SSLKEY, p.client_key.c_str());
  if (!p.client_key_password.empty()) curl_easy_setopt(h, CURLOPT_KEYPASSWD, p.client_key_password.c_str());
  if (!p.pinned_public_key.empty()) curl_easy_setopt(h, CURLOPT_PINNEDPUBLICKEY, p.pinned_public_key.c_str());
  if (p.no_proxy) {
    curl_easy_setopt(h, CURLOPT_PROXY, "");
  } else {
    if (!p.proxy.empty()) curl_easy_setopt(h, CURLOPT_PROXY, p.proxy.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPPROXYTUNNEL, 1L);  // as the transport: CONNECT, the proxy sees no request
  }
  if (!p.verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);  // the handshake only: nothing is sent on a connection not verified
  }
  r.code = curl_easy_perform(h);
  r.error =
      studentsvc::strip_url_userinfo(error[0] != '\0' ? std::string(error) : std::string(curl_easy_strerror(r.code)));
  curl_easy_getinfo(h, CURLINFO_HTTP_CONNECTCODE, &r.connect_code);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  char* type = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type != nullptr) r.content_type = type;
  char* ip = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip != nullptr) r.primary_ip = ip;
  curl_easy_getinfo(h, CURLINFO_PRIMARY_PORT, &r.primary_port);
  long version = 0;
  curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &version);
  if (version == CURL_HTTP_VERSION_2_0) r.alpn = "h2";
  if (version == CURL_HTTP_VERSION_1_1 || version == CURL_HTTP_VERSION_1_0) r.alpn = "http/1.1";
  char* ca = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_CAINFO, &ca) == CURLE_OK && ca != nullptr) r.ca_file = ca;
  char* capath = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_CAPATH, &capath) == CURLE_OK && capath != nullptr) r.ca_path = capath;
  read_certificate(h, r);
  const auto dns = info_time(h, CURLINFO_NAMELOOKUP_TIME_T);
  const auto connected = info_time(h, CURLINFO_CONNECT_TIME_T);
  const auto tls = info_time(h, CURLINFO_APPCONNECT_TIME_T);
  const auto first = info_time(h, CURLINFO_STARTTRANSFER_TIME_T);
  r.total = info_time(h, CURLINFO_TOTAL_TIME_T);
  r.dns = dns;
  r.connect = connected > dns ? connected - dns : std::chrono::microseconds(0);
  r.tls = tls > connected ? tls - connected : std::chrono::microseconds(0);
  r.answer = first > std::max(tls, connected) ? first - std::max(tls, connected) : std::chrono::microseconds(0);
  curl_easy_cleanup(h);
  curl_slist_free_all(headers);
  return r;
}

}  // namespace studentsvc_cli::doctor

#pragma once
/// @file detail/request/url.hpp
/// @brief Base URL parsing and the HTTPS / loopback rule, path joining and
/// percent-encoding.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/detail/text/ascii.hpp>
#include <studentsvc/errors.hpp>

namespace studentsvc::detail {

/// A base URL split into what requests are built from.
struct BaseUrl {
  std::string scheme;       ///< "https" or "http", lower case.
  std::string authority;    ///< host[:port], IPv6 in brackets, as given.
  std::string host;         ///< host without port or brackets, lower case.
  std::string path_prefix;  ///< "" or "/p/q": leading slash, no trailing slash.

  /// scheme://authority + prefix + path; `path` starts with '/'.
  [[nodiscard]] std::string join(std::string_view path) const {
    std::string out;
    out.reserve(scheme.size() + 3 + authority.size() + path_prefix.size() + path.size());
    out.append(scheme).append("://").append(authority).append(path_prefix).append(path);
    return out;
  }
};

[[nodiscard]] inline bool is_ipv4_loopback(std::string_view host) {
  // 127.0.0.0/8 written as four decimal octets.
  int parts = 0;
  std::size_t pos = 0;
  while (pos <= host.size()) {
    const std::size_t dot = host.find('.', pos);
    const std::string_view part = host.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos);
    if (part.empty() || part.size() > 3) return false;
    int value = 0;
    for (const char c : part) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value > 255 || (parts == 0 && value != 127)) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
  }
  return parts == 4;
}

/// 127.0.0.0/8, ::1 and localhost: the only hosts plain http may reach.
[[nodiscard]] inline bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || is_ipv4_loopback(host);
}

/// Why libcurl could not use `host` (of a base URL, without brackets or port),
/// or nothing. A byte outside ASCII is an internationalised (IDN) name, which
/// libcurl converts only through libidn2 and the process's locale (in the C
/// locale it fails as a "malformed URL" on every request, and a certificate is
/// issued for the ASCII form anyway): it must be given as its `xn--` form.
/// Other characters libcurl refuses in a host name are refused here too.
[[nodiscard]] inline std::optional<std::string> unusable_host_reason(std::string_view host, bool bracketed) {
  for (const char c : host) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return std::string("host is not ASCII: give an internationalised (IDN) host name in its ASCII "
                         "(punycode, xn--) form: https://bücher.example is https://xn--bcher-kva.example");
    }
  }
  if (bracketed) {
    // An IPv6 literal: hex digits, ':' and '.' (an embedded IPv4), and a zone id after "%25".
    const std::string_view address = host.substr(0, host.find('%'));
    if (address.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos) {
      return std::string("has an invalid IPv6 address");
    }
    return std::nullopt;
  }
  // What libcurl's URL parser refuses in a host name (its hostname_check).
  if (const std::size_t bad = host.find_first_of("!{}[]\\$'\"^`*<>=;,+&()%"); bad != std::string_view::npos) {
    return "host contains '" + std::string(1, host[bad]) + "', which a host name cannot hold";
  }
  return std::nullopt;
}

/// Accepts `https://host[:port][/prefix]`, or `http://` to a loopback host
/// when `allow_http_loopback` is set. Trailing slashes are dropped.
[[nodiscard]] inline Result<BaseUrl> parse_base_url(std::string_view url, bool allow_http_loopback) {
  auto fail = [](std::string why) { return make_error(ErrorKind::invalid_argument, "base URL " + std::move(why)); };
  if (url.empty()) return fail("is empty");
  for (const char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return fail("contains a space or control character");
  }
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return fail("has no scheme (expected https://host)");
  BaseUrl out;
  for (const char c : url.substr(0, sep)) out.scheme += ascii_lower(c);
  std::string_view rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) return fail("must not have a query or fragment");
  const std::size_t slash = rest.find('/');
  out.authority = std::string(rest.substr(0, slash));
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (out.authority.empty()) return fail("has no host");
  if (out.authority.find('@') != std::string::npos) return fail("must not carry user information");

  std::string_view host = out.authority;
  std::string_view port;
  if (host.front() == '[') {
    const std::size_t close = host.find(']');
    if (close == std::string_view::npos) return fail("has an unclosed IPv6 bracket");
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return fail("has junk after the IPv6 address");
      port = host.substr(close + 2);
    }
    host = host.substr(1, close - 1);
  } else if (const std::size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  if (host.empty()) return fail("has no host");
  if (auto why = unusable_host_reason(host, out.authority.front() == '[')) return fail(std::move(*why));
  if (out.authority.back() == ':' || (!port.empty() && (port.size() > 5 || port.find_first_not_of("0123456789") !=
                                                                                    std::string_view::npos))) {
    return fail("has an invalid port");
  }
  if (!port.empty()) {
    long value = 0;
    for (const char c : port) value = value * 10 + (c - '0');
    if (value > 65535) return fail("has an invalid port");
  }
  for (const char c : host) out.host += ascii_lower(c);

  if (out.scheme == "http") {
    if (!allow_http_loopback) {
      return fail("uses http://; only https:// is allowed (plain http needs the loopback opt-in)");
    }
    if (!is_loopback_host(out.host)) return fail("uses http:// to a host that is not loopback");
  } else if (out.scheme != "https") {
    return fail("must use https://");
  }

  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  out.path_prefix = std::string(path);
  return out;
}

[[nodiscard]] inline bool is_unreserved(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

/// Percent-encodes every byte outside RFC 3986's unreserved set (and '/' when kept).
[[nodiscard]] inline std::string percent_encode(std::string_view text, bool keep_slash = false) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      out += c;
    } else {
      const auto b = static_cast<unsigned char>(c);
      out += '%';
      out += hex[b >> 4U];
      out += hex[b & 15U];
    }
  }
  return out;
}

/// A caller-given sub-path below a fixed path: each segment encoded, empty
/// segments dropped; "." and ".." refused so it cannot climb out.
[[nodiscard]] inline Result<std::string> encode_sub_path(std::string_view sub_path) {
  std::string out;
  std::size_t pos = 0;
  while (pos <= sub_path.size()) {
    const std::size_t slash = sub_path.find('/', pos);
    const std::string_view seg =
        sub_path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
    if (seg == "." || seg == "..") {
      return make_error(ErrorKind::invalid_argument, "sub-path must not contain '.' or '..' segments");
    }
    if (!seg.empty()) out.append("/").append(percent_encode(seg));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return out;
}

/// `?k=v&k2=v2`, every key and value percent-encoded; "" when there are none.
[[nodiscard]] inline std::string encode_query(const std::vector<std::pair<std::string, std::string>>& query) {
  std::string out;
  for (const auto& [key, value] : query) {
    out += out.empty() ? '?' : '&';
    out += percent_encode(key);
    out += '=';
    out += percent_encode(value);
  }
  return out;
}

}  // namespace studentsvc::detail

#pragma once
/// @file detail/call/redact.hpp
/// @brief Scrubs the credentials of a request out of text that came back from
/// elsewhere (a server's error body that echoes a header, a proxy's page), so an
/// ApiError or log line never carries them even when the server misbehaves.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/auth.hpp>
#include <studentsvc/detail/text/base64.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/detail/request/url_userinfo.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/secret.hpp>
#include <studentsvc/tls.hpp>

namespace studentsvc::detail {

/// What a secret is replaced with.
inline constexpr std::string_view redacted_marker = "[REDACTED]";

/// Secrets shorter than this are not scrubbed: replacing every "ab" in a
/// message would garble it and protect nothing.
inline constexpr std::size_t min_scrubbed_secret = 4;

/// The credentials to scrub: Secret values, so that these copies are wiped
/// when the list goes (a failed call works them out to scrub its text).
using SecretList = std::vector<Secret>;

/// A secret's bytes, as a Secret or a plain string holds them.
[[nodiscard]] inline std::string_view bytes_of(const Secret& s) noexcept { return s.reveal(); }
[[nodiscard]] inline std::string_view bytes_of(const std::string& s) noexcept { return s; }

/// Whether `list` holds `s`.
template <class List>
[[nodiscard]] bool holds_secret(const List& list, std::string_view s) {
  return std::any_of(list.begin(), list.end(), [&](const auto& x) { return bytes_of(x) == s; });
}

/// Longest first, so a secret that contains another is replaced whole.
inline void sort_longest_first(SecretList& secrets) {
  std::sort(secrets.begin(), secrets.end(), [](const Secret& a, const Secret& b) { return a.size() > b.size(); });
}

/// The secrets a request carries: the value of every header not on the
/// logging allow-list (x-api-key, svc-api-key, Authorization, svc-user-jwt, ...),
/// the credential part of an `Authorization: <scheme> <credential>` value, and
/// the Basic password itself (a server may echo the decoded pair).
[[nodiscard]] inline SecretList request_secrets(const Headers& headers, const AuthPolicy& auth) {
  SecretList out;
  auto add = [&out](std::string_view s) {
    if (s.size() >= min_scrubbed_secret && !holds_secret(out, s)) out.emplace_back(s);
  };
  for (const auto& [name, value] : headers) {
    if (is_loggable_header(name)) continue;
    add(value);
    if (iequals(name, "authorization")) {
      if (const auto space = value.find(' '); space != std::string::npos) {
        const std::string_view credential = std::string_view(value).substr(space + 1);
        add(credential);
        // The decoded `id:password` and the password: a server may echo them,
        // and with a CredentialProvider the password is not in `auth`.
        if (iequals(std::string_view(value).substr(0, space), "basic")) {
          if (auto decoded = base64_decode(credential)) {
            const Secret pair(std::move(*decoded));  // the decoded `id:password`, wiped
            add(pair.reveal());
            if (const auto colon = pair.reveal().find(':'); colon != std::string::npos) {
              add(pair.reveal().substr(colon + 1));
            }
          }
        }
      }
    }
  }
  if (auth.basic) add(auth.basic->password.reveal());
  add(auth.api_key.reveal());
  add(auth.svc_api_key.reveal());
  sort_longest_first(out);
  return out;
}

/// The secrets in a URL's `user:password@` part (a proxy URL may carry one):
/// the whole userinfo and the password, each as written and percent-decoded.
/// Nothing for a URL without userinfo.
[[nodiscard]] inline SecretList url_secrets(std::string_view url) {
  SecretList out;
  const auto span = find_userinfo(url);
  if (!span) return out;
  const std::string_view userinfo = url.substr(span->begin, span->at - span->begin);
  auto decode = [](std::string_view text) {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    std::string decoded;
    decoded.reserve(text.size());  // no reallocation leaves a copy behind
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
        decoded += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
        i += 2;
      } else {
        decoded += text[i];
      }
    }
    return Secret(std::move(decoded));
  };
  auto add = [&out](Secret s) {
    if (s.size() >= min_scrubbed_secret && !holds_secret(out, s.reveal())) out.push_back(std::move(s));
  };
  add(Secret(userinfo));
  add(decode(userinfo));
  if (const std::size_t colon = userinfo.find(':'); colon != std::string_view::npos) {
    add(Secret(userinfo.substr(colon + 1)));
    add(decode(userinfo.substr(colon + 1)));
  }
  return out;
}

/// The client key's password (ClientOptions::client_certificate): a TLS
/// library's message or a server's page could quote it.
[[nodiscard]] inline SecretList client_certificate_secrets(const std::optional<ClientCertificate>& certificate) {
  SecretList out;
  if (certificate && certificate->key_password.size() >= min_scrubbed_secret) out.push_back(certificate->key_password);
  return out;
}

/// Adds `more` to `secrets`, keeping them longest first (see request_secrets).
inline void add_secrets(SecretList& secrets, const SecretList& more) {
  if (more.empty()) return;
  for (const auto& s : more) {
    if (!holds_secret(secrets, s.reveal())) secrets.push_back(s);
  }
  sort_longest_first(secrets);
}

/// Replaces every occurrence of each secret in `text` (`secrets`: a SecretList,
/// or plain strings, longest first). When `text` was cut short (it ends in
/// "..."), a trailing piece that begins a secret is removed as well, so no
/// prefix of a secret survives the cut.
template <class List>
void scrub(std::string& text, const List& secrets) {
  if (text.empty()) return;
  for (const auto& held : secrets) {
    const std::string_view secret = bytes_of(held);
    if (secret.empty()) continue;
    for (std::size_t pos = text.find(secret); pos != std::string::npos;
         pos = text.find(secret, pos + redacted_marker.size())) {
      text.replace(pos, secret.size(), redacted_marker);
    }
  }
  if (text.size() > 3 && text.ends_with("...")) {
    // Pieces shorter than min_scrubbed_secret are left: they reveal nothing.
    const std::string_view head = std::string_view(text).substr(0, text.size() - 3);
    std::size_t cut = 0;
    for (const auto& held : secrets) {
      const std::string_view secret = bytes_of(held);
      if (secret.empty()) continue;
      for (std::size_t n = std::min(secret.size() - 1, head.size()); n > cut && n >= min_scrubbed_secret; --n) {
        if (head.substr(head.size() - n) == secret.substr(0, n)) {
          cut = n;
          break;
        }
      }
    }
    if (cut > 0) text.replace(head.size() - cut, cut, redacted_marker);
  }
}

/// Scrubs every text field of an ApiError.
template <class List>
void scrub(ApiError& error, const List& secrets) {
  if (secrets.empty()) return;
  scrub(error.message, secrets);
  scrub(error.detail, secrets);
  scrub(error.body_excerpt, secrets);
  ModelState clean;
  for (auto& [name, messages] : error.model_state) {
    std::string key = name;
    scrub(key, secrets);
    auto& list = clean[key];
    for (auto m : messages) {
      scrub(m, secrets);
      list.push_back(std::move(m));
    }
  }
  error.model_state = std::move(clean);
}

}  // namespace studentsvc::detail

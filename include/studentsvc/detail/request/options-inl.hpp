#pragma once
/// @file detail/request/options-inl.hpp
/// @brief ClientOptions::from_env's bodies: included by options.hpp in
/// header-only mode, compiled once by <studentsvc/src.hpp> otherwise (inlined,
/// with the URL and TLS checks it makes, they cost a TU ~3 s of CPU at -O3).

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/detail/auth/readable_file.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/detail/request/tls_options.hpp>
#include <studentsvc/detail/request/url.hpp>
#include <studentsvc/detail/text/ascii.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc {

namespace detail {

/// A yes/no environment value: 1/true/yes/on or 0/false/no/off (ASCII case ignored).
[[nodiscard]] inline std::optional<bool> parse_env_flag(std::string_view value) noexcept {
  for (const std::string_view yes : {"1", "true", "yes", "on"}) {
    if (iequals(value, yes)) return true;
  }
  for (const std::string_view no : {"0", "false", "no", "off"}) {
    if (iequals(value, no)) return false;
  }
  return std::nullopt;
}

}  // namespace detail

STUDENTSVC_INLINE Result<ClientOptions> ClientOptions::from_env() {
  return from_env([](std::string_view name) -> std::optional<std::string> {
    const std::string key(name);
    // std::getenv is only read here, never written, so concurrent calls are safe.
    if (const char* v = std::getenv(key.c_str()); v != nullptr) return std::string(v);  // NOLINT(concurrency-mt-unsafe)
    return std::nullopt;
  });
}

STUDENTSVC_INLINE Result<ClientOptions> ClientOptions::from_env(
    const std::function<std::optional<std::string>(std::string_view)>& lookup) {
  auto get = [&](std::string_view name) {
    auto v = lookup(name);
    return v && !v->empty() ? v : std::nullopt;
  };
  auto invalid = [](std::string_view variable, const std::string& why) {
    return make_error(ErrorKind::invalid_argument, std::string(variable) + ": " + why);
  };
  ClientOptions o;
  if (auto v = get("STUDENTSVC_ALLOW_INSECURE_LOOPBACK")) {
    const auto flag = detail::parse_env_flag(*v);
    if (!flag) return invalid("STUDENTSVC_ALLOW_INSECURE_LOOPBACK", "expected 1 or 0 (true/false, yes/no, on/off)");
    o.allow_insecure_loopback = *flag;
  }
  auto base = get("STUDENTSVC_BASE_URL");
  if (!base) return make_error(ErrorKind::invalid_argument, "STUDENTSVC_BASE_URL is not set");
  o.base_url = *base;
  if (auto parsed = detail::parse_base_url(o.base_url, o.allow_insecure_loopback); !parsed) {
    std::string why = parsed.error().message;
    if (!o.allow_insecure_loopback && why.find("http://") != std::string::npos && why.find("opt-in") != std::string::npos) {
      why += "; for a server on this machine, such as `studentsvc mock`, set STUDENTSVC_ALLOW_INSECURE_LOOPBACK=1";
    }
    return invalid("STUDENTSVC_BASE_URL", why);
  }
  auto key = get("STUDENTSVC_API_KEY");
  if (!key) return make_error(ErrorKind::invalid_argument, "STUDENTSVC_API_KEY is not set");
  o.auth.api_key = *key;
  if (auto svc = get("STUDENTSVC_SVC_API_KEY")) {
    if (*svc == "off") {
      o.auth.svc_api_key_mode = SvcApiKeyMode::off;
    } else {
      o.auth.svc_api_key_mode = SvcApiKeyMode::custom;
      o.auth.svc_api_key = *svc;
    }
  }
  auto network_id = get("STUDENTSVC_NETWORK_ID");
  auto password = get("STUDENTSVC_PASSWORD");
  if (network_id.has_value() != password.has_value()) {
    return make_error(ErrorKind::invalid_argument, "STUDENTSVC_NETWORK_ID and STUDENTSVC_PASSWORD must be set together");
  }
  if (network_id) o.auth.basic = BasicCredential{*network_id, *password};
  if (auto v = get("STUDENTSVC_API_VERSION")) o.api_version = *v;
  if (auto v = get("STUDENTSVC_CA_BUNDLE")) {
    if (auto why = detail::unreadable_file_reason(*v)) return invalid("STUDENTSVC_CA_BUNDLE", "the file " + *why);
    o.ca_bundle = *v;
  }
  if (auto v = get("STUDENTSVC_CA_PEM")) o.ca_pem = *v;
  auto client_cert = get("STUDENTSVC_CLIENT_CERT");
  auto client_key = get("STUDENTSVC_CLIENT_KEY");
  auto key_password = get("STUDENTSVC_CLIENT_KEY_PASSWORD");
  if (client_cert || client_key) {
    o.client_certificate = ClientCertificate{client_cert.value_or(""), client_key.value_or(""), {}};
    if (key_password) o.client_certificate->key_password = Secret(std::move(*key_password));
  } else if (key_password) {
    return invalid("STUDENTSVC_CLIENT_KEY_PASSWORD", "set without STUDENTSVC_CLIENT_CERT and STUDENTSVC_CLIENT_KEY");
  }
  if (auto v = get("STUDENTSVC_PINNED_PUBLIC_KEY")) o.pinned_public_key = *v;
  if (auto tls = detail::validate_tls(o.client_certificate, o.ca_pem, o.ca_bundle, o.pinned_public_key, o.base_url,
                                      detail::tls_env_names);
      !tls) {
    return std::unexpected(std::move(tls.error()));
  }
  if (auto v = get("STUDENTSVC_PERM_SYNTAX")) {
    const auto syntax = parse_perm_syntax(*v);
    if (!syntax) return invalid("STUDENTSVC_PERM_SYNTAX", "expected digits or alphanumeric");
    o.perm_syntax = *syntax;
  }
  if (auto v = get("STUDENTSVC_LOG")) {
    const auto level = parse_log_level(*v);
    if (!level) return invalid("STUDENTSVC_LOG", "expected trace, debug, info, warning, error or off");
    o.logger = stderr_logger(*level);
  }
  return o;
}

}  // namespace studentsvc

// `studentsvc doctor`: a whole API client's setup checked step by step, as
// `gh auth status`, `aws configure list` and `gcloud info --run-diagnostics`
// do: configuration, proxy, name resolution, connect, TLS, base path, each
// credential, the API version and, asked for, one lookup. It stops at the
// first failure that makes the later checks meaningless, and its output is
// safe to paste into a ticket (no secret, no student field, perms masked).

#include "cmd/doctor/doctor.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <studentsvc/metrics.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/url.hpp>

#include "cmd/doctor/probe.hpp"
#include "cmd/doctor/report.hpp"
#include "config_sources.hpp"
#include "exit_status.hpp"

namespace studentsvc_cli {

namespace {

constexpr std::string_view doctor_help =
    "Usage: studentsvc [OPTIONS] doctor [--json] [--perm P] [--jwt TOKEN] [--show-perms]\n"
    "\n"
    "Checks the whole setup, one line per check with its time (\u2713 passed, \u2717 failed,\n"
    "! warning), and on a failure one hint naming the setting to change; stops at the\n"
    "first failure that makes the later checks meaningless and lists them as skipped:\n"
    "  configuration        each setting and where it came from (secrets: set / not set)\n"
    "  base_url             the base URL, the proxy in use (--proxy or https_proxy, ...,\n"
    "                       never its password) and whether no_proxy exempts the host\n"
    "  dns                  the host's addresses (the proxy's, through a proxy)\n"
    "  connect              TCP connect (and the proxy's CONNECT tunnel)\n"
    "  tls                  protocol, ALPN, the certificate's subject, issuer and days to\n"
    "                       expiry (a warning under 30), host name, the trust store used\n"
    "  base_path            the service answers under the base URL's path prefix\n"
    "  api_key              x-api-key accepted, or the service's 401 AuthErrorBody\n"
    "  student_credentials  svc-api-key and HTTP Basic: a lookup of perm 0000000, which\n"
    "                       cannot exist, answered 404 (accepted) or 401 (refused)\n"
    "  api_version          svc-api-version accepted, or the 400 that refuses it\n"
    "  lookup               with --perm and/or --jwt: found or not found, and the status\n"
    "  total                the time of the whole run\n"
    "\n"
    "Options:\n"
    "  --json                 one JSON object: {\"checks\": [{\"name\", \"status\", \"time_ms\",\n"
    "                         \"detail\", \"hint\"}, ...], \"exit_status\"}\n"
    "  --perm P               also look up this perm (prints found / not found, never a field)\n"
    "  --jwt TOKEN            also check this user JWT (else STUDENTSVC_USER_JWT when set)\n"
    "  --show-perms           show perms in full (default: masked, 12345**)\n"
    "\n"
    "Safe to share: no key, password, Basic value, JWT, proxy password or student field\n"
    "is printed, --verbose included.\n"
    "\n"
    "Doctor's exit status: 0 every check passed (warnings allowed); 3 configuration;\n"
    "4 network or TLS (dns, connect, proxy, tls); 8 base path (not the service's\n"
    "answer); 6 authentication (api_key, student_credentials, a refused JWT);\n"
    "5 api_version refused (400); 1 internal error.\n";

}  // namespace

namespace doctor {
namespace {

/// A perm as doctor shows it: `12345**` unless --show-perms.
std::string shown_perm(const std::string& perm, bool show) {
  if (show) return printable(perm);
  if (perm.size() == 7 && perm.find_first_not_of("0123456789") == std::string::npos) return perm.substr(0, 5) + "**";
  return "(not a 7-digit perm)";
}

/// The first `max` characters of a server's text, on one line.
std::string excerpt(std::string_view text, std::size_t max = 120) {
  std::string out = printable(text.substr(0, max));
  if (text.size() > max) out += "...";
  return out;
}

class Doctor {
 public:
  Doctor(const Args& a, const ConfigSources& sources, IoStreams io) : a_(a), sources_(sources), io_(io) {
    checks_.reserve(16);  // every check at most once: references to them stay valid
  }

  /// Runs the checks; returns the exit status.
  int run() {
    const auto started = std::chrono::steady_clock::now();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    collect_secrets();
    if (configuration() && base_url() && dns() && probe_checks() && student_checks()) lookup();
    mark_skipped();
    Check total{"total", Status::ok, elapsed(started), "", "", {}, 0};
    std::size_t passed = 0, failed = 0, warned = 0, skipped = 0;
    for (const auto& c : checks_) {
      passed += c.status == Status::ok ? 1U : 0U;
      failed += c.status == Status::failed ? 1U : 0U;
      warned += c.status == Status::warning ? 1U : 0U;
      skipped += c.status == Status::skipped ? 1U : 0U;
    }
    total.detail = std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " +
                   std::to_string(warned) + " warnings, " + std::to_string(skipped) + " skipped";
    checks_.push_back(std::move(total));
    int exit = exit_ok;
    for (const auto& c : checks_) {
      if (c.status == Status::failed) {
        exit = c.exit;
        break;
      }
    }
    if (a_.json) {
      print_json(io_.out, checks_, exit, clean_);
    } else {
      print_text(io_.out, checks_, clean_);
    }
    curl_global_cleanup();
    return exit;
  }

 private:
  static std::chrono::microseconds elapsed(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - since);
  }

  Check& add(std::string name) {
    checks_.push_back(Check{std::move(name), Status::ok, {}, "", "", {}, 0});
    return checks_.back();
  }
  bool fail(Check& c, std::string detail, std::string hint, int exit) {
    c.status = Status::failed;
    c.detail = std::move(detail);
    c.hint = std::move(hint);
    c.exit = exit;
    return false;
  }

  void collect_secrets() {
    for (const auto& s : settings) {
      if (!s.secret) continue;
      if (auto v = sources_.value(s.env); v && *v != "off") clean_.add(*v);
    }
    jwt_ = a_.jwt ? a_.jwt : getenv_string("STUDENTSVC_USER_JWT");
    if (jwt_ && jwt_->empty()) jwt_.reset();
    if (jwt_) clean_.add(*jwt_);
    auto proxy_userinfo = [&](const std::string& url) {
      if (!studentsvc::has_url_userinfo(url)) return;
      const std::string stripped = studentsvc::strip_url_userinfo(url);
      // The userinfo is what stripping removed: "user:password@".
      std::size_t i = 0;
      while (i < url.size() && i < stripped.size() && url[i] == stripped[i]) ++i;
      const std::string userinfo = url.substr(i, url.size() - stripped.size());
      clean_.add(userinfo);
      if (const auto colon = userinfo.find(':'); colon != std::string::npos) {
        clean_.add(userinfo.substr(colon + 1, userinfo.size() - colon - 2));
      }
    };
    proxy_userinfo(a_.proxy);
    for (const char* name : {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
      if (auto v = getenv_string(name)) proxy_userinfo(*v);
    }
  }

  bool configuration() {
    const auto started = std::chrono::steady_clock::now();
    Check& c = add("configuration");
    for (const auto& s : settings) {
      const auto v = sources_.value(s.env);
      std::string shown;
      if (!v || v->empty()) {
        shown = "not set";
      } else if (s.secret) {
        shown = *v == "off" ? "off" : "set";
      } else if (s.env == "STUDENTSVC_CA_PEM") {
        shown = "set (PEM text, " + std::to_string(v->size()) + " bytes)";
      } else {
        shown = studentsvc::strip_url_userinfo(*v);
      }
      std::string line = std::string(s.env) + " = " + shown + "  (from " + sources_.source(s) + ")";
      c.lines.push_back(std::move(line));
    }
    c.lines.push_back(std::string("STUDENTSVC_USER_JWT = ") + (jwt_ ? "set" : "not set") + "  (from " +
                      (a_.jwt ? "--jwt"
                       : jwt_ ? "STUDENTSVC_USER_JWT"
                              : "default") +
                      ")");
    auto options = build_options(a_, sources_, io_.err);
    if (options) {
      if (options->auth.basic) {
        const std::string basic = studentsvc::basic_authorization_value(*options->auth.basic);
        clean_.add(basic);
        clean_.add(basic.substr(basic.find(' ') + 1));
      }
      if (a_.perm && !a_.show_perms) clean_.replace(*a_.perm, shown_perm(*a_.perm, false));
      // -v: the SDK's log lines pass through the same redaction (a perm in a URL is masked too).
      if (options->logger.sink) {
        options->logger.sink = [sink = options->logger.sink, clean = clean_](studentsvc::LogLevel level,
                                                                             std::string_view line) {
          sink(level, clean(std::string(line)));
        };
      }
      if (a_.stats) {
        stats_ = std::make_shared<studentsvc::AttemptMetrics>();
        options->instrumentation = stats_;
      }
      auto client = studentsvc::Client::create(*options);
      if (!client) {
        options = std::unexpected(client.error());
      } else {
        client_.emplace(std::move(*client));
      }
    }
    c.time = elapsed(started);
    if (!options) {
      const std::string why = options.error().message;
      std::string hint = "fix the setting the message names, then run doctor again";
      if (why.starts_with("no base URL"))
        hint = "set STUDENTSVC_BASE_URL (or --base-url) to the endpoint URL the operators gave";
      if (why.starts_with("no API key")) hint = "set STUDENTSVC_API_KEY (or --api-key) to the key issued with that URL";
      if (why.find("network id and the password") != std::string::npos)
        hint = "set both STUDENTSVC_NETWORK_ID and STUDENTSVC_PASSWORD";
      if (why.find("http://") != std::string::npos)
        hint = "use an https:// STUDENTSVC_BASE_URL (http:// only to a loopback test server, with --insecure-loopback)";
      return fail(c, "the configuration cannot work: " + why, hint,
                  exit_status(studentsvc::ErrorKind::invalid_argument));
    }
    options_ = std::move(*options);
    c.detail = "base URL from " + sources_.source("STUDENTSVC_BASE_URL") + ", API key from " +
               sources_.source("STUDENTSVC_API_KEY") + ", Basic " +
               (options_.auth.basic ? "from " + sources_.source("STUDENTSVC_PASSWORD") : std::string("not configured"));
    return true;
  }

  bool base_url() {
    const auto started = std::chrono::steady_clock::now();
    Check& c = add("base_url");
    auto parts = url_parts(options_.base_url);
    if (!parts) {
      return fail(c, "cannot read the base URL " + studentsvc::strip_url_userinfo(options_.base_url),
                  "check STUDENTSVC_BASE_URL (or --base-url)", exit_status(studentsvc::ErrorKind::invalid_argument));
    }
    url_ = *parts;
    proxy_ = choose_proxy(options_.proxy, url_);
    std::string detail = studentsvc::strip_url_userinfo(options_.base_url);
    if (url_.scheme != "https") {
      detail += "; no proxy (http:// goes only to a loopback test server, never through a proxy)";
    } else if (proxy_.url.empty()) {
      detail += "; no proxy (neither --proxy nor https_proxy, all_proxy is set)";
    } else if (!proxy_.exempted_by.empty()) {
      detail += "; proxy " + proxy_.url + " (from " + proxy_.from + ") not used: " + proxy_.exempted_by + " exempts " +
                url_.host;
    } else {
      detail += "; through proxy " + proxy_.url + " (from " + proxy_.from +
                (proxy_.has_credentials ? ", with credentials" : "") + "); no_proxy does not exempt " + url_.host;
    }
    c.detail = detail;
    if (!proxy_.url.empty() && proxy_.exempted_by.empty()) {
      proxy_parts_ = url_parts(proxy_.url.find("://") == std::string::npos ? "http://" + proxy_.url : proxy_.url);
      if (!proxy_parts_) {
        return fail(c, detail + "; the proxy URL cannot be read", "check --proxy (or " + proxy_.from + ")",
                    exit_status(studentsvc::ErrorKind::invalid_argument));
      }
      if (proxy_parts_->port.empty()) proxy_parts_->port = "1080";
    }
    c.time = elapsed(started);
    return true;
  }

  [[nodiscard]] bool proxied() const { return proxy_parts_.has_value(); }

  bool dns() {
    Check& c = add("dns");
    const std::string host = proxied() ? proxy_parts_->host : url_.host;
    const std::string port = proxied() ? proxy_parts_->port : url_.port;
    const auto r = resolve(host, port);
    c.time = r.time;
    if (!r.error.empty()) {
      return fail(c, "cannot resolve " + host + ": " + r.error,
                  proxied() ? "check the proxy's host name in " + proxy_.from
                            : "check the host name in STUDENTSVC_BASE_URL (or --base-url), and the DNS or VPN",
                  exit_status(studentsvc::ErrorKind::transport));
    }
    std::string list;
    for (const auto& address : r.addresses) list += (list.empty() ? "" : ", ") + address;
    c.detail = host + " -> " + list + (proxied() ? " (the proxy resolves " + url_.host + ")" : "");
    return true;
  }

  /// connect, tls, base_path and api_key, from one request with the API key only.
  bool probe_checks() {
    ProbeSettings p;
    std::string base = options_.base_url;
    while (base.ends_with('/')) base.pop_back();
    probe_url_ = base + "/students/v2/students/current";
    p.url = probe_url_;
    p.ca_bundle = options_.ca_bundle;
    p.ca_pem = options_.ca_pem;
    if (options_.client_certificate) {
      p.client_cert = options_.client_certificate->cert_file;
      p.client_key = options_.client_certificate->key_file;
      p.client_key_password = std::string(options_.client_certificate->key_password.reveal());
    }
    p.pinned_public_key = options_.pinned_public_key;
    p.proxy = options_.proxy;
    p.no_proxy = url_.scheme != "https";
    p.connect_timeout = options_.connect_timeout;
    p.timeout = options_.timeout;
    p.headers = {"x-api-key: " + std::string(options_.auth.api_key.reveal()), "Accept: application/json"};
    const ProbeResult r = run_probe(p);
    const bool tls = url_.scheme == "https";

    Check& connect = add("connect");
    connect.time = r.connect;
    const std::string target = url_.host + ":" + url_.port;
    if (r.connect_code >= 300) {
      const std::string hint =
          r.connect_code == 407
              ? "the proxy wants credentials: put user:password in --proxy or " + proxy_.from + " (percent-encoded)"
              : "the proxy refuses CONNECT to " + target + ": ask its operators, or exempt the host in no_proxy";
      return fail(
          connect,
          "the proxy " + proxy_.url + " refused the tunnel to " + target + " (" + std::to_string(r.connect_code) + ")",
          hint, exit_status(studentsvc::ErrorKind::transport));
    }
    if (r.code == CURLE_COULDNT_CONNECT || (r.code == CURLE_OPERATION_TIMEDOUT && r.primary_port == 0) ||
        r.code == CURLE_COULDNT_RESOLVE_HOST || r.code == CURLE_COULDNT_RESOLVE_PROXY) {
      const std::string where = proxied() ? "the proxy " + proxy_.url : target;
      return fail(connect, "cannot connect to " + where + ": " + r.error,
                  proxied() ? "check the proxy's host and port in " + proxy_.from
                            : "check the host and port in STUDENTSVC_BASE_URL (nothing answers there), or a firewall",
                  exit_status(studentsvc::ErrorKind::transport));
    }
    connect.detail = (r.primary_ip.empty() ? target : r.primary_ip + ":" + std::to_string(r.primary_port)) +
                     (proxied() ? " (the proxy " + proxy_.url + "), tunnel to " + target + " established" : "");

    Check& tls_check = add("tls");
    tls_check.time = r.tls;
    const std::string trust =
        options_.ca_bundle.empty()
            ? "the system trust store (" + (r.ca_file.empty() ? r.ca_path : r.ca_file) + ")"
            : "the CA bundle " + options_.ca_bundle + " (from " + sources_.source("STUDENTSVC_CA_BUNDLE") + ")";
    if (!tls) {
      tls_check.detail = "not used: http:// to a loopback test server (--insecure-loopback)";
    } else if (r.code == CURLE_PEER_FAILED_VERIFICATION || r.code == CURLE_SSL_CACERT_BADFILE ||
               r.code == CURLE_SSL_CONNECT_ERROR || r.code == CURLE_SSL_CERTPROBLEM ||
               r.code == CURLE_SSL_ISSUER_ERROR) {
      // Read the certificate that failed, on a handshake that sends nothing.
      ProbeSettings look = p;
      look.verify = false;
      look.headers.clear();
      const ProbeResult seen = run_probe(look);
      std::string cert = seen.certificate ? describe(*seen.certificate) : std::string("certificate not readable");
      std::string hint;
      std::string why;
      if (r.error.find("expired") != std::string::npos) {
        why = "the server's certificate has expired";
        hint = "the certificate of " + url_.host + " expired: the service's operators must renew it";
      } else if (r.error.find("subject name") != std::string::npos ||
                 r.error.find("does not match") != std::string::npos ||
                 r.error.find("host name") != std::string::npos) {
        why = "the certificate is for another host";
        hint = "the certificate does not name " + url_.host +
               ": check the host in STUDENTSVC_BASE_URL (or a proxy intercepting TLS)";
      } else if (r.error.find("certificate") != std::string::npos || r.error.find("issuer") != std::string::npos ||
                 r.code == CURLE_PEER_FAILED_VERIFICATION) {
        why = "the certificate is not trusted by " + trust;
        hint =
            "set STUDENTSVC_CA_BUNDLE (or --ca-bundle) to a PEM file with the CA that issued it (a corporate proxy's "
            "CA, say)";
      } else {
        why = "the TLS handshake failed";
        hint = "check that " + target + " speaks HTTPS, and STUDENTSVC_CA_BUNDLE";
      }
      if (r.total > r.dns + r.connect) tls_check.time = r.total - r.dns - r.connect;  // the handshake that failed
      return fail(tls_check, why + ": " + r.error + "; " + cert, hint, exit_status(studentsvc::ErrorKind::transport));
    } else if (r.code == CURLE_OK || r.status > 0) {
      std::string detail =
          (r.tls_version.empty() ? std::string("TLS") : r.tls_version) + ", ALPN " + (r.alpn.empty() ? "none" : r.alpn);
      if (r.certificate) detail += ", " + describe(*r.certificate);
      detail += ", host name matches, verified by " + trust;
      tls_check.detail = detail;
      if (r.certificate && r.certificate->days_left && *r.certificate->days_left < 30) {
        tls_check.status = Status::warning;
        tls_check.hint = "the certificate of " + url_.host + " expires in " +
                         std::to_string(*r.certificate->days_left) + " days: tell the service's operators";
      }
    }
    if (r.code != CURLE_OK && r.status == 0) {
      Check& failed = tls ? tls_check : connect;
      return fail(failed, "the request failed: " + r.error, "check STUDENTSVC_BASE_URL, the proxy and --timeout",
                  exit_status(studentsvc::ErrorKind::transport));
    }

    Check& path = add("base_path");
    path.time = r.answer;
    const auto j = nlohmann::json::parse(r.body, nullptr, false);
    const bool json = !j.is_discarded() && j.is_object() && r.content_type.find("json") != std::string::npos;
    const std::string answer =
        std::to_string(r.status) + " " + (r.content_type.empty() ? "no content type" : r.content_type);
    const auto text_of = [&](const char* key) {
      return json && j.contains(key) && j[key].is_string() ? excerpt(j[key].get<std::string>()) : std::string();
    };
    const std::string shown_url = studentsvc::strip_url_userinfo(probe_url_);
    if (!json) {
      return fail(path, "an answer that is not the service's (" + answer + ") from " + shown_url,
                  "the path prefix of STUDENTSVC_BASE_URL is probably wrong (or a gateway or captive portal answered)",
                  exit_status(studentsvc::ErrorKind::http_status));
    }
    if (r.status == 404) {
      return fail(path,
                  "the service does not know " + shown_url + " (" + answer +
                      (text_of("message").empty() ? "" : ": " + text_of("message")) + ")",
                  "the path prefix of STUDENTSVC_BASE_URL is probably wrong",
                  exit_status(studentsvc::ErrorKind::http_status));
    }
    path.detail = "the service answered at " + shown_url + " (" + answer + ")";

    Check& key = add("api_key");
    if (r.status == 401 && !text_of("detail").empty()) {
      path.status = Status::warning;  // not proven: the service checks the key before the route
      path.detail += "; the path itself is checked only once the key is accepted";
      return fail(
          key, "x-api-key refused: 401 AuthErrorBody \"" + text_of("detail") + "\"",
          "set STUDENTSVC_API_KEY (or --api-key) to the key issued for this base URL (a key for another environment?)",
          exit_status(studentsvc::ErrorKind::unauthorized));
    }
    if (r.status >= 500) {
      key.status = Status::warning;
      key.detail = "not proven: the service answered " + answer;
      key.hint = "a server error: try again later, or tell the service's operators";
      return true;
    }
    key.detail = "x-api-key accepted (" + std::to_string(r.status) + " asks for the student credentials, not the key)";
    return true;
  }

  static std::string describe(const Certificate& c) {
    std::string out = "subject " + c.subject + ", issuer " + c.issuer;
    if (c.days_left) {
      out += *c.days_left < 0 ? ", expired " + std::to_string(-*c.days_left) + " days ago"
                              : ", expires in " + std::to_string(*c.days_left) + " days";
    }
    return out;
  }

  /// student_credentials and api_version, through the SDK: a lookup of a perm that cannot exist.
  bool student_checks() {
    studentsvc::CallOptions call;
    // The interface's default: a refused configured version cannot hide the credentials' answer.
    call.api_version = "2.0";
    call.retry = studentsvc::RetryPolicy{};
    call.retry->max_attempts = 1;
    const auto started = std::chrono::steady_clock::now();
    const auto r = client_->get_student(impossible_perm, call);
    Check& c = add("student_credentials");
    c.time = elapsed(started);
    const bool basic = options_.auth.basic.has_value();
    const std::string what =
        std::string("svc-api-key") + (basic ? " and Basic (" + options_.auth.basic->network_id + ")" : "");
    if (r || r.error().kind == studentsvc::ErrorKind::not_found) {
      c.detail = what + " accepted: " + (r ? std::string("200") : "404") + " for perm " + std::string(impossible_perm) +
                 ", which cannot exist";
      if (!basic) {
        c.status = Status::warning;
        c.hint =
            "no Basic credential configured: set STUDENTSVC_NETWORK_ID and STUDENTSVC_PASSWORD if the service asks for "
            "one";
      }
    } else if (r.error().kind == studentsvc::ErrorKind::unauthorized) {
      return fail(
          c, what + " refused: 401 \"" + excerpt(r.error().message) + "\"",
          basic ? "check STUDENTSVC_SVC_API_KEY and the Basic account (STUDENTSVC_NETWORK_ID, STUDENTSVC_PASSWORD): "
                  "an account not yet approved by the registrar is refused"
                : "set STUDENTSVC_NETWORK_ID and STUDENTSVC_PASSWORD (the service account), and STUDENTSVC_SVC_API_KEY",
          exit_status(studentsvc::ErrorKind::unauthorized));
    } else if (r.error().kind == studentsvc::ErrorKind::bad_request &&
               r.error().model_state.contains("svc-api-version")) {
      c.status = Status::warning;
      c.detail = "not proven: the service refused svc-api-version 2.0 before checking them";
    } else {
      return fail(c, "the lookup failed: " + excerpt(studentsvc::to_string(r.error()), 200),
                  "check STUDENTSVC_BASE_URL and the credentials", exit_status(r.error().kind));
    }

    const auto version_started = std::chrono::steady_clock::now();
    Check& v = add("api_version");
    const std::string version = options_.api_version;
    call.api_version.reset();  // the configured one
    const auto rv = version == "2.0" ? r : client_->get_student(impossible_perm, call);
    v.time = version == "2.0" ? std::chrono::microseconds(0) : elapsed(version_started);
    if (!rv && rv.error().kind == studentsvc::ErrorKind::bad_request &&
        rv.error().model_state.contains("svc-api-version")) {
      const auto& messages = rv.error().model_state.at("svc-api-version");
      return fail(v,
                  "svc-api-version " + printable(version) + " refused: 400 \"" +
                      excerpt(messages.empty() ? rv.error().message : messages.front()) + "\"",
                  "set STUDENTSVC_API_VERSION (or --api-version) to a version the service accepts (its default is 2.0)",
                  exit_status(studentsvc::ErrorKind::bad_request));
    }
    if (!rv && rv.error().kind != studentsvc::ErrorKind::not_found) {
      return fail(v, "the lookup failed: " + excerpt(studentsvc::to_string(rv.error()), 200),
                  "check STUDENTSVC_API_VERSION", exit_status(rv.error().kind));
    }
    v.detail = "svc-api-version " + printable(version) + " accepted (from " +
               sources_.source("STUDENTSVC_API_VERSION") + ")" + (version == "2.0" ? ", the same lookup" : "");
    return true;
  }

  void lookup() {
    if (!a_.perm && !jwt_) return;
    const auto started = std::chrono::steady_clock::now();
    Check& c = add("lookup");
    studentsvc::CallOptions call;
    if (jwt_) call.user_jwt = *jwt_;
    const auto r = a_.perm ? client_->get_student(*a_.perm, call) : client_->current_student(*jwt_);
    c.time = elapsed(started);
    const std::string what = a_.perm
                                 ? "perm " + shown_perm(*a_.perm, a_.show_perms) + (jwt_ ? " with the user JWT" : "")
                                 : std::string("the user JWT's own student (current)");
    if (r) {
      c.detail = what + ": found (200)";
      return;
    }
    const auto& e = r.error();
    if (e.kind == studentsvc::ErrorKind::not_found) {
      c.status = Status::warning;
      c.detail = what + ": not found (404)";
      c.hint = jwt_ && a_.perm ? "the JWT names another student, or the perm is not known"
                               : "the perm is not known to the service";
      return;
    }
    std::string hint = "see the status";
    if (e.kind == studentsvc::ErrorKind::invalid_argument)
      hint = "--perm takes a 7-digit perm; --jwt a non-empty token";
    if (e.kind == studentsvc::ErrorKind::unauthorized)
      hint = "the user JWT is refused: get a fresh one (--jwt or STUDENTSVC_USER_JWT)";
    if (e.kind == studentsvc::ErrorKind::bad_request) hint = "the service refused the request: check --perm and --jwt";
    (void)fail(c,
               what + ": " + std::string(studentsvc::to_string(e.kind)) +
                   (e.status > 0 ? " (" + std::to_string(e.status) + ")" : ""),
               hint, exit_status(e.kind));
  }

  /// Every check not run after a failure, named, so the output says what was not tried.
  void mark_skipped() {
    static constexpr std::string_view order[] = {"configuration", "base_url",  "dns",     "connect",
                                                 "tls",           "base_path", "api_key", "student_credentials",
                                                 "api_version",   "lookup"};
    const bool stopped =
        std::any_of(checks_.begin(), checks_.end(), [](const Check& c) { return c.status == Status::failed; });
    if (!stopped) return;
    for (const auto name : order) {
      if (name == "lookup" && !a_.perm && !jwt_) continue;
      const bool ran = std::any_of(checks_.begin(), checks_.end(), [&](const Check& c) { return c.name == name; });
      if (!ran) checks_.push_back(Check{std::string(name), Status::skipped, {}, "skipped", "", {}, 0});
    }
  }

  static constexpr std::string_view impossible_perm = "0000000";

  const Args& a_;
  const ConfigSources& sources_;
  IoStreams io_;
  std::shared_ptr<studentsvc::AttemptMetrics> stats_;  // --stats: the API checks' attempts

 public:
  [[nodiscard]] const std::shared_ptr<studentsvc::AttemptMetrics>& stats() const noexcept { return stats_; }

 private:
  Redactor clean_;
  std::optional<std::string> jwt_;
  studentsvc::ClientOptions options_;
  std::optional<studentsvc::Client> client_;
  UrlParts url_;
  ProxyChoice proxy_;
  std::optional<UrlParts> proxy_parts_;
  std::string probe_url_;
  std::vector<Check> checks_;
};

}  // namespace
}  // namespace doctor

namespace {

void add_doctor_options(CLI::App& sub, Args& a) {
  sub.add_flag("--json", a.json)->disable_flag_override();
  sub.add_option_function<std::string>("--perm", [&a](const std::string& v) { a.perm = v; });
  sub.add_option_function<std::string>("--jwt", [&a](const std::string& v) { a.jwt = v; });
  sub.add_flag("--show-perms", a.show_perms)->disable_flag_override();
}

std::optional<std::string> doctor_misuse(const Args& a) {
  if (!a.positionals.empty()) return "doctor takes no arguments (a perm goes in --perm)";
  if (a.format) return "doctor prints lines, or JSON with --json; --format does not apply";
  return std::nullopt;
}

}  // namespace

int run_doctor(Session& s) {
  doctor::Doctor d(s.args, *s.sources, s.io);
  const int status = d.run();
  if (d.stats()) s.io.err << d.stats()->prometheus_text();  // the SDK's own labels only: no perm, no secret
  return status;
}

const Command doctor_command{
    .name = "doctor",
    .help = doctor_help,
    .needs = Needs::configuration,
    .add_options = add_doctor_options,
    .misuse = doctor_misuse,
    .run = run_doctor,
};

}  // namespace studentsvc_cli

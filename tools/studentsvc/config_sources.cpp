// The tool's configuration: flags over the STUDENTSVC_* environment (or over the
// mock's settings), where each value came from, and the ClientOptions they make.

#include "config_sources.hpp"

#include <cstdlib>
#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/url.hpp>

#include "args.hpp"
#include "exit_status.hpp"
#include "profiles.hpp"

namespace studentsvc_cli {

std::optional<std::string> getenv_string(std::string_view name) {
  const std::string key(name);
  // Only read, never written, in this single-threaded part of the program.
  if (const char* v = std::getenv(key.c_str()); v != nullptr) return std::string(v);  // NOLINT(concurrency-mt-unsafe)
  return std::nullopt;
}

ConfigSources::ConfigSources(const Args& a, const std::optional<studentsvc::ClientOptions>& mock,
                             std::optional<Profile> profile)
    : mock_(mock.has_value()), profile_(std::move(profile)) {
  if (a.insecure_loopback) flags_["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = "1";
  for (const auto& [name, value] : a.env_overrides) flags_[name] = value;
  if (!mock) return;
  mock_env_["STUDENTSVC_BASE_URL"] = mock->base_url;
  mock_env_["STUDENTSVC_API_KEY"] = std::string(mock->auth.api_key.reveal());
  mock_env_["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"] = mock->allow_insecure_loopback ? "1" : "0";
  if (mock->auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom) {
    mock_env_["STUDENTSVC_SVC_API_KEY"] = std::string(mock->auth.svc_api_key.reveal());
  }
  if (mock->auth.basic) {
    mock_env_["STUDENTSVC_NETWORK_ID"] = mock->auth.basic->network_id;
    mock_env_["STUDENTSVC_PASSWORD"] = std::string(mock->auth.basic->password.reveal());
  }
}

std::optional<std::string> ConfigSources::value(std::string_view name) const {
  if (const auto it = flags_.find(name); it != flags_.end()) return it->second;
  if (mock_) {
    if (const auto it = mock_env_.find(name); it != mock_env_.end()) return it->second;
    return std::nullopt;
  }
  if (auto v = getenv_string(name); v && !v->empty()) return v;
  if (profile_) {
    if (const auto it = profile_->values.find(name); it != profile_->values.end()) return it->second;
  }
  return getenv_string(name);
}

bool ConfigSources::is_set(std::string_view name) const {
  const auto v = value(name);
  return v && !v->empty();
}

std::string ConfigSources::source(const Setting& s) const {
  if (flags_.contains(s.env)) return std::string(s.flag);
  if (mock_) return is_set(s.env) ? "the mock server" : "default";
  if (const auto v = getenv_string(s.env); v && !v->empty()) return std::string(s.env);
  if (profile_ && profile_->values.contains(s.env)) return "profile " + profile_->name + " (" + profile_->file + ")";
  return "default";
}

std::string ConfigSources::source(std::string_view env) const {
  for (const auto& s : settings) {
    if (s.env == env) return source(s);
  }
  return "default";
}

Lookup ConfigSources::lookup() const {
  return [this](std::string_view name) { return value(name); };
}

std::expected<std::optional<Profile>, std::string> selected_profile(const Args& a) {
  auto name = a.profile ? a.profile : getenv_string("STUDENTSVC_PROFILE");
  if (!name || name->empty() || a.mock) return std::optional<Profile>();
  auto file = a.config_file ? a.config_file : getenv_string("STUDENTSVC_CONFIG");
  if (!file || file->empty()) file = default_config_file(getenv_string);
  if (!file)
    return std::unexpected("profile '" + *name + "': no config file (set --config, STUDENTSVC_CONFIG or HOME)");
  auto profile = load_profile(*file, *name);
  if (!profile) return std::unexpected(profile.error());
  return std::optional<Profile>(std::move(*profile));
}

/// ClientOptions from flags over the environment (or over the mock's settings).
studentsvc::Result<studentsvc::ClientOptions> build_options(const Args& a, const ConfigSources& sources,
                                                            std::ostream& err) {
  using studentsvc::ErrorKind;
  using studentsvc::make_error;
  if (!sources.is_set("STUDENTSVC_BASE_URL")) {
    return make_error(ErrorKind::invalid_argument,
                      "no base URL: set STUDENTSVC_BASE_URL or pass --base-url (or try --mock)");
  }
  if (!sources.is_set("STUDENTSVC_API_KEY")) {
    return make_error(ErrorKind::invalid_argument, "no API key: set STUDENTSVC_API_KEY or pass --api-key");
  }
  if (sources.is_set("STUDENTSVC_NETWORK_ID") != sources.is_set("STUDENTSVC_PASSWORD")) {
    return make_error(ErrorKind::invalid_argument,
                      "the network id and the password go together: set both STUDENTSVC_NETWORK_ID and "
                      "STUDENTSVC_PASSWORD (or --network-id and --password)");
  }
  auto options = studentsvc::ClientOptions::from_env(sources.lookup());
  if (!options) {
    if (!a.insecure_loopback && options.error().message.find("http://") != std::string::npos) {
      options.error().message += " (for a local test server: --insecure-loopback)";
    }
    return options;
  }
  if (a.insecure_loopback) options->allow_insecure_loopback = true;
  options->proxy = a.proxy;
  if (a.timeout) options->timeout = *a.timeout;
  if (a.retries) options->retry.max_attempts = *a.retries + 1;
  if (a.verbose > 0) {
    options->logger.level = a.verbose > 1 ? studentsvc::LogLevel::trace : studentsvc::LogLevel::debug;
    options->logger.sink = [&err](studentsvc::LogLevel level, std::string_view line) {
      err << "studentsvc: " << studentsvc::to_string(level) << ": " << printable(line) << '\n';
    };
    options->logger.log(
        studentsvc::LogLevel::debug,
        "config: base URL from " + sources.source("STUDENTSVC_BASE_URL") + " (" +
            studentsvc::strip_url_userinfo(options->base_url) + "), API key from " +
            sources.source("STUDENTSVC_API_KEY") + ", svc-api-key " +
            (options->auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::off      ? std::string("off")
             : options->auth.svc_api_key_mode == studentsvc::SvcApiKeyMode::custom ? "set separately"
                                                                                   : "same as the API key") +
            ", Basic credential " +
            (options->auth.basic ? "from " + sources.source("STUDENTSVC_PASSWORD") : std::string("not configured")) +
            ", svc-api-version " + options->api_version);
  }
  return options;
}

}  // namespace studentsvc_cli

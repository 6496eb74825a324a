#pragma once
// The tool's configuration: flags over the STUDENTSVC_* environment (or over the
// mock's settings), where each value came from, and the ClientOptions they make.

#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <studentsvc/studentsvc.hpp>

#include "args.hpp"
#include "profiles.hpp"

namespace studentsvc_cli {

using Lookup = std::function<std::optional<std::string>(std::string_view)>;

/// The environment variable `name`, or nullopt when it is not set.
[[nodiscard]] std::optional<std::string> getenv_string(std::string_view name);

/// The variables the tool reads, with the flag that beats each.
struct Setting {
  std::string_view env;
  std::string_view flag;
  bool secret;
};
inline constexpr Setting settings[] = {
    {"STUDENTSVC_BASE_URL", "--base-url", false},
    {"STUDENTSVC_API_KEY", "--api-key", true},
    {"STUDENTSVC_SVC_API_KEY", "--svc-api-key", true},
    {"STUDENTSVC_NETWORK_ID", "--network-id", false},
    {"STUDENTSVC_PASSWORD", "--password", true},
    {"STUDENTSVC_API_VERSION", "--api-version", false},
    {"STUDENTSVC_PERM_SYNTAX", "--perm-syntax", false},
    {"STUDENTSVC_CA_BUNDLE", "--ca-bundle", false},
    {"STUDENTSVC_CA_PEM", "--ca-pem", false},
    {"STUDENTSVC_CLIENT_CERT", "--client-cert", false},
    {"STUDENTSVC_CLIENT_KEY", "--client-key", false},
    {"STUDENTSVC_CLIENT_KEY_PASSWORD", "--client-key-password", true},
    {"STUDENTSVC_PINNED_PUBLIC_KEY", "--pinned-public-key", false},
    {"STUDENTSVC_ALLOW_INSECURE_LOOPBACK", "--insecure-loopback", false},
    {"STUDENTSVC_LOG", "-v", false},
};

/// Where the tool's settings come from: a flag, then (without --mock) the
/// environment, then the selected profile; or (with --mock) the mock server's
/// own settings under the flags.
class ConfigSources {
 public:
  ConfigSources(const Args& a, const std::optional<studentsvc::ClientOptions>& mock,
                std::optional<Profile> profile = std::nullopt);

  /// flag > environment > profile (or flag > mock); nullopt when none has it.
  [[nodiscard]] std::optional<std::string> value(std::string_view name) const;
  [[nodiscard]] bool is_set(std::string_view name) const;
  /// "--base-url", "STUDENTSVC_BASE_URL", "profile NAME (FILE)", "the mock server" or "default"; never the value.
  [[nodiscard]] std::string source(const Setting& s) const;
  [[nodiscard]] std::string source(std::string_view env) const;
  [[nodiscard]] Lookup lookup() const;

 private:
  bool mock_;
  std::optional<Profile> profile_;
  std::map<std::string, std::string, std::less<>> flags_;
  std::map<std::string, std::string, std::less<>> mock_env_;
};

/// The profile named by --profile or STUDENTSVC_PROFILE, from --config FILE,
/// STUDENTSVC_CONFIG or the default file; nullopt when none is named.
[[nodiscard]] std::expected<std::optional<Profile>, std::string> selected_profile(const Args& a);

/// ClientOptions from flags over the environment (or over the mock's settings);
/// with -v the SDK's log lines go to `err`.
[[nodiscard]] studentsvc::Result<studentsvc::ClientOptions> build_options(const Args& a, const ConfigSources& sources,
                                                                          std::ostream& err);

}  // namespace studentsvc_cli

#pragma once
// Named profiles in a JSON config file: base URL, CA bundle, API version and
// account, with secrets given as files (`api_key_file`, ...) that must not be
// readable by other users (as ssh insists for its keys); the config file and
// every file it names must not be writable by them either (as ssh insists for
// its config). Precedence is
// flag > environment > profile > default (ConfigSources).

#include <expected>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace studentsvc_cli {

/// A loaded profile: STUDENTSVC_* name → value, and a label for `config` ("profile NAME").
struct Profile {
  std::string name;
  std::string file;
  std::map<std::string, std::string, std::less<>> values;
};

/// The default config file: $XDG_CONFIG_HOME/studentsvc/config.json, else ~/.config/studentsvc/config.json.
[[nodiscard]] std::optional<std::string> default_config_file(
    const std::function<std::optional<std::string>(std::string_view)>& env);

/// Why the file at `path` (`what`: "config file", "api_key_file", ...) must
/// not be trusted, as ssh refuses its config: group or others can write it or
/// its folder, or another user (root aside) owns either. nullopt when safe (or
/// missing: its reader says so). Anyone who can rewrite the config can point
/// base_url at their own listener and receive the API key.
[[nodiscard]] std::optional<std::string> writable_by_others(const std::string& what, const std::string& path);

/// A secret file's content (every trailing line break dropped); refused when
/// group or others may read or write it, or it is not a regular file (a FIFO
/// is never waited on). The reading is the SDK's (FileCredentialProvider's).
[[nodiscard]] std::expected<std::string, std::string> read_secret_file(const std::string& key, const std::string& path);

/// Profile `name` of the config file `path` (JSON: {"profiles": {NAME: {...}}}).
/// Keys: base_url, ca_bundle, api_version, perm_syntax, network_id, allow_insecure_loopback
/// (true/false), api_key_file, svc_api_key_file, password_file (relative paths
/// are relative to the config file). The error says what is wrong in one line.
[[nodiscard]] std::expected<Profile, std::string> load_profile(const std::string& path, const std::string& name);

}  // namespace studentsvc_cli

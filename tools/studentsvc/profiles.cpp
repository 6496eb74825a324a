// Named profiles in a JSON config file: base URL, CA bundle, API version and
// account, with secrets given as files (`api_key_file`, ...) that must not be
// readable by other users (as ssh insists for its keys); the config file and
// every file it names must not be writable by them either (as ssh insists for
// its config). Precedence is
// flag > environment > profile > default (ConfigSources).

#include "profiles.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <expected>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <studentsvc/file_credentials.hpp>

namespace studentsvc_cli {

std::optional<std::string> default_config_file(const std::function<std::optional<std::string>(std::string_view)>& env) {
  if (auto xdg = env("XDG_CONFIG_HOME"); xdg && !xdg->empty()) return *xdg + "/studentsvc/config.json";
  if (auto home = env("HOME"); home && !home->empty()) return *home + "/.config/studentsvc/config.json";
  return std::nullopt;
}

std::optional<std::string> writable_by_others(const std::string& what, const std::string& path) {
  auto folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  for (const auto& [file, label] : {std::pair{path, what}, std::pair{folder.string(), "the folder of " + what}}) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) continue;
    if (st.st_uid != ::geteuid() && st.st_uid != 0) {
      return label + " " + file + " is owned by another user (uid " + std::to_string(st.st_uid) +
             "), who could rewrite it: use one of your own (chown, or copy it)";
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
      return label + " " + file + " is writable by group or others, who could rewrite it: chmod go-w " + file;
    }
  }
  return std::nullopt;
}

std::expected<std::string, std::string> read_secret_file(const std::string& key, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::unexpected(key + " " + path + ": cannot read the file");
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return std::unexpected(key + " " + path + " is accessible by other users: chmod 600 " + path);
  }
  auto secret = studentsvc::detail::read_secret_file(path);
  if (!secret) return std::unexpected(key + " " + path + " " + secret.error().message);
  return std::string(secret->reveal());
}

std::expected<Profile, std::string> load_profile(const std::string& path, const std::string& name) {
  if (auto unsafe = writable_by_others("config file", path))
    return std::unexpected("profile '" + name + "': " + *unsafe);
  if (auto why = studentsvc::detail::unreadable_file_reason(path)) {  // a FIFO is refused, never waited on
    return std::unexpected("profile '" + name + "': cannot open the config file " + path + " (it " + *why + ")");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected("profile '" + name + "': cannot open the config file " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const auto text = std::move(buffer).str();
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::unexpected(path + ": not a JSON object");
  const auto profiles = j.find("profiles");
  if (profiles == j.end() || !profiles->is_object()) return std::unexpected(path + ": no \"profiles\" object");
  const auto it = profiles->find(name);
  if (it == profiles->end() || !it->is_object()) return std::unexpected(path + ": no profile '" + name + "'");

  static const std::map<std::string, std::string, std::less<>> plain = {
      {"base_url", "STUDENTSVC_BASE_URL"},
      {"ca_bundle", "STUDENTSVC_CA_BUNDLE"},
      {"api_version", "STUDENTSVC_API_VERSION"},
      {"perm_syntax", "STUDENTSVC_PERM_SYNTAX"},
      {"network_id", "STUDENTSVC_NETWORK_ID"},
      {"ca_pem", "STUDENTSVC_CA_PEM"},
      {"client_cert", "STUDENTSVC_CLIENT_CERT"},
      {"client_key", "STUDENTSVC_CLIENT_KEY"},
      {"pinned_public_key", "STUDENTSVC_PINNED_PUBLIC_KEY"},
  };
  static const std::map<std::string, std::string, std::less<>> secret_files = {
      {"api_key_file", "STUDENTSVC_API_KEY"},
      {"svc_api_key_file", "STUDENTSVC_SVC_API_KEY"},
      {"password_file", "STUDENTSVC_PASSWORD"},
      {"client_key_password_file", "STUDENTSVC_CLIENT_KEY_PASSWORD"},
  };
  const auto dir = std::filesystem::path(path).parent_path();
  auto resolve = [&](const std::string& file) {
    const std::filesystem::path p(file);
    return (p.is_absolute() || dir.empty() ? p : dir / p).string();
  };
  Profile profile{name, path, {}};
  const std::string where = path + ": profile '" + name + "': ";
  for (const auto& [key, value] : it->items()) {
    if (const auto p = plain.find(key); p != plain.end()) {
      if (!value.is_string()) return std::unexpected(where + key + " must be a string");
      const bool file = key == "ca_bundle" || key == "client_cert" || key == "client_key";
      profile.values[p->second] = file ? resolve(value.get<std::string>()) : value.get<std::string>();
      if (file) {
        if (auto unsafe = writable_by_others(key, profile.values[p->second])) return std::unexpected(where + *unsafe);
      }
    } else if (const auto s = secret_files.find(key); s != secret_files.end()) {
      if (!value.is_string()) return std::unexpected(where + key + " must be a file path");
      if (auto unsafe = writable_by_others(key, resolve(value.get<std::string>())))
        return std::unexpected(where + *unsafe);
      auto secret = read_secret_file(key, resolve(value.get<std::string>()));
      if (!secret) return std::unexpected(where + secret.error());
      profile.values[s->second] = std::move(*secret);
    } else if (key == "allow_insecure_loopback") {
      if (!value.is_boolean()) return std::unexpected(where + key + " must be true or false");
      // One character, assigned as one: GCC 12's -O3 -Wrestrict misreads the const char* form.
      profile.values["STUDENTSVC_ALLOW_INSECURE_LOOPBACK"].assign(1, value.get<bool>() ? '1' : '0');
    } else if (key == "api_key" || key == "svc_api_key" || key == "password" || key == "client_key_password") {
      return std::unexpected(where + key + ": secrets go in files (" + key + "_file), not in the config");
    } else {
      return std::unexpected(where + "unknown key \"" + key + "\"");
    }
  }
  return profile;
}

}  // namespace studentsvc_cli

#pragma once
// `studentsvc config`: each setting, masked when secret, with its source; then the check.

#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/url.hpp>

#include "command.hpp"
#include "config_sources.hpp"
#include "exit_status.hpp"

namespace studentsvc_cli {

inline constexpr std::string_view config_help =
    "Usage: studentsvc [OPTIONS] config\n"
    "\n"
    "Prints the effective configuration, one setting a line: its name, its value\n"
    "(secrets masked as ****) and where it came from (a flag, a STUDENTSVC_*\n"
    "variable, the mock server, or the default). Then checks it as a batch would\n"
    "(Client::create) and prints `ok`, or the one-line reason and exits 3.\n";

/// `studentsvc config`: each setting, masked when secret, with its source; then the check.
[[nodiscard]] inline int run_config(const Args& a, const ConfigSources& sources) {
  constexpr int name_width = 36;
  constexpr int value_width = 34;
  std::cout << std::left << std::setw(name_width) << "SETTING" << std::setw(value_width) << "VALUE" << "FROM\n";
  for (const auto& s : settings) {
    const auto v = sources.value(s.env);
    std::string shown;
    if (!v || v->empty()) {
      shown = "(not set)";
    } else if (s.secret && *v != "off") {
      shown = "****";
    } else if (s.env == "STUDENTSVC_CA_PEM") {
      shown = "(PEM text, " + std::to_string(v->size()) + " bytes)";
    } else {
      shown = printable(studentsvc::strip_url_userinfo(*v));
    }
    std::cout << std::setw(name_width) << s.env << std::setw(value_width) << shown << sources.source(s) << '\n';
  }
  std::cout << std::setw(name_width) << "proxy" << std::setw(value_width)
            << (a.proxy.empty() ? std::string("(libcurl's environment)") : printable(studentsvc::strip_url_userinfo(a.proxy)))
            << (a.proxy.empty() ? "default" : "--proxy") << '\n';
  std::cout << std::setw(name_width) << "timeout (ms)" << std::setw(value_width)
            << (a.timeout ? a.timeout->count() : studentsvc::ClientOptions{}.timeout.count())
            << (a.timeout ? "--timeout" : "default") << '\n';
  std::cout << std::setw(name_width) << "retries" << std::setw(value_width)
            << (a.retries ? *a.retries : studentsvc::RetryPolicy{}.max_attempts - 1)
            << (a.retries ? "--retries" : "default") << '\n';

  auto options = build_options(a, sources);
  if (options) {
    auto client = studentsvc::Client::create(std::move(*options));
    if (!client) options = std::unexpected(client.error());
  }
  if (!options) {
    std::cout << "check: failed\n";
    return report("config", options.error());
  }
  std::cout << "check: ok\n";
  return exit_ok;
}

[[nodiscard]] inline int run_config_command(Session& s) {
  const int status = run_config(s.args, *s.sources);
  if (!std::cout.flush()) return exit_internal;
  return status;
}

inline constexpr Command config_command{
    .name = "config",
    .help = config_help,
    .needs = Needs::configuration,
    .misuse = batch_format_misuse,
    .run = run_config_command,
};

}  // namespace studentsvc_cli

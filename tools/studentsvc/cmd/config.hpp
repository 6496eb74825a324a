#pragma once
// `studentsvc config`: each setting, masked when secret, with its source; then the check.

#include <cstddef>
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

/// A table cell: `text` padded to `width`, or followed by two spaces when it is
/// wider (a pinned key is 52 characters), so the next column never runs into it.
[[nodiscard]] inline std::string config_cell(std::string text, std::size_t width) {
  text.append(text.size() + 2 <= width ? width - text.size() : 2, ' ');
  return text;
}

/// `studentsvc config`: each setting, masked when secret, with its source; then the check.
[[nodiscard]] inline int run_config(const Args& a, const ConfigSources& sources) {
  constexpr int name_width = 36;
  constexpr std::size_t value_width = 34;
  std::cout << std::left << std::setw(name_width) << "SETTING" << config_cell("VALUE", value_width) << "FROM\n";
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
    std::cout << std::setw(name_width) << s.env << config_cell(std::move(shown), value_width) << sources.source(s) << '\n';
  }
  std::cout << std::setw(name_width) << "proxy"
            << config_cell(a.proxy.empty() ? std::string("(libcurl's environment)")
                                           : printable(studentsvc::strip_url_userinfo(a.proxy)),
                           value_width)
            << (a.proxy.empty() ? "default" : "--proxy") << '\n';
  std::cout << std::setw(name_width) << "timeout (ms)"
            << config_cell(std::to_string(a.timeout ? a.timeout->count() : studentsvc::ClientOptions{}.timeout.count()),
                           value_width)
            << (a.timeout ? "--timeout" : "default") << '\n';
  std::cout << std::setw(name_width) << "retries"
            << config_cell(std::to_string(a.retries ? *a.retries : studentsvc::RetryPolicy{}.max_attempts - 1),
                           value_width)
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

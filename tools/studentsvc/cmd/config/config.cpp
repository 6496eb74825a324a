// `studentsvc config`: each setting, masked when secret, with its source; then the check.

#include "cmd/config/config.hpp"

#include <cstddef>
#include <iomanip>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/url.hpp>

#include "config_sources.hpp"
#include "exit_status.hpp"

namespace studentsvc_cli {

namespace {

constexpr std::string_view config_help =
    "Usage: studentsvc [OPTIONS] config\n"
    "\n"
    "Prints the effective configuration, one setting a line: its name, its value\n"
    "(secrets masked as ****) and where it came from (a flag, a STUDENTSVC_*\n"
    "variable, the mock server, or the default). Then checks it as a batch would\n"
    "(Client::create) and prints `ok`, or the one-line reason and exits 3.\n";

/// A table cell: `text` padded to `width`, or followed by two spaces when it is
/// wider (a pinned key is 52 characters), so the next column never runs into it.
std::string config_cell(std::string text, std::size_t width) {
  text.append(text.size() + 2 <= width ? width - text.size() : 2, ' ');
  return text;
}

}  // namespace

int run_config(Session& s) {
  const Args& a = s.args;
  const ConfigSources& sources = *s.sources;
  std::ostream& out = s.io.out;
  constexpr int name_width = 36;
  constexpr std::size_t value_width = 34;
  out << std::left << std::setw(name_width) << "SETTING" << config_cell("VALUE", value_width) << "FROM\n";
  for (const auto& setting : settings) {
    const auto v = sources.value(setting.env);
    std::string shown;
    if (!v || v->empty()) {
      shown = "(not set)";
    } else if (setting.secret && *v != "off") {
      shown = "****";
    } else if (setting.env == "STUDENTSVC_CA_PEM") {
      shown = "(PEM text, " + std::to_string(v->size()) + " bytes)";
    } else {
      shown = printable(studentsvc::strip_url_userinfo(*v));
    }
    out << std::setw(name_width) << setting.env << config_cell(std::move(shown), value_width) << sources.source(setting)
        << '\n';
  }
  out << std::setw(name_width) << "proxy"
      << config_cell(a.proxy.empty() ? std::string("(libcurl's environment)")
                                     : printable(studentsvc::strip_url_userinfo(a.proxy)),
                     value_width)
      << (a.proxy.empty() ? "default" : "--proxy") << '\n';
  out << std::setw(name_width) << "timeout (ms)"
      << config_cell(std::to_string(a.timeout ? a.timeout->count() : studentsvc::ClientOptions{}.timeout.count()),
                     value_width)
      << (a.timeout ? "--timeout" : "default") << '\n';
  out << std::setw(name_width) << "retries"
      << config_cell(std::to_string(a.retries ? *a.retries : studentsvc::RetryPolicy{}.max_attempts - 1), value_width)
      << (a.retries ? "--retries" : "default") << '\n';

  auto options = build_options(a, sources, s.io.err);
  if (options) {
    auto client = studentsvc::Client::create(std::move(*options));
    if (!client) options = std::unexpected(client.error());
  }
  if (!options) {
    out << "check: failed\n";
    return report(s.io.err, "config", options.error());
  }
  out << "check: ok\n";
  return exit_ok;
}

const Command config_command{
    .name = "config",
    .help = config_help,
    .needs = Needs::configuration,
    .misuse = batch_format_misuse,
    .run = run_config,
};

}  // namespace studentsvc_cli

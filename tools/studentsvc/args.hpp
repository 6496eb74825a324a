#pragma once
// Everything the command line says, as the commands read it: the common
// options, then each command's own (registered by the command's file, cmd/).

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "format.hpp"

namespace studentsvc_cli {

struct Args {
  std::string command;  ///< A command of the table (commands.cpp), or "help"; empty when none.
  std::vector<std::string> positionals;
  std::optional<std::string> first_error;  ///< The first usage error; reported unless --help/--version.

  std::map<std::string, std::string, std::less<>> env_overrides;  ///< STUDENTSVC_* name → flag value.
  std::string proxy;
  std::optional<std::string> profile;      ///< --profile (else STUDENTSVC_PROFILE)
  std::optional<std::string> config_file;  ///< --config (else STUDENTSVC_CONFIG, else the default file)
  bool insecure_loopback = false;
  bool mock = false;
  bool help = false;
  bool version = false;
  int verbose = 0;
  bool stats = false;  ///< --stats: the attempt metrics on stderr at the end
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<int> retries;
  std::optional<Format> format;

  std::optional<std::string> jwt;  ///< get, current, doctor
  // conversation (cmd/conversation/)
  std::optional<std::string> method;
  std::optional<std::string> data;
  std::optional<std::string> content_type;
  std::vector<std::pair<std::string, std::string>> query;
  bool idempotent = false;
  // get (cmd/get/)
  std::optional<std::string> from;
  std::optional<std::string> column;
  std::size_t concurrency = 16;
  bool fail_fast = false;
  bool quiet = false;
  std::optional<std::string> failed_to;  ///< --failed-to FILE: the perms worth retrying
  bool csv_raw = false;                  ///< --csv-raw: csv cells as they came, formulas included
  // mock (cmd/mock/)
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::optional<std::string> students_file;
  std::chrono::milliseconds latency{0};
  std::size_t mock_threads = 0;  ///< mock --threads; 0: the mock's default
  int port = 0;                  ///< mock --port; 0: a free port
  // doctor (cmd/doctor/)
  bool json = false;                ///< doctor --json
  std::optional<std::string> perm;  ///< doctor --perm P
  bool show_perms = false;          ///< doctor --show-perms
};

}  // namespace studentsvc_cli

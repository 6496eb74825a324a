#pragma once
// `studentsvc get`: one perm, or a roster (arguments, --from FILE|-, a CSV
// column) on the library's streamed batch, results in input order.

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/url.hpp>

#include "cmd/get/perm_input.hpp"
#include "cmd/get/progress.hpp"
#include "cmd/get/roster.hpp"
#include "command.hpp"
#include "config_sources.hpp"
#include "exit_status.hpp"
#include "student_output.hpp"

namespace studentsvc_cli {

inline constexpr std::string_view get_help =
    "Usage: studentsvc [OPTIONS] get PERM... [--from FILE|-] [--column NAME] [--jwt TOKEN]\n"
    "\n"
    "Looks up students by perm number (GET /students/v2/students/PERM) and prints\n"
    "the StudentExtended records. Extended-only fields are null unless the service\n"
    "account is approved for them. Results are written in input order as they\n"
    "complete, --concurrency lookups in flight, with flat memory however long the list.\n"
    "\n"
    "Arguments:\n"
    "  PERM                   7-digit perm numbers\n"
    "\n"
    "Options:\n"
    "  --from FILE|-          read perms from FILE (or stdin): one per line, blank lines\n"
    "                         skipped, or a CSV file with --column\n"
    "  --column NAME          the CSV column (named in the header row) holding the perm\n"
    "  --concurrency N        lookups in flight at once, 1-256 (default 16), each on its\n"
    "                         own connection: N really in flight, 256 the bound\n"
    "  --fail-fast            stop sending after an error that every further lookup\n"
    "                         would repeat (401, TLS or certificate, unresolvable host,\n"
    "                         a 404 that is not the service's: a wrong base URL)\n"
    "  -q, --quiet            no progress bar and no summary line on stderr\n"
    "  --failed-to FILE       write the perms that failed for a reason worth retrying\n"
    "                         (transport, 429, 5xx), one a line, for a later --from FILE;\n"
    "                         written (empty) even when none failed\n"
    "  --jwt TOKEN            send svc-user-jwt: only the token's own student is returned\n"
    "  -o, --output FORMAT    json (default for one perm: the record; for several: an\n"
    "                         array), ndjson (default for several: one object a line),\n"
    "                         csv (RFC 4180, header row, one column per field, nfr its\n"
    "                         own column, a last column `error` empty on success) or\n"
    "                         table (fields and their typed views: gender, international\n"
    "                         status, admit level, birth date as YYYY-MM-DD, release status)\n"
    "\n"
    "With several perms a failed lookup does not stop the batch: it is written in\n"
    "place, as {\"perm\":..., \"error\":{\"kind\":..., \"status\":..., \"message\":...}} in\n"
    "json and ndjson, as a row with only perm and error filled in csv. A progress bar\n"
    "(done/total, rate, ETA, failures) goes to stderr only when stderr is a terminal;\n"
    "a summary line follows the batch unless --quiet. When each of the first lookups\n"
    "(4 x --concurrency) fails with such an error, the configuration is wrong: the batch stops\n"
    "there even without --fail-fast, with one line and that error's exit status.\n";


/// The first lookups, a few per connection, that decide whether a batch that
/// fails them all the same way has a configuration error.
inline constexpr std::size_t chunk_per_connection = 4;

/// The perms of `get`: its arguments, then those of --from. The error is one
/// line and an exit status (2 usage, 3 unreadable input).
[[nodiscard]] inline std::expected<std::vector<std::string>, std::pair<int, std::string>> get_perms(const Args& a) {
  std::vector<std::string> perms = a.positionals;
  if (a.column && !a.from) return std::unexpected(std::pair{exit_usage, std::string("--column needs --from")});
  if (a.from) {
    auto more = perms_from(*a.from, a.column);
    if (!more) return std::unexpected(std::pair{exit_status(studentsvc::ErrorKind::invalid_argument), more.error()});
    perms.insert(perms.end(), std::make_move_iterator(more->begin()), std::make_move_iterator(more->end()));
  }
  return perms;
}

/// A wrong-address error with the base URL it was sent to (never its user:password).
[[nodiscard]] inline studentsvc::ApiError with_base_url(studentsvc::ApiError e, const studentsvc::Client& client) {
  if (is_wrong_address(e)) e.message += " (base URL " + studentsvc::strip_url_userinfo(client.options().base_url) + ")";
  return e;
}

/// The input as the output names a failed lookup: a perm-like input as it is;
/// anything else (a secret pasted into the wrong place, say) as its position "#N".
[[nodiscard]] inline std::string shown_perm(const std::string& input, std::size_t index) {
  const bool perm_like = !input.empty() && input.size() <= 16 &&
                         input.find_first_not_of("0123456789") == std::string::npos;
  return perm_like ? input : "#" + std::to_string(index + 1);
}

/// A failure worth retrying later (--failed-to): the transport, 429, 5xx (or
/// anything the SDK marks retryable); not a 401, 404 or a bad perm.
[[nodiscard]] inline bool worth_retrying(const studentsvc::ApiError& e) {
  return e.kind == studentsvc::ErrorKind::transport || e.status == 429 || e.status >= 500 || e.retryable;
}

/// --failed-to FILE: the perms worth retrying, one a line, for `get --from FILE` tomorrow.
class FailedList {
 public:
  explicit FailedList(const std::optional<std::string>& path) {
    if (path) out_ = std::make_unique<std::ofstream>(*path, std::ios::binary | std::ios::trunc);
  }
  [[nodiscard]] bool ok() const { return !out_ || static_cast<bool>(*out_); }
  void add(const std::string& perm, const studentsvc::ApiError& e) {
    if (!out_ || !worth_retrying(e) || !studentsvc::is_valid_perm(perm)) return;
    *out_ << perm << '\n';
  }
  [[nodiscard]] bool close() {
    if (!out_) return true;
    out_->flush();
    return static_cast<bool>(*out_);
  }

 private:
  // Not std::optional: GCC 12 at -O1 with the sanitizers warns it may be used uninitialized.
  std::unique_ptr<std::ofstream> out_;
};

[[nodiscard]] inline int run_batch(const studentsvc::Client& client, const Args& a, const std::vector<std::string>& perms,
                                   Format format) {
  studentsvc::StreamOptions stream;
  stream.max_concurrency = a.concurrency;
  if (a.jwt) stream.call.user_jwt = *a.jwt;
  // --fail-fast also stops the sending at once on 401, TLS or DNS errors (the
  // library's fail-fast); without it the first chunk decides (below).
  stream.fail_fast = a.fail_fast;

  FailedList failed_to(a.failed_to);
  if (!failed_to.ok()) {
    error_line("get: --failed-to " + *a.failed_to + ": cannot write the file");
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  ResultWriter writer(std::cout, format);
  ProgressBar progress(!a.quiet && ::isatty(STDERR_FILENO) == 1);
  BatchCounts counts{0, perms.size(), 0};
  std::optional<studentsvc::ApiError> stop;
  // When the whole first chunk fails with an error every lookup would repeat,
  // the configuration is wrong: stop there, --fail-fast or not, and say so once.
  const std::size_t chunk = a.concurrency * chunk_per_connection;
  const std::size_t first_chunk = std::min(chunk, perms.size());
  std::size_t arrived = 0;
  bool first_chunk_all_config = true;
  bool output_failed = false;
  writer.begin();
  look_up_in_order(
      client, perms, stream,
      [&](std::size_t index, const std::string& perm, const studentsvc::Result<studentsvc::StudentExtended>& r) {
        writer.result(shown_perm(perm, index), r);
        ++counts.done;
        if (!r) {
          ++counts.failed;
          failed_to.add(perm, r.error());
        }
        progress.update(counts, counts.done == counts.total);
        if (!std::cout) {
          output_failed = true;
          return false;
        }
        // In input order, so every lookup before the one that stops it is written.
        if (!r && a.fail_fast && repeats_for_every_lookup(r.error())) {
          stop = r.error();
          return false;
        }
        return true;
      },
      // The first chunk is judged on answers as they arrive, so a slow early
      // lookup does not let more be sent meanwhile.
      [&](const studentsvc::Result<studentsvc::StudentExtended>& r) {
        if (stop || arrived >= first_chunk) return true;
        ++arrived;
        first_chunk_all_config = first_chunk_all_config && !r && repeats_for_every_lookup(r.error());
        if (arrived == first_chunk && first_chunk_all_config && arrived < counts.total) {
          stop = r.error();
          return false;
        }
        return true;
      });
  writer.end();
  progress.finish();
  if (!failed_to.close()) {
    error_line("get: --failed-to " + *a.failed_to + ": could not write the file");
    return exit_internal;
  }
  if (!a.quiet) std::cerr << "studentsvc: get: " << summary_line(counts, progress.elapsed(), stop.has_value()) << '\n';
  if (output_failed || !std::cout) {
    error_line("could not write the output");
    return exit_internal;
  }
  if (stop) {
    const std::string why = a.fail_fast ? "get: stopped by --fail-fast"
                                        : "get: stopped: the first " + std::to_string(first_chunk) +
                                              " lookups all failed the same way, a configuration error";
    return report(why, with_base_url(*stop, client));
  }
  return counts.failed > 0 ? exit_some_failed : exit_ok;
}

[[nodiscard]] inline int run_get(const studentsvc::Client& client, const Args& a,
                                 const std::vector<std::string>& perms) {
  const bool single = perms.size() == 1 && !a.from;
  const Format format = a.format.value_or(single ? Format::json : Format::ndjson);
  if (single && (format == Format::json || format == Format::table)) {
    FailedList failed_to(a.failed_to);
    if (!failed_to.ok()) {
      error_line("get: --failed-to " + *a.failed_to + ": cannot write the file");
      return exit_status(studentsvc::ErrorKind::invalid_argument);
    }
    studentsvc::CallOptions call;
    if (a.jwt) call.user_jwt = *a.jwt;
    const auto student = client.get_student(perms.front(), call);
    if (!student) failed_to.add(perms.front(), student.error());
    if (!failed_to.close()) {
      error_line("get: --failed-to " + *a.failed_to + ": could not write the file");
      return exit_internal;
    }
    if (!student) return report("get", with_base_url(student.error(), client));
    print_student(std::cout, *student, format, true);
    return exit_ok;
  }
  return run_batch(client, a, perms, format);
}

inline void add_get_options(CLI::App& sub, Args& a) {
  sub.add_option("perms", a.positionals);
  sub.add_option_function<std::string>("--jwt", [&a](const std::string& v) { a.jwt = v; });
  sub.add_option_function<std::string>("--from", [&a](const std::string& v) { a.from = v; });
  sub.add_option_function<std::string>("--column", [&a](const std::string& v) { a.column = v; });
  sub.add_option("--concurrency", a.concurrency)->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  sub.add_flag("--fail-fast", a.fail_fast)->disable_flag_override();
  sub.add_flag("-q,--quiet", a.quiet)->disable_flag_override();
  sub.add_option_function<std::string>("--failed-to", [&a](const std::string& v) { a.failed_to = v; });
}

[[nodiscard]] inline std::optional<std::string> get_misuse(const Args& a) {
  if (a.positionals.empty() && !a.from) return "get takes at least one PERM (or --from FILE)";
  return std::nullopt;
}

/// Reads the perms before anything starts: a usage error or an unreadable file is the one line.
[[nodiscard]] inline std::optional<int> prepare_get(Session& s) {
  auto read = get_perms(s.args);
  if (!read) {
    if (read.error().first == exit_usage) return usage_error(read.error().second);
    error_line("get: " + read.error().second);
    return read.error().first;
  }
  if (read->empty()) {
    error_line("get: no perms to look up in " + *s.args.from);
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  s.inputs = std::move(*read);
  return std::nullopt;
}

/// --concurrency above the default transport's 64 connections: a transport
/// with as many, so N lookups are really in flight (not N queued behind 64).
inline void configure_get(const Args& a, studentsvc::ClientOptions& options) {
  constexpr std::size_t default_connections = 64;
  if (a.concurrency <= default_connections || options.transport) return;
  studentsvc::CurlTransportOptions transport = studentsvc::curl_transport_options(options);
  transport.max_connections = static_cast<long>(a.concurrency);
  options.transport = std::make_shared<studentsvc::CurlTransport>(std::move(transport));
}

[[nodiscard]] inline int run_get_command(Session& s) { return run_get(*s.client, s.args, s.inputs); }

inline constexpr Command get_command{
    .name = "get",
    .help = get_help,
    .needs = Needs::client,
    .add_options = add_get_options,
    .misuse = get_misuse,
    .prepare = prepare_get,
    .run = run_get_command,
    .configure = configure_get,
};

}  // namespace studentsvc_cli

// `studentsvc get`: one perm, or a roster (arguments, --from FILE|-, a CSV
// column) on the library's streamed batch, results in input order.

#include "cmd/get/get.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/url.hpp>

#include "cmd/get/interrupt.hpp"
#include "cmd/get/perm_input.hpp"
#include "cmd/get/progress.hpp"
#include "cmd/get/roster.hpp"
#include "config_sources.hpp"
#include "exit_status.hpp"
#include "student_output.hpp"

namespace studentsvc_cli {

namespace {

constexpr std::string_view get_help =
    "Usage: studentsvc [OPTIONS] get PERM... [--from FILE|-] [--column NAME] [--jwt TOKEN]\n"
    "\n"
    "Looks up students by perm number (GET /students/v2/students/PERM) and prints\n"
    "the StudentExtended records. Extended-only fields are null unless the service\n"
    "account is approved for them. Results are written in input order as they\n"
    "complete, --concurrency lookups in flight. --from is read as the batch goes, a\n"
    "line at a time, so memory stays flat however long the list.\n"
    "\n"
    "Arguments:\n"
    "  PERM                   perms: 7 digits, or letters too with --perm-syntax alphanumeric\n"
    "\n"
    "Options:\n"
    "  --from FILE|-          read perms from FILE (or stdin): one per line, blank lines\n"
    "                         skipped, or a CSV file with --column; a UTF-8 BOM (Excel's\n"
    "                         \"CSV UTF-8\") is skipped; a line or CSV record over 64 KiB\n"
    "                         is refused (exit 3; in a file before anything is sent)\n"
    "  --column NAME          the CSV column (named in the header row) holding the perm\n"
    "  --concurrency N        lookups in flight at once, 1-256 (default 16), each on its\n"
    "                         own connection: N really in flight, 256 the bound\n"
    "  --fail-fast            stop sending after an error that every further lookup\n"
    "                         would repeat (401, a TLS handshake or certificate failure,\n"
    "                         an unresolvable host, a proxy that refuses the tunnel, a\n"
    "                         404 that is not the service's: a wrong base URL)\n"
    "  -q, --quiet            no progress bar and no summary line on stderr\n"
    "  --failed-to FILE       write, one a line, for a later --from FILE, the perms that\n"
    "                         failed for a reason worth retrying (transport, 429, 5xx,\n"
    "                         or an error every lookup repeats: 401, TLS, a wrong base\n"
    "                         URL) and every perm not looked up (not sent after a stop,\n"
    "                         a write error or Ctrl-C); written to FILE.XXXXXX and\n"
    "                         renamed, so FILE may be the --from file; written (empty)\n"
    "                         even when none failed\n"
    "  --csv-raw              -o csv: cells as they came; by default a cell that starts\n"
    "                         with = + - @ tab or CR is written as \"'...\" (CSV injection)\n"
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
    "there even without --fail-fast, with one line and that error's exit status.\n"
    "SIGINT (Ctrl-C) or SIGTERM stops the lookup or the batch: the lookups in flight\n"
    "are cancelled, --failed-to is written, exit 130 (143); a second one ends the\n"
    "program at once.\n"
    "A write error on stdout (closed, a reader gone: `| head`) stops it the same way,\n"
    "exit 1.\n";

/// The first lookups, a few per connection, that decide whether a batch that
/// fails them all the same way has a configuration error.
constexpr std::size_t chunk_per_connection = 4;

/// A wrong-address error with the base URL it was sent to (never its user:password).
studentsvc::ApiError with_base_url(studentsvc::ApiError e, const studentsvc::Client& client) {
  if (is_wrong_address(e)) e.message += " (base URL " + studentsvc::strip_url_userinfo(client.options().base_url) + ")";
  return e;
}

}  // namespace

std::string shown_perm(const std::string& input, std::size_t index) {
  const bool perm_like =
      !input.empty() && input.size() <= 16 &&
      input.find_first_not_of("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == std::string::npos;
  return perm_like ? input : "#" + std::to_string(index + 1);
}

bool worth_retrying(const studentsvc::ApiError& e) {
  return e.kind == studentsvc::ErrorKind::transport || e.status == 429 || e.status >= 500 || e.retryable ||
         e.kind == studentsvc::ErrorKind::cancelled || studentsvc::stops_batch(e);
}

namespace {

/// --failed-to FILE: the perms worth retrying and the perms not looked up, one
/// a line, for `get --from FILE` tomorrow. Written to a temporary file in the
/// same folder and renamed over FILE at the end, so FILE may be the input.
class FailedList {
 public:
  explicit FailedList(const std::optional<std::string>& path) {
    if (!path) return;
    path_ = *path;
    temp_ = *path + ".XXXXXX";
    const int fd = ::mkostemp(temp_.data(), O_CLOEXEC);
    if (fd < 0) return;
    out_ = ::fdopen(fd, "w");
    if (out_ == nullptr) {
      ::close(fd);
      ::unlink(temp_.c_str());
    }
  }
  FailedList(const FailedList&) = delete;
  FailedList& operator=(const FailedList&) = delete;
  ~FailedList() {
    if (out_ == nullptr) return;
    std::fclose(out_);
    ::unlink(temp_.c_str());
  }

  [[nodiscard]] bool ok() const { return !path_ || out_ != nullptr; }
  /// A lookup that failed: listed when worth retrying.
  void add(const std::string& perm, const studentsvc::ApiError& e) {
    if (worth_retrying(e)) add_not_looked_up(perm);
  }
  /// A perm whose answer was not written (not sent, cancelled, or after a stop or a write error).
  void add_not_looked_up(const std::string& perm) {
    // Either syntax: a perm the Client refused was never sent, and a line of
    // 7 letters or digits is safe to hand back to --from.
    if (out_ == nullptr || !studentsvc::is_valid_perm(perm, studentsvc::PermSyntax::alphanumeric)) return;
    std::fputs(perm.c_str(), out_);
    std::fputc('\n', out_);
  }
  /// Renames the list over FILE; false (and FILE as it was) when it could not be written.
  [[nodiscard]] bool commit() {
    if (!path_) return true;
    if (out_ == nullptr) return false;
    const bool written = std::fflush(out_) == 0 && std::ferror(out_) == 0;
    const bool closed = std::fclose(out_) == 0;
    out_ = nullptr;
    if (written && closed && std::rename(temp_.c_str(), path_->c_str()) == 0) return true;
    ::unlink(temp_.c_str());
    return false;
  }

 private:
  std::optional<std::string> path_;
  std::string temp_;
  std::FILE* out_ = nullptr;
};

int failed_to_unwritable(const Args& a, std::ostream& err) {
  error_line(err, "get: --failed-to " + *a.failed_to + ": cannot write the file");
  return exit_status(studentsvc::ErrorKind::invalid_argument);
}

/// The batch over `perms`: the arguments (a vector: a perm given twice is
/// looked up once) or `lazy`, the --from input read as it goes.
template <class Perms>
int run_batch(const studentsvc::Client& client, const Args& a, IoStreams io, Perms&& perms, const PermInput* lazy,
              std::optional<std::size_t> total, Format format) {
  studentsvc::StreamOptions stream;
  stream.max_concurrency = a.concurrency;
  if (a.jwt) stream.call.user_jwt = *a.jwt;
  // --fail-fast also stops the sending at once on an error every lookup would
  // repeat (the library's fail-fast, studentsvc::stops_batch); without it the
  // first chunk decides (below), by the same rule.
  stream.fail_fast = a.fail_fast;

  FailedList failed_to(a.failed_to);
  if (!failed_to.ok()) return failed_to_unwritable(a, io.err);
  ResultWriter writer(io.out, format, a.csv_raw ? CsvFormulas::keep : CsvFormulas::neutralise);
  ProgressBar progress(io.err, !a.quiet && io.err_is_terminal);
  BatchCounts counts{0, total.value_or(0), 0, total.has_value(), 0};
  std::optional<studentsvc::ApiError> stop;
  // When the whole first chunk fails with an error every lookup would repeat,
  // the configuration is wrong: stop there, --fail-fast or not, and say so once.
  const std::size_t chunk = a.concurrency * chunk_per_connection;
  const std::size_t first_chunk = total ? std::min(chunk, *total) : chunk;
  std::size_t arrived = 0;
  bool first_chunk_all_config = true;
  bool output_failed = false;
  BatchStop batch_stop;
  const StopOnSignal on_signal(batch_stop);
  writer.begin();
  look_up_in_order(
      client, std::forward<Perms>(perms), stream, batch_stop,
      [&](std::size_t index, const std::string& perm, const studentsvc::Result<studentsvc::StudentExtended>& r) {
        writer.result(shown_perm(perm, index), r);
        // With --failed-to each record is flushed, so a write error names the perm it lost.
        if (a.failed_to) io.out.flush();
        if (!io.out) {
          output_failed = true;
          failed_to.add_not_looked_up(perm);
          return false;
        }
        ++counts.done;
        if (!r) {
          ++counts.failed;
          failed_to.add(perm, r.error());
        }
        progress.update(counts, counts.done == counts.total);
        // In input order, so every lookup before the one that stops it is written.
        if (!r && a.fail_fast && studentsvc::stops_batch(r.error())) {
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
        first_chunk_all_config = first_chunk_all_config && !r && studentsvc::stops_batch(r.error());
        const bool more = total ? arrived < *total : !(lazy->finished() && lazy->read() == arrived);
        if (arrived == first_chunk && first_chunk_all_config && more) {
          stop = r.error();
          return false;
        }
        return true;
      },
      [&](std::size_t, const std::string& perm, const studentsvc::Result<studentsvc::StudentExtended>&) {
        ++counts.not_sent;
        failed_to.add_not_looked_up(perm);
      });
  writer.end();
  progress.finish();
  const int signal = StopOnSignal::received();
  const bool stopped = stop.has_value() || output_failed || signal != 0 || batch_stop.requested();
  if (!failed_to.commit()) {
    error_line(io.err, "get: --failed-to " + *a.failed_to + ": could not write the file");
    return exit_internal;
  }
  if (!a.quiet) io.err << "studentsvc: get: " << summary_line(counts, progress.elapsed(), stopped) << '\n';
  if (output_failed || !io.out) return exit_internal;  // main() says so, once
  if (signal != 0) {
    error_line(io.err, std::string("get: interrupted by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") +
                           (a.failed_to ? "; the perms not looked up are in " + *a.failed_to : std::string()));
    return 128 + signal;
  }
  if (const auto input_error = lazy != nullptr ? lazy->error() : std::nullopt) {
    error_line(io.err, "get: " + *input_error + " (the perms before it were looked up)");
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  if (stop) {
    const std::string why = a.fail_fast ? "get: stopped by --fail-fast"
                                        : "get: stopped: the first " + std::to_string(first_chunk) +
                                              " lookups all failed the same way, a configuration error";
    return report(io.err, why, with_base_url(*stop, client));
  }
  return counts.failed > 0 ? exit_some_failed : exit_ok;
}

int look_up(const studentsvc::Client& client, const Args& a, IoStreams io, GetInput& input) {
  const bool single = input.single;
  const Format format = a.format.value_or(single ? Format::json : Format::ndjson);
  if (single && (format == Format::json || format == Format::table)) {
    const std::string perm = input.arguments.front();
    FailedList failed_to(a.failed_to);
    if (!failed_to.ok()) return failed_to_unwritable(a, io.err);
    studentsvc::CallOptions call;
    if (a.jwt) call.user_jwt = *a.jwt;
    // SIGINT or SIGTERM cancels the lookup, as in a batch: the perm goes to
    // --failed-to and the list is still renamed into place (no FILE.XXXXXX
    // left), until the end: a signal while printing is caught the same way.
    BatchStop stop;
    const StopOnSignal on_signal(stop);
    const auto student = client.get_student_async(perm, call, stop.token()).get();
    if (student) print_student(io.out, *student, format, true);
    if (!student) {
      failed_to.add(perm, student.error());
    } else if (!io.out.flush()) {
      failed_to.add_not_looked_up(perm);  // its record was lost
    }
    if (!failed_to.commit()) {
      error_line(io.err, "get: --failed-to " + *a.failed_to + ": could not write the file");
      return exit_internal;
    }
    if (const int signal = StopOnSignal::received(); signal != 0) {
      error_line(io.err, std::string("get: interrupted by ") + (signal == SIGINT ? "SIGINT" : "SIGTERM") +
                             (a.failed_to ? "; the perms not looked up are in " + *a.failed_to : std::string()));
      return 128 + signal;
    }
    if (!student) return report(io.err, "get", with_base_url(student.error(), client));
    return exit_ok;
  }
  if (!input.from)
    return run_batch(client, a, io, std::span<const std::string>(input.arguments), nullptr, input.total, format);
  return run_batch(client, a, io, input.perms, &input.perms, input.total, format);
}

void add_get_options(CLI::App& sub, Args& a) {
  sub.add_option("perms", a.positionals);
  sub.add_option_function<std::string>("--jwt", [&a](const std::string& v) { a.jwt = v; });
  sub.add_option_function<std::string>("--from", [&a](const std::string& v) { a.from = v; });
  sub.add_option_function<std::string>("--column", [&a](const std::string& v) { a.column = v; });
  sub.add_option("--concurrency", a.concurrency)->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  sub.add_flag("--fail-fast", a.fail_fast)->disable_flag_override();
  sub.add_flag("-q,--quiet", a.quiet)->disable_flag_override();
  sub.add_option_function<std::string>("--failed-to", [&a](const std::string& v) { a.failed_to = v; });
  sub.add_flag("--csv-raw", a.csv_raw)->disable_flag_override();
}

std::optional<std::string> get_misuse(const Args& a) {
  if (a.positionals.empty() && !a.from) return "get takes at least one PERM (or --from FILE)";
  return std::nullopt;
}

/// --concurrency above the default transport's 64 connections: a transport
/// with as many, so N lookups are really in flight (not N queued behind 64).
void configure_get(const Args& a, studentsvc::ClientOptions& options) {
  constexpr std::size_t default_connections = 64;
  if (a.concurrency <= default_connections || options.transport) return;
  studentsvc::CurlTransportOptions transport = studentsvc::curl_transport_options(options);
  transport.max_connections = static_cast<long>(a.concurrency);
  options.transport = std::make_shared<studentsvc::CurlTransport>(std::move(transport));
}

}  // namespace

/// Opens the perms before anything starts: a usage error or an unreadable
/// file is the one line. A regular file is read once first (its count for the
/// progress bar, and a mistake in it reported before anything is sent); a pipe
/// is read only as the batch goes.
std::optional<int> prepare_get(Session& s) {
  const Args& a = s.args;
  std::ostream& err = s.io.err;
  if (a.column && !a.from) return usage_error(err, "--column needs --from");
  const auto input_error = [&err](const std::string& why) {
    error_line(err, "get: " + why);
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  };
  auto input = std::make_shared<GetInput>();
  if (a.from) {
    bool regular = false;
    auto file = open_perm_file(*a.from, &regular);
    if (!file) return input_error(file.error());
    if (regular) {
      PermSource count(std::move(*file), "--from " + *a.from, a.column);
      std::size_t n = a.positionals.size();
      while (count.next()) ++n;
      if (count.error()) return input_error(*count.error());
      input->total = n;
      file = open_perm_file(*a.from);
      if (!file) return input_error(file.error());
    }
    input->from = true;
    input->perms =
        PermInput(a.positionals, std::make_unique<PermSource>(std::move(*file), "--from " + *a.from, a.column));
    if (input->total == std::size_t{0}) {
      error_line(err, "get: no perms to look up in " + *a.from);
      return exit_status(studentsvc::ErrorKind::invalid_argument);
    }
  } else {
    input->total = a.positionals.size();
    input->arguments = a.positionals;
    input->single = a.positionals.size() == 1;
  }
  s.get_input = std::move(input);
  return std::nullopt;
}

int run_get(Session& s) {
  const int status = look_up(*s.client, s.args, s.io, *s.get_input);
  if (status == exit_ok && s.get_input->from && s.get_input->perms.read() == 0) {  // a pipe that held none
    error_line(s.io.err, "get: no perms to look up in " + *s.args.from);
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  return status;
}

const Command get_command{
    .name = "get",
    .help = get_help,
    .needs = Needs::client,
    .add_options = add_get_options,
    .misuse = get_misuse,
    .prepare = prepare_get,
    .run = run_get,
    .configure = configure_get,
};

}  // namespace studentsvc_cli

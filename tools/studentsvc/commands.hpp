#pragma once
// The tool's service commands: get (one perm or a roster), current, conversation.

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/detail/request/url_userinfo.hpp>
#include <studentsvc/studentsvc.hpp>

#include "cli_args.hpp"
#include "cli_json.hpp"
#include "config.hpp"
#include "exit_status.hpp"
#include "perm_input.hpp"
#include "progress.hpp"
#include "roster.hpp"
#include "student_output.hpp"

namespace studentsvc_cli {

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
  if (is_wrong_address(e)) e.message += " (base URL " + studentsvc::detail::strip_url_userinfo(client.options().base_url) + ")";
  return e;
}

/// The input as the output names a failed lookup: a perm-like input as it is;
/// anything else (a secret pasted into the wrong place, say) as its position "#N".
[[nodiscard]] inline std::string shown_perm(const std::string& input, std::size_t index) {
  const bool perm_like = !input.empty() && input.size() <= 16 &&
                         input.find_first_not_of("0123456789") == std::string::npos;
  return perm_like ? input : "#" + std::to_string(index + 1);
}

[[nodiscard]] inline int run_batch(const studentsvc::Client& client, const Args& a, const std::vector<std::string>& perms,
                                   Format format) {
  studentsvc::StreamOptions stream;
  stream.max_concurrency = a.concurrency;
  if (a.jwt) stream.call.user_jwt = *a.jwt;
  // --fail-fast also stops the sending at once on 401, TLS or DNS errors (the
  // library's fail-fast); without it the first chunk decides (below).
  stream.fail_fast = a.fail_fast;

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
        if (!r) ++counts.failed;
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
    studentsvc::CallOptions call;
    if (a.jwt) call.user_jwt = *a.jwt;
    const auto student = client.get_student(perms.front(), call);
    if (!student) return report("get", with_base_url(student.error(), client));
    print_student(std::cout, *student, format, true);
    return exit_ok;
  }
  return run_batch(client, a, perms, format);
}

[[nodiscard]] inline int run_current(const studentsvc::Client& client, const Args& a,
                                     std::optional<std::string> demo_jwt) {
  std::optional<std::string> jwt = a.jwt;
  if (!jwt) jwt = getenv_string("STUDENTSVC_USER_JWT");
  if (!jwt && demo_jwt) {
    client.options().logger.log(studentsvc::LogLevel::debug, "current: using the mock server's demo user JWT");
    jwt = std::move(demo_jwt);
  }
  if (!jwt) {
    error_line("current: no user JWT: pass --jwt TOKEN or set STUDENTSVC_USER_JWT");
    return exit_status(studentsvc::ErrorKind::invalid_argument);
  }
  const auto student = client.current_student(*jwt);
  if (!student) return report("current", student.error());
  print_student(std::cout, *student, a.format.value_or(Format::json), false);
  return exit_ok;
}

[[nodiscard]] inline int run_conversation(const studentsvc::Client& client, const Args& a) {
  studentsvc::ConversationRequest request;
  request.method = a.method.value_or(a.data ? "POST" : "GET");
  if (!a.positionals.empty()) request.sub_path = a.positionals.front();
  request.query = a.query;
  request.body = a.data.value_or("");
  request.content_type = a.content_type.value_or("");
  request.idempotent = a.idempotent;
  const auto response = client.conversation(request);
  if (!response) return report("conversation", response.error());

  // Pretty-printed only within bounds (cli_json.hpp): any other body is printed as it came.
  const auto pretty = bounded_pretty_json(response->body);
  if (a.format == Format::table) {
    const auto type = response->headers.find("Content-Type");
    print_rows(std::cout, "FIELD",
               {{"status", std::to_string(response->status)},
                {"content-type", type ? printable(*type) : std::string("null")}});
    std::cout << "\nBODY\n";
    if (pretty) {
      std::cout << *pretty << '\n';
    } else if (!response->body.empty()) {
      std::cout << response->body << (response->body.ends_with('\n') ? "" : "\n");
    }
    return exit_ok;
  }
  if (pretty) {
    std::cout << *pretty << '\n';
  } else {
    std::cout << response->body;  // as it came: the tool does not know this payload
  }
  return exit_ok;
}

}  // namespace studentsvc_cli

// `studentsvc conversation`: {base_url}/conversation[/SUBPATH], method and payloads passed through.

#include "cmd/conversation/conversation.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>

#include "cli_json.hpp"
#include "exit_status.hpp"
#include "student_output.hpp"

namespace studentsvc_cli {

namespace {

constexpr std::string_view conversation_help =
    "Usage: studentsvc [OPTIONS] conversation [--method M] [--data BODY] [--query K=V]... [SUBPATH]\n"
    "\n"
    "Calls {base_url}/conversation[/SUBPATH]. The interface shows neither the method\n"
    "nor the payloads of this endpoint, so both pass through as given.\n"
    "\n"
    "Arguments:\n"
    "  SUBPATH                optional path below /conversation, e.g. threads/42\n"
    "                         (each segment is percent-encoded; '.' and '..' are refused)\n"
    "\n"
    "Options:\n"
    "  --method M             HTTP method (default GET, or POST when --data is given)\n"
    "  --data BODY            request body, e.g. '{\"text\":\"hello\"}'\n"
    "  --content-type TYPE    Content-Type of the body (default application/json)\n"
    "  --query K=V            a query parameter; repeat for more\n"
    "  --idempotent           allow retries (only for a method that is safe to repeat)\n"
    "  --format json|table    json (default): the response body, pretty-printed when it\n"
    "                         is JSON (nested at most 64 deep, at most 1 MiB), as it\n"
    "                         came otherwise; table: status, content type and body\n";

void add_conversation_options(CLI::App& sub, Args& a) {
  sub.add_option("subpath", a.positionals);
  sub.add_option_function<std::string>("--method", [&a](const std::string& v) { a.method = v; });
  sub.add_option_function<std::string>("--data", [&a](const std::string& v) { a.data = v; });
  sub.add_option_function<std::string>("--content-type", [&a](const std::string& v) { a.content_type = v; });
  const auto add_query = [&a](const std::vector<std::string>& v) {
    for (const auto& kv : v) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw CLI::ValidationError("--query", "expects K=V, got '" + kv + "'");
      a.query.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  };
  sub.add_option_function<std::vector<std::string>>("--query", add_query)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  sub.add_flag("--idempotent", a.idempotent)->disable_flag_override();
}

std::optional<std::string> conversation_misuse(const Args& a) {
  if (a.positionals.size() > 1) return "conversation takes at most one SUBPATH";
  return batch_format_misuse(a);
}

}  // namespace

int run_conversation(Session& s) {
  const studentsvc::Client& client = *s.client;
  const Args& a = s.args;
  std::ostream& out = s.io.out;
  studentsvc::ConversationRequest request;
  request.method = a.method.value_or(a.data ? "POST" : "GET");
  if (!a.positionals.empty()) request.sub_path = a.positionals.front();
  request.query = a.query;
  request.body = a.data.value_or("");
  request.content_type = a.content_type.value_or("");
  request.idempotent = a.idempotent;
  const auto response = client.conversation(request);
  if (!response) return report(s.io.err, "conversation", response.error());

  // Pretty-printed only within bounds (cli_json.hpp): any other body is printed as it came.
  const auto pretty = bounded_pretty_json(response->body);
  if (a.format == Format::table) {
    const auto type = response->headers.find("Content-Type");
    print_rows(out, "FIELD",
               {{"status", std::to_string(response->status)},
                {"content-type", type ? printable(*type) : std::string("null")}});
    out << "\nBODY\n";  // for a terminal: no control sequence of the body reaches it
    if (pretty) {
      out << printable_lines(*pretty) << '\n';
    } else if (!response->body.empty()) {
      out << printable_lines(response->body) << (response->body.ends_with('\n') ? "" : "\n");
    }
    return exit_ok;
  }
  if (pretty) {
    out << *pretty << '\n';
  } else {
    out << response->body;  // as it came: the tool does not know this payload
  }
  return exit_ok;
}

const Command conversation_command{
    .name = "conversation",
    .help = conversation_help,
    .needs = Needs::client,
    .add_options = add_conversation_options,
    .misuse = conversation_misuse,
    .run = run_conversation,
};

}  // namespace studentsvc_cli

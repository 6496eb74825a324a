#pragma once
// The tool's help texts (also the source of its man page, through help2man).

#include <string>
#include <string_view>

namespace studentsvc_cli {

inline constexpr std::string_view exit_status_help =
    "Exit status:\n"
    "  0  success\n"
    "  1  internal error (unexpected failure, output not written, mock server did not start)\n"
    "  2  usage error (unknown command or option, missing or malformed argument)\n"
    "  3  invalid_argument: bad input or configuration, nothing was sent\n"
    "     (perm not 7 digits, no or empty JWT, no base URL or API key,\n"
    "     http:// without --insecure-loopback, unreadable --from file)\n"
    "  4  transport: DNS, connect, TLS, timeout, connection reset, response too large\n"
    "  5  bad_request: the service answered 400\n"
    "  6  unauthorized: the service answered 401 (API key, Basic credential or JWT refused)\n"
    "  7  not_found: the service answered 404\n"
    "  8  http_status: any other non-2xx status\n"
    "  9  decode: a 2xx answer whose body is not the documented JSON\n"
    " 10  a lookup of several failed: the batch ran to its end, each failure is in the\n"
    "     output (an error row or object); with --fail-fast a stop exits with 3-9 instead\n";

inline constexpr std::string_view common_options_help =
    "Connection options (a flag beats its environment variable):\n"
    "  --base-url URL         https://host[:port][/prefix]        [STUDENTSVC_BASE_URL]\n"
    "  --api-key KEY          x-api-key (and svc-api-key)          [STUDENTSVC_API_KEY]\n"
    "  --svc-api-key KEY|off  another svc-api-key, or none         [STUDENTSVC_SVC_API_KEY]\n"
    "  --network-id ID        service account for HTTP Basic       [STUDENTSVC_NETWORK_ID]\n"
    "  --password PASSWORD    its password                         [STUDENTSVC_PASSWORD]\n"
    "  --api-version V        svc-api-version (default 2.0)        [STUDENTSVC_API_VERSION]\n"
    "  --ca-bundle FILE       PEM file of trusted CAs              [STUDENTSVC_CA_BUNDLE]\n"
    "  --proxy URL            explicit proxy (default: libcurl's https_proxy, no_proxy)\n"
    "  --insecure-loopback    allow http:// to 127.0.0.1, ::1 or localhost only (local tests)\n"
    "                                                [STUDENTSVC_ALLOW_INSECURE_LOOPBACK=1]\n"
    "  --timeout MS           whole-request timeout in milliseconds (default 30000)\n"
    "  --retries N            retries on transient failures (transport, 408, 429, 5xx),\n"
    "                         0-10 (default 2); conversation only with --idempotent\n"
    "  --profile NAME         a profile of the config file                [STUDENTSVC_PROFILE]\n"
    "  --config FILE          the config file (default $XDG_CONFIG_HOME/studentsvc/config.json,\n"
    "                         else ~/.config/studentsvc/config.json)         [STUDENTSVC_CONFIG]\n"
    "  --mock                 use the bundled mock server, started in this process\n"
    "                         (the demo: no network, the environment's connection\n"
    "                         settings are ignored, flags still apply)\n"
    "\n"
    "Output options:\n"
    "  -o, --output, --format json|ndjson|csv|table\n"
    "                         json (default for one perm), ndjson (default for several),\n"
    "                         csv (get only) or a readable table\n"
    "  -v, --verbose          log each call to stderr (URL, status, attempts, time); twice\n"
    "                         adds the request headers, every credential as REDACTED\n"
    "  --stats                at the end, print per-operation attempts, retries, bytes and\n"
    "                         a latency histogram to stderr (Prometheus text format)\n"
    "  -h, --help             show help and exit\n"
    "  --version              print the version and exit (also: studentsvc version)\n"
    "\n"
    "Precedence: a flag, then its STUDENTSVC_* variable, then the profile, then the\n"
    "default. A profile ({\"profiles\": {NAME: {...}}}) holds base_url, ca_bundle,\n"
    "api_version, network_id, allow_insecure_loopback, and the secrets as files:\n"
    "api_key_file, svc_api_key_file, password_file (refused when other users can\n"
    "read them: chmod 600).\n"
    "\n"
    "Secrets: prefer the environment (STUDENTSVC_API_KEY, STUDENTSVC_PASSWORD,\n"
    "STUDENTSVC_USER_JWT) to --api-key, --password and --jwt: command-line arguments\n"
    "are visible to other local users (ps) and are kept in shell history. Nothing\n"
    "this tool prints holds a key, password, Basic value or JWT, --verbose included.\n";

inline constexpr std::string_view main_help_intro =
    "Usage: studentsvc [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Command-line client of the Student Information and Conversation Service.\n"
    "\n"
    "Commands:\n"
    "  get PERM...            students by 7-digit perm number (or --from FILE)\n"
    "  current                the student named by a user JWT (--jwt or STUDENTSVC_USER_JWT)\n"
    "  conversation [SUBPATH] call {base_url}/conversation[/SUBPATH] and print the answer\n"
    "  config                 the effective configuration (secrets masked) and its sources\n"
    "  mock                   run the bundled mock server until SIGINT or SIGTERM\n"
    "  version                print the version\n"
    "  help [COMMAND]         this help, or a command's help\n"
    "\n"
    "Run 'studentsvc COMMAND --help' for a command's own options. Options may come\n"
    "before or after the command; '--' ends the options.\n"
    "\n";

inline constexpr std::string_view main_help_examples =
    "Examples:\n"
    "  studentsvc --mock get 1234567\n"
    "  studentsvc --mock --format table get 2345678\n"
    "  studentsvc --mock get --from perms.txt -o csv > roster.csv\n"
    "  studentsvc --mock current --jwt mock-jwt-li\n"
    "  studentsvc --mock conversation --data '{\"text\":\"hello\"}' threads/42\n"
    "  studentsvc mock --students fixtures.json\n"
    "  STUDENTSVC_BASE_URL=https://api.example.edu STUDENTSVC_API_KEY=... studentsvc get 1234567\n";

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
    "  --concurrency N        lookups in flight at once, 1-256 (default 16)\n"
    "  --fail-fast            stop sending after an error that every further lookup\n"
    "                         would repeat (401, TLS or certificate, unresolvable host,\n"
    "                         a 404 that is not the service's: a wrong base URL)\n"
    "  -q, --quiet            no progress bar and no summary line on stderr\n"
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

inline constexpr std::string_view current_help =
    "Usage: studentsvc [OPTIONS] current [--jwt TOKEN]\n"
    "\n"
    "Looks up the student named by an end-user JWT (GET /students/v2/students/current)\n"
    "and prints the StudentMinimal record (perm, firstName, lastName, suffix, email).\n"
    "\n"
    "Options:\n"
    "  --jwt TOKEN            the user's JWT; when absent, STUDENTSVC_USER_JWT is read\n"
    "                         (safer than the flag); with --mock and neither, the mock's\n"
    "                         demo JWT is used\n"
    "  --format json|table    JSON (default) or a table\n";

inline constexpr std::string_view conversation_help =
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

inline constexpr std::string_view config_help =
    "Usage: studentsvc [OPTIONS] config\n"
    "\n"
    "Prints the effective configuration, one setting a line: its name, its value\n"
    "(secrets masked as ****) and where it came from (a flag, a STUDENTSVC_*\n"
    "variable, the mock server, or the default). Then checks it as a batch would\n"
    "(Client::create) and prints `ok`, or the one-line reason and exits 3.\n";

inline constexpr std::string_view mock_help =
    "Usage: studentsvc mock [--port N] [--tls-cert FILE --tls-key FILE] [--students FILE.json] [--latency MS]\n"
    "\n"
    "Runs the bundled MockServer on 127.0.0.1 (a free port) until SIGINT or SIGTERM,\n"
    "so any program can be tested against it. Prints the `export STUDENTSVC_*=...`\n"
    "lines that point a program at it on stdout (the mock's own test credentials,\n"
    "never real ones; `studentsvc mock > mock.env &` then `. ./mock.env`), and its\n"
    "base URL on stderr.\n"
    "\n"
    "Options:\n"
    "  --tls-cert FILE        serve HTTPS with this PEM certificate (chain)\n"
    "  --tls-key FILE         and this PEM key (both or neither)\n"
    "  --students FILE.json   fixture students and tokens instead of the seed data:\n"
    "                         {\"students\": [StudentExtended, ...],\n"
    "                          \"tokens\": {\"JWT\": \"PERM\", ...}}\n"
    "                         each student in the interface's own keys (perm, firstName, ...)\n"
    "  --latency MS           wait this long before every answer (0-60000)\n"
    "  --port N               listen on 127.0.0.1:N (default: a free port, printed)\n";

/// The help of one command (`topic` "" for the overview).
[[nodiscard]] inline std::string help_text(std::string_view topic) {
  std::string out;
  if (topic == "get") {
    out = get_help;
  } else if (topic == "current") {
    out = current_help;
  } else if (topic == "conversation") {
    out = conversation_help;
  } else if (topic == "config") {
    out = config_help;
  } else if (topic == "mock") {
    return std::string(mock_help);
  } else {
    out.append(main_help_intro).append(common_options_help).append("\n").append(exit_status_help);
    out.append("\n").append(main_help_examples);
    return out;
  }
  out.append("\nCommon options (connection, --mock, --verbose, ...): see 'studentsvc --help'.\n\n");
  out.append(exit_status_help);
  return out;
}

}  // namespace studentsvc_cli

// The tool's overview help: usage, common options, exit statuses, examples.
// Each command's own help is in its file (cmd/); help_text() in commands.cpp
// puts them together (also the source of the man page, through help2man).

#include "help_text.hpp"

#include <string_view>

namespace studentsvc_cli {

constexpr std::string_view exit_status_help =
    "Exit status:\n"
    "  0  success\n"
    "  1  internal error (unexpected failure, output not written, mock server did not start)\n"
    "  2  usage error (unknown command or option, missing or malformed argument)\n"
    "  3  invalid_argument: bad input or configuration, nothing was sent\n"
    "     (perm not of --perm-syntax, no or empty JWT, no base URL or API key,\n"
    "     http:// without --insecure-loopback, unreadable --from file)\n"
    "  4  transport: DNS, connect, TLS, timeout, connection reset, response too large\n"
    "     (or an open circuit breaker: the service failed just before)\n"
    "  5  bad_request: the service answered 400\n"
    "  6  unauthorized: the service answered 401 (API key, Basic credential or JWT refused)\n"
    "  7  not_found: the service answered 404\n"
    "  8  http_status: any other non-2xx status\n"
    "  9  decode: a 2xx answer whose body is not the documented JSON\n"
    " 10  a lookup of several failed: the batch ran to its end, each failure is in the\n"
    "     output (an error row or object); with --fail-fast a stop exits with 3-9 instead\n";

constexpr std::string_view common_options_help =
    "Connection options (a flag beats its environment variable):\n"
    "  --base-url URL         https://host[:port][/prefix]        [STUDENTSVC_BASE_URL]\n"
    "  --api-key KEY          x-api-key (and svc-api-key)          [STUDENTSVC_API_KEY]\n"
    "  --svc-api-key KEY|off  another svc-api-key, or none         [STUDENTSVC_SVC_API_KEY]\n"
    "  --network-id ID        service account for HTTP Basic       [STUDENTSVC_NETWORK_ID]\n"
    "  --password PASSWORD    its password                         [STUDENTSVC_PASSWORD]\n"
    "  --api-version V        svc-api-version (default 2.0)        [STUDENTSVC_API_VERSION]\n"
    "  --perm-syntax digits|alphanumeric  the perms accepted: 7 digits (default), or 7\n"
    "                         letters or digits as issued since 2022 [STUDENTSVC_PERM_SYNTAX]\n"
    "  --ca-bundle FILE       PEM file of trusted CAs              [STUDENTSVC_CA_BUNDLE]\n"
    "  --ca-pem TEXT          trusted CAs as PEM text                  [STUDENTSVC_CA_PEM]\n"
    "  --client-cert FILE     client certificate (PEM), mutual TLS [STUDENTSVC_CLIENT_CERT]\n"
    "  --client-key FILE      its private key (PEM)                 [STUDENTSVC_CLIENT_KEY]\n"
    "  --client-key-password P  the key's password         [STUDENTSVC_CLIENT_KEY_PASSWORD]\n"
    "  --pinned-public-key sha256//B64[;...]  the server's key, pinned\n"
    "                                                [STUDENTSVC_PINNED_PUBLIC_KEY]\n"
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
    "                         csv (get only) or a readable table. For programs: json and\n"
    "                         ndjson, the server's text byte for byte (JSON-escaped; not\n"
    "                         for a terminal as it is). For a spreadsheet: csv, a cell\n"
    "                         starting with = + - @ tab or CR prefixed with ' (get\n"
    "                         --csv-raw: as it came). For a terminal: table, escape\n"
    "                         sequences, C1 controls and bidi overrides stripped\n"
    "  -v, --verbose          log each call to stderr (operation, status, attempts, time;\n"
    "                         never its URL); twice\n"
    "                         adds the request headers, every credential as REDACTED\n"
    "  --stats (get, current, conversation, doctor)\n"
    "                         at the end, print per-operation attempts, retries, bytes and\n"
    "                         a latency histogram to stderr (Prometheus text format);\n"
    "                         config and mock make no lookup to count\n"
    "  -h, --help             show help and exit\n"
    "  --version              print the version and exit (also: studentsvc version)\n"
    "\n"
    "Precedence: a flag, then its STUDENTSVC_* variable, then the profile, then the\n"
    "default. A profile ({\"profiles\": {NAME: {...}}}) holds base_url, ca_bundle,\n"
    "api_version, perm_syntax, network_id, allow_insecure_loopback, and the secrets as files:\n"
    "api_key_file, svc_api_key_file, password_file (refused when other users can\n"
    "read them: chmod 600; every trailing line break is dropped). The config file,\n"
    "each file it names and their folders are refused when group or others can\n"
    "write them or another user (root aside) owns them, as ssh does: chmod go-w.\n"
    "\n"
    "Secrets: prefer the environment (STUDENTSVC_API_KEY, STUDENTSVC_PASSWORD,\n"
    "STUDENTSVC_USER_JWT) to --api-key, --password and --jwt: command-line arguments\n"
    "are visible to other local users (ps) and are kept in shell history. Nothing\n"
    "this tool prints holds a key, password, Basic value or JWT, --verbose included.\n";

constexpr std::string_view main_help_intro =
    "Usage: studentsvc [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Command-line client of the Student Information and Conversation Service.\n"
    "\n"
    "Commands:\n"
    "  get PERM...            students by perm (or --from FILE)\n"
    "  current                the student named by a user JWT (--jwt or STUDENTSVC_USER_JWT)\n"
    "  conversation [SUBPATH] call {base_url}/conversation[/SUBPATH] and print the answer\n"
    "  config                 the effective configuration (secrets masked) and its sources\n"
    "  doctor                 check the whole setup step by step (safe to paste in a ticket)\n"
    "  mock                   run the bundled mock server until SIGINT or SIGTERM\n"
    "  version                print the version\n"
    "  help [COMMAND]         this help, or a command's help\n"
    "\n"
    "Run 'studentsvc COMMAND --help' for a command's own options. Options may come\n"
    "before or after the command; '--' ends the options.\n"
    "\n";

constexpr std::string_view doctor_exit_help =
    "studentsvc doctor exits with the category of its first failed check: 0 every\n"
    "check passed (warnings allowed), 3 configuration, 4 network or TLS (dns, connect,\n"
    "proxy, tls), 8 base path (an answer that is not the service's), 6 authentication\n"
    "(x-api-key, svc-api-key and Basic, a user JWT), 5 API version refused.\n";

constexpr std::string_view main_help_examples =
    "Examples:\n"
    "  studentsvc --mock get 1234567\n"
    "  studentsvc --mock --format table get 2345678\n"
    "  studentsvc --mock get --from perms.txt -o csv > roster.csv\n"
    "  studentsvc --mock current --jwt mock-jwt-li\n"
    "  studentsvc --mock conversation --data '{\"text\":\"hello\"}' threads/42\n"
    "  studentsvc mock --students fixtures.json\n"
    "  studentsvc doctor --json\n"
    "  STUDENTSVC_BASE_URL=https://api.example.edu STUDENTSVC_API_KEY=... studentsvc get 1234567\n";

}  // namespace studentsvc_cli

#pragma once
// roster-sync's command line and its ROSTER_SYNC_* tuning variables.

#include <expected>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sync.hpp"

namespace roster_sync {

inline constexpr std::string_view usage_text =
    "Usage: roster-sync --perms FILE --db URL [--perm-column NAME] [--resume] [--dry-run]\n"
    "\n"
    "Looks up every perm of FILE and keeps the table `students` of URL in step\n"
    "with the service; one row per run in `sync_runs`.\n"
    "\n"
    "  --perms FILE        one perm a line, or a CSV (with --perm-column)\n"
    "  --db URL            sqlite:PATH or postgresql://... (a libpq URI)\n"
    "  --perm-column NAME  FILE is a CSV with a header; the perms are in column NAME\n"
    "  --resume            continue the last interrupted run, without looking up again\n"
    "                      what it stored\n"
    "  --dry-run           look everything up and report, writing nothing\n"
    "\n"
    "The service: the STUDENTSVC_* environment (STUDENTSVC_BASE_URL, STUDENTSVC_API_KEY, ...).\n"
    "Tuning: ROSTER_SYNC_CONCURRENCY (16), ROSTER_SYNC_BATCH_SIZE (500),\n"
    "ROSTER_SYNC_MAX_FAILED_PERCENT (1), ROSTER_SYNC_BREAKER_THRESHOLD (5).\n"
    "Exit: 0 synced, 1 some lookups failed, 75 service unavailable (or another run\n"
    "holds the lock), 78 configuration error, 64 usage error.\n";

struct CommandLine {
  SyncSettings settings;
  int breaker_threshold = 5;
  bool help = false;
};

using Environment = std::function<std::optional<std::string>(std::string_view)>;

/// The arguments after the program's name; the error is one line for stderr.
/// Flags: exit 64 on error. The ROSTER_SYNC_* values: also 64 (a bad number).
[[nodiscard]] std::expected<CommandLine, std::string> parse_command_line(std::span<const std::string_view> args,
                                                                         const Environment& env);

}  // namespace roster_sync

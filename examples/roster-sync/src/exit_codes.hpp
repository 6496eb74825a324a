#pragma once
// roster-sync's exit statuses (sysexits.h values, so cron and systemd tell them apart).

namespace roster_sync {

inline constexpr int exit_synced = 0;               ///< Every perm looked up and stored.
inline constexpr int exit_some_failed = 1;          ///< The run completed; some lookups failed.
inline constexpr int exit_usage = 64;               ///< EX_USAGE: a bad command line.
inline constexpr int exit_unavailable = 75;         ///< EX_TEMPFAIL: the service is down, or another run holds the lock.
inline constexpr int exit_configuration = 78;       ///< EX_CONFIG: settings, credentials, database or perms file.

}  // namespace roster_sync

#pragma once
// One sync run: the perms of the list looked up with Client::for_each_student,
// each result compared with its row and written only when it changed, in
// batches that commit together with the run's counters and checkpoint.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include <studentsvc/client.hpp>

#include "database.hpp"
#include "perm_file.hpp"

namespace roster_sync {

struct SyncSettings {
  std::string perms_path;                 ///< --perms
  std::optional<std::string> perm_column; ///< --perm-column: the file is a CSV
  std::string db_url;                     ///< --db
  bool resume = false;                    ///< --resume
  bool dry_run = false;                   ///< --dry-run: everything, then rolled back
  std::size_t concurrency = 16;           ///< ROSTER_SYNC_CONCURRENCY: lookups in flight
  std::size_t batch_size = 500;           ///< ROSTER_SYNC_BATCH_SIZE: results per commit
  /// ROSTER_SYNC_MAX_FAILED_PERCENT: a completed run soft-drops the perms
  /// gone from the list only when at most this share of its lookups failed.
  double max_failed_percent = 1.0;
};

/// Runs one sync (or continues one, with `resume`) of `perms` into `db`;
/// one line per failed lookup and a summary go to `log`. Returns the exit
/// status (exit_codes.hpp). `db` must be open; the run takes its lock.
[[nodiscard]] int run_sync(const SyncSettings& settings, const studentsvc::Client& client, Database& db,
                           const PermFile& perms, std::ostream& log);

}  // namespace roster_sync

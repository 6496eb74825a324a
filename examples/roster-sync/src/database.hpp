#pragma once
// What the sync needs from a database. Two implementations, each in its own
// file: SQLite (sqlite_database.cpp) and PostgreSQL (postgres_database.cpp).
// One connection, used by one thread at a time.

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include <studentsvc/models.hpp>

namespace roster_sync {

struct DbError {
  std::string message;
};
template <class T>
using DbResult = std::expected<T, DbError>;

/// A run's counters, as sync_runs stores them.
struct RunCounts {
  std::int64_t inserted = 0, updated = 0, unchanged = 0, not_found = 0, failed = 0, dropped = 0;
};

/// A sync_runs row that can be continued: one killed mid-run (`running`) or
/// stopped because the service was down or refused the credentials (`stopped`).
struct ResumableRun {
  std::int64_t id = 0;
  std::string status;
  std::string perms_digest;
  std::string checkpoint;  // see Checkpoint in sync.cpp
  RunCounts counts;
};

/// What a row of `students` holds that decides whether a lookup changes it.
struct StoredStudent {
  std::string record_hash;  // "" for a perm only ever seen as not found
  bool not_found = false;
  bool dropped = false;
};

/// A row for insert_students.
struct NewStudent {
  studentsvc::StudentExtended student;
  std::string record_hash;
};

class Database {
 public:
  virtual ~Database() = default;

  /// Takes the run lock, held until the Database is destroyed (or the
  /// process dies): false when another run holds it.
  [[nodiscard]] virtual DbResult<bool> try_lock() = 0;
  /// Creates `students` and `sync_runs` when missing.
  [[nodiscard]] virtual DbResult<void> create_schema() = 0;

  [[nodiscard]] virtual DbResult<void> begin() = 0;
  [[nodiscard]] virtual DbResult<void> commit() = 0;
  [[nodiscard]] virtual DbResult<void> rollback() = 0;

  /// The newest run left `running` or `stopped`, if any.
  [[nodiscard]] virtual DbResult<std::optional<ResumableRun>> resumable_run() = 0;
  /// Marks a run that will not be continued `interrupted`.
  [[nodiscard]] virtual DbResult<void> abandon_run(std::int64_t id, std::string_view now) = 0;
  /// A new `running` row; its id.
  [[nodiscard]] virtual DbResult<std::int64_t> start_run(std::string_view now, std::string_view perms_digest) = 0;
  /// Sets a continued run back to `running`.
  [[nodiscard]] virtual DbResult<void> reopen_run(std::int64_t id) = 0;
  /// The run's counters and checkpoint, written in the batch's transaction.
  [[nodiscard]] virtual DbResult<void> save_progress(std::int64_t id, const RunCounts& counts,
                                                     std::string_view checkpoint) = 0;
  [[nodiscard]] virtual DbResult<void> finish_run(std::int64_t id, std::string_view status, const RunCounts& counts,
                                                  std::string_view now) = 0;

  /// The stored state of those of `perms` that have a row.
  [[nodiscard]] virtual DbResult<std::unordered_map<std::string, StoredStudent>> stored(
      std::span<const std::string> perms) = 0;
  /// Perms seen for the first time: every column, first_seen = last_seen =
  /// last_changed = now. Many at once: PostgreSQL takes them in one statement.
  [[nodiscard]] virtual DbResult<void> insert_students(std::span<const NewStudent> rows, std::string_view now) = 0;
  /// A changed (or returning) student: every column, last_seen = last_changed = now,
  /// not found and dropped_at cleared.
  [[nodiscard]] virtual DbResult<void> update_student(const studentsvc::StudentExtended& s, std::string_view hash,
                                                      std::string_view now) = 0;
  /// A 404: the perm's row (made, with no fields, when it has none) is marked
  /// not found; its fields are kept. Never a delete.
  [[nodiscard]] virtual DbResult<void> mark_not_found(std::string_view perm, bool has_row, std::string_view now) = 0;

  /// The soft drop: the perms of this run's list go to a temporary table,
  /// then every row not in it gets dropped_at = now. Returns how many.
  [[nodiscard]] virtual DbResult<void> begin_roster() = 0;
  [[nodiscard]] virtual DbResult<void> add_to_roster(std::span<const std::string> perms) = 0;
  [[nodiscard]] virtual DbResult<std::int64_t> drop_absent(std::string_view now) = 0;
};

/// `sqlite:PATH` or `postgresql://...` (also `postgres://`); anything else is
/// an error. A database that cannot be opened or reached is an error too.
enum class DbUrlKind { sqlite, postgresql, unknown };
[[nodiscard]] DbUrlKind db_url_kind(std::string_view url);
[[nodiscard]] DbResult<std::unique_ptr<Database>> open_database(std::string_view url);

[[nodiscard]] DbResult<std::unique_ptr<Database>> open_sqlite(std::string_view path);
[[nodiscard]] DbResult<std::unique_ptr<Database>> open_postgres(std::string_view conninfo);

}  // namespace roster_sync

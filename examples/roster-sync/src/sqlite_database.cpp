// Database on SQLite (libsqlite3): one file, WAL journal, the run lock an
// flock() on `PATH.lock` (released by the kernel when the process dies).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <optional>
#include <type_traits>

#include <sqlite3.h>

#include <studentsvc/student_fields.hpp>

#include "database.hpp"
#include "schema.hpp"
#include "text.hpp"

namespace roster_sync {
namespace {

class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }
  sqlite3_stmt** out() { return &stmt_; }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDatabase final : public Database {
 public:
  explicit SqliteDatabase(std::string path) : path_(std::move(path)) {}
  // close_v2: the cached statements are finalized after this, by their own destructors.
  ~SqliteDatabase() override {
    sqlite3_close_v2(db_);
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  DbResult<void> open() {
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      return fail("cannot open");
    }
    sqlite3_busy_timeout(db_, 10'000);
    // Page caches of 256 KiB (SQLite's default is 2 MiB each for the table and
    // for the temporary roster): full already at a thousand students, so the
    // job's memory stays flat however long the list; the OS caches the file.
    if (auto r = exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; "
                      "PRAGMA cache_size=-256; PRAGMA temp.cache_size=-256");
        !r) {
      return r;
    }
    return {};
  }

  DbResult<bool> try_lock() override {
    lock_fd_ = ::open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd_ < 0) return std::unexpected(DbError{cat("sqlite:", path_, ": cannot open ", path_, ".lock")});
    return ::flock(lock_fd_, LOCK_EX | LOCK_NB) == 0;
  }

  DbResult<void> create_schema() override {
    return exec(schema_sql({.text = "TEXT", .flag = "INTEGER", .time = "TEXT",
                            .run_id = "INTEGER PRIMARY KEY AUTOINCREMENT", .count = "INTEGER"}));
  }

  // IMMEDIATE: the write lock is taken at once, so a batch never fails half-way on SQLITE_BUSY.
  DbResult<void> begin() override { return exec("BEGIN IMMEDIATE"); }
  DbResult<void> commit() override { return exec("COMMIT"); }
  DbResult<void> rollback() override { return exec("ROLLBACK"); }

  DbResult<std::optional<ResumableRun>> resumable_run() override {
    Statement s;
    if (auto r = prepare(s, "SELECT id, status, perms_digest, checkpoint, inserted, updated, unchanged, not_found, "
                            "failed, dropped FROM sync_runs WHERE status IN ('running', 'stopped') "
                            "ORDER BY id DESC LIMIT 1");
        !r) {
      return std::unexpected(r.error());
    }
    const int rc = sqlite3_step(s.get());
    if (rc == SQLITE_DONE) return std::optional<ResumableRun>();
    if (rc != SQLITE_ROW) return fail("reading sync_runs");
    ResumableRun run;
    run.id = sqlite3_column_int64(s.get(), 0);
    run.status = text(s, 1);
    run.perms_digest = text(s, 2);
    run.checkpoint = text(s, 3);
    std::int64_t* counters[] = {&run.counts.inserted, &run.counts.updated, &run.counts.unchanged,
                                &run.counts.not_found, &run.counts.failed, &run.counts.dropped};
    for (int i = 0; i < 6; ++i) *counters[i] = sqlite3_column_int64(s.get(), 4 + i);
    return run;
  }

  DbResult<void> abandon_run(std::int64_t id, std::string_view now) override {
    return run_sql("UPDATE sync_runs SET status = 'interrupted', finished_at = ?1 WHERE id = ?2",
                   [&](sqlite3_stmt* s) {
                     bind_text(s, 1, now);
                     sqlite3_bind_int64(s, 2, id);
                   });
  }

  DbResult<std::int64_t> start_run(std::string_view now, std::string_view digest) override {
    auto r = run_sql("INSERT INTO sync_runs (started_at, status, perms_digest) VALUES (?1, 'running', ?2)",
                     [&](sqlite3_stmt* s) {
                       bind_text(s, 1, now);
                       bind_text(s, 2, digest);
                     });
    if (!r) return std::unexpected(r.error());
    return sqlite3_last_insert_rowid(db_);
  }

  DbResult<void> reopen_run(std::int64_t id) override {
    return run_sql("UPDATE sync_runs SET status = 'running', finished_at = NULL WHERE id = ?1",
                   [&](sqlite3_stmt* s) { sqlite3_bind_int64(s, 1, id); });
  }

  DbResult<void> save_progress(std::int64_t id, const RunCounts& c, std::string_view checkpoint) override {
    return run_sql("UPDATE sync_runs SET inserted = ?1, updated = ?2, unchanged = ?3, not_found = ?4, failed = ?5, "
                   "dropped = ?6, checkpoint = ?7 WHERE id = ?8",
                   [&](sqlite3_stmt* s) {
                     bind_counts(s, c);
                     bind_text(s, 7, checkpoint);
                     sqlite3_bind_int64(s, 8, id);
                   });
  }

  DbResult<void> finish_run(std::int64_t id, std::string_view status, const RunCounts& c,
                            std::string_view now) override {
    return run_sql("UPDATE sync_runs SET inserted = ?1, updated = ?2, unchanged = ?3, not_found = ?4, failed = ?5, "
                   "dropped = ?6, status = ?7, finished_at = ?8 WHERE id = ?9",
                   [&](sqlite3_stmt* s) {
                     bind_counts(s, c);
                     bind_text(s, 7, status);
                     bind_text(s, 8, now);
                     sqlite3_bind_int64(s, 9, id);
                   });
  }

  DbResult<std::unordered_map<std::string, StoredStudent>> stored(std::span<const std::string> perms) override {
    if (!select_.get()) {
      if (auto r = prepare(select_, "SELECT record_hash, lookup_status = 'not_found', dropped_at IS NOT NULL "
                                    "FROM students WHERE perm = ?1");
          !r) {
        return std::unexpected(r.error());
      }
    }
    std::unordered_map<std::string, StoredStudent> out;
    for (const auto& perm : perms) {
      sqlite3_reset(select_.get());
      bind_text(select_.get(), 1, perm);
      const int rc = sqlite3_step(select_.get());
      if (rc == SQLITE_ROW) {
        out[perm] = StoredStudent{text(select_, 0), sqlite3_column_int(select_.get(), 1) != 0,
                                  sqlite3_column_int(select_.get(), 2) != 0};
      } else if (rc != SQLITE_DONE) {
        return fail("reading students");
      }
    }
    return out;
  }

  DbResult<void> insert_students(std::span<const NewStudent> rows, std::string_view now) override {
    const auto sql = [](auto placeholder_of) { return insert_student_sql(placeholder_of); };
    for (const auto& row : rows) {
      if (auto r = write_student(insert_, sql, row.student, row.record_hash, now); !r) return r;
    }
    return {};
  }
  DbResult<void> update_student(const studentsvc::StudentExtended& s, std::string_view hash,
                                std::string_view now) override {
    return write_student(update_, [](auto placeholder_of) { return update_student_sql(placeholder_of); }, s, hash, now);
  }

  DbResult<void> mark_not_found(std::string_view perm, bool has_row, std::string_view now) override {
    const char* sql = has_row ? "UPDATE students SET lookup_status = 'not_found', last_seen = ?2, last_changed = ?2, "
                                "dropped_at = NULL WHERE perm = ?1"
                              : "INSERT INTO students (perm, lookup_status, first_seen, last_seen, last_changed) "
                                "VALUES (?1, 'not_found', ?2, ?2, ?2)";
    return run_sql(sql, [&](sqlite3_stmt* st) {
      bind_text(st, 1, perm);
      bind_text(st, 2, now);
    });
  }

  DbResult<void> begin_roster() override {
    return exec("CREATE TEMP TABLE IF NOT EXISTS roster (perm TEXT PRIMARY KEY); DELETE FROM temp.roster");
  }
  DbResult<void> add_to_roster(std::span<const std::string> perms) override {
    if (!roster_.get()) {
      if (auto r = prepare(roster_, "INSERT OR IGNORE INTO temp.roster (perm) VALUES (?1)"); !r) return r;
    }
    for (const auto& perm : perms) {
      sqlite3_reset(roster_.get());
      bind_text(roster_.get(), 1, perm);
      if (sqlite3_step(roster_.get()) != SQLITE_DONE) return fail("filling the roster");
    }
    return {};
  }
  DbResult<std::int64_t> drop_absent(std::string_view now) override {
    auto r = run_sql("UPDATE students SET dropped_at = ?1 WHERE dropped_at IS NULL "
                     "AND perm NOT IN (SELECT perm FROM temp.roster)",
                     [&](sqlite3_stmt* s) { bind_text(s, 1, now); });
    if (!r) return std::unexpected(r.error());
    return static_cast<std::int64_t>(sqlite3_changes64(db_));
  }

 private:
  static std::string placeholder(std::size_t i) { return "?" + std::to_string(i); }

  std::unexpected<DbError> fail(std::string_view what) const {
    return std::unexpected(DbError{cat("sqlite:", path_, ": ", what, ": ", db_ ? sqlite3_errmsg(db_) : "")});
  }
  DbResult<void> exec(const std::string& sql) {
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return fail("SQL failed");
    return {};
  }
  DbResult<void> prepare(Statement& s, const std::string& sql) {
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, s.out(), nullptr) != SQLITE_OK) return fail("SQL does not prepare");
    return {};
  }
  template <class Bind>
  DbResult<void> run_sql(const std::string& sql, Bind bind) {
    Statement s;
    if (auto r = prepare(s, sql); !r) return r;
    bind(s.get());
    if (sqlite3_step(s.get()) != SQLITE_DONE) return fail("SQL failed");
    return {};
  }
  static void bind_text(sqlite3_stmt* s, int i, std::string_view v) {
    sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  static void bind_counts(sqlite3_stmt* s, const RunCounts& c) {
    const std::int64_t values[] = {c.inserted, c.updated, c.unchanged, c.not_found, c.failed, c.dropped};
    for (int i = 0; i < 6; ++i) sqlite3_bind_int64(s, i + 1, values[i]);
  }
  static std::string text(const Statement& s, int column) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s.get(), column));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s.get(), column))) : std::string();
  }

  // `sql(placeholder)` is spelled once, when the statement is first prepared.
  template <class Sql>
  DbResult<void> write_student(Statement& cached, Sql sql, const studentsvc::StudentExtended& student,
                               std::string_view hash, std::string_view now) {
    if (!cached.get()) {
      if (auto r = prepare(cached, sql(placeholder)); !r) return r;
    }
    sqlite3_stmt* s = cached.get();
    sqlite3_reset(s);
    int i = 1;
    for (const auto& field : studentsvc::student_fields) {
      studentsvc::with_student_field(field, student, [&](const auto& value) {
        using Value = std::remove_cvref_t<decltype(value)>;
        if constexpr (std::is_same_v<Value, std::string>) {
          bind_text(s, i, value);
        } else if constexpr (std::is_same_v<Value, std::optional<std::string>>) {
          if (value) bind_text(s, i, *value); else sqlite3_bind_null(s, i);
        } else {
          if (value) sqlite3_bind_int(s, i, *value ? 1 : 0); else sqlite3_bind_null(s, i);
        }
      });
      ++i;
    }
    bind_text(s, i, hash);
    bind_text(s, i + 1, now);
    if (sqlite3_step(s) != SQLITE_DONE) return fail("writing a student");
    return {};
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  int lock_fd_ = -1;
  Statement insert_, update_, select_, roster_;
};

}  // namespace

DbResult<std::unique_ptr<Database>> open_sqlite(std::string_view path) {
  auto db = std::make_unique<SqliteDatabase>(std::string(path));
  if (auto r = db->open(); !r) return std::unexpected(r.error());
  return db;
}

}  // namespace roster_sync

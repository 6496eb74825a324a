// Database on PostgreSQL (libpq): one connection; the run lock a
// session-level pg_try_advisory_lock, released when the connection ends
// (also when the process is killed: the server sees the socket close).
#include <cstdlib>
#include <optional>
#include <type_traits>
#include <vector>

#include <libpq-fe.h>

#include <studentsvc/student_fields.hpp>

#include "database.hpp"
#include "schema.hpp"
#include "text.hpp"

namespace roster_sync {
namespace {

// The advisory lock's key: one per database, shared by every roster-sync.
constexpr const char* lock_key = "7236551813140251001";

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

// Parameters as text (or SQL NULL); the server casts each to its column's type.
class Params {
 public:
  void add(std::string_view v) { values_.emplace_back(std::string(v)); }
  void add(const std::string& v) { values_.emplace_back(v); }
  void add(std::optional<std::string> v) { values_.push_back(std::move(v)); }
  void add(std::int64_t v) { values_.emplace_back(std::to_string(v)); }
  [[nodiscard]] int size() const { return static_cast<int>(values_.size()); }
  [[nodiscard]] std::vector<const char*> pointers() const {
    std::vector<const char*> out;
    for (const auto& v : values_) out.push_back(v ? v->c_str() : nullptr);
    return out;
  }

 private:
  std::vector<std::optional<std::string>> values_;
};

class PostgresDatabase final : public Database {
 public:
  ~PostgresDatabase() override { PQfinish(conn_); }

  DbResult<void> connect(std::string_view conninfo) {
    conn_ = PQconnectdb(std::string(conninfo).c_str());
    if (PQstatus(conn_) != CONNECTION_OK) return fail("cannot connect");
    // Notices ("relation already exists, skipping") are not the run's business.
    PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
    return {};
  }

  DbResult<bool> try_lock() override {
    auto r = query("SELECT pg_try_advisory_lock(" + std::string(lock_key) + ")");
    if (!r) return std::unexpected(r.error());
    return std::string_view(PQgetvalue(r->get(), 0, 0)) == "t";
  }

  DbResult<void> create_schema() override {
    return command(schema_sql({.text = "text", .flag = "boolean", .time = "timestamptz",
                               .run_id = "bigserial PRIMARY KEY", .count = "bigint"}));
  }

  DbResult<void> begin() override { return command("BEGIN"); }
  DbResult<void> commit() override { return command("COMMIT"); }
  DbResult<void> rollback() override { return command("ROLLBACK"); }

  DbResult<std::optional<ResumableRun>> resumable_run() override {
    auto r = query("SELECT id, status, perms_digest, checkpoint, inserted, updated, unchanged, not_found, failed, "
                   "dropped FROM sync_runs WHERE status IN ('running', 'stopped') ORDER BY id DESC LIMIT 1");
    if (!r) return std::unexpected(r.error());
    if (PQntuples(r->get()) == 0) return std::optional<ResumableRun>();
    auto value = [&](int column) { return std::string(PQgetvalue(r->get(), 0, column)); };
    auto number = [&](int column) { return std::strtoll(PQgetvalue(r->get(), 0, column), nullptr, 10); };
    ResumableRun run{number(0), value(1), value(2), value(3),
                     RunCounts{number(4), number(5), number(6), number(7), number(8), number(9)}};
    return run;
  }

  DbResult<void> abandon_run(std::int64_t id, std::string_view now) override {
    Params p;
    p.add(now);
    p.add(id);
    return command("UPDATE sync_runs SET status = 'interrupted', finished_at = $1 WHERE id = $2", p);
  }

  DbResult<std::int64_t> start_run(std::string_view now, std::string_view digest) override {
    Params p;
    p.add(now);
    p.add(digest);
    auto r = query("INSERT INTO sync_runs (started_at, status, perms_digest) VALUES ($1, 'running', $2) RETURNING id",
                   p);
    if (!r) return std::unexpected(r.error());
    return std::strtoll(PQgetvalue(r->get(), 0, 0), nullptr, 10);
  }

  DbResult<void> reopen_run(std::int64_t id) override {
    Params p;
    p.add(id);
    return command("UPDATE sync_runs SET status = 'running', finished_at = NULL WHERE id = $1", p);
  }

  DbResult<void> save_progress(std::int64_t id, const RunCounts& c, std::string_view checkpoint) override {
    Params p = counts(c);
    p.add(checkpoint);
    p.add(id);
    return command("UPDATE sync_runs SET inserted = $1, updated = $2, unchanged = $3, not_found = $4, failed = $5, "
                   "dropped = $6, checkpoint = $7 WHERE id = $8",
                   p);
  }

  DbResult<void> finish_run(std::int64_t id, std::string_view status, const RunCounts& c,
                            std::string_view now) override {
    Params p = counts(c);
    p.add(status);
    p.add(now);
    p.add(id);
    return command("UPDATE sync_runs SET inserted = $1, updated = $2, unchanged = $3, not_found = $4, failed = $5, "
                   "dropped = $6, status = $7, finished_at = $8 WHERE id = $9",
                   p);
  }

  // One round trip for the whole batch.
  DbResult<std::unordered_map<std::string, StoredStudent>> stored(std::span<const std::string> perms) override {
    std::unordered_map<std::string, StoredStudent> out;
    if (perms.empty()) return out;
    Params p;
    p.add(array_literal(perms));
    auto r = query("SELECT perm, record_hash, lookup_status = 'not_found', dropped_at IS NOT NULL FROM students "
                   "WHERE perm = ANY($1::text[])",
                   p);
    if (!r) return std::unexpected(r.error());
    for (int row = 0; row < PQntuples(r->get()); ++row) {
      out[PQgetvalue(r->get(), row, 0)] =
          StoredStudent{PQgetvalue(r->get(), row, 1), std::string_view(PQgetvalue(r->get(), row, 2)) == "t",
                        std::string_view(PQgetvalue(r->get(), row, 3)) == "t"};
    }
    return out;
  }

  // One statement for the batch: a text[] (boolean[] for nfr) per column, unnest()ed into rows.
  DbResult<void> insert_students(std::span<const NewStudent> rows, std::string_view now) override {
    if (rows.empty()) return {};
    const auto& fields = studentsvc::student_fields;
    std::vector<std::vector<std::optional<std::string>>> columns(fields.size() + 1);
    for (const auto& row : rows) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        studentsvc::with_student_field(fields[i], row.student, [&](const auto& value) {
          using Value = std::remove_cvref_t<decltype(value)>;
          if constexpr (std::is_same_v<Value, std::string>) {
            columns[i].emplace_back(value);
          } else if constexpr (std::is_same_v<Value, std::optional<std::string>>) {
            columns[i].push_back(value);
          } else {
            columns[i].push_back(value ? std::optional<std::string>(*value ? "true" : "false") : std::nullopt);
          }
        });
      }
      columns.back().emplace_back(row.record_hash);
    }
    Params p;
    for (const auto& column : columns) p.add(array_literal(column));
    p.add(now);
    if (!prepared_.contains("roster_sync_insert")) {
      std::string names, arrays;
      const auto& column_names = record_columns();
      for (std::size_t i = 0; i < column_names.size(); ++i) {
        names += column_names[i] + ", ";
        arrays += placeholder(i + 1) + (column_names[i] == "nfr" ? "::boolean[], " : "::text[], ");
      }
      const auto hash = placeholder(column_names.size() + 1), at = placeholder(column_names.size() + 2);
      const std::string sql = "INSERT INTO students (" + names +
                              "record_hash, lookup_status, first_seen, last_seen, last_changed) SELECT u.*, 'found', " +
                              at + "::timestamptz, " + at + "::timestamptz, " + at + "::timestamptz FROM unnest(" +
                              arrays + hash + "::text[]) AS u";
      PgResult r(PQprepare(conn_, "roster_sync_insert", sql.c_str(), p.size(), nullptr));
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return fail("SQL does not prepare");
      prepared_.emplace("roster_sync_insert", true);
    }
    const auto values = p.pointers();
    PgResult r(PQexecPrepared(conn_, "roster_sync_insert", p.size(), values.data(), nullptr, nullptr, 0));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return fail("writing students");
    return {};
  }
  DbResult<void> update_student(const studentsvc::StudentExtended& s, std::string_view hash,
                                std::string_view now) override {
    return write_student("roster_sync_update", update_student_sql(placeholder), s, hash, now);
  }

  DbResult<void> mark_not_found(std::string_view perm, bool has_row, std::string_view now) override {
    Params p;
    p.add(perm);
    p.add(now);
    return command(has_row ? "UPDATE students SET lookup_status = 'not_found', last_seen = $2, last_changed = $2, "
                             "dropped_at = NULL WHERE perm = $1"
                           : "INSERT INTO students (perm, lookup_status, first_seen, last_seen, last_changed) "
                             "VALUES ($1, 'not_found', $2, $2, $2)",
                   p);
  }

  DbResult<void> begin_roster() override {
    return command("CREATE TEMP TABLE IF NOT EXISTS roster (perm text PRIMARY KEY); TRUNCATE roster");
  }
  DbResult<void> add_to_roster(std::span<const std::string> perms) override {
    if (perms.empty()) return {};
    Params p;
    p.add(array_literal(perms));
    return command("INSERT INTO roster (perm) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING", p);
  }
  DbResult<std::int64_t> drop_absent(std::string_view now) override {
    Params p;
    p.add(now);
    auto r = exec("UPDATE students SET dropped_at = $1 WHERE dropped_at IS NULL "
                  "AND NOT EXISTS (SELECT 1 FROM roster WHERE roster.perm = students.perm)",
                  p, PGRES_COMMAND_OK);
    if (!r) return std::unexpected(r.error());
    return std::strtoll(PQcmdTuples(r->get()), nullptr, 10);
  }

 private:
  static std::string placeholder(std::size_t i) { return "$" + std::to_string(i); }

  static Params counts(const RunCounts& c) {
    Params p;
    for (const auto v : {c.inserted, c.updated, c.unchanged, c.not_found, c.failed, c.dropped}) p.add(v);
    return p;
  }

  // `{"a","b",NULL}`: each element quoted, `"` and `\` escaped; std::nullopt is NULL.
  static void append_element(std::string& out, const std::optional<std::string>& v) {
    if (out.size() > 1) out += ',';
    if (!v) {
      out += "NULL";
      return;
    }
    out += '"';
    for (const char c : *v) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  static std::string array_literal(std::span<const std::string> values) {
    std::string out = "{";
    for (const auto& v : values) append_element(out, v);
    return out + "}";
  }
  static std::string array_literal(std::span<const std::optional<std::string>> values) {
    std::string out = "{";
    for (const auto& v : values) append_element(out, v);
    return out + "}";
  }

  std::unexpected<DbError> fail(std::string_view what) const {
    std::string message = conn_ ? PQerrorMessage(conn_) : "";
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    return std::unexpected(DbError{cat("postgresql: ", what, ": ", message)});
  }

  DbResult<PgResult> exec(const std::string& sql, const Params& p, ExecStatusType expected) {
    const auto values = p.pointers();
    PgResult r(p.size() == 0 ? PQexec(conn_, sql.c_str())
                             : PQexecParams(conn_, sql.c_str(), p.size(), nullptr, values.data(), nullptr, nullptr, 0));
    if (PQresultStatus(r.get()) != expected) return fail("SQL failed");
    return r;
  }
  DbResult<PgResult> query(const std::string& sql, const Params& p = {}) { return exec(sql, p, PGRES_TUPLES_OK); }
  DbResult<void> command(const std::string& sql, const Params& p = {}) {
    auto r = exec(sql, p, PGRES_COMMAND_OK);
    if (!r) return std::unexpected(r.error());
    return {};
  }

  DbResult<void> write_student(const char* name, const std::string& sql, const studentsvc::StudentExtended& student,
                               std::string_view hash, std::string_view now) {
    Params p;
    for (const auto& field : studentsvc::student_fields) {
      studentsvc::with_student_field(field, student, [&](const auto& value) {
        using Value = std::remove_cvref_t<decltype(value)>;
        if constexpr (std::is_same_v<Value, std::string>) {
          p.add(std::string_view(value));
        } else if constexpr (std::is_same_v<Value, std::optional<std::string>>) {
          p.add(value);
        } else {
          p.add(value ? std::optional<std::string>(*value ? "true" : "false") : std::nullopt);
        }
      });
    }
    p.add(hash);
    p.add(now);
    if (!prepared_.contains(name)) {
      PgResult r(PQprepare(conn_, name, sql.c_str(), p.size(), nullptr));
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return fail("SQL does not prepare");
      prepared_.emplace(name, true);
    }
    const auto values = p.pointers();
    PgResult r(PQexecPrepared(conn_, name, p.size(), values.data(), nullptr, nullptr, 0));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return fail("writing a student");
    return {};
  }

  PGconn* conn_ = nullptr;
  std::unordered_map<std::string, bool> prepared_;
};

}  // namespace

DbResult<std::unique_ptr<Database>> open_postgres(std::string_view conninfo) {
  auto db = std::make_unique<PostgresDatabase>();
  if (auto r = db->connect(conninfo); !r) return std::unexpected(r.error());
  return db;
}

}  // namespace roster_sync

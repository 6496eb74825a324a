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
  void add(std::optional<std::string_view> v) {
    values_.push_back(v ? std::optional<std::string>(*v) : std::nullopt);
  }
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

  // The batch's new rows with COPY, PostgreSQL's bulk path: about a third of
  // the server's CPU of one INSERT of unnest()ed arrays, which took CPU from
  // the lookups running beside it.
  DbResult<void> insert_students(std::span<const NewStudent> rows, std::string_view now) override {
    if (rows.empty()) return {};
    std::string data;
    for (const auto& row : rows) {
      for (const auto& field : studentsvc::student_fields) {
        studentsvc::with_student_field(field, row.student,
                                       [&](const auto& value) { append_copy_field(data, field_text(value)); });
        data += '\t';
      }
      append_copy_field(data, std::string_view(row.record_hash));
      data += "\tfound\t";
      for (int i = 0; i < 3; ++i) {  // first_seen, last_seen, last_changed
        append_copy_field(data, now);
        data += i < 2 ? '\t' : '\n';
      }
    }
    if (copy_sql_.empty()) {
      copy_sql_ = "COPY students (";
      for (const auto& column : record_columns()) copy_sql_ += column + ", ";
      copy_sql_ += "record_hash, lookup_status, first_seen, last_seen, last_changed) FROM STDIN";
    }
    return copy_in(copy_sql_, data, "writing students");
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

  // No key: COPY takes the list as it is (a perm listed twice too), and the
  // drop's NOT EXISTS does not care.
  DbResult<void> begin_roster() override {
    return command("CREATE TEMP TABLE IF NOT EXISTS roster (perm text); TRUNCATE roster");
  }
  // COPY, as the students: a fifth of the time of INSERT ... unnest.
  DbResult<void> add_to_roster(std::span<const std::string> perms) override {
    if (perms.empty()) return {};
    std::string data;
    for (const auto& perm : perms) {
      append_copy_field(data, std::string_view(perm));
      data += '\n';
    }
    return copy_in("COPY roster (perm) FROM STDIN", data, "filling the roster");
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

  // `{"a","b"}`: each element quoted, `"` and `\` escaped.
  static void append_element(std::string& out, std::string_view v) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (const char c : v) {
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

  // A record field as PostgreSQL reads it (nfr: "true" or "false"), or nullopt for NULL:
  // the statement's parameter, or COPY's field.
  template <class Value>
  static std::optional<std::string_view> field_text(const Value& value) {
    if constexpr (std::is_same_v<Value, std::string>) {
      return std::string_view(value);
    } else if constexpr (std::is_same_v<Value, std::optional<std::string>>) {
      return value ? std::optional<std::string_view>(*value) : std::nullopt;
    } else {
      return value ? std::optional<std::string_view>(*value ? "true" : "false") : std::nullopt;
    }
  }

  // One field of COPY's text format: \N for NULL, and its four special characters escaped.
  static void append_copy_field(std::string& out, std::string_view value) {
    for (const char c : value) {
      switch (c) {
        case '\\': out += "\\\\"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        default: out += c;
      }
    }
  }
  static void append_copy_field(std::string& out, std::optional<std::string_view> value) {
    if (value) {
      append_copy_field(out, *value);
    } else {
      out += "\\N";
    }
  }
  // Runs a COPY ... FROM STDIN with `data`, and reads its results to the end,
  // so that the connection is usable again whatever happened.
  DbResult<void> copy_in(const std::string& sql, const std::string& data, std::string_view what) {
    {
      PgResult start(PQexec(conn_, sql.c_str()));
      if (PQresultStatus(start.get()) != PGRES_COPY_IN) return fail(what);
    }
    bool ok = PQputCopyData(conn_, data.data(), static_cast<int>(data.size())) == 1;
    ok = PQputCopyEnd(conn_, ok ? nullptr : "roster-sync: the data could not be sent") == 1 && ok;
    while (PGresult* r = PQgetResult(conn_)) {
      ok = ok && PQresultStatus(r) == PGRES_COMMAND_OK;
      PQclear(r);
    }
    if (!ok) return fail(what);
    return {};
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
      studentsvc::with_student_field(field, student, [&](const auto& value) { p.add(field_text(value)); });
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
  std::string copy_sql_;  ///< insert_students' COPY, built once
};

}  // namespace

DbResult<std::unique_ptr<Database>> open_postgres(std::string_view conninfo) {
  auto db = std::make_unique<PostgresDatabase>();
  if (auto r = db->connect(conninfo); !r) return std::unexpected(r.error());
  return db;
}

}  // namespace roster_sync

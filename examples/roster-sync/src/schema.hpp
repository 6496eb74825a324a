#pragma once
// The two tables, spelled once for both databases: only the types differ.

#include <string>

#include "student_row.hpp"

namespace roster_sync {

struct SqlTypes {
  const char* text;       // a field, a hash, a status
  const char* flag;       // nfr
  const char* time;       // first_seen ... finished_at
  const char* run_id;     // sync_runs.id
  const char* count;      // the counters
};

/// CREATE TABLE IF NOT EXISTS statements for `students` and `sync_runs`.
[[nodiscard]] inline std::string schema_sql(const SqlTypes& t) {
  std::string students = "CREATE TABLE IF NOT EXISTS students (\n  perm " + std::string(t.text) + " PRIMARY KEY";
  for (const auto& column : record_columns()) {
    if (column == "perm") continue;
    students += ",\n  " + column + " " + (column == "nfr" ? t.flag : t.text);
  }
  students += std::string(",\n  record_hash ") + t.text + " NOT NULL DEFAULT ''" +
              ",\n  lookup_status " + t.text + " NOT NULL DEFAULT 'found'" +  // 'found' or 'not_found'
              ",\n  first_seen " + t.time + " NOT NULL,\n  last_seen " + t.time + " NOT NULL" +
              ",\n  last_changed " + t.time + " NOT NULL,\n  dropped_at " + t.time + "\n);\n";
  std::string runs = std::string("CREATE TABLE IF NOT EXISTS sync_runs (\n  id ") + t.run_id +
                     ",\n  started_at " + t.time + " NOT NULL,\n  finished_at " + t.time +
                     ",\n  status " + t.text + " NOT NULL";
  for (const char* counter : {"inserted", "updated", "unchanged", "not_found", "failed", "dropped"}) {
    runs += std::string(",\n  ") + counter + " " + t.count + " NOT NULL DEFAULT 0";
  }
  runs += std::string(",\n  perms_digest ") + t.text + " NOT NULL DEFAULT ''" + ",\n  checkpoint " + t.text +
          " NOT NULL DEFAULT ''\n);\n";
  return students + runs;
}

/// `INSERT INTO students (...) VALUES (...)` and the matching UPDATE, with the
/// record's columns as placeholders 1..N, then hash and now; `placeholder(i)`
/// spells placeholder i ("?1" or "$1").
template <class Placeholder>
[[nodiscard]] std::string insert_student_sql(Placeholder placeholder) {
  const auto& columns = record_columns();
  std::string names, values;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    names += columns[i] + ", ";
    values += placeholder(i + 1) + ", ";
  }
  const auto hash = placeholder(columns.size() + 1), now = placeholder(columns.size() + 2);
  return "INSERT INTO students (" + names + "record_hash, lookup_status, first_seen, last_seen, last_changed) VALUES (" +
         values + hash + ", 'found', " + now + ", " + now + ", " + now + ")";
}

template <class Placeholder>
[[nodiscard]] std::string update_student_sql(Placeholder placeholder) {
  const auto& columns = record_columns();
  std::string sets;
  for (std::size_t i = 1; i < columns.size(); ++i) sets += columns[i] + " = " + placeholder(i + 1) + ", ";
  const auto hash = placeholder(columns.size() + 1), now = placeholder(columns.size() + 2);
  return "UPDATE students SET " + sets + "record_hash = " + hash + ", lookup_status = 'found', last_seen = " + now +
         ", last_changed = " + now + ", dropped_at = NULL WHERE perm = " + placeholder(1);
}

}  // namespace roster_sync

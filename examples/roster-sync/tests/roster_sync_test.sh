#!/usr/bin/env bash
# roster-sync's tests, run as a user runs it: the binary, against `studentsvc
# mock` (students from a fixture file; perms it lacks answer 404; lookups of
# "bad" perms fail to decode: FAULT_PROXY, in front of the mock, answers them
# with a firstName that is a number, which the mock itself refuses to serve),
# into SQLite or into a PostgreSQL server this script starts in a temporary
# directory and always stops.
#
#   roster_sync_test.sh CASE sqlite|postgresql
# Environment: ROSTER_SYNC, SQLITE_QUERY, STUDENTSVC_TOOL, FAULT_PROXY, PG_BIN (postgresql only).
set -euo pipefail
case_name=$1
backend=$2
: "${ROSTER_SYNC:?}" "${SQLITE_QUERY:?}" "${STUDENTSVC_TOOL:?}" "${FAULT_PROXY:?}"

work=$(mktemp -d "${TMPDIR:-/tmp}/roster-sync-test.XXXXXX")
chmod 755 "$work"
mock_pid=""
proxy_pid=""
bad_perms=""
pg_data=""
pg_user=""
cleanup() {
  local rc=$?
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null && wait "$proxy_pid" 2>/dev/null || true
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
  if [ -n "$pg_data" ]; then as_pg "$PG_BIN/pg_ctl" -D "$pg_data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  if [ "$rc" -ne 0 ]; then
    echo "--- FAILED ($case_name, $backend); logs:" >&2
    for f in "$work"/*.log "$work"/pglog/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -n 30 "$f" >&2; }; done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

fail() { echo "roster_sync_test: $case_name ($backend): $*" >&2; exit 1; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }

# ---- PostgreSQL: initdb + pg_ctl in $work, on a unix socket only; as a non-root user when run as root.
as_pg() { if [ -n "$pg_user" ]; then runuser -u "$pg_user" -- "$@"; else "$@"; fi; }
start_postgres() {
  : "${PG_BIN:?PG_BIN, the PostgreSQL server programs (Debian: postgresql-15)}"
  if [ "$(id -u)" -eq 0 ]; then pg_user=nobody; fi
  pg_data="$work/pg"
  mkdir -p "$pg_data" "$work/pgsock" "$work/pglog"
  if [ -n "$pg_user" ]; then chown "$pg_user" "$pg_data" "$work/pgsock" "$work/pglog"; fi
  as_pg "$PG_BIN/initdb" -D "$pg_data" -U postgres --auth=trust --no-sync -E UTF8 >"$work/initdb.log" 2>&1
  as_pg "$PG_BIN/pg_ctl" -D "$pg_data" -w -t 60 -l "$work/pglog/postgres.log" \
    -o "-c listen_addresses='' -k $work/pgsock -c fsync=off -p 5432" start >/dev/null
  db_url="postgresql://postgres@/postgres?host=$work/pgsock&port=5432"
}
start_sqlite() { db_url="sqlite:$work/roster.db"; }

# One value (or rows as a|b|c) from the database under test.
sql() {
  if [ "$backend" = sqlite ]; then
    "$SQLITE_QUERY" "$work/roster.db" "$1"
  else
    "$PG_BIN/psql" -X -q -A -t -F '|' -v ON_ERROR_STOP=1 "$db_url" -c "$1"
  fi
}
# Counts every write to `students` from here on (a trigger into students_writes).
count_student_writes() {
  if [ "$backend" = sqlite ]; then
    sql "CREATE TABLE students_writes (n INTEGER);
         CREATE TRIGGER w_ins AFTER INSERT ON students BEGIN INSERT INTO students_writes VALUES (1); END;
         CREATE TRIGGER w_upd AFTER UPDATE ON students BEGIN INSERT INTO students_writes VALUES (1); END;
         CREATE TRIGGER w_del AFTER DELETE ON students BEGIN INSERT INTO students_writes VALUES (1); END;"
  else
    sql "CREATE TABLE students_writes (n int);
         CREATE FUNCTION note_write() RETURNS trigger LANGUAGE plpgsql AS
           \$\$ BEGIN INSERT INTO students_writes VALUES (1); RETURN NULL; END \$\$;
         CREATE TRIGGER w AFTER INSERT OR UPDATE OR DELETE ON students FOR EACH ROW EXECUTE FUNCTION note_write();" >/dev/null
  fi
}

# ---- The mock: `fixture FILE FIRST COUNT [BAD...]` writes COUNT students from
# perm FIRST on; those in $gone (space-separated) are left out: the mock
# answers 404. Lookups of the perms listed as BAD fail to decode: the next
# start_mock puts FAULT_PROXY in front of the mock for them.
fixture() {
  local file=$1 first=$2 count=$3; shift 3
  local left_out=" ${gone:-} "
  bad_perms=$(IFS=,; echo "$*")
  {
    echo '{"students": ['
    local i perm sep=""
    for ((i = 0; i < count; i++)); do
      perm=$((first + i))
      [[ "$left_out" == *" $perm "* ]] && continue
      printf '%s{"perm":"%07d","firstName":"First%d","lastName":"O'"'"'Last <%d>","email":"s%d@example.edu","middleName":null,"nfr":%s,"admitQuarter":"F2024"}\n' \
        "$sep" "$perm" "$perm" "$perm" "$perm" "$([ $((perm % 7)) -eq 0 ] && echo true || echo false)"
      sep=","
    done
    echo ']}'
  } > "$file"
}
# `perms FILE FIRST COUNT`: COUNT perms from FIRST, one a line.
perms() { local i; for ((i = 0; i < $3; i++)); do printf '%07d\n' $(($2 + i)); done > "$1"; }

start_mock() {  # start_mock FIXTURE [LATENCY_MS]
  local env="$work/mock.env"
  rm -f "$env"
  "$STUDENTSVC_TOOL" mock --students "$1" --latency "${2:-0}" > "$env" 2>>"$work/mock.log" &
  mock_pid=$!
  local i
  for ((i = 0; i < 200; i++)); do
    grep -q STUDENTSVC_BASE_URL "$env" 2>/dev/null && break
    kill -0 "$mock_pid" 2>/dev/null || fail "studentsvc mock did not start"
    sleep 0.05
  done
  # shellcheck disable=SC1090
  . "$env"
  [ -n "$bad_perms" ] || return 0
  # The bad perms' lookups go to the proxy, which forwards the rest to the mock.
  # (The last proxy's URL goes first: the shell truncates the file only once the
  # new one is forked, so a second start could read the old URL, or nothing.)
  rm -f "$work/proxy.url"
  "$FAULT_PROXY" "${STUDENTSVC_BASE_URL##*:}" "$bad_perms" > "$work/proxy.url" 2>>"$work/proxy.log" &
  proxy_pid=$!
  for ((i = 0; i < 200; i++)); do
    grep -q '^http://' "$work/proxy.url" 2>/dev/null && break
    kill -0 "$proxy_pid" 2>/dev/null || fail "the fault proxy did not start"
    sleep 0.05
  done
  STUDENTSVC_BASE_URL=$(cat "$work/proxy.url")
  export STUDENTSVC_BASE_URL
}
stop_mock() {
  if [ -n "$proxy_pid" ]; then kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null || true; proxy_pid=""; fi
  kill "$mock_pid"; wait "$mock_pid" 2>/dev/null || true; mock_pid=""
}

# `sync ARGS...`: runs roster-sync on $db_url; status in $rc, stderr in $work/sync.log.
sync() {
  set +e
  "$ROSTER_SYNC" --db "$db_url" "$@" 2>"$work/sync.log"
  rc=$?
  set -e
  cat "$work/sync.log" >> "$work/all-syncs.log"
}
last_run() { sql "SELECT status, inserted, updated, unchanged, not_found, failed, dropped FROM sync_runs ORDER BY id DESC LIMIT 1"; }

if [ "$backend" = postgresql ]; then start_postgres; else start_sqlite; fi

case "$case_name" in
  exit-codes)
    perms "$work/list" 1000001 3
    fixture "$work/fx.json" 1000001 3
    start_mock "$work/fx.json"
    sync; expect_eq "$rc" 64 "no arguments"
    sync --perms "$work/list" --bogus; expect_eq "$rc" 64 "an unknown flag"
    "$ROSTER_SYNC" --perms "$work/list" --db "mysql://x" 2>/dev/null && rc=0 || rc=$?; expect_eq "$rc" 64 "a --db of no known kind"
    sync --perms "$work/list" --resume=yes; expect_eq "$rc" 64 "a value on a flag"
    ROSTER_SYNC_CONCURRENCY=lots sync --perms "$work/list"; expect_eq "$rc" 64 "ROSTER_SYNC_CONCURRENCY not a number"
    sync --perms "$work/missing"; expect_eq "$rc" 78 "a perms file that does not exist"
    printf 'name,id\nA,1000001\n' > "$work/list.csv"
    sync --perms "$work/list.csv" --perm-column perm; expect_eq "$rc" 78 "a --perm-column the CSV lacks"
    (unset STUDENTSVC_BASE_URL; sync --perms "$work/list"; expect_eq "$rc" 78 "STUDENTSVC_BASE_URL unset")
    STUDENTSVC_API_KEY=k3y-n0t-this-0ne sync --perms "$work/list"; expect_eq "$rc" 78 "an API key the service refuses"
    grep -q "refused the credentials" "$work/sync.log" || fail "a 401 does not say the credentials were refused"
    if grep -q "k3y-n0t-this-0ne" "$work/sync.log"; then fail "the API key was printed"; fi
    "$ROSTER_SYNC" --perms "$work/list" --db "postgresql://nobody@/x?host=$work/no-such-dir" 2>/dev/null && rc=0 || rc=$?
    expect_eq "$rc" 78 "a PostgreSQL that cannot be reached"
    sync --perms "$work/list"; expect_eq "$rc" 0 "a clean sync"
    expect_eq "$(last_run)" "ok|3|0|0|0|0|0" "the clean run's counts"
    ;;

  unavailable)
    perms "$work/list" 1000001 200
    fixture "$work/fx.json" 1000001 200
    start_mock "$work/fx.json"
    base=$STUDENTSVC_BASE_URL
    stop_mock
    # The service is down: the breaker opens after a few failures, the run stops at once, nothing stored.
    STUDENTSVC_BASE_URL=$base sync --perms "$work/list"
    expect_eq "$rc" 75 "the service down"
    expect_eq "$(sql "SELECT status FROM sync_runs")" "stopped" "the stopped run's status"
    expect_eq "$(sql "SELECT count(*) FROM students")" "0" "rows after a run with the service down"
    grep -q "resume" "$work/sync.log" || fail "exit 75 does not say to --resume"
    start_mock "$work/fx.json"
    sync --perms "$work/list" --resume
    expect_eq "$rc" 0 "--resume once the service is back"
    expect_eq "$(sql "SELECT count(*), count(DISTINCT perm) FROM students")" "200|200" "rows after --resume"
    expect_eq "$(sql "SELECT count(*) FROM sync_runs")" "1" "runs: the resumed run is the same row"
    expect_eq "$(last_run)" "ok|200|0|0|0|0|0" "the resumed run's counts"
    ;;

  first-run)
    perms "$work/list" 1000001 40
    printf '1999991\n1999992\n' >> "$work/list"   # not visible to the account: 404
    fixture "$work/fx.json" 1000001 40 1000005 1000006 1000007
    start_mock "$work/fx.json"
    sync --perms "$work/list"
    expect_eq "$rc" 1 "a run with lookups that fail to decode"
    expect_eq "$(last_run)" "partial|37|0|0|2|3|0" "counts: inserted, not found, failed"
    expect_eq "$(sql "SELECT count(*) FROM students WHERE lookup_status = 'found'")" "37" "found rows"
    expect_eq "$(sql "SELECT count(*) FROM students WHERE lookup_status = 'not_found'")" "2" "not_found rows"
    expect_eq "$(sql "SELECT last_name FROM students WHERE perm = '1000010'")" "O'Last <1000010>" "a stored field"
    [ "$(grep -c "decode" "$work/sync.log")" -eq 3 ] || fail "one line per failed lookup expected"
    ;;

  unchanged)
    perms "$work/list" 1000001 60
    fixture "$work/fx.json" 1000001 60
    start_mock "$work/fx.json"
    sync --perms "$work/list"; expect_eq "$rc" 0 "the first run"
    count_student_writes
    sync --perms "$work/list"; expect_eq "$rc" 0 "the second run"
    expect_eq "$(sql "SELECT count(*) FROM students_writes")" "0" "rows written by an unchanged run"
    expect_eq "$(last_run)" "ok|0|0|60|0|0|0" "the unchanged run's counts"
    # One student changes: exactly one row is written.
    stop_mock
    sed -i 's/"First1000030"/"Renamed"/' "$work/fx.json"
    start_mock "$work/fx.json"
    sync --perms "$work/list"; expect_eq "$rc" 0 "the third run"
    expect_eq "$(sql "SELECT count(*) FROM students_writes")" "1" "rows written when one student changed"
    expect_eq "$(last_run)" "ok|0|1|59|0|0|0" "the third run's counts"
    expect_eq "$(sql "SELECT first_name FROM students WHERE perm = '1000030'")" "Renamed" "the changed field"
    ;;

  not-found)
    perms "$work/list" 1000001 10
    fixture "$work/fx.json" 1000001 10
    start_mock "$work/fx.json"
    sync --perms "$work/list"; expect_eq "$rc" 0 "the first run"
    # 1000004 is no longer visible to the account: 404. Its row stays, with its fields.
    stop_mock
    gone=1000004 fixture "$work/fx4.json" 1000001 10
    start_mock "$work/fx4.json"
    sync --perms "$work/list"; expect_eq "$rc" 0 "a run where one perm is 404"
    expect_eq "$(last_run)" "ok|0|0|9|1|0|0" "the 404 run's counts"
    expect_eq "$(sql "SELECT count(*) FROM students")" "10" "rows after a 404"
    expect_eq "$(sql "SELECT lookup_status, first_name, dropped_at IS NULL FROM students WHERE perm = '1000004'")" \
      "$([ "$backend" = sqlite ] && echo "not_found|First1000004|1" || echo "not_found|First1000004|t")" "the 404 perm's row"
    # Visible again: found, and written once more.
    stop_mock
    start_mock "$work/fx.json"
    sync --perms "$work/list"; expect_eq "$rc" 0 "the perm visible again"
    expect_eq "$(last_run)" "ok|0|1|9|0|0|0" "the return's counts"
    ;;

  soft-drop)
    perms "$work/list" 1000001 100
    fixture "$work/fx.json" 1000001 100 1000050 1000051 1000052
    start_mock "$work/fx.json"
    # 3 of 100 lookups fail: over the 1% threshold, so nobody is dropped.
    sync --perms "$work/list"; expect_eq "$rc" 1 "a run with 3% failures"
    head -n 90 "$work/list" > "$work/list90"
    sync --perms "$work/list90"; expect_eq "$rc" 1 "90 perms, 3 failing"
    expect_eq "$(sql "SELECT count(*) FROM students WHERE dropped_at IS NOT NULL")" "0" "drops over the threshold"
    grep -q "nobody is marked dropped" "$work/sync.log" || fail "no word on why nobody was dropped"
    # The same with the threshold raised to 5%: the 10 left out are dropped, never deleted.
    ROSTER_SYNC_MAX_FAILED_PERCENT=5 sync --perms "$work/list90"; expect_eq "$rc" 1 "90 perms at 5%"
    expect_eq "$(last_run)" "partial|0|0|87|0|3|10" "the dropping run's counts"
    expect_eq "$(sql "SELECT count(*) FROM students WHERE dropped_at IS NOT NULL")" "10" "dropped rows"
    expect_eq "$(sql "SELECT count(*) FROM students")" "97" "rows: soft drop keeps them"
    # A run the service stops (the breaker) drops nobody either.
    head -n 80 "$work/list" > "$work/list80"
    base=$STUDENTSVC_BASE_URL; stop_mock
    STUDENTSVC_BASE_URL=$base sync --perms "$work/list80"; expect_eq "$rc" 75 "the service down"
    expect_eq "$(sql "SELECT count(*) FROM students WHERE dropped_at IS NOT NULL")" "10" "drops by a stopped run"
    # Back on the list: no longer dropped.
    start_mock "$work/fx.json"
    ROSTER_SYNC_MAX_FAILED_PERCENT=5 sync --perms "$work/list"; expect_eq "$rc" 1 "all 100 again"
    expect_eq "$(sql "SELECT count(*) FROM students WHERE dropped_at IS NOT NULL")" "0" "dropped rows once back"
    expect_eq "$(last_run)" "partial|0|10|87|0|3|0" "the return run's counts"
    ;;

  kill-resume)
    n=600
    perms "$work/list" 1000001 $n
    fixture "$work/fx.json" 1000001 $n
    start_mock "$work/fx.json" 20
    export ROSTER_SYNC_CONCURRENCY=4 ROSTER_SYNC_BATCH_SIZE=25
    "$ROSTER_SYNC" --perms "$work/list" --db "$db_url" 2>"$work/killed.log" &
    sync_pid=$!
    # Kill it once some batches are committed, well before the end (600 x 20 ms / 4 = 3 s).
    for ((i = 0; i < 400; i++)); do
      stored=$(sql "SELECT count(*) FROM students" 2>/dev/null || echo 0)
      [ "${stored:-0}" -ge 100 ] && break
      sleep 0.02
    done
    kill -9 "$sync_pid"; wait "$sync_pid" 2>/dev/null || true
    stored=$(sql "SELECT count(*) FROM students")
    [ "$stored" -ge 100 ] && [ "$stored" -lt "$n" ] || fail "killed with $stored of $n stored: not mid-run"
    expect_eq "$(sql "SELECT status FROM sync_runs")" "running" "the killed run's status"
    sync --perms "$work/list" --resume
    expect_eq "$rc" 0 "--resume after kill -9"
    expect_eq "$(sql "SELECT count(*), count(DISTINCT perm) FROM students")" "$n|$n" "rows: exactly the roster"
    expect_eq "$(sql "SELECT count(*) FROM sync_runs")" "1" "runs: the resumed run is the same row"
    expect_eq "$(last_run)" "ok|$n|0|0|0|0|0" "the resumed run's counts: each perm once"
    looked=$(sed -n 's/.*looked up \([0-9]*\);.*/\1/p' "$work/sync.log")
    [ "$looked" -le $((n - stored)) ] || fail "--resume looked up $looked perms; $stored of $n were stored already"
    grep -q "continuing run 1" "$work/sync.log" || fail "--resume did not continue run 1"
    ;;

  overlap)
    # The first run takes 400 x 30 ms / 2 = 6 s: long enough to be caught holding the lock on a loaded machine.
    perms "$work/list" 1000001 400
    fixture "$work/fx.json" 1000001 400
    start_mock "$work/fx.json" 30
    ROSTER_SYNC_CONCURRENCY=2 "$ROSTER_SYNC" --perms "$work/list" --db "$db_url" 2>"$work/first.log" &
    first_pid=$!
    for ((i = 0; i < 400; i++)); do
      [ "$(sql "SELECT count(*) FROM sync_runs" 2>/dev/null || echo 0)" = 1 ] && break
      sleep 0.02
    done
    before=$(sql "SELECT count(*) FROM students")
    sync --perms "$work/list"
    expect_eq "$rc" 75 "a second run while the first holds the lock"
    grep -q "holds the lock" "$work/sync.log" || fail "the second run does not say why it stopped"
    expect_eq "$(sql "SELECT count(*) FROM sync_runs")" "1" "runs: the second one made none"
    kill -0 "$first_pid" || fail "the first run ended before the second started: no overlap tested"
    wait "$first_pid" && first_rc=0 || first_rc=$?
    expect_eq "$first_rc" 0 "the first run"
    expect_eq "$(last_run)" "ok|400|0|0|0|0|0" "the first run's counts"
    [ "$before" -lt 400 ] || fail "the first run was done before the second started"
    ;;

  csv-dry-run)
    printf 'name,perm,email\n"Last, First",1000001,a@x\nB,1000002,b@x\n"C ""Q""",1000003,c@x\n' > "$work/list.csv"
    fixture "$work/fx.json" 1000001 3
    start_mock "$work/fx.json"
    sync --perms "$work/list.csv" --perm-column perm --dry-run
    expect_eq "$rc" 0 "--dry-run"
    grep -q "dry run: nothing written" "$work/sync.log" || fail "--dry-run does not say so"
    grep -q "inserted 3" "$work/sync.log" || fail "--dry-run does not report what it would insert"
    if [ "$backend" = sqlite ]; then
      expect_eq "$(sql "SELECT count(*) FROM sqlite_master WHERE name IN ('students', 'sync_runs')")" "0" "tables after --dry-run"
    else
      expect_eq "$(sql "SELECT count(*) FROM pg_tables WHERE tablename IN ('students', 'sync_runs')")" "0" "tables after --dry-run"
    fi
    sync --perms "$work/list.csv" --perm-column perm
    expect_eq "$rc" 0 "the CSV run"
    expect_eq "$(sql "SELECT count(*) FROM students")" "3" "rows from the CSV"
    ;;

  *) fail "unknown case" ;;
esac
echo "roster_sync_test: $case_name ($backend): ok"

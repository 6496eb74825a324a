#!/usr/bin/env bash
# Issue 38's roster-sync figures (bench/roster_sync_bench.cpp): throughput
# into SQLite and PostgreSQL against the SDK's lookups alone, and peak RSS from
# 1,000 to 100,000 perms. Starts a PostgreSQL server (initdb + pg_ctl from
# /usr/lib/postgresql/15/bin) in a temporary directory on a unix socket, as
# `nobody` when run as root, and always stops it. scripts/bench.sh calls it.
#
#   scripts/bench-roster-sync.sh [BUILD_DIR] [--quick]
# BUILD_DIR (default build/bench): a Release tree with STUDENTSVC_BUILD_BENCHMARKS=ON;
# the two targets are built there.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/bench
quick=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    *) build=$arg ;;
  esac
done
pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$pg_bin/pg_ctl" ] || { echo "bench-roster-sync.sh: no $pg_bin/pg_ctl (Debian: postgresql-15)" >&2; exit 1; }
cmake --build "$build" --target roster-sync studentsvc_roster_sync_bench

work=$(mktemp -d "${TMPDIR:-/tmp}/roster-sync-bench.XXXXXX")
chmod 755 "$work"
as_pg=()
if [ "$(id -u)" -eq 0 ]; then as_pg=(runuser -u nobody --); fi
mkdir -p "$work/pg" "$work/sock" "$work/log"
if [ ${#as_pg[@]} -gt 0 ]; then chown nobody "$work/pg" "$work/sock" "$work/log"; fi
stop() {
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap stop EXIT
"${as_pg[@]}" "$pg_bin/initdb" -D "$work/pg" -U postgres --auth=trust --no-sync -E UTF8 >/dev/null
# Durable commits as a production server has them (fsync on): the figure includes them.
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -w -l "$work/log/postgres.log" \
  -o "-c listen_addresses='' -k $work/sock -p 5432" start >/dev/null
for db in sync10k sync10k_b rss1k rss10k rss100k; do
  "$pg_bin/createdb" -h "$work/sock" -p 5432 -U postgres "$db"
done
"$build/bench/studentsvc_roster_sync_bench" --roster-sync "$build/examples/roster-sync/roster-sync" \
  --pg-url "postgresql://postgres@/%DB%?host=$work/sock&port=5432" --work "$work" "${quick[@]}"

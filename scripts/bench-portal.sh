#!/usr/bin/env bash
# Issue 38's load figure for examples/student-portal (bench/portal_load.mjs):
# 200 concurrent page views through one portal process in front of
# `studentsvc mock` (the portal's test fixture: three students and their
# tokens); prints p50, p99, the rate, the portal's CPU time a page and its
# thread count (the Threads: line of /proc/PID/status, at most, under load),
# one `BENCH portal_<figure>=value` line each. The mock runs with
# --threads 256: cpp-httplib holds a worker thread per busy keep-alive
# connection, and the portal's SDK keeps up to 64 open. Then the same through
# a second portal in front of bench/portal_upstream.mjs, a stand-in service
# without thread-per-connection: `BENCH portal_standin_<figure>=value`. Starts
# every server on 127.0.0.1 and always stops them. scripts/bench.sh calls it.
#
#   scripts/bench-portal.sh [BUILD_DIR] [--quick]
# BUILD_DIR (default build/bench): a Release tree of this repository (with
# Boost: the portal is built in-tree); student-portal and the tool are built there.
# PORTAL_BENCH_CONCURRENCY (default 200): page views at once. An answer that
# is not the record page (a 503 when requests waiting for the mock's threads
# time out and the portal's circuit breaker opens) is counted in
# `BENCH <name>_errors`; its latency counts in p50 and p99 like any other.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
build=build/bench
pages=10000
for arg in "$@"; do
  case "$arg" in
    --quick) pages=2000 ;;
    *) build=$arg ;;
  esac
done
export no_proxy="127.0.0.1,localhost" NO_PROXY="127.0.0.1,localhost"
command -v node >/dev/null || { echo "bench-portal.sh: node not found (Debian: nodejs)" >&2; exit 1; }
cmake --build "$build" --target student-portal studentsvc_cli
portal_bin="$build/examples/student-portal/student-portal"
tool="$build/tools/studentsvc/studentsvc"
for f in "$portal_bin" "$tool"; do
  [ -x "$f" ] || { echo "bench-portal.sh: $f was not built (Boost for the portal, cpp-httplib for the mock)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/portal-bench.XXXXXX")
pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
trap 'stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Waits up to 15 s for a line matching $2 in file $1 (written by process $3).
wait_for() {
  for _ in $(seq 1 150); do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  echo "bench-portal.sh: no line matching '$2' in $1:" >&2
  cat "$1" >&2 || true
  exit 1
}

fixtures="$repo/examples/student-portal/tests/fixtures/students.json"
tokens=$(node -e 'console.log(Object.keys(JSON.parse(require("fs").readFileSync(process.argv[1])).tokens).join(","))' "$fixtures")

# `load NAME UPSTREAM_TEXT ENV_FILE`: a portal with the STUDENTSVC_* lines of
# ENV_FILE, the load, then the portal stopped (first: it holds the connections).
load() {
  (
    # shellcheck disable=SC1090
    . "$3"
    exec "$portal_bin" --listen 127.0.0.1:0 >"$work/$1.out" 2>"$work/$1.log"
  ) &
  local portal_pid=$!
  pids=("$portal_pid" "${pids[@]}")
  wait_for "$work/$1.out" 'listening on http://' "$portal_pid"
  local url
  url=$(sed -n 's/.*listening on \(http:\/\/[0-9.:]*\).*/\1/p' "$work/$1.out")
  node bench/portal_load.mjs --url "$url" --pid "$portal_pid" --tokens "$tokens" --concurrency "${PORTAL_BENCH_CONCURRENCY:-200}" \
    --pages "$pages" --upstream "$2" --name "$1" --clk-tck "$(getconf CLK_TCK)"
}

# 1. In front of `studentsvc mock`: the figure.
"$tool" mock --threads 256 --students "$fixtures" >"$work/mock.env" 2>"$work/mock.log" &
pids+=($!)
wait_for "$work/mock.env" '^export STUDENTSVC_ALLOW_INSECURE_LOOPBACK=' "${pids[-1]}"
load portal "studentsvc mock" "$work/mock.env"
stop_all

# 2. In front of the stand-in: the portal's own latency, without the mock's thread pool.
node bench/portal_upstream.mjs "$fixtures" >"$work/standin.url" &
pids+=($!)
wait_for "$work/standin.url" '^http://' "${pids[-1]}"
printf "export STUDENTSVC_BASE_URL='%s' STUDENTSVC_API_KEY=bench STUDENTSVC_ALLOW_INSECURE_LOOPBACK=1\n" \
  "$(cat "$work/standin.url")" >"$work/standin.env"
load portal_standin "a stand-in service (bench/portal_upstream.mjs)" "$work/standin.env"

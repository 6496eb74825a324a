#!/usr/bin/env bash
# The benchmark suite, one command (as root on Debian 12, from the repository):
#
#   bash scripts/bench.sh            full run, a few minutes; rewrites docs/benchmarks.md and .png
#   bash scripts/bench.sh --quick    fewer iterations, to check that everything runs
#   bash scripts/bench.sh --no-docs  measure and print, leave docs/ alone
#   bash scripts/bench.sh --compile-only   only (f), compile time (bench/compile_time.py,
#                                    $CXX or g++), header-only and compiled-mode probes
#                                    (STUDENTSVC_HEADER_ONLY=0): no build, no nginx, docs/ left alone;
#                                    ends with one `BENCH compile figure=...` line per figure
#                                    (the three calls header-only, the same compiled, the
#                                    umbrella's own cost), each over <nlohmann/json.hpp> + <curl/curl.h>,
#                                    and one for a test TU starting a MockServer with the compiled
#                                    studentsvc::testing over the same TU header-only (goal <= 1/3)
#   bash scripts/bench.sh --asio-only      only (i), issue 37's Asio figures: builds just
#                                    studentsvc_bench_asio in the bench preset's directory, no nginx,
#                                    docs/ left alone (bench/run_bench.py --asio-only)
#
# Installs its tools (install-deps.sh --bench), builds the `bench` preset,
# starts nginx on 127.0.0.1 on a free port from a config in a temporary
# directory (nothing under /etc or /var is used), runs bench/run_bench.py, and
# always stops nginx. Prints a table and one `BENCH name=value` line per figure.
# Then scripts/bench-roster-sync.sh: roster-sync's throughput and peak RSS, and
# scripts/bench-portal.sh: the student portal's latency and threads under load.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

run_args=()
asio_only=0
for arg in "$@"; do
  case "$arg" in
    --quick | --no-docs) run_args+=("$arg") ;;
    --compile-only) exec python3 bench/compile_time.py ;;
    --asio-only) asio_only=1 ;;
    *) echo "bench.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

# Loopback only: never through a proxy from the environment.
export no_proxy="127.0.0.1,localhost" NO_PROXY="127.0.0.1,localhost"

bash scripts/install-deps.sh --bench
build_dir="$repo/build/bench"
asio_bin="$build_dir/bench/studentsvc_bench_asio"

if [ "$asio_only" = 1 ]; then
  # Issue 37's figures alone: configure the preset, build the one program it needs
  # (the compile probes' commands come from compile_commands.json).
  cmake --preset bench
  cmake --build "$build_dir" --target studentsvc_bench_asio
  exec python3 bench/run_bench.py --build-dir "$build_dir" --asio-bin "$asio_bin" --asio-only "${run_args[@]}"
fi

cmake --workflow --preset bench

bench_bin="$build_dir/bench/studentsvc_bench"
[ -x "$bench_bin" ] || { echo "bench.sh: $bench_bin was not built" >&2; exit 1; }
asio_args=()
if [ -x "$asio_bin" ]; then
  asio_args=(--asio-bin "$asio_bin")
else
  echo "bench.sh: $asio_bin not built (no Boost): the Asio figures (i) are left out"
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

# nginx: prefix, config, pid and logs in a temporary directory.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/studentsvc-bench.XXXXXX")
nginx_pid=""
cleanup() {
  if [ -n "$nginx_pid" ] && kill -0 "$nginx_pid" 2>/dev/null; then
    kill -TERM "$nginx_pid" 2>/dev/null || true  # fast shutdown: the master stops its worker
    for _ in $(seq 1 50); do kill -0 "$nginx_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
port=$(free_port)
tls_port=$(free_port)
# A CA and a server certificate for 127.0.0.1, made here for this run only.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=studentsvc bench CA" \
  -keyout "$tmp/ca.key" -out "$tmp/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$tmp/server.key" -out "$tmp/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > "$tmp/san.ext"
openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial -days 2 \
  -extfile "$tmp/san.ext" -out "$tmp/server.crt" 2>/dev/null
body=$("$bench_bin" body)
mkdir -p "$tmp"/{client_body,proxy,fastcgi,uwsgi,scgi}
# The body goes into a single-quoted nginx string: escape \ and '.
body_escaped=$(printf '%s' "$body" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")
BENCH_PREFIX="$tmp" BENCH_PORT="$port" BENCH_TLS_PORT="$tls_port" BENCH_BODY="$body_escaped" python3 - "$repo/bench/nginx.conf.in" "$tmp/nginx.conf" <<'PY'
import os, sys
text = open(sys.argv[1]).read()
for key in ("PREFIX", "PORT", "TLS_PORT", "BODY"):
    text = text.replace(f"@{key}@", os.environ[f"BENCH_{key}"])
open(sys.argv[2], "w").write(text)
PY
# -e: even the log nginx opens before reading its config is in the temporary directory.
"$nginx_bin" -t -q -p "$tmp/" -e "$tmp/error.log" -c "$tmp/nginx.conf"
"$nginx_bin" -p "$tmp/" -e "$tmp/error.log" -c "$tmp/nginx.conf" &  # `daemon off`: this is the master
nginx_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  if python3 -c "import sys, urllib.request as u; u.build_opener(u.ProxyHandler({})).open(sys.argv[1], timeout=1)" \
      "$url/students/v2/students/1234567" 2>/dev/null; then break; fi
  kill -0 "$nginx_pid" 2>/dev/null || { cat "$tmp/error.log" >&2 || true; echo "bench.sh: nginx did not start" >&2; exit 1; }
  sleep 0.1
done
echo "bench.sh: nginx (pid $nginx_pid) on $url"

python3 bench/run_bench.py --bin "$bench_bin" --build-dir "$build_dir" --url "$url" \
  --tls-url "https://127.0.0.1:$tls_port" --ca "$tmp/ca.crt" "${asio_args[@]}" "${run_args[@]}"
# Issue 38: roster-sync into SQLite and PostgreSQL (its own servers: DelayServer, a PostgreSQL).
roster_args=()
for arg in "${run_args[@]}"; do [ "$arg" = --quick ] && roster_args+=(--quick); done
# Issue 38: the student portal under 200 concurrent page views, in front of
# `studentsvc mock` (and of a stand-in service): p50, p99, threads.
if cmake --build "$build_dir" --target help | grep -qE '^student-portal(:|$)'; then
  bash scripts/bench-portal.sh "$build_dir" "${roster_args[@]}"
else
  echo "bench.sh: student-portal not in $build_dir (no Boost): the portal's figures are left out"
fi
bash scripts/bench-roster-sync.sh "$build_dir" "${roster_args[@]}"

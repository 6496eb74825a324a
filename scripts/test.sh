#!/usr/bin/env bash
# The README's test command and CI's (.ci/run): installs what is missing, then
# runs each CI workflow preset of CMakePresets.json (its description says what
# it covers), the apps copied out (scripts/check-apps.sh) and the demo
# (scripts/demo.sh). Each preset's tests run in the background while the next
# preset builds under nice; the Release suite's log is printed last, so the run
# ends with ctest's summary. A build that prints a warning fails, as users see it.
#   scripts/test.sh           everything, as CI
#   scripts/test.sh --quick   the dev workflow only (Debug, warnings as errors)
# STUDENTSVC_JOBS: build and test parallelism (default nproc). Each step
# prints `BENCH ci-step=<name> seconds=<n>`.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${STUDENTSVC_JOBS:-$(nproc)}
export STUDENTSVC_JOBS=$jobs CMAKE_BUILD_PARALLEL_LEVEL=$jobs CTEST_PARALLEL_LEVEL=$jobs
case "${1:-}" in
  "") ;;
  --quick) bash scripts/install-deps.sh && exec cmake --workflow --preset dev ;;
  *) echo "test.sh: unknown option $1 (--quick)" >&2; exit 2 ;;
esac
mkdir -p build
names=() pids=()
# A failing step stops the run, and what runs in the background with it.
trap 'for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done' EXIT
trap 'exit 130' INT TERM

timed() {  # timed NAME COMMAND...
  local name=$1 start=$SECONDS
  shift
  "$@" || { echo "BENCH ci-step=$name seconds=$((SECONDS - start)) result=failed"; return 1; }
  echo "BENCH ci-step=$name seconds=$((SECONDS - start))"
}
# (Called under `||`, where set -e is off: each step checks its own status.)
build() {  # configures and builds preset $1 under nice; a warning fails it
  local log=build/ci-$1-build.log
  echo "===== preset $1 ($(date -u +%H:%M:%S) UTC): $(python3 -c 'import json, sys
print(next(p["description"] for p in json.load(open("CMakePresets.json"))["workflowPresets"] if p["name"] == sys.argv[1]))' "$1")"
  nice cmake --preset "$1" > "build/ci-$1-configure.log" 2>&1 || { cat "build/ci-$1-configure.log"; return 1; }
  nice cmake --build --preset "$1" 2>&1 | tee "$log" || return 1
  if grep -q "warning:" "$log"; then
    echo "test.sh: the $1 build warns; from $log:" >&2
    grep -A3 "warning:" "$log" >&2
    return 1
  fi
}
in_background() {  # in_background NAME COMMAND...: its own process group, logged to build/ci-NAME.log
  setsid -w bash -c 'start=$SECONDS; "${@:2}" > "build/ci-$1.log" 2>&1; rc=$?
    echo "BENCH ci-background=$1 seconds=$((SECONDS - start)) result=$rc" > "build/ci-$1.bench"; exit "$rc"' _ "$@" &
  names+=("$1") pids+=($!)
  echo "== $1 runs in the background (build/ci-$1.log)"
}
join_background() {  # prints each log whole, in the order started
  local i failed=0 result
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then result=passed; else result=FAILED failed=1; fi
    echo "===== ${names[$i]} ($result; $(cat "build/ci-${names[$i]}.bench")), from build/ci-${names[$i]}.log"
    cat "build/ci-${names[$i]}.log"
  done
  return "$failed"
}

timed deps bash scripts/install-deps.sh --ci
# Release first: the demo runs on its tree (nothing new to build) and the apps,
# copied out against its install, beside the next builds, as each preset's
# tests beside the build after it: they mostly wait on sockets and servers.
timed release-build build release
timed demo bash scripts/demo.sh
in_background apps nice bash scripts/check-apps.sh build/release
for preset in asan tsan packaging fuzz no-curl clang-libcxx; do
  timed "$preset-build" build "$preset"
  in_background "$preset" ctest --preset "$preset"
done
# The Release suite beside the last preset's tests (twice as many tests as
# cores: most wait on servers and sockets); its log comes last, so the run
# ends with ctest's summary.
in_background release ctest --preset release -j "$((2 * jobs))"
echo "BENCH ci-step=builds seconds=$SECONDS"
join_background

#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang-16 and libc++ under ASan +
# UBSan in build/fuzz, runs each for a bounded time on its seed corpus
# (fuzz/corpus/<target>/, never modified: new inputs go to a scratch folder),
# prints one BENCH line per target with its execution count, and fails on any
# crash, leak, timeout, out-of-memory or sanitizer report.
#
#   scripts/fuzz.sh                  every target, 60 s of CPU each
#   FUZZ_SECONDS=300 scripts/fuzz.sh error_body
#
# The targets run at the same time, STUDENTSVC_JOBS (default 2) cores shared
# among them: each runs FUZZ_SECONDS x targets / cores of wall time (90 s for
# three on two cores), so each still gets about FUZZ_SECONDS of a core, and the
# whole takes 90 s instead of 180 s.
#
# A failing input is kept as build/fuzz/artifacts/<target>/crash-*; replay it
# with build/fuzz/fuzz/fuzz_<target> <file>. Needs clang-16, libc++-16-dev,
# libc++abi-16-dev and libclang-rt-16-dev (scripts/install-deps.sh --ci).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
jobs=${STUDENTSVC_JOBS:-2}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(student_decode error_body response_map); fi
build=build/fuzz

cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-16 \
  -DCMAKE_CXX_FLAGS=-stdlib=libc++ \
  -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ \
  -DSTUDENTSVC_BUILD_FUZZERS=ON \
  -DSTUDENTSVC_WERROR=ON \
  -DSTUDENTSVC_BUILD_TESTING=OFF \
  -DSTUDENTSVC_BUILD_EXAMPLES=OFF \
  -DSTUDENTSVC_INSTALL=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Wall time per target, so that each gets about $seconds of one core.
running=${#targets[@]}
if [ "$running" -lt "$jobs" ]; then running=$jobs; fi
wall=$(( (seconds * running + jobs - 1) / jobs ))
start=$SECONDS
declare -A pids
for t in "${targets[@]}"; do
  corpus="fuzz/corpus/$t"
  scratch="$build/work/$t"
  artifacts="$build/artifacts/$t"
  rm -rf "$scratch"
  mkdir -p "$scratch" "$artifacts"
  "$build/fuzz/fuzz_$t" -max_total_time="$wall" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$scratch" "$corpus" >"$build/fuzz_$t.log" 2>&1 &
  pids[$t]=$!
done
# A stopped script stops its fuzzers too.
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
status=0
for t in "${targets[@]}"; do
  corpus="fuzz/corpus/$t"
  scratch="$build/work/$t"
  artifacts="$build/artifacts/$t"
  log="$build/fuzz_$t.log"
  set +e
  wait "${pids[$t]}"
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus_size=$(find "$scratch" "$corpus" -type f | wc -l)
  echo "BENCH fuzz target=$t executions=${execs:-0} seconds=$((SECONDS - start)) corpus=$corpus_size exit=$rc"
  if [ "$rc" -ne 0 ] || grep -qE "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:" "$log"; then
    echo "fuzz.sh: $t FAILED; the log follows (artifacts in $artifacts)" >&2
    tail -n 60 "$log" >&2
    status=1
  fi
done
exit "$status"

#!/usr/bin/env bash
# The builds a user makes, each in its own build/ci-* directory, with no preset
# and no developer flag: what the presets' -Werror and Debug type would hide.
#
#   release   cmake -B build/ci-release -DCMAKE_BUILD_TYPE=Release; the whole tree.
#             CMake's Release is -O3 -DNDEBUG for GCC and clang: the optimiser's
#             flow warnings (-Wrestrict, -Wstringop-*, -Wmaybe-uninitialized)
#             show up only there, so any `warning:` in the log fails the step.
#             scripts/test.sh then runs the whole suite in it, last.
#   default   cmake -B build/ci-default, no build type (no -O, no -g), with the
#             benchmarks (STUDENTSVC_BUILD_BENCHMARKS) and STUDENTSVC_WERROR:
#             builds the benchmark, the tool and the README example, not run.
#             The tests themselves are built warning-free at -O1 (asan), -O2
#             (no-curl) and -O3 (release); a third whole-tree build would only
#             add ten minutes to CI.
#   no-curl   cmake -B build/ci-nocurl -DCMAKE_BUILD_TYPE=RelWithDebInfo
#             -DSTUDENTSVC_WITH_CURL=OFF: builds and runs every test that needs
#             no libcurl (unit tests, header check, no-curl consumers, the
#             httplib_transport example) at -O2, GCC's other optimisation level.
#   compiled  cmake -B build/ci-compiled -DCMAKE_BUILD_TYPE=Release
#             -DSTUDENTSVC_HEADER_ONLY=OFF: the SDK as a library (src/), the
#             whole tree built against it without a warning, then the whole
#             suite but the `packaging` label (the consumer projects configure
#             their own builds, both modes, and run in the main suite).
#
#   scripts/check-user-builds.sh                 release, default and no-curl, in that order
#   scripts/check-user-builds.sh no-curl default
#
# Prints a BENCH line with the seconds each step took. Stops at the first
# failure. STUDENTSVC_JOBS sets build parallelism (default 2: CI's two cores).
set -euo pipefail
cd "$(dirname "$0")/.."

export CMAKE_BUILD_PARALLEL_LEVEL=${STUDENTSVC_JOBS:-2}
steps=("$@")
if [ ${#steps[@]} -eq 0 ]; then steps=(release default no-curl); fi

run_release() {
  local dir=build/ci-release log=build/ci-release-build.log
  cmake -B "$dir" -DCMAKE_BUILD_TYPE=Release
  # The log is kept (and shown) so a warning can be read where it happened.
  cmake --build "$dir" 2>&1 | tee "$log"
  if grep -q "warning:" "$log"; then
    echo "check-user-builds.sh: the Release build warns (users see this); from $log:" >&2
    grep -A3 "warning:" "$log" >&2
    return 1
  fi
  echo "Release build without a warning; run the suite: ctest --test-dir $dir"
}

run_default() {
  local dir=build/ci-default
  cmake -B "$dir" -DSTUDENTSVC_WERROR=ON -DSTUDENTSVC_BUILD_BENCHMARKS=ON
  cmake --build "$dir" --target studentsvc_bench studentsvc_cli studentsvc_example_readme
}

run_compiled() {
  local dir=build/ci-compiled log=build/ci-compiled-build.log
  cmake -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSTUDENTSVC_HEADER_ONLY=OFF
  cmake --build "$dir" 2>&1 | tee "$log"
  if grep -q "warning:" "$log"; then
    echo "check-user-builds.sh: the compiled-mode Release build warns; from $log:" >&2
    grep -A3 "warning:" "$log" >&2
    return 1
  fi
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -LE packaging -j "$CMAKE_BUILD_PARALLEL_LEVEL"
}

run_no_curl() {
  local dir=build/ci-nocurl
  cmake -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTUDENTSVC_WITH_CURL=OFF
  if grep -q "^CURL_" "$dir/CMakeCache.txt"; then
    echo "check-user-builds.sh: STUDENTSVC_WITH_CURL=OFF still looked for libcurl" >&2
    return 1
  fi
  cmake --build "$dir"
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$CMAKE_BUILD_PARALLEL_LEVEL"
}

for step in "${steps[@]}"; do
  start=$SECONDS
  echo "== check-user-builds: $step"
  case "$step" in
    release) run_release ;;
    default) run_default ;;
    no-curl) run_no_curl ;;
    compiled) run_compiled ;;
    *) echo "check-user-builds.sh: unknown step $step (release, default, no-curl, compiled)" >&2; exit 2 ;;
  esac
  echo "BENCH ci-step=$step seconds=$((SECONDS - start))"
done

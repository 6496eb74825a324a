#!/usr/bin/env bash
# The README's test command (and CI's, through .ci/run): installs what is
# missing, then builds and runs everything, one stage after another. What each
# stage covers (every ctest runs -j STUDENTSVC_JOBS, default nproc: CI's 2 cores; the last
# suite twice that):
#   deps        scripts/install-deps.sh --ci
#   sanitizers  scripts/check-sanitizers.sh, warnings as errors: ASan + UBSan
#               (but its null and alignment checks) in the build with no
#               build type and in compiled mode (-DSTUDENTSVC_HEADER_ONLY=OFF: the
#               SDK as a library, the tests and the tool linked to it), benchmarks
#               on, examples off (the whole tree but the per-header checks, the
#               whole suite but the consumer projects and the two compiler-command
#               tests); TSan (RelWithDebInfo -O1, target tsan_tests: the
#               `concurrency` tests)
#   packaging   manifests, the API reference without a Doxygen warning, the
#               README's install command, header-only and compiled: scripts/check-packaging.sh
#   fuzz        the three libFuzzer targets (clang-16, libc++, ASan + UBSan), 30 s
#               side by side (FUZZ_SECONDS=20 of CPU each on two idle cores; under
#               nice, so what runs in the background comes first): scripts/fuzz.sh
#   no-curl     -DSTUDENTSVC_WITH_CURL=OFF (no build type): every test that
#               needs no libcurl but the consumer projects (the suite runs them);
#               no per-header checks (the builds with libcurl compile those)
#   demo        the README's other command, scripts/demo.sh: builds the tool
#               (dev preset) and runs it on the mock
#   clang       clang-16 + libc++, no build type, STUDENTSVC_PROGRAMS_LINK_COMPILED=OFF,
#               STUDENTSVC_BUILD_HEADER_CHECKS=OFF: the whole tree (the tool and its
#               examples header-only) without a warning, and its suite: CI's one
#               clang + libc++ build
#   options     each option of the README's table, turned from its default,
#               configures and generates (two at a time)
#   release     what a user builds, `cmake -B build/ci-release -DCMAKE_BUILD_TYPE=Release`
#               with nothing beside it, without a warning (scripts/check-user-builds.sh),
#   apps        (in the background) scripts/check-apps.sh build/ci-release: the SDK and
#               the tool installed to a prefix, each examples/<app>/ with a CMakeLists.txt
#               copied alone out of the clone, built against that prefix, its ctest run
#   background  waits for what ran in the background: the ASan, TSan, no-curl
#               and clang suites (each from the end of its build), and the
#               packaging, demo, options and apps stages, while the next stages built
#               (the builds under nice); prints their logs, fails if one failed
#   and last the whole suite in that Release build (the consumer projects
#   included: each builds its app with no build type), so the run ends with
#   ctest's summary. Each stage prints `BENCH ci-stage=<name> seconds=<n> cpu=<n>`,
#   each step run in the background `BENCH ci-background=<name> seconds=<n> cpu=<n>`
#   (cpu: user + system seconds of its processes, on both cores).
#
# The tests, the examples and the tool link the SDK compiled once per build
# (studentsvc_compiled; STUDENTSVC_PROGRAMS_LINK_COMPILED, on by default), so
# each body is compiled once per build. Header-only programs: the README's usage
# example and curl_transport_test in every header-only build (all but the ASan
# one), the consumer projects, the tool and the examples in the clang stage, and
# the header checks of the Release build (those at -O0: never run). The test programs are unity builds (tests/CMakeLists.txt).
#
# `scripts/test.sh --quick` runs only the dev workflow (Debug, warnings as
# errors, the whole suite): the quick check while developing.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    *) echo "test.sh: unknown option $arg (--quick)" >&2; exit 2 ;;
  esac
done

export CMAKE_BUILD_PARALLEL_LEVEL=${STUDENTSVC_JOBS:-$(nproc)}
export STUDENTSVC_JOBS=$CMAKE_BUILD_PARALLEL_LEVEL
if [ "$quick" -eq 1 ]; then
  bash scripts/install-deps.sh
  exec cmake --workflow --preset dev
fi

# One timing line per stage; a failing stage still gets its line (from the trap).
run_start=$SECONDS
stage=""
stage_start=0
background_pids=()
# A stage that fails stops the run, and the suites still running in the background with it.
stop_background() {
  local pid
  for pid in "${background_pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
}
trap 'if [ -n "$stage" ]; then echo "BENCH ci-stage=$stage seconds=$((SECONDS - stage_start)) result=failed"; fi; stop_background' EXIT
trap 'exit 130' INT TERM
# CPU seconds (user + system) of this shell's finished children: the second line
# of `times`, run in this shell (in a pipe it would count a subshell's children).
mkdir -p build
# The whole CPU seconds on the second line of a saved `times` output (e.g. "1m2.5s 0m3.1s").
cpu_seconds_of() {
  awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }; printf "%d", n }' "$1"
}
export -f cpu_seconds_of  # for in_background's bash -c
# Sets children_cpu (not through $(...) around `times`, whose subshell has no children of its own).
count_children_cpu() {
  times > build/ci-times.txt
  children_cpu=$(cpu_seconds_of build/ci-times.txt)
}
begin() {
  stage=$1
  stage_start=$SECONDS
  count_children_cpu
  stage_cpu=$children_cpu
  echo "===== stage $stage ($(date -u +%H:%M:%S) UTC)"
}
# cpu: what the processes that ended during the stage used on both cores, its own
# steps and any background step that ended meanwhile (each of those has its own line too).
end() {
  count_children_cpu
  echo "BENCH ci-stage=$stage seconds=$((SECONDS - stage_start)) cpu=$((children_cpu - stage_cpu))"
  stage=""
}

# The ASan, TSan, no-curl and clang suites mostly wait on sockets and servers, and the
# options stage on CMake's checks: each runs in the background while the next
# stages build, which yield to it (nice), and its log is printed, its result
# checked, before the Release suite.
background_names=()
in_background() {
  local name=$1
  shift
  mkdir -p build
  # In a process group of its own, so that stop_background stops its tests too.
  setsid -w bash -c 'start=$SECONDS
    if "${@:2}"; then rc=0; else rc=$?; fi
    times > "build/ci-times-$1.txt"
    cpu=$(cpu_seconds_of "build/ci-times-$1.txt")
    echo "BENCH ci-background=$1 seconds=$((SECONDS - start)) cpu=$cpu"
    exit "$rc"' in_background "$name" "$@" > "build/ci-background-$name.log" 2>&1 &
  background_names+=("$name")
  background_pids+=($!)
  echo "== $name runs in the background (build/ci-background-$name.log)"
}
join_background() {
  local i result failed=0
  for i in "${!background_pids[@]}"; do
    if wait "${background_pids[$i]}"; then result=passed; else result=FAILED; failed=1; fi
    echo "===== ${background_names[$i]} ($result), from build/ci-background-${background_names[$i]}.log"
    cat "build/ci-background-${background_names[$i]}.log"
  done
  if [ "$failed" -ne 0 ]; then
    echo "test.sh: a step run in the background failed (above)" >&2
    return 1
  fi
}

begin deps;       bash scripts/install-deps.sh --ci;         end
begin sanitizers
  nice bash scripts/check-sanitizers.sh asan-build
  in_background asan bash scripts/check-sanitizers.sh asan-test
  nice bash scripts/check-sanitizers.sh tsan-build
  in_background tsan bash scripts/check-sanitizers.sh tsan-test
end
# The packaging checks wait on doxygen (one core) and on configures: they run
# beside the fuzzers, which run for a fixed time whatever CPU they get.
begin packaging;  in_background packaging nice bash scripts/check-packaging.sh; end
begin fuzz;       FUZZ_SECONDS=${FUZZ_SECONDS:-20} nice bash scripts/fuzz.sh; end
begin no-curl
  nice bash scripts/check-user-builds.sh no-curl-build
  in_background no-curl bash scripts/check-user-builds.sh no-curl-test
end
# The demo's build ends on one TU (the tool's): beside the clang build.
begin demo;       in_background demo nice bash scripts/demo.sh; end
begin clang
  nice bash scripts/check-user-builds.sh clang-build
  in_background clang bash scripts/check-user-builds.sh clang-test
end
begin options;    in_background options bash scripts/check-user-builds.sh options; end
begin release;    nice bash scripts/check-user-builds.sh release; end
begin apps;       in_background apps nice bash scripts/check-apps.sh build/ci-release; end
begin background; join_background;                           end
count_children_cpu
echo "BENCH ci-total-before-suite seconds=$((SECONDS - run_start)) cpu=$children_cpu"

# The main suite, last: ctest's own summary and "Total Test time" end the log.
echo "===== stage suite: the whole suite in the Release build"
trap - EXIT
# Twice as many tests as cores: most wait on servers and sockets, and the
# consumer projects' builds take the CPU they leave.
exec ctest --test-dir build/ci-release --output-on-failure --no-tests=error -j "$((2 * CMAKE_BUILD_PARALLEL_LEVEL))"

#!/usr/bin/env bash
# The sanitizer builds and the second compiler, each through its CMake preset:
#
#   asan          the whole suite (unit, end-to-end, faults, TLS, canary, CLI)
#                 under AddressSanitizer + UndefinedBehaviorSanitizer, in the
#                 build a user makes with no build type (no -O: half the CPU
#                 of -O1 under the sanitizers) in compiled mode
#                 (STUDENTSVC_HEADER_ONLY=OFF, which CI builds nowhere else), the
#                 benchmarks built too, the examples not (~190 s of CPU here; the
#                 Release and clang builds build and run them). UBSan's
#                 null and alignment checks are left out (a third of the
#                 build's CPU): ASan reports a null dereference as a SEGV with
#                 its stack, and the code does no type punning; the fuzzers
#                 keep every UBSan check
#   tsan          the tests labelled `concurrency` under ThreadSanitizer; only
#                 what they need is built (target tsan_tests)
#   clang-libcxx  the headers and the unit tests with clang-16 and libc++, Debug
#                 (on request: CI's `clang` stage builds clang + libc++ as a user does)
#
# The tool links the SDK compiled once, as the tests do
# (STUDENTSVC_PROGRAMS_LINK_COMPILED, on by default): the bodies run under the
# sanitizer all the same, compiled once instead of in each program. ctest runs
# STUDENTSVC_JOBS tests at a time (CTEST_PARALLEL_LEVEL).
#
#   scripts/check-sanitizers.sh                  asan and tsan, in that order
#   scripts/check-sanitizers.sh tsan clang-libcxx
#   scripts/check-sanitizers.sh asan-build       ... asan-test (and tsan-build, tsan-test): the step
#                                                in two (CI runs the suite while the next stage builds)
#
# Prints a BENCH line with the seconds each step took. Stops at the first
# failure. STUDENTSVC_JOBS sets build parallelism (default 2: CI's two cores).
set -euo pipefail
cd "$(dirname "$0")/.."

# Every `cmake --build`, the workflows' included, honours this.
export CMAKE_BUILD_PARALLEL_LEVEL=${STUDENTSVC_JOBS:-2}
# ... and every ctest of the presets' test steps: the tests mostly wait on
# sockets and servers, and hold on a loaded machine (as the user builds' suites do).
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-$CMAKE_BUILD_PARALLEL_LEVEL}
steps=("$@")
if [ ${#steps[@]} -eq 0 ]; then steps=(asan tsan); fi

build_tsan() {
  # The tsan workflow would build every test program; ThreadSanitizer runs
  # only the `concurrency` label, so build just those (target tsan_tests).
  # Programs not built show up as *_NOT_BUILT tests without the label and are
  # filtered out with the rest.
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan --target tsan_tests
}

for step in "${steps[@]}"; do
  start=$SECONDS
  echo "== check-sanitizers: $step"
  case "$step" in
    asan) cmake --workflow --preset asan ;;
    asan-build) cmake --preset asan; cmake --build --preset asan ;;
    asan-test) ctest --preset asan ;;
    tsan) build_tsan; ctest --preset tsan ;;
    tsan-build) build_tsan ;;
    tsan-test) ctest --preset tsan ;;
    clang-libcxx) cmake --workflow --preset clang-libcxx ;;
    *) echo "check-sanitizers.sh: unknown step $step (asan[-build|-test], tsan[-build|-test], clang-libcxx)" >&2; exit 2 ;;
  esac
  echo "BENCH ci-step=$step seconds=$((SECONDS - start))"
done

#!/usr/bin/env bash
# The builds a user makes, each in its own build/ci-* directory, with no preset
# and no developer flag: what the presets' -Werror and Debug type would hide.
#
#   release   cmake -B build/ci-release -DCMAKE_BUILD_TYPE=Release; the whole tree.
#             CMake's Release is -O3 -DNDEBUG for GCC and clang: the optimiser's
#             flow warnings (-Wrestrict, -Wstringop-*, -Wmaybe-uninitialized)
#             show up only there, so any `warning:` in the log fails the step.
#             scripts/test.sh then runs the whole suite in it, last.
#   default   cmake -B build/ci-default with no build type (no -O, no -g) and the
#             benchmarks on (STUDENTSVC_BUILD_BENCHMARKS): the whole tree without
#             a warning, then the suite but the consumer projects (`packaging`,
#             which configure their own builds and run in the main suite). CI
#             builds this configuration under ASan + UBSan in compiled mode
#             instead (the asan preset), and header-only with clang (the clang
#             step): two builds cover no build type, compiled mode and ASan.
#   no-curl   cmake -B build/ci-nocurl -DSTUDENTSVC_WITH_CURL=OFF, no build type:
#             builds and runs every test that needs no libcurl (unit tests,
#             header check, the httplib_transport example) but the consumer
#             projects: they configure builds of their own, and run in the suite.
#             At -O2 -g (RelWithDebInfo) this build cost ~370 s of a CI run's
#             2 cores; what the optimiser warns about, the Release build shows.
#   compiled  (not in CI: the asan preset builds and runs compiled mode, the
#             tests, the examples and the tool included)
#             cmake -B build/ci-compiled -DSTUDENTSVC_HEADER_ONLY=OFF
#             -DSTUDENTSVC_BUILD_TESTING=OFF, no build type: the SDK
#             as a library (src/), the examples and the tool built against it
#             without a warning, and run on the mock. The tests link the same
#             compiled sources in every build (studentsvc_compiled), and the
#             consumer projects install and use this mode in the main suite.
#   clang     CXX=clang++-16 with libc++ (the README's other supported compiler),
#             cmake -B build/ci-clang -DSTUDENTSVC_PROGRAMS_LINK_COMPILED=OFF
#             -DSTUDENTSVC_BUILD_HEADER_CHECKS=OFF (the Release build has them) (no build
#             type: at -O3 this build cost ~500 s of a CI run): the whole tree without a
#             warning and its suite; the option turned off so that the tool and the
#             examples this build has are compiled header-only in one CI build, as a
#             user who turns it off builds them. Debian's compiled
#             cpp-httplib does not link with libc++: configure must find that out
#             by itself and leave out what needs it, not fail to link.
#   options   each option the README's table offers, turned from its default,
#             configured and generated on its own (cmake -B build/ci-options/<name>)
#             with CMAKE_LINK_LIBRARIES_ONLY_TARGETS: no test or example may link
#             a target the option left out. STUDENTSVC_JOBS configures at a time.
#             And CMAKE_DISABLE_FIND_PACKAGE_Boost=ON: studentsvc::asio absent,
#             said in one line, and no Asio test, benchmark or portal generated.
#
#   scripts/check-user-builds.sh                 release, default and no-curl, in that order
#   scripts/check-user-builds.sh no-curl default
#   scripts/check-user-builds.sh clang-build     ... clang-test (and no-curl-build, no-curl-test):
#                                                the step in two (CI runs the suite while the next stage builds)
#
# Prints a BENCH line with the seconds each step took. Stops at the first
# failure. STUDENTSVC_JOBS sets build parallelism (default 2: CI's two cores).
set -euo pipefail
cd "$(dirname "$0")/.."

export CMAKE_BUILD_PARALLEL_LEVEL=${STUDENTSVC_JOBS:-2}
steps=("$@")
if [ ${#steps[@]} -eq 0 ]; then steps=(release default no-curl); fi

# Builds the tree configured in `$2` and fails when the build warns (users
# see it). The log, `$2-build.log`, is kept so a warning can be read where it happened.
build_without_warnings() {
  local label=$1 dir=$2 log="$2-build.log"
  cmake --build "$dir" 2>&1 | tee "$log"
  if grep -q "warning:" "$log"; then
    echo "check-user-builds.sh: the $label build warns; from $log:" >&2
    grep -A3 "warning:" "$log" >&2
    return 1
  fi
}

run_release() {
  local dir=build/ci-release
  cmake -B "$dir" -DCMAKE_BUILD_TYPE=Release
  build_without_warnings "Release" "$dir"
  echo "Release build without a warning; run the suite: ctest --test-dir $dir"
}

run_default() {
  local dir=build/ci-default
  # As a user builds it, at no -O.
  cmake -B "$dir" -DSTUDENTSVC_BUILD_BENCHMARKS=ON
  build_without_warnings "no-build-type" "$dir"
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -LE packaging -j "$CMAKE_BUILD_PARALLEL_LEVEL"
}

build_clang() {
  local dir=build/ci-clang
  # The per-header checks are the Release build's (~170 s of CPU each).
  CXX=clang++-16 CXXFLAGS=-stdlib=libc++ LDFLAGS=-stdlib=libc++ cmake -B "$dir" -DSTUDENTSVC_PROGRAMS_LINK_COMPILED=OFF \
    -DSTUDENTSVC_BUILD_HEADER_CHECKS=OFF
  build_without_warnings "clang-16 + libc++" "$dir"
}

test_clang() {
  ctest --test-dir build/ci-clang --output-on-failure --no-tests=error -j "$CMAKE_BUILD_PARALLEL_LEVEL"
}

configure_option() {
  local option=$1
  # A log per option: a failure shows its own configure output.
  # CMAKE_LINK_LIBRARIES_ONLY_TARGETS: a link to a target the option left out
  # fails here, at generation, instead of only when that build links.
  if ! cmake -B "build/ci-options/${option%%=*}" "-D$option" -DCMAKE_LINK_LIBRARIES_ONLY_TARGETS=ON \
      > "build/ci-options-${option%%=*}.log" 2>&1; then
    cat "build/ci-options-${option%%=*}.log" >&2
    echo "check-user-builds.sh: configuring with -D$option failed" >&2
    return 1
  fi
  echo "-- configured with -D$option"
  if [ "$option" = CMAKE_DISABLE_FIND_PACKAGE_Boost=ON ]; then check_no_boost "build/ci-options/${option%%=*}" \
      "build/ci-options-${option%%=*}.log"; fi
}

# Without Boost: no studentsvc::asio and nothing that links it (asio_test, the
# portal, the Asio benchmark), said in one line; the core target still configures.
# asio_standalone_test stays where libasio-dev is: standalone Asio needs no Boost.
check_no_boost() {
  local dir=$1 log=$2 message="studentsvc: Boost 1.81 not found: no studentsvc::asio"
  if [ "$(grep -c "$message" "$log")" != 1 ]; then
    cat "$log" >&2
    echo "check-user-builds.sh: without Boost, configure must say once: $message" >&2
    return 1
  fi
  if grep -qE "(^|[^_[:alnum:]])asio_test|studentsvc_bench_asio|student-portal:" "$dir/build.ninja" "$dir/Makefile" 2>/dev/null; then
    echo "check-user-builds.sh: without Boost, $dir still builds an Asio target" >&2
    return 1
  fi
  echo "-- without Boost: no studentsvc::asio, one line: $(grep "$message" "$log" | sed 's/^-- //')"
}

run_options() {
  local option pid failed=0
  local -a pids=()
  mkdir -p build
  # STUDENTSVC_BUILD_FUZZERS needs clang: the fuzz stage configures and runs it.
  # A configure is one process, mostly waiting on its checks: $CMAKE_BUILD_PARALLEL_LEVEL
  # of them at a time, each in its own directory.
  for option in STUDENTSVC_BUILD_TOOLS=OFF STUDENTSVC_INSTALL_TOOLS=OFF STUDENTSVC_BUILD_EXAMPLES=OFF \
                STUDENTSVC_BUILD_E2E_TESTS=OFF STUDENTSVC_BUILD_DOCS=OFF STUDENTSVC_INSTALL=OFF \
                STUDENTSVC_BUILD_TESTING=OFF STUDENTSVC_WERROR=ON \
                STUDENTSVC_HEADER_ONLY=OFF STUDENTSVC_WITH_CURL=OFF STUDENTSVC_BUILD_BENCHMARKS=ON \
                STUDENTSVC_PROGRAMS_LINK_COMPILED=OFF STUDENTSVC_BUILD_HEADER_CHECKS=OFF \
                CMAKE_DISABLE_FIND_PACKAGE_Boost=ON; do
    if [ ${#pids[@]} -ge "$CMAKE_BUILD_PARALLEL_LEVEL" ]; then
      wait "${pids[0]}" || failed=1
      pids=("${pids[@]:1}")
    fi
    configure_option "$option" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  return "$failed"
}

run_compiled() {
  local dir=build/ci-compiled
  # The tests are left out: in every build they already link the SDK compiled
  # from the same src/ sources (studentsvc_compiled), so here they would be the
  # release build's programs again. What only this mode has: the library, and
  # the examples and the tool linked to it, built without a warning and run.
  cmake -B "$dir" -DSTUDENTSVC_HEADER_ONLY=OFF -DSTUDENTSVC_BUILD_TESTING=OFF
  build_without_warnings "compiled-mode" "$dir"
  "$dir/tools/studentsvc/studentsvc" --mock get 1234567 2345678 > "$dir-run.log"
  grep -q '"perm":"2345678"' "$dir-run.log" || { cat "$dir-run.log" >&2; echo "check-user-builds.sh: the compiled-mode tool did not answer" >&2; return 1; }
  "$dir/examples/get_student" --mock 1234567 > "$dir-examples.log"
  "$dir/examples/current_student" --mock >> "$dir-examples.log"
  "$dir/examples/conversation" --mock >> "$dir-examples.log"
  grep -q "signed in as" "$dir-examples.log" || { cat "$dir-examples.log" >&2; return 1; }
  echo "compiled mode: the tool and the examples built against the library, and ran"
}

build_no_curl() {
  local dir=build/ci-nocurl
  cmake -B "$dir" -DSTUDENTSVC_WITH_CURL=OFF
  if grep -q "^CURL_" "$dir/CMakeCache.txt"; then
    echo "check-user-builds.sh: STUDENTSVC_WITH_CURL=OFF still looked for libcurl" >&2
    return 1
  fi
  cmake --build "$dir"
}

test_no_curl() {
  # The consumer projects (label packaging) configure builds of their own, the
  # no-curl ones with STUDENTSVC_WITH_CURL=OFF whatever this build's: the suite runs them.
  ctest --test-dir build/ci-nocurl --output-on-failure --no-tests=error -LE packaging -j "$CMAKE_BUILD_PARALLEL_LEVEL"
}

for step in "${steps[@]}"; do
  start=$SECONDS
  echo "== check-user-builds: $step"
  case "$step" in
    release) run_release ;;
    default) run_default ;;
    no-curl) build_no_curl; test_no_curl ;;
    no-curl-build) build_no_curl ;;
    no-curl-test) test_no_curl ;;
    compiled) run_compiled ;;
    clang) build_clang; test_clang ;;
    clang-build) build_clang ;;
    clang-test) test_clang ;;
    options) run_options ;;
    *) echo "check-user-builds.sh: unknown step $step (release, default, no-curl[-build|-test], compiled," \
            "clang[-build|-test], options)" >&2; exit 2 ;;
  esac
  echo "BENCH ci-step=$step seconds=$((SECONDS - start))"
done

#!/usr/bin/env bash
# Each option of docs/packaging.md's table, turned from its default, configures
# and generates on its own, with CMAKE_LINK_LIBRARIES_ONLY_TARGETS: no test or
# example may link a target the option left out. Without Boost
# (CMAKE_DISABLE_FIND_PACKAGE_Boost=ON) configure says once that there is no
# studentsvc::asio, and generates no Asio test, benchmark or portal.
# STUDENTSVC_BUILD_FUZZERS needs clang: the fuzz preset builds and runs it.
#
#   check_options.sh SOURCE_DIR WORK_DIR [JOBS]
set -euo pipefail
source_dir=$1 work=$2 jobs=${3:-2}
mkdir -p "$work"

configure_option() {
  local option=$1 dir="$work/${1%%=*}" log="$work/${1%%=*}.log"
  if ! cmake -S "$source_dir" -B "$dir" "-D$option" -DCMAKE_LINK_LIBRARIES_ONLY_TARGETS=ON >"$log" 2>&1; then
    cat "$log" >&2
    echo "check_options.sh: configuring with -D$option failed" >&2
    return 1
  fi
  echo "-- configured with -D$option"
  [ "$option" != CMAKE_DISABLE_FIND_PACKAGE_Boost=ON ] || check_no_boost "$dir" "$log"
}

check_no_boost() {
  local dir=$1 log=$2 message="studentsvc: Boost 1.81 not found: no studentsvc::asio"
  if [ "$(grep -c "$message" "$log")" != 1 ]; then
    cat "$log" >&2
    echo "check_options.sh: without Boost, configure must say once: $message" >&2
    return 1
  fi
  # asio_standalone_test stays where libasio-dev is: standalone Asio needs no Boost.
  if grep -qE "(^|[^_[:alnum:]])asio_test|studentsvc_bench_asio|student-portal:" "$dir/build.ninja" "$dir/Makefile" 2>/dev/null; then
    echo "check_options.sh: without Boost, $dir still builds an Asio target" >&2
    return 1
  fi
  echo "-- without Boost: no studentsvc::asio, one line: $(grep "$message" "$log" | sed 's/^-- //')"
}

failed=0
pids=()
# A configure is one process, mostly waiting on its checks: $jobs at a time.
for option in STUDENTSVC_BUILD_TOOLS=OFF STUDENTSVC_INSTALL_TOOLS=OFF STUDENTSVC_BUILD_EXAMPLES=OFF STUDENTSVC_BUILD_APPS=OFF \
              STUDENTSVC_BUILD_E2E_TESTS=OFF STUDENTSVC_BUILD_DOCS=OFF STUDENTSVC_INSTALL=OFF \
              STUDENTSVC_BUILD_TESTING=OFF STUDENTSVC_WERROR=ON \
              STUDENTSVC_HEADER_ONLY=OFF STUDENTSVC_WITH_CURL=OFF STUDENTSVC_BUILD_BENCHMARKS=ON \
              STUDENTSVC_PROGRAMS_LINK_COMPILED=OFF STUDENTSVC_BUILD_HEADER_CHECKS=OFF STUDENTSVC_TESTING_COMPILED=OFF \
              CMAKE_DISABLE_FIND_PACKAGE_Boost=ON; do
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
  configure_option "$option" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit "$failed"

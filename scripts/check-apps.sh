#!/usr/bin/env bash
# The copy-out check of issue 38: every examples/<app>/ that has a
# CMakeLists.txt of its own builds and passes its tests copied alone out of
# the clone, against the SDK (and the studentsvc tool, whose mock the apps'
# tests run) installed to a prefix, as a campus team starts from it.
#
#   scripts/check-apps.sh [SDK_BUILD_DIR]
#
# SDK_BUILD_DIR: a configured and built tree of this repository to install
# from (CI passes build/release, built by the release preset); without it,
# build/ci-apps/sdk is configured (tests and examples off) and built whole:
# its install needs the SDK, studentsvc::testing and the tool.
# Then, for each app:
#   1. the folder is checked for paths out of it and repository-only helpers
#      (STUDENTSVC_SDK_FOR_PROGRAMS, studentsvc_add_example, tests/support);
#   2. it is copied alone (without build*/ directories) into a fresh
#      directory under ${TMPDIR:-/tmp}, outside the clone;
#   3. its `ci` workflow preset (the app's CMakePresets.json) run there, with
#      CMAKE_PREFIX_PATH=<prefix> only: configured with <APP>_REQUIRE_ALL_TESTS=ON
#      (a program its tests need that is missing fails the configure instead of
#      leaving tests out), built in Release as the app's default preset is
#      (a compiler warning fails it), and its tests run (an app must bring tests);
#   4. what its tests leave in a directory named `artifacts` anywhere in its
#      build tree (the portal's screenshots: <build>/tests/artifacts/) is kept
#      in build/ci-apps/artifacts/<app>/, whether the tests passed or not; the
#      copy itself is removed when they passed, kept (and named) when not.
# Prints `BENCH ci-app=<app> seconds=<n>` per app. STUDENTSVC_JOBS: build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export CMAKE_BUILD_PARALLEL_LEVEL=${STUDENTSVC_JOBS:-2}

out=build/ci-apps
prefix="$repo/$out/prefix"
mkdir -p "$out"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); export CMAKE_GENERATOR=Ninja; fi

sdk_build=${1:-}
if [ -z "$sdk_build" ]; then
  sdk_build=$out/sdk
  cmake -S . -B "$sdk_build" "${generator[@]}" -DSTUDENTSVC_BUILD_TESTING=OFF -DSTUDENTSVC_BUILD_EXAMPLES=OFF \
    -DSTUDENTSVC_BUILD_DOCS=OFF >/dev/null
  cmake --build "$sdk_build"
fi
echo "== apps: the SDK and the tool from $sdk_build, installed into $prefix"
rm -rf "$prefix"
cmake --install "$sdk_build" --prefix "$prefix" >/dev/null
[ -x "$prefix/bin/studentsvc" ] || { echo "check-apps.sh: $sdk_build has no studentsvc tool built to install" >&2; exit 1; }

apps=()
for list in examples/*/CMakeLists.txt; do apps+=("$(basename "$(dirname "$list")")"); done
[ ${#apps[@]} -gt 0 ] || { echo "check-apps.sh: no examples/<app>/CMakeLists.txt" >&2; exit 1; }

failed=()
for app in "${apps[@]}"; do
  start=$SECONDS
  echo "== apps: $app"
  src="examples/$app"
  # A path out of the folder or a helper only this repository has would break a copy.
  if grep -rnE '\.\./\.\.|STUDENTSVC_SDK_FOR_PROGRAMS|STUDENTSVC_TESTING_FOR|studentsvc_add_example|tests/support|studentsvc_target_warnings' \
       --exclude-dir=node_modules --exclude-dir='build*' "$src"; then
    echo "check-apps.sh: $src refers to the repository (above)" >&2
    failed+=("$app")
    continue
  fi
  copy=$(mktemp -d "${TMPDIR:-/tmp}/studentsvc-app-$app.XXXXXX")
  case "$copy" in "$repo"/*) echo "check-apps.sh: $copy is inside the clone" >&2; exit 1 ;; esac
  (cd "$src" && tar --exclude='./build*' -cf - .) | (mkdir -p "$copy/$app" && cd "$copy/$app" && tar -xf -)
  log="$repo/$out/$app.log"
  if (cd "$copy/$app" && CMAKE_PREFIX_PATH="$prefix" CTEST_PARALLEL_LEVEL="$CMAKE_BUILD_PARALLEL_LEVEL" \
        cmake --workflow --preset ci) >"$log" 2>&1; then
    result=passed
  else
    result=FAILED
    failed+=("$app")
  fi
  # Release, as a team builds it: a compiler warning fails, as in test.sh's presets.
  if [ "$result" = passed ] && grep -E '^[^ ]+:[0-9]+:[0-9]+: warning:' "$log" >&2; then
    echo "check-apps.sh: $app's build warns (above)" >&2
    result=FAILED
    failed+=("$app")
  fi
  # The tests' artifacts (screenshots), kept whether they passed or failed.
  kept="$out/artifacts/$app"
  rm -rf "$kept"
  while IFS= read -r -d '' dir; do
    mkdir -p "$kept"
    cp -r "$dir/." "$kept/"
  done < <(find "$copy/$app/build" -type d -name artifacts -print0 2>/dev/null)
  if [ -d "$kept" ]; then
    echo "apps: $app's test artifacts ($(find "$kept" -type f | wc -l) files) kept in $repo/$kept"
  fi
  grep -E "tests passed|tests failed" "$log" || true
  if [ "$result" = FAILED ]; then
    echo "check-apps.sh: $app failed copied out ($copy); its log, $log:" >&2
    tail -n 60 "$log" >&2
  else
    rm -rf "$copy"
  fi
  echo "BENCH ci-app=$app seconds=$((SECONDS - start)) result=$result"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "check-apps.sh: failed copied out: ${failed[*]}" >&2
  exit 1
fi
echo "check-apps: OK (${apps[*]})"

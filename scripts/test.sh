#!/usr/bin/env bash
# The README's test command: installs what is missing, builds and runs the
# whole test suite:
#   1. AddressSanitizer + UndefinedBehaviorSanitizer (whole suite), ThreadSanitizer
#      (concurrency tests), clang-16 with libc++ (headers and unit tests);
#   2. the three libFuzzer targets, about a minute each;
#   3. the packaging manifests and the API reference (no Doxygen warning);
#   4. the main suite (Debug, GCC), last, so the run ends with ctest's summary.
# `scripts/test.sh --quick` runs only step 4.
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
if [ "$quick" -eq 1 ]; then
  bash scripts/install-deps.sh
else
  bash scripts/install-deps.sh --ci
  bash scripts/check-sanitizers.sh
  bash scripts/fuzz.sh
  bash scripts/check-packaging.sh
fi
cmake --workflow --preset dev

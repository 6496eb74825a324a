#!/usr/bin/env bash
# The README's test command: installs what is missing, builds and runs the
# whole test suite. The main suite runs last, so the run ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --ci
cmake --workflow --preset dev

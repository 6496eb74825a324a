#!/usr/bin/env bash
# The README's first command: installs what is missing, builds the studentsvc
# tool (the demo workflow preset, which also checks its answers) and runs it on
# its mock.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --workflow --preset demo
echo "\$ studentsvc --mock get 1234567"
./build/release/tools/studentsvc/studentsvc --mock get 1234567
echo "\$ studentsvc --mock --format table current"
./build/release/tools/studentsvc/studentsvc --mock --format table current

#!/usr/bin/env bash
# Installs what studentsvc needs on Debian 12 (bookworm), skipping what is
# already there. Run as root (or with sudo available).
#   scripts/install-deps.sh            build, tests and demo
#   scripts/install-deps.sh --ci       plus what each preset scripts/test.sh runs needs: clang-16 and
#                                      libc++ (second compiler, fuzzing), doxygen, python3
#   scripts/install-deps.sh --bench    plus the benchmark's tools
set -euo pipefail

# make: CMake's default generator on Linux (a plain `cmake -B build`), which
# --no-install-recommends would otherwise leave out; the presets use Ninja.
packages=(cmake make ninja-build g++ pkg-config git ca-certificates openssl libssl-dev
          libcurl4-openssl-dev nlohmann-json3-dev catch2 libcpp-httplib-dev
          libcli11-dev help2man   # the studentsvc tool: CLI11 parses its arguments, help2man writes its man page
          libspdlog-dev           # the examples' spdlog adapter (log sink and hooks); never the SDK's own target
          nginx-light             # http2_test: a real HTTP/2 gateway over TLS (the benchmark's server too)
          libsqlite3-dev libpq-dev postgresql-15)  # examples/roster-sync: its databases; its tests start a PostgreSQL
# examples/student-portal: Boost.Beast and Asio (and studentsvc::asio), its
# tests' browser, and node for its test harness and playwright-core.
packages+=(libboost1.81-dev libasio-dev chromium nodejs)  # libasio-dev: the adapter's standalone-Asio tests
# npm comes with some nodejs builds (NodeSource's); Debian's own is a package of its own.
command -v npm >/dev/null 2>&1 || packages+=(npm)
for arg in "$@"; do
  case "$arg" in
    --ci) packages+=(clang-16 libc++-16-dev libc++abi-16-dev libclang-rt-16-dev doxygen python3) ;;
    --bench) packages+=(nginx-light python3 python3-requests valgrind gnuplot-nox) ;;
    *) echo "install-deps.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: every Debian package is installed"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages, only from their committed lock files (npm ci), never a browser
# download: the portal's browser tests drive Debian's chromium. Up to date when
# node_modules/ holds a copy of the lock file it was installed from (written
# after npm ci succeeded; npm's own node_modules/.package-lock.json is a
# different file, never equal to it).
repo=$(cd "$(dirname "$0")/.." && pwd)
for dir in "$repo/examples/student-portal/tests/browser"; do
  [ -f "$dir/package-lock.json" ] || continue
  stamp="$dir/node_modules/.installed-package-lock.json"
  if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then
    echo "install-deps: ${dir#"$repo"/}/node_modules is up to date with its package-lock.json"
    continue
  fi
  echo "install-deps: npm ci in ${dir#"$repo"/}"
  (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$stamp"
done

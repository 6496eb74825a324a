#!/bin/sh
# Consumer test (c): an app built with nothing but the compiler and
# pkg-config, against an installed studentsvc.
#   build.sh <install prefix> <build dir> <expected version> [c++ compiler]
# MockServer needs cpp-httplib as well, so the app asks for both packages.
set -eu
prefix=$1
out=$2
expected=$3
cxx=${4:-c++}
here=$(cd "$(dirname "$0")" && pwd)

PKG_CONFIG_PATH="$prefix/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH

pkg_config=${PKG_CONFIG:-pkg-config}
version=$("$pkg_config" --modversion studentsvc)
if [ "$version" != "$expected" ]; then
  echo "pkg-config says studentsvc $version, expected $expected" >&2
  exit 1
fi
flags=$("$pkg_config" --cflags --libs studentsvc cpp-httplib)
echo "pkg-config --cflags --libs studentsvc cpp-httplib: $flags"

rm -rf "$out"
mkdir -p "$out"
# shellcheck disable=SC2086  # the flags are meant to split into words
"$cxx" -std=c++23 -o "$out/consumer" "$here/../common/main.cpp" \
  -DCONSUMER_EXPECTED_VERSION="\"$version\"" $flags
"$out/consumer"

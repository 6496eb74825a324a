#!/usr/bin/env bash
# Packaging checks that are not part of the ctest suite. Runs from a clean
# clone after `scripts/install-deps.sh --ci` (which installs doxygen and python3);
# nothing is downloaded.
#
#   scripts/check-packaging.sh               manifests + API reference + install
#   scripts/check-packaging.sh --consumers   ... + the consumer tests (ctest -L packaging)
#
# 1. vcpkg.json, ports/vcpkg/studentsvc/vcpkg.json, conanfile.py and
#    test_package/conanfile.py: parse / py_compile, required fields, versions
#    agree with project(VERSION) (tests/consumers/check_manifests.py).
# 2. The API reference (target `docs`), with every Doxygen warning an error.
# 3. The README's install command, `cmake -S . -B build/ci-install
#    -DSTUDENTSVC_BUILD_TESTING=OFF -DSTUDENTSVC_BUILD_EXAMPLES=OFF` and
#    `cmake --install` into build/ci-install/prefix: the files a consumer finds;
#    then the same in compiled mode (-DSTUDENTSVC_HEADER_ONLY=OFF) into
#    build/ci-install-compiled/prefix, with the library and its mode exported.
# 4. With --consumers only: the consumer tests in build/packaging (the dev
#    workflow runs them too, as part of the whole suite).
# Build directory: build/packaging (its own; safe next to the presets' dirs).
set -euo pipefail
cd "$(dirname "$0")/.."

consumers=0
for arg in "$@"; do
  case "$arg" in
    --consumers) consumers=1 ;;
    *) echo "check-packaging.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

build=build/packaging
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

echo "== packaging: manifests (vcpkg, Conan)"
python3 tests/consumers/check_manifests.py . "$build/manifests"

echo "== packaging: API reference (doxygen, warnings are errors)"
if ! command -v doxygen >/dev/null 2>&1; then
  echo "check-packaging.sh: doxygen is not installed (scripts/install-deps.sh --ci installs it)" >&2
  exit 1
fi
testing=OFF
if [ "$consumers" -eq 1 ]; then testing=ON; fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug \
  -DSTUDENTSVC_BUILD_DOCS=ON -DSTUDENTSVC_DOCS_WARNINGS_AS_ERRORS=ON \
  -DSTUDENTSVC_BUILD_TESTING="$testing" -DSTUDENTSVC_BUILD_EXAMPLES="$testing" >/dev/null
cmake --build "$build" --target docs
echo "API reference: $build/docs/html/index.html"

echo "== packaging: the README's install command (tests and examples off)"
install_build=build/ci-install
rm -rf "$install_build"
cmake -S . -B "$install_build" -DSTUDENTSVC_BUILD_TESTING=OFF -DSTUDENTSVC_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$install_build" >/dev/null  # the compiled studentsvc::testing, where cpp-httplib is found
cmake --install "$install_build" --prefix "$install_build/prefix" >/dev/null
for f in include/studentsvc/studentsvc.hpp share/cmake/studentsvc/studentsvcConfig.cmake \
         share/cmake/studentsvc/studentsvcConfigVersion.cmake share/pkgconfig/studentsvc.pc; do
  if [ ! -f "$install_build/prefix/$f" ]; then
    echo "check-packaging.sh: cmake --install did not install $f" >&2
    exit 1
  fi
done
echo "installed into $install_build/prefix"

echo "== packaging: the same install in compiled mode (STUDENTSVC_HEADER_ONLY=OFF)"
compiled_build=build/ci-install-compiled
rm -rf "$compiled_build"
# No build type: this checks what is installed; the consumer tests run programs linked to it.
cmake -S . -B "$compiled_build" -DSTUDENTSVC_HEADER_ONLY=OFF \
  -DSTUDENTSVC_BUILD_TESTING=OFF -DSTUDENTSVC_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$compiled_build" --target studentsvc >/dev/null
cmake --install "$compiled_build" --prefix "$compiled_build/prefix" >/dev/null
for f in include/studentsvc/studentsvc.hpp lib/libstudentsvc.a share/cmake/studentsvc/studentsvcConfig.cmake \
         share/pkgconfig/studentsvc.pc; do
  if [ ! -f "$compiled_build/prefix/$f" ]; then
    echo "check-packaging.sh: cmake --install (compiled mode) did not install $f" >&2
    exit 1
  fi
done
if ! grep -q "STUDENTSVC_HEADER_ONLY=0" "$compiled_build/prefix/share/cmake/studentsvc/studentsvcTargets.cmake" ||
   ! grep -q "^Libs: .*-lstudentsvc" "$compiled_build/prefix/share/pkgconfig/studentsvc.pc"; then
  echo "check-packaging.sh: the compiled-mode package does not carry STUDENTSVC_HEADER_ONLY=0 and -lstudentsvc" >&2
  exit 1
fi
echo "installed (compiled mode) into $compiled_build/prefix"

if [ "$consumers" -eq 1 ]; then
  echo "== packaging: consumer tests"
  if cmake --build "$build" --target help | grep -q studentsvc_example_httplib_transport; then
    cmake --build "$build" --target studentsvc_example_httplib_transport
  fi
  ctest --test-dir "$build" -L packaging --output-on-failure
fi
echo "check-packaging: OK"

#!/usr/bin/env python3
"""Checks the package-manager files that cannot be run here (no vcpkg or Conan
tool, no registry): they parse, carry the required fields, and agree with
project(VERSION) in CMakeLists.txt.

    python3 tests/consumers/check_manifests.py <source dir> [<scratch dir>]

- vcpkg.json (the project's manifest) and ports/vcpkg/studentsvc/vcpkg.json
  (the port): JSON, name, version, description, dependencies.
- conanfile.py and test_package/conanfile.py: byte-compile (py_compile); then
  conanfile.py is loaded with small stand-ins for the `conan` modules and its
  set_version(), requirements() and package_info() are called for each option
  combination, so the version, the requirements and the CMake target names are
  checked without Conan installed.
"""
import json
import os
import py_compile
import re
import sys
import tempfile
import types

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def project_version(src):
    text = open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8").read()
    match = re.search(r"project\(\s*studentsvc\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", text)
    return match.group(1) if match else None


def dependency_names(deps):
    return {d if isinstance(d, str) else d.get("name") for d in deps}


def check_vcpkg(src, version):
    for rel in ("vcpkg.json", "ports/vcpkg/studentsvc/vcpkg.json"):
        path = os.path.join(src, rel)
        try:
            manifest = json.load(open(path, encoding="utf-8"))
        except (OSError, ValueError) as e:
            failures.append(f"{rel}: {e}")
            continue
        check(manifest.get("name") == "studentsvc", f"{rel}: name must be studentsvc")
        declared = manifest.get("version-semver") or manifest.get("version")
        check(declared == version, f"{rel}: version {declared} != project(VERSION {version})")
        check(bool(manifest.get("description")), f"{rel}: no description")
        check("license" in manifest, f"{rel}: no license field (null is allowed)")
        deps = dependency_names(manifest.get("dependencies", []))
        check("nlohmann-json" in deps, f"{rel}: must depend on nlohmann-json")
        features = manifest.get("features", {})
        for name, feature in features.items():
            check(bool(feature.get("description")), f"{rel}: feature {name} has no description")
        if rel.startswith("ports/"):
            check({"vcpkg-cmake", "vcpkg-cmake-config"} <= deps,
                  f"{rel}: a CMake port needs the host tools vcpkg-cmake and vcpkg-cmake-config")
            check(manifest.get("default-features") == ["curl"], f"{rel}: default feature must be curl")
            check("curl" in dependency_names(features.get("curl", {}).get("dependencies", [])),
                  f"{rel}: feature curl must depend on curl")
            check("cpp-httplib" in dependency_names(features.get("testing", {}).get("dependencies", [])),
                  f"{rel}: feature testing must depend on cpp-httplib")
            for f in ("portfile.cmake", "usage"):
                check(os.path.isfile(os.path.join(src, "ports/vcpkg/studentsvc", f)), f"port: no {f}")
        else:
            check("curl" in deps, f"{rel}: must depend on curl")


class _Options(dict):
    __getattr__ = dict.__getitem__


class _Component:
    def __init__(self):
        self.properties, self.requires, self.defines, self.system_libs = {}, [], [], []
        self.bindirs, self.libdirs = ["bin"], ["lib"]

    def set_property(self, key, value):
        self.properties[key] = value


class _Components:
    """cpp_info.components: a component springs into being on first use, as in Conan."""

    def __init__(self):
        self.store = {}

    def __getitem__(self, key):
        return self.store.setdefault(key, _Component())


class _CppInfo(_Component):
    def __init__(self):
        super().__init__()
        self.components = _Components()


def install_conan_stand_ins():
    conan = types.ModuleType("conan")

    class ConanFile:  # only what the recipe touches
        def __init__(self):
            self.version = None
            self.recipe_folder = None

    conan.ConanFile = ConanFile
    tools = types.ModuleType("conan.tools")
    build = types.ModuleType("conan.tools.build")
    build.check_min_cppstd = lambda conanfile, cppstd: None
    build.can_run = lambda conanfile: True
    files = types.ModuleType("conan.tools.files")
    files.load = lambda conanfile, path: open(path, encoding="utf-8").read()
    files.copy = lambda *a, **k: []
    layout = types.ModuleType("conan.tools.layout")
    layout.basic_layout = lambda conanfile, src_folder=".": None
    cmake = types.ModuleType("conan.tools.cmake")
    cmake.CMake = object
    cmake.cmake_layout = lambda conanfile: None
    for name, module in {"conan": conan, "conan.tools": tools, "conan.tools.build": build,
                         "conan.tools.files": files, "conan.tools.layout": layout,
                         "conan.tools.cmake": cmake}.items():
        sys.modules[name] = module


def check_conan(src, version, scratch):
    for rel in ("conanfile.py", "test_package/conanfile.py"):
        try:
            py_compile.compile(os.path.join(src, rel), cfile=os.path.join(scratch, rel.replace("/", "_") + "c"),
                               doraise=True)
        except py_compile.PyCompileError as e:
            failures.append(f"{rel}: {e.msg}")
            return
    for rel in ("test_package/CMakeLists.txt", "test_package/test_package.cpp"):
        check(os.path.isfile(os.path.join(src, rel)), f"no {rel}")

    install_conan_stand_ins()
    namespace = {"__file__": os.path.join(src, "conanfile.py"), "__name__": "conanfile"}
    exec(compile(open(os.path.join(src, "conanfile.py"), encoding="utf-8").read(), "conanfile.py", "exec"),
         namespace)
    recipe_class = namespace["StudentsvcConan"]
    check(recipe_class.name == "studentsvc", "conanfile.py: name")
    check(recipe_class.package_type == "header-library", "conanfile.py: package_type must be header-library")
    check(bool(recipe_class.license) and bool(recipe_class.description), "conanfile.py: license and description")

    for with_curl in (True, False):
        for testing in (True, False):
            recipe = recipe_class()
            recipe.recipe_folder = src
            recipe.options = _Options(with_curl=with_curl, testing=testing)
            recipe.settings = types.SimpleNamespace(os="Linux")
            required = []
            recipe.requires = lambda ref, **traits: required.append((ref.split("/")[0], traits))
            recipe.set_version()
            check(recipe.version == version, f"conanfile.py: set_version() gave {recipe.version}, not {version}")
            recipe.requirements()
            names = [r[0] for r in required]
            expect = ["nlohmann_json"] + (["libcurl"] if with_curl else []) + (["cpp-httplib"] if testing else [])
            check(names == expect, f"conanfile.py (with_curl={with_curl}, testing={testing}): requires {names}")
            check(all(t.get("transitive_headers") for _, t in required),
                  "conanfile.py: a header-only package's requirements need transitive_headers")
            recipe.cpp_info = _CppInfo()
            recipe.package_info()
            comps = recipe.cpp_info.components.store
            targets = {c.properties.get("cmake_target_name") for c in comps.values()}
            want = {"studentsvc::studentsvc"} | ({"studentsvc::testing"} if testing else set())
            check(targets == want, f"conanfile.py: CMake targets {targets}, expected {want}")
            check(recipe.cpp_info.properties.get("cmake_file_name") == "studentsvc", "conanfile.py: cmake_file_name")
            sdk = comps["sdk"]
            check(f"STUDENTSVC_WITH_CURL={1 if with_curl else 0}" in sdk.defines,
                  "conanfile.py: STUDENTSVC_WITH_CURL define")
            check(("libcurl::curl" in sdk.requires) == with_curl, "conanfile.py: libcurl::curl requirement")
            check(sdk.libdirs == [] and sdk.bindirs == [], "conanfile.py: header-only components have no lib/bin dirs")


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    scratch = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="studentsvc-manifests-")
    os.makedirs(scratch, exist_ok=True)
    version = project_version(src)
    check(version is not None, "CMakeLists.txt: no project(studentsvc VERSION x.y.z)")
    check_vcpkg(src, version)
    check_conan(src, version, scratch)
    for f in failures:
        print(f"FAIL: {f}")
    if failures:
        return 1
    print(f"manifests OK: vcpkg.json, ports/vcpkg/studentsvc/vcpkg.json, conanfile.py, "
          f"test_package/conanfile.py (version {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Conan 2 recipe for studentsvc: a header-only C++23 client SDK.

    conan create . --build=missing                       # builds and runs test_package/
    conan create . -o "studentsvc/*:testing=True"        # + studentsvc::testing (cpp-httplib)
    conan create . -o "studentsvc/*:with_curl=False"     # bring your own HTTP stack

Consumers get the CMake targets studentsvc::studentsvc (and studentsvc::testing)
through CMakeDeps, and the pkg-config module `studentsvc` through PkgConfigDeps.
"""
import os
import re

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy, load
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class StudentsvcConan(ConanFile):
    name = "studentsvc"
    description = ("Typed C++23 client SDK for the Student Information and Conversation Service: "
                   "std::expected results, HTTPS with verification always on, retries, timeouts, "
                   "and an in-process mock server for tests")
    license = "MIT"
    homepage = "https://example.edu/studentsvc"
    url = "https://example.edu/studentsvc"
    topics = ("student-information", "rest-client", "sdk", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "with_curl": [True, False],  # CurlTransport, the default HTTP stack
        "testing": [True, False],    # studentsvc::testing: FakeTransport and MockServer (cpp-httplib)
    }
    default_options = {"with_curl": True, "testing": False}
    exports_sources = "include/*", "LICENSE*"
    no_copy_source = True

    def set_version(self):
        # One source of truth: project(VERSION) in CMakeLists.txt, which CMake
        # checks against include/studentsvc/version.hpp.
        if self.version:
            return
        cmakelists = load(self, os.path.join(self.recipe_folder, "CMakeLists.txt"))
        match = re.search(r"project\(\s*studentsvc\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", cmakelists)
        if not match:
            raise ValueError("no project(studentsvc VERSION x.y.z) in CMakeLists.txt")
        self.version = match.group(1)

    def layout(self):
        basic_layout(self, src_folder=".")

    def requirements(self):
        # Header-only: every dependency's headers (and libraries) reach the consumer.
        self.requires("nlohmann_json/[>=3.11 <4]", transitive_headers=True)
        if self.options.with_curl:
            self.requires("libcurl/[>=7.85 <9]", transitive_headers=True, transitive_libs=True)
        if self.options.testing:
            self.requires("cpp-httplib/[>=0.11 <1]", transitive_headers=True, transitive_libs=True)

    def package_id(self):
        self.info.clear()  # the same headers whatever the settings and options

    def validate(self):
        check_min_cppstd(self, 23)

    def package(self):
        copy(self, "LICENSE*", src=self.source_folder, dst=os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", src=os.path.join(self.source_folder, "include"),
             dst=os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "studentsvc")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []

        sdk = self.cpp_info.components["sdk"]
        sdk.set_property("cmake_target_name", "studentsvc::studentsvc")
        sdk.set_property("pkg_config_name", "studentsvc")
        sdk.bindirs = []
        sdk.libdirs = []
        sdk.requires = ["nlohmann_json::nlohmann_json"]
        if self.options.with_curl:
            sdk.requires.append("libcurl::curl")
            sdk.defines = ["STUDENTSVC_WITH_CURL=1"]
        else:
            sdk.defines = ["STUDENTSVC_WITH_CURL=0"]

        if self.options.testing:
            testing = self.cpp_info.components["testing"]
            testing.set_property("cmake_target_name", "studentsvc::testing")
            testing.set_property("pkg_config_name", "studentsvc-testing")
            testing.bindirs = []
            testing.libdirs = []
            testing.requires = ["sdk", "cpp-httplib::cpp-httplib"]
            if self.settings.os in ("Linux", "FreeBSD"):
                testing.system_libs = ["pthread"]  # MockServer runs its own thread

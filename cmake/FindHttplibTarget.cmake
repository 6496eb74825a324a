# Finds cpp-httplib for studentsvc::testing and wraps it as the target
# `studentsvc_httplib`: Debian's compiled library through pkg-config first,
# then the CMake package (vcpkg, upstream install).
if(TARGET studentsvc_httplib)
  return()
endif()
set(_studentsvc_httplib_target "")
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(STUDENTSVC_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
endif()
if(TARGET PkgConfig::STUDENTSVC_HTTPLIB)
  set(_studentsvc_httplib_target PkgConfig::STUDENTSVC_HTTPLIB)
else()
  find_package(httplib CONFIG QUIET)
  if(TARGET httplib::httplib)
    set(_studentsvc_httplib_target httplib::httplib)
  endif()
endif()

# A compiled cpp-httplib links only with the standard library it was built
# for (Debian's: libstdc++), so a clang + libc++ build checks before using it.
if(_studentsvc_httplib_target)
  include(CheckCXXSourceCompiles)
  include(CMakePushCheckState)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_REQUIRED_LIBRARIES ${_studentsvc_httplib_target})
  check_cxx_source_compiles([[
#include <httplib.h>
int main() { httplib::Response r; r.set_header("a", "b"); return r.has_header("a") ? 0 : 1; }
]] STUDENTSVC_HTTPLIB_LINKS)
  cmake_pop_check_state()
  if(STUDENTSVC_HTTPLIB_LINKS)
    add_library(studentsvc_httplib INTERFACE)
    target_link_libraries(studentsvc_httplib INTERFACE ${_studentsvc_httplib_target})
  else()
    message(STATUS "studentsvc: cpp-httplib was found but does not link with this compiler and standard "
      "library (Debian's is built for libstdc++); studentsvc::testing, the e2e tests and the examples "
      "that use the mock are left out")
  endif()
else()
  message(STATUS "studentsvc: cpp-httplib not found; studentsvc::testing is not available")
endif()
unset(_studentsvc_httplib_target)

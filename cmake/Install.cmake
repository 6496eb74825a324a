# Install rules (included when STUDENTSVC_INSTALL is ON, the default for a
# top-level build): the headers, the CMake package (studentsvcConfig.cmake, its
# version file and the exported targets) and the pkg-config file.
#
#   <prefix>/include/studentsvc/...                      headers, testing/ included
#   <prefix>/share/cmake/studentsvc/studentsvcConfig.cmake  (+ ConfigVersion, Targets, TestingTargets)
#   <prefix>/share/pkgconfig/studentsvc.pc
#
# Header-only (the default), the package is architecture-independent, so the
# CMake and pkg-config files go under share/ (as nlohmann_json does); both
# locations are cache variables for packagers (vcpkg's port moves the CMake
# files to share/studentsvc). Compiled mode (STUDENTSVC_HEADER_ONLY=OFF) adds
# the library under lib/, and so does the compiled studentsvc::testing
# (STUDENTSVC_TESTING_COMPILED, with cpp-httplib; the vcpkg port turns it off).
include(CMakePackageConfigHelpers)

set(STUDENTSVC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/studentsvc"
    CACHE STRING "Where studentsvcConfig.cmake goes, relative to the install prefix")
set(STUDENTSVC_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_DATADIR}/pkgconfig"
    CACHE STRING "Where studentsvc.pc goes, relative to the install prefix")
mark_as_advanced(STUDENTSVC_INSTALL_CMAKEDIR STUDENTSVC_INSTALL_PKGCONFIGDIR)

# Headers: the whole tree (detail/ is included by the public headers; testing/
# is what studentsvc::testing offers).
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/studentsvc"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.hpp")

# studentsvc::studentsvc. Its usage requirements (C++23, the include
# directory, nlohmann_json, CURL::libcurl, STUDENTSVC_WITH_CURL and, compiled,
# STUDENTSVC_HEADER_ONLY=0) are exported as they are; the config file finds
# the two packages first.
install(TARGETS studentsvc EXPORT studentsvcTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(EXPORT studentsvcTargets
        NAMESPACE studentsvc::
        DESTINATION "${STUDENTSVC_INSTALL_CMAKEDIR}")

# studentsvc::testing, in an export set of its own: the config file includes it
# only once it has found cpp-httplib, so a consumer without cpp-httplib gets no
# half-usable target. Built (STUDENTSVC_TESTING_COMPILED, the default) it is
# the static library of MockServer's bodies, under lib/ as libstudentsvc_testing.a.
# Without cpp-httplib in this build it is exported header-only (it compiles
# nothing, so a package built without cpp-httplib still serves an app that has it).
if(TARGET studentsvc_testing)
  set(_studentsvc_testing_target studentsvc_testing)
else()
  add_library(studentsvc_testing_install INTERFACE)
  set_target_properties(studentsvc_testing_install PROPERTIES EXPORT_NAME testing)
  target_link_libraries(studentsvc_testing_install INTERFACE
    studentsvc $<INSTALL_INTERFACE:studentsvc::httplib_dependency>)
  set(_studentsvc_testing_target studentsvc_testing_install)
endif()
install(TARGETS ${_studentsvc_testing_target} EXPORT studentsvcTestingTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(EXPORT studentsvcTestingTargets
        NAMESPACE studentsvc::
        DESTINATION "${STUDENTSVC_INSTALL_CMAKEDIR}")
get_target_property(_studentsvc_testing_type ${_studentsvc_testing_target} TYPE)
unset(_studentsvc_testing_target)

# studentsvcConfig.cmake and studentsvcConfigVersion.cmake. SameMinorVersion:
# while the major version is 0 a minor release may break the API (Semantic
# Versioning 2.0.0, item 4), so find_package(studentsvc 0.3) accepts 0.3.0 and
# any later 0.3.x, never 0.2 or 0.4 (CONTRIBUTING.md; at 1.0, SameMajorVersion).
# Pin one release with `find_package(studentsvc 0.3.0 EXACT)`.
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/studentsvcConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/studentsvcConfig.cmake"
  INSTALL_DESTINATION "${STUDENTSVC_INSTALL_CMAKEDIR}")
# A compiled package (the SDK or studentsvc::testing) is for one architecture: the version file checks it.
if(STUDENTSVC_HEADER_ONLY AND _studentsvc_testing_type STREQUAL "INTERFACE_LIBRARY")
  set(_studentsvc_arch ARCH_INDEPENDENT)
else()
  set(_studentsvc_arch "")
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/studentsvcConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion
  ${_studentsvc_arch})
unset(_studentsvc_arch)
unset(_studentsvc_testing_type)
install(FILES
  "${PROJECT_BINARY_DIR}/studentsvcConfig.cmake"
  "${PROJECT_BINARY_DIR}/studentsvcConfigVersion.cmake"
  DESTINATION "${STUDENTSVC_INSTALL_CMAKEDIR}")

# studentsvc.pc. Relocatable: the prefix is found from the .pc file's own
# directory, so `cmake --install --prefix` anywhere (or a package manager
# moving the tree) keeps it valid.
if(IS_ABSOLUTE "${STUDENTSVC_INSTALL_PKGCONFIGDIR}")
  set(STUDENTSVC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _studentsvc_pc_up "/p/${STUDENTSVC_INSTALL_PKGCONFIGDIR}" "/p")
  string(REGEX REPLACE "/$" "" _studentsvc_pc_up "${_studentsvc_pc_up}")
  set(STUDENTSVC_PC_PREFIX "\${pcfiledir}/${_studentsvc_pc_up}")
  unset(_studentsvc_pc_up)
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(STUDENTSVC_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(STUDENTSVC_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
if(STUDENTSVC_WITH_CURL)
  set(STUDENTSVC_PC_REQUIRES "nlohmann_json >= 3.11, libcurl >= 7.85")
  set(STUDENTSVC_PC_WITH_CURL 1)
else()
  set(STUDENTSVC_PC_REQUIRES "nlohmann_json >= 3.11")
  set(STUDENTSVC_PC_WITH_CURL 0)
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(_studentsvc_pc_libdir "${CMAKE_INSTALL_LIBDIR}")
else()
  set(_studentsvc_pc_libdir "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(STUDENTSVC_HEADER_ONLY)
  set(STUDENTSVC_PC_MODE_CFLAGS "")
  set(STUDENTSVC_PC_LIBS "")
else()  # compiled mode: the consumer links the library and must see its bodies are not inline
  set(STUDENTSVC_PC_MODE_CFLAGS " -DSTUDENTSVC_HEADER_ONLY=0")
  set(STUDENTSVC_PC_LIBS "Libs: -L${_studentsvc_pc_libdir} -lstudentsvc")
endif()
unset(_studentsvc_pc_libdir)
configure_file("${PROJECT_SOURCE_DIR}/cmake/studentsvc.pc.in"
               "${PROJECT_BINARY_DIR}/studentsvc.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/studentsvc.pc"
        DESTINATION "${STUDENTSVC_INSTALL_PKGCONFIGDIR}")

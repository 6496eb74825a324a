# vcpkg port of studentsvc: header-only, so one release configuration, no
# binaries; installs the headers, the CMake package (share/studentsvc) and
# studentsvc.pc.
#
# As an overlay port in a studentsvc checkout it builds that checkout:
#   vcpkg install studentsvc --overlay-ports=<checkout>/ports/vcpkg
#   vcpkg install "studentsvc[testing]" --overlay-ports=<checkout>/ports/vcpkg
# Copied into a registry, it fetches the tagged release instead: set URL and
# REF (the commit of tag v${VERSION}) below when publishing.
set(VCPKG_BUILD_TYPE release)

if(DEFINED CURRENT_PORT_DIR)
  set(_studentsvc_port_dir "${CURRENT_PORT_DIR}")
else()
  set(_studentsvc_port_dir "${CMAKE_CURRENT_LIST_DIR}")
endif()
get_filename_component(_studentsvc_checkout "${_studentsvc_port_dir}/../../.." ABSOLUTE)
if(EXISTS "${_studentsvc_checkout}/include/studentsvc/version.hpp"
   AND EXISTS "${_studentsvc_checkout}/cmake/studentsvcConfig.cmake.in")
  set(SOURCE_PATH "${_studentsvc_checkout}")
else()
  vcpkg_from_git(
    OUT_SOURCE_PATH SOURCE_PATH
    URL https://example.edu/studentsvc.git
    REF 0000000000000000000000000000000000000000  # commit of tag v${VERSION}: fill in when publishing
    HEAD_REF main
  )
endif()

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    curl STUDENTSVC_WITH_CURL
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DSTUDENTSVC_INSTALL=ON
    -DSTUDENTSVC_BUILD_TESTING=OFF
    -DSTUDENTSVC_BUILD_EXAMPLES=OFF
    -DSTUDENTSVC_BUILD_TOOLS=OFF
    -DSTUDENTSVC_INSTALL_TOOLS=OFF
    -DSTUDENTSVC_BUILD_DOCS=OFF
    -DSTUDENTSVC_BUILD_BENCHMARKS=OFF
    -DSTUDENTSVC_BUILD_FUZZERS=OFF
    -DSTUDENTSVC_TESTING_COMPILED=OFF  # header-only port: studentsvc::testing without its library
    -DSTUDENTSVC_INSTALL_CMAKEDIR=share/studentsvc
    -DSTUDENTSVC_INSTALL_PKGCONFIGDIR=share/pkgconfig
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME studentsvc)
vcpkg_fixup_pkgconfig()

file(INSTALL "${_studentsvc_port_dir}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
if(EXISTS "${SOURCE_PATH}/LICENSE")
  vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
else()
  # A checkout without its LICENSE file; vcpkg requires a copyright file.
  file(WRITE "${CURRENT_PACKAGES_DIR}/share/${PORT}/copyright"
       "studentsvc ${VERSION} is released under the MIT license (see README.md).\n")
endif()

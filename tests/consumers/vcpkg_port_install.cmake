# Runs ports/vcpkg/studentsvc/portfile.cmake outside vcpkg, so the port's
# install steps (configure options, install, config and pkg-config locations,
# usage and copyright files) are exercised without a vcpkg tool or network.
# The vcpkg_* helpers the port calls are stood in for by minimal versions that
# do what vcpkg's do to a header-only CMake project; what they cannot check
# (vcpkg's post-build lints, the toolchain, real feature resolution) needs a
# real `vcpkg install` (see docs/packaging.md).
#   cmake -DPORT_DIR=<ports/vcpkg/studentsvc> -DCURRENT_PACKAGES_DIR=<prefix>
#         -DCURRENT_BUILDTREES_DIR=<scratch> -DGENERATOR=<gen> [-DCXX=<compiler>]
#         [-DFEATURES=core|curl|testing] -P vcpkg_port_install.cmake
cmake_minimum_required(VERSION 3.25)
foreach(var PORT_DIR CURRENT_PACKAGES_DIR CURRENT_BUILDTREES_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "vcpkg_port_install.cmake: ${var} is not set")
  endif()
endforeach()

# What vcpkg sets before it includes a portfile.
file(READ "${PORT_DIR}/vcpkg.json" _manifest)
string(JSON PORT GET "${_manifest}" name)
string(JSON VERSION GET "${_manifest}" version-semver)
set(CURRENT_PORT_DIR "${PORT_DIR}")
if(NOT DEFINED FEATURES)
  set(FEATURES core curl)  # the port's default features
endif()
string(REPLACE "|" ";" FEATURES "${FEATURES}")
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}" "${CURRENT_BUILDTREES_DIR}")

function(vcpkg_from_git)
  message(FATAL_ERROR "the port tried to fetch its source; it must build the checkout it lives in")
endfunction()

function(vcpkg_check_features)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUT_FEATURE_OPTIONS" "FEATURES;INVERTED_FEATURES")
  set(options "")
  list(LENGTH arg_FEATURES n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET arg_FEATURES ${i} feature)
    list(GET arg_FEATURES ${j} option)
    if(feature IN_LIST FEATURES)
      list(APPEND options "-D${option}=ON")
    else()
      list(APPEND options "-D${option}=OFF")
    endif()
  endforeach()
  set(${arg_OUT_FEATURE_OPTIONS} "${options}" PARENT_SCOPE)
endfunction()

function(vcpkg_cmake_configure)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "SOURCE_PATH" "OPTIONS;OPTIONS_RELEASE;OPTIONS_DEBUG")
  if(NOT VCPKG_BUILD_TYPE STREQUAL "release")
    message(FATAL_ERROR "a header-only port should set VCPKG_BUILD_TYPE to release")
  endif()
  set(cmd "${CMAKE_COMMAND}" -S "${arg_SOURCE_PATH}" -B "${CURRENT_BUILDTREES_DIR}/rel" -G "${GENERATOR}"
      -DCMAKE_BUILD_TYPE=Release "-DCMAKE_INSTALL_PREFIX=${CURRENT_PACKAGES_DIR}"
      ${arg_OPTIONS} ${arg_OPTIONS_RELEASE})
  if(CXX)
    list(APPEND cmd "-DCMAKE_CXX_COMPILER=${CXX}")
  endif()
  message(STATUS "vcpkg_cmake_configure: ${arg_OPTIONS}")
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "configure failed (${rc})")
  endif()
endfunction()

function(vcpkg_cmake_install)
  execute_process(COMMAND "${CMAKE_COMMAND}" --build "${CURRENT_BUILDTREES_DIR}/rel" --target install
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install failed (${rc})")
  endif()
endfunction()

function(vcpkg_cmake_config_fixup)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "PACKAGE_NAME;CONFIG_PATH" "")
  if(NOT arg_PACKAGE_NAME)
    set(arg_PACKAGE_NAME "${PORT}")
  endif()
  if(NOT arg_CONFIG_PATH)
    set(arg_CONFIG_PATH "share/${arg_PACKAGE_NAME}")
  endif()
  if(NOT arg_CONFIG_PATH STREQUAL "share/${arg_PACKAGE_NAME}")
    file(RENAME "${CURRENT_PACKAGES_DIR}/${arg_CONFIG_PATH}" "${CURRENT_PACKAGES_DIR}/share/${arg_PACKAGE_NAME}")
  endif()
  if(NOT EXISTS "${CURRENT_PACKAGES_DIR}/share/${arg_PACKAGE_NAME}/${arg_PACKAGE_NAME}Config.cmake")
    message(FATAL_ERROR "no ${arg_PACKAGE_NAME}Config.cmake in share/${arg_PACKAGE_NAME}")
  endif()
  # vcpkg rewrites absolute paths to the packages directory; a relocatable
  # package has none.
  file(GLOB configs "${CURRENT_PACKAGES_DIR}/share/${arg_PACKAGE_NAME}/*.cmake")
  foreach(config IN LISTS configs)
    file(READ "${config}" text)
    string(FIND "${text}" "${CURRENT_PACKAGES_DIR}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${config} holds the absolute install path")
    endif()
  endforeach()
endfunction()

function(vcpkg_fixup_pkgconfig)
  file(GLOB pcs "${CURRENT_PACKAGES_DIR}/lib/pkgconfig/*.pc" "${CURRENT_PACKAGES_DIR}/share/pkgconfig/*.pc")
  if(NOT pcs)
    message(FATAL_ERROR "vcpkg_fixup_pkgconfig: no .pc file in lib/pkgconfig or share/pkgconfig")
  endif()
endfunction()

function(vcpkg_install_copyright)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "COMMENT" "FILE_LIST")
  set(text "")
  foreach(f IN LISTS arg_FILE_LIST)
    file(READ "${f}" part)
    string(APPEND text "${part}")
  endforeach()
  file(WRITE "${CURRENT_PACKAGES_DIR}/share/${PORT}/copyright" "${text}")
endfunction()

include("${PORT_DIR}/portfile.cmake")

# vcpkg's post-build checks that matter here.
foreach(f share/${PORT}/copyright share/${PORT}/usage share/${PORT}/${PORT}Config.cmake
          share/${PORT}/${PORT}ConfigVersion.cmake share/pkgconfig/${PORT}.pc include/studentsvc/studentsvc.hpp)
  if(NOT EXISTS "${CURRENT_PACKAGES_DIR}/${f}")
    message(FATAL_ERROR "the port did not install ${f}")
  endif()
endforeach()
if(EXISTS "${CURRENT_PACKAGES_DIR}/debug" OR EXISTS "${CURRENT_PACKAGES_DIR}/lib" OR EXISTS "${CURRENT_PACKAGES_DIR}/bin")
  message(FATAL_ERROR "a header-only port must not install debug/, lib/ or bin/")
endif()
if(CHECK_NO_CURL)  # installed without the curl feature: nothing may mention libcurl
  file(READ "${CURRENT_PACKAGES_DIR}/share/pkgconfig/${PORT}.pc" pc)
  file(READ "${CURRENT_PACKAGES_DIR}/share/${PORT}/${PORT}Targets.cmake" targets)
  file(READ "${CURRENT_PACKAGES_DIR}/share/${PORT}/${PORT}Config.cmake" config)
  if(pc MATCHES "libcurl" OR targets MATCHES "CURL::" OR NOT config MATCHES "set\\(studentsvc_WITH_CURL OFF\\)")
    message(FATAL_ERROR "installed without the curl feature, but the package still refers to curl")
  endif()
endif()
message(STATUS "port ${PORT} ${VERSION} [${FEATURES}] installed to ${CURRENT_PACKAGES_DIR}")

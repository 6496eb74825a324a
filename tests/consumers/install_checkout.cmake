# Builds and installs this checkout as docs/packaging.md's install command does,
# in compiled mode (STUDENTSVC_HEADER_ONLY=OFF, the default here) or header-only,
# whatever mode the calling build is in, so the consumers test both modes; then
# checks what find_package and pkg-config read.
#   cmake -DSOURCE_DIR=<checkout> -DBINARY_DIR=<scratch> -DPREFIX=<install prefix>
#         -DGENERATOR=<gen> [-DCXX=<compiler>] [-DBUILD_TYPE=<config>] [-DWITH_CURL=ON|OFF]
#         [-DHEADER_ONLY=ON|OFF] -P install_checkout.cmake
cmake_minimum_required(VERSION 3.25)
foreach(var SOURCE_DIR BINARY_DIR PREFIX GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_checkout.cmake: ${var} is not set")
  endif()
endforeach()
# No build type unless asked, as every consumer app: this checks the package, not the optimiser.
if(NOT DEFINED WITH_CURL)
  set(WITH_CURL ON)
endif()
if(NOT DEFINED HEADER_ONLY)
  set(HEADER_ONLY OFF)
endif()
file(REMOVE_RECURSE "${BINARY_DIR}" "${PREFIX}")
set(configure "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}" --no-warn-unused-cli
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DSTUDENTSVC_HEADER_ONLY=${HEADER_ONLY}" "-DSTUDENTSVC_WITH_CURL=${WITH_CURL}"
    -DSTUDENTSVC_INSTALL=ON -DSTUDENTSVC_BUILD_TESTING=OFF -DSTUDENTSVC_BUILD_EXAMPLES=OFF
    -DSTUDENTSVC_BUILD_TOOLS=OFF -DSTUDENTSVC_INSTALL_TOOLS=OFF -DSTUDENTSVC_BUILD_DOCS=OFF)
if(CXX)
  list(APPEND configure "-DCMAKE_CXX_COMPILER=${CXX}")
endif()
if(HEADER_ONLY)
  # MockServer header-only too: the install then has nothing to compile (the
  # compiled-mode run checks the installed libstudentsvc_testing).
  list(APPEND configure -DSTUDENTSVC_TESTING_COMPILED=OFF)
endif()
foreach(step configure build install)
  if(step STREQUAL "build")
    set(cmd "${CMAKE_COMMAND}" --build "${BINARY_DIR}" -j2)
  elseif(step STREQUAL "install")
    set(cmd "${CMAKE_COMMAND}" --install "${BINARY_DIR}" --prefix "${PREFIX}")
  else()
    set(cmd ${configure})
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_checkout.cmake: ${step} failed (${rc})")
  endif()
endforeach()
# What find_package and pkg-config read.
foreach(f include/studentsvc/studentsvc.hpp share/cmake/studentsvc/studentsvcConfig.cmake
          share/cmake/studentsvc/studentsvcConfigVersion.cmake share/pkgconfig/studentsvc.pc)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "install_checkout.cmake: cmake --install did not install ${f}")
  endif()
endforeach()
# studentsvc::testing, built with cpp-httplib: the library of MockServer's bodies.
file(GLOB testing_libs "${PREFIX}/lib*/libstudentsvc_testing.*")
if(NOT testing_libs AND NOT HEADER_ONLY)
  message(FATAL_ERROR "install_checkout.cmake: no libstudentsvc_testing under ${PREFIX}/lib")
endif()
file(GLOB libs "${PREFIX}/lib*/libstudentsvc.*")
file(READ "${PREFIX}/share/cmake/studentsvc/studentsvcTargets.cmake" targets)
file(STRINGS "${PREFIX}/share/pkgconfig/studentsvc.pc" libs_line REGEX "^Libs: .*-lstudentsvc")
if(HEADER_ONLY)
  if(libs OR targets MATCHES "STUDENTSVC_HEADER_ONLY=0" OR libs_line)
    message(FATAL_ERROR "install_checkout.cmake: the header-only package carries a library or the compiled mode")
  endif()
  message(STATUS "installed header-only studentsvc into ${PREFIX}")
else()
  if(NOT libs)
    message(FATAL_ERROR "install_checkout.cmake: no libstudentsvc under ${PREFIX}/lib")
  endif()
  if(NOT targets MATCHES "STUDENTSVC_HEADER_ONLY=0" OR NOT libs_line)
    message(FATAL_ERROR "install_checkout.cmake: the package does not carry STUDENTSVC_HEADER_ONLY=0 and -lstudentsvc")
  endif()
  message(STATUS "installed compiled studentsvc: ${libs} ${testing_libs}")
endif()

# The version lives in two places: project(VERSION) (the CMake package, the
# pkg-config file, vcpkg and Conan read it from there) and
# include/studentsvc/version.hpp (code and the User-Agent read it). Configuring
# fails when they disagree, so a release cannot ship with two versions.
file(STRINGS "${PROJECT_SOURCE_DIR}/include/studentsvc/version.hpp" _studentsvc_version_defines
     REGEX "^#define STUDENTSVC_VERSION_(MAJOR|MINOR|PATCH|STRING) ")
foreach(_part MAJOR MINOR PATCH STRING)
  set(_studentsvc_header_${_part} "")
  foreach(_line IN LISTS _studentsvc_version_defines)
    if(_line MATCHES "^#define STUDENTSVC_VERSION_${_part} +\"?([0-9A-Za-z.+-]+)\"?$")
      set(_studentsvc_header_${_part} "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endforeach()
set(_studentsvc_header_triple
    "${_studentsvc_header_MAJOR}.${_studentsvc_header_MINOR}.${_studentsvc_header_PATCH}")
if(NOT _studentsvc_header_triple STREQUAL PROJECT_VERSION
   OR NOT _studentsvc_header_STRING STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR
    "studentsvc: project(VERSION ${PROJECT_VERSION}) in CMakeLists.txt does not match "
    "include/studentsvc/version.hpp (MAJOR.MINOR.PATCH ${_studentsvc_header_triple}, "
    "STRING \"${_studentsvc_header_STRING}\"). Change both together (see CHANGELOG.md).")
endif()
unset(_studentsvc_version_defines)
unset(_studentsvc_header_triple)
foreach(_part MAJOR MINOR PATCH STRING)
  unset(_studentsvc_header_${_part})
endforeach()
unset(_part)
unset(_line)

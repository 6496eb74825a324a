# Fails when a CMakeCache.txt holds a CURL_ entry: find_package(CURL) ran.
#   cmake -DCACHE=<build>/CMakeCache.txt -P no_curl_cache.cmake
file(STRINGS "${CACHE}" found REGEX "^CURL_")
if(found)
  message(FATAL_ERROR "STUDENTSVC_WITH_CURL=OFF still looked for libcurl: ${found}")
endif()
message(STATUS "no CURL_ entry in ${CACHE}")

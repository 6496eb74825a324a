# Compiles SOURCE once per case in CASES (-DCASE=<n>): case 0 must compile, every
# other case must fail to compile (a compile-fail test). CASES is comma-separated. CXX, STD_FLAG,
# EXTRA_FLAGS and INCLUDE_DIR come from the build; OUT_DIR holds the objects.
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
string(REPLACE "," ";" CASES "${CASES}")
foreach(case IN LISTS CASES)
  execute_process(COMMAND "${CXX}" ${STD_FLAG} ${extra} "-I${INCLUDE_DIR}" "-DCASE=${case}" -c "${SOURCE}"
                          -o "${OUT_DIR}/case_${case}.o"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(case EQUAL 0)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "case 0 (the control) must compile and did not:\n${err}")
    endif()
  elseif(rc EQUAL 0)
    message(FATAL_ERROR "case ${case} compiled, and must not")
  elseif(NOT err MATCHES "secret_misuse.cpp:[0-9]+")
    # A failure elsewhere (a missing header) would pass for the wrong reason.
    message(FATAL_ERROR "case ${case} failed, but not at its own line:\n${err}")
  else()
    message(STATUS "case ${case}: refused, as it must be")
  endif()
endforeach()

# studentsvc_target_warnings(<target>...): the project's warning set on its own
# programs (tests, examples, the tool, fuzzers, benchmarks), never on the SDK's
# INTERFACE target nor in global flags, so a consumer's build keeps its own.
# STUDENTSVC_WERROR (OFF by default, ON in the presets and CI) makes them
# errors through CMake's COMPILE_WARNING_AS_ERROR: a user's compiler, newer or
# optimising differently, may warn where ours does not, and must still build.
function(studentsvc_target_warnings)
  foreach(target IN LISTS ARGN)
    target_compile_options(${target} PRIVATE
      $<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-Wall -Wextra -Wpedantic -Wconversion -Wshadow>
      $<$<CXX_COMPILER_ID:MSVC>:/W4>)
    set_target_properties(${target} PROPERTIES COMPILE_WARNING_AS_ERROR ${STUDENTSVC_WERROR})
  endforeach()
endfunction()

// The other side of layout_test.cpp: the SDK's headers (never awaitable.hpp)
// in a TU built with -fno-coroutines where the compiler has the flag
// (STUDENTSVC_TEST_NO_COROUTINES, tests/CMakeLists.txt).

#include <studentsvc/detail/layout.hpp>
#include <studentsvc/studentsvc.hpp>

#if defined(STUDENTSVC_TEST_NO_COROUTINES) && defined(__cpp_impl_coroutine)
#error "built with -fno-coroutines, yet coroutines are on"
#endif

namespace layout_test {

studentsvc::detail::Layout layout_without_coroutines() noexcept {
  static constexpr studentsvc::detail::Layout layout = studentsvc::detail::layout_in_this_tu();
  return layout;
}

bool built_without_coroutines() noexcept {
#if defined(__cpp_impl_coroutine)
  return false;
#else
  return true;
#endif
}

}  // namespace layout_test

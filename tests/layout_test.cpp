// No class layout of the compiled library depends on whether coroutines are
// enabled (issue 37): the sizes and alignments of the classes a program and
// the library share by value, as three TUs saw them, are the same:
// - the library's own (detail::library_layout(), from the TU that holds the
//   SDK's bodies: studentsvc_compiled, or the studentsvc library);
// - this TU's, which includes <studentsvc/awaitable.hpp> (coroutines on);
// - layout_no_coroutines.cpp's, built with -fno-coroutines where the compiler
//   has it (GCC), and never including awaitable.hpp.
// Each side is a constant of its own TU (layout_in_this_tu() evaluated at
// compile time there), so the comparison is a run-time one: no compiler sees
// two TUs at once to static_assert it.

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>

#include <studentsvc/awaitable.hpp>
#include <studentsvc/detail/layout.hpp>
#include <studentsvc/studentsvc.hpp>

#ifndef __cpp_impl_coroutine
#error "layout_test.cpp is the side with coroutines: awaitable.hpp needs them"
#endif

namespace layout_test {

// layout_no_coroutines.cpp
studentsvc::detail::Layout layout_without_coroutines() noexcept;
bool built_without_coroutines() noexcept;

namespace {
constexpr studentsvc::detail::Layout with_coroutines = studentsvc::detail::layout_in_this_tu();
static_assert(with_coroutines.size() == studentsvc::detail::layout_types);
static_assert(with_coroutines[0].size == sizeof(studentsvc::Client));
}  // namespace

TEST_CASE("layout: no class of the compiled library changes with coroutines or awaitable.hpp", "[layout]") {
  const studentsvc::detail::Layout library = studentsvc::detail::library_layout();
  const studentsvc::detail::Layout without = layout_without_coroutines();
  REQUIRE(library.size() >= 18);
  for (std::size_t i = 0; i < library.size(); ++i) {
    INFO(std::string(with_coroutines[i].name));
    CHECK(library[i].name == with_coroutines[i].name);
    CHECK(library[i].size > 0);
    CHECK(with_coroutines[i].size == library[i].size);
    CHECK(with_coroutines[i].align == library[i].align);
    CHECK(without[i].size == library[i].size);
    CHECK(without[i].align == library[i].align);
  }
#if defined(__GNUC__) && !defined(__clang__)
  // GCC has -fno-coroutines: the other TU really was built without them.
  CHECK(built_without_coroutines());
#endif
}

}  // namespace layout_test

#pragma once
/// @file detail/layout-inl.hpp
/// @brief library_layout()'s body: included by detail/layout.hpp in
/// header-only mode, compiled once by <studentsvc/src.hpp> otherwise.

#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/detail/layout.hpp>

namespace studentsvc::detail {

STUDENTSVC_INLINE Layout library_layout() noexcept {
  static constexpr Layout layout = layout_in_this_tu();  // this TU's, at compile time
  return layout;
}

}  // namespace studentsvc::detail

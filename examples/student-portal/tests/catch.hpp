#pragma once
// Catch2 3 (vcpkg, Conan) or Catch2 2.13 (Debian 12).
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_test_macros.hpp>
#else
#include <catch2/catch.hpp>
#endif

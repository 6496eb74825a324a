#pragma once
/// @file testing/detail/separate.hpp
/// @brief Internal to this repository: STUDENTSVC_TESTING_SEPARATE=1 (set by
/// the target studentsvc_testing_compiled) compiles MockServer's bodies and its
/// seed data once, in src/testing.cpp, instead of in every TU that includes them.

#ifndef STUDENTSVC_TESTING_SEPARATE
#define STUDENTSVC_TESTING_SEPARATE 0
#endif
#if STUDENTSVC_TESTING_SEPARATE
#define STUDENTSVC_TESTING_INLINE
#else
#define STUDENTSVC_TESTING_INLINE inline
#endif

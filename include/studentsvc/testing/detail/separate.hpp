#pragma once
/// @file testing/detail/separate.hpp
/// @brief STUDENTSVC_TESTING_SEPARATE=1 (set by the compiled studentsvc::testing
/// library, and by this repository's studentsvc_testing_compiled) means
/// MockServer's bodies and its seed data are compiled once, in src/testing.cpp,
/// instead of in every TU that includes them; <studentsvc/testing/mock_server.hpp>
/// then includes neither <httplib.h> nor the server's internals. 0 (the default)
/// is header-only.

#ifndef STUDENTSVC_TESTING_SEPARATE
#define STUDENTSVC_TESTING_SEPARATE 0
#endif
#if STUDENTSVC_TESTING_SEPARATE
#define STUDENTSVC_TESTING_INLINE
#else
#define STUDENTSVC_TESTING_INLINE inline
#endif

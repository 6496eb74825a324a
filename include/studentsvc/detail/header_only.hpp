#pragma once
/// @file detail/header_only.hpp
/// @brief The build mode. STUDENTSVC_HEADER_ONLY (default 1) puts every body in
/// the headers; 0 (CMake option STUDENTSVC_HEADER_ONLY=OFF, set by the target)
/// means the non-template bodies are compiled once into the studentsvc library.

#ifndef STUDENTSVC_HEADER_ONLY
#define STUDENTSVC_HEADER_ONLY 1
#endif

// What a body in a *-inl.hpp file is declared with: `inline` where every TU
// that includes the header defines it, nothing where src/*.cpp does it once.
#if STUDENTSVC_HEADER_ONLY
#define STUDENTSVC_INLINE inline
#else
#define STUDENTSVC_INLINE
#endif

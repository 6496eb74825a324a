#pragma once
/// @file detail/config.hpp
/// @brief Build switches. STUDENTSVC_WITH_CURL is set by the CMake target
/// (option STUDENTSVC_WITH_CURL); without CMake it follows whether curl is there.

#ifndef STUDENTSVC_WITH_CURL
#if __has_include(<curl/curl.h>)
#define STUDENTSVC_WITH_CURL 1
#else
#define STUDENTSVC_WITH_CURL 0
#endif
#endif

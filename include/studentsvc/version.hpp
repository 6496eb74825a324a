#pragma once
/// @file version.hpp
/// @brief The SDK's version, following Semantic Versioning 2.0.0.

#define STUDENTSVC_VERSION_MAJOR 0
#define STUDENTSVC_VERSION_MINOR 1
#define STUDENTSVC_VERSION_PATCH 0
#define STUDENTSVC_VERSION_STRING "0.1.0"

#include <string_view>

namespace studentsvc {

/// @brief The SDK version as "MAJOR.MINOR.PATCH".
inline constexpr std::string_view version = STUDENTSVC_VERSION_STRING;

/// @brief The User-Agent sent on every request: `studentsvc-cpp/<version>`.
inline constexpr std::string_view user_agent = "studentsvc-cpp/" STUDENTSVC_VERSION_STRING;

}  // namespace studentsvc

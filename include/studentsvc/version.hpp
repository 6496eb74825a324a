#pragma once
/// @file version.hpp
/// @brief The SDK's version, following Semantic Versioning 2.0.0.

/// The major version: incompatible API changes.
#define STUDENTSVC_VERSION_MAJOR 0
/// The minor version: compatible additions.
#define STUDENTSVC_VERSION_MINOR 3
/// The patch version: compatible fixes.
#define STUDENTSVC_VERSION_PATCH 0
/// "MAJOR.MINOR.PATCH" as a string literal.
#define STUDENTSVC_VERSION_STRING "0.3.0"

#include <string_view>

namespace studentsvc {

/// @brief The SDK version as "MAJOR.MINOR.PATCH".
inline constexpr std::string_view version = STUDENTSVC_VERSION_STRING;

/// @brief The User-Agent sent on every request: `studentsvc-cpp/<version>`.
inline constexpr std::string_view user_agent = "studentsvc-cpp/" STUDENTSVC_VERSION_STRING;

}  // namespace studentsvc

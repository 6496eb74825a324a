#pragma once
// Bounded pretty-printing of response bodies for the studentsvc tool (tool
// code, not SDK API). A body nested deeper than max_pretty_depth, or larger
// than max_pretty_bytes, is not pretty-printed: nlohmann's dump() recurses once
// per level (a body of `[[[[...` a million deep would overflow the stack), and
// a DOM takes many times the body's size. Such a body is printed as it came.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace studentsvc_cli {

/// Deepest nesting the tool pretty-prints (the service's answers nest 3 deep).
inline constexpr std::size_t max_pretty_depth = 64;
/// Largest body the tool pretty-prints (1 MiB; a student record is under 2 KiB).
inline constexpr std::size_t max_pretty_bytes = std::size_t{1} << 20U;

/// Pretty JSON with 2-space indent; invalid UTF-8 from a server is replaced rather than thrown on.
[[nodiscard]] std::string dump_json(const nlohmann::ordered_json& j);

/// `body` pretty-printed (the server's key order kept) when it is JSON within
/// the bounds; std::nullopt when it is not JSON, too deep or too large: print it raw.
[[nodiscard]] std::optional<std::string> bounded_pretty_json(std::string_view body,
                                                             std::size_t max_depth = max_pretty_depth,
                                                             std::size_t max_bytes = max_pretty_bytes);

}  // namespace studentsvc_cli

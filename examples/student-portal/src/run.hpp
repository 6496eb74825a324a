#pragma once
// The whole program, with its arguments, environment and streams passed in.

#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace student_portal {

using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// Arguments without the program name; `out` gets the "listening on" line (or
// the usage for --help), `log` one line per request and the errors. Returns
// the exit status (settings.hpp).
[[nodiscard]] int run(std::span<const std::string_view> args, const EnvLookup& env, std::ostream& out,
                      std::ostream& log);

}  // namespace student_portal

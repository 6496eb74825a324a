// The rules the commands share (command.hpp).

#include "command.hpp"

#include <optional>
#include <string>

#include "format.hpp"

namespace studentsvc_cli {

std::optional<std::string> batch_format_misuse(const Args& a) {
  if (a.format && (*a.format == Format::csv || *a.format == Format::ndjson)) {
    return "--format csv and ndjson apply to 'get' only";
  }
  return std::nullopt;
}

}  // namespace studentsvc_cli

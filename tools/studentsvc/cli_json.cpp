// Bounded pretty-printing of response bodies (see cli_json.hpp).

#include "cli_json.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <studentsvc/json.hpp>

namespace studentsvc_cli {

std::string dump_json(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::optional<std::string> bounded_pretty_json(std::string_view body, std::size_t max_depth, std::size_t max_bytes) {
  if (body.size() > max_bytes || studentsvc::json_nests_deeper_than(body, max_depth)) return std::nullopt;
  const auto parsed = nlohmann::ordered_json::parse(body.begin(), body.end(), nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  return dump_json(parsed);
}

}  // namespace studentsvc_cli

#pragma once
/// @file detail/json/depth.hpp
/// @brief A nesting check to run before building a DOM or pretty-printing:
/// `[[[[...` a million deep parses into hundreds of MB, and nlohmann's dump()
/// recurses once per level (a stack overflow).

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <studentsvc/detail/json/sax.hpp>

namespace studentsvc::detail {

/// Nesting depth at which the SDK stops treating a body as structured JSON.
/// The interface's answers nest at most 3 deep.
inline constexpr std::size_t max_json_depth = 64;

/// SAX handler that only counts depth and stops the parse once it passes the limit.
class JsonDepthProbe {
 public:
  using json = nlohmann::json;
  explicit JsonDepthProbe(std::size_t limit) noexcept : limit_(limit) {}

  bool null() noexcept { return true; }
  bool boolean(bool) noexcept { return true; }
  bool number_integer(json::number_integer_t) noexcept { return true; }
  bool number_unsigned(json::number_unsigned_t) noexcept { return true; }
  bool number_float(json::number_float_t, const json::string_t&) noexcept { return true; }
  bool string(json::string_t&) noexcept { return true; }
  bool binary(json::binary_t&) noexcept { return true; }
  bool start_object(std::size_t) noexcept { return enter(); }
  bool end_object() noexcept { return leave(); }
  bool start_array(std::size_t) noexcept { return enter(); }
  bool end_array() noexcept { return leave(); }
  bool key(json::string_t&) noexcept { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) noexcept { return false; }

  [[nodiscard]] bool too_deep() const noexcept { return too_deep_; }

 private:
  bool enter() noexcept {
    too_deep_ = ++depth_ > limit_;
    return !too_deep_;
  }
  bool leave() noexcept {
    --depth_;
    return true;
  }
  std::size_t limit_;
  std::size_t depth_ = 0;
  bool too_deep_ = false;
};

/// True when `text`'s arrays and objects nest deeper than `limit` (text that
/// is not JSON is not "too deep"). Stops reading at the first level too many,
/// and allocates nothing per level.
[[nodiscard]] inline bool json_nests_deeper_than(std::string_view text, std::size_t limit) {
  JsonDepthProbe probe(limit);
  (void)sax_parse_json(text, &probe);
  return probe.too_deep();
}

}  // namespace studentsvc::detail

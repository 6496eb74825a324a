#pragma once
/// @file detail/json/sax.hpp
/// @brief One entry point for the SDK's parses of JSON text (SAX, and the DOM
/// built on it): the JSON parser alone, without nlohmann's run-time choice of
/// input format, and one input type for all, so each TU compiles one lexer.

#include <optional>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace studentsvc::detail {

/// Feeds `text` to `sax` as strict JSON (no comments, nothing after the value);
/// false when the text is not JSON or the handler stopped the parse.
template <class Sax>
[[nodiscard]] bool sax_parse_json(std::string_view text, Sax* sax) {
#if NLOHMANN_JSON_VERSION_MAJOR == 3 && NLOHMANN_JSON_VERSION_MINOR == 11
  // nlohmann 3.11's json::sax_parse picks the format at run time, so every
  // caller also instantiates the CBOR, MessagePack, UBJSON and BSON readers
  // (measurably slower to compile); its JSON parser (nlohmann::detail, 3.11) does not.
  auto adapter = nlohmann::detail::input_adapter(text.data(), text.data() + text.size());
  return nlohmann::detail::parser<nlohmann::json, decltype(adapter)>(std::move(adapter), nullptr, true, false)
      .sax_parse(sax, true);
#else
  return nlohmann::json::sax_parse(text.data(), text.data() + text.size(), sax);
#endif
}

/// `text` parsed into a DOM as strict JSON; nullopt when it is not JSON.
/// Check the nesting first (json_nests_deeper_than): the DOM grows per level.
[[nodiscard]] inline std::optional<nlohmann::json> parse_json(std::string_view text) {
  nlohmann::json j;
#if NLOHMANN_JSON_VERSION_MAJOR == 3 && NLOHMANN_JSON_VERSION_MINOR == 11
  // json::parse would also compile its callback parser and, from a
  // std::string, a second lexer; the DOM builder alone over sax_parse_json does not.
  nlohmann::detail::json_sax_dom_parser<nlohmann::json> dom(j, false);
  if (!sax_parse_json(text, &dom)) return std::nullopt;
#else
  j = nlohmann::json::parse(text.data(), text.data() + text.size(), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
#endif
  return j;
}

}  // namespace studentsvc::detail

#pragma once
/// @file detail/json/sax.hpp
/// @brief One entry point for the SDK's SAX parses of JSON text: the JSON
/// parser alone, without nlohmann's run-time choice of input format.

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

}  // namespace studentsvc::detail

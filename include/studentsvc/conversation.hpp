#pragma once
/// @file conversation.hpp
/// @brief ConversationRequest and RawResponse for `/conversation`, whose method
/// and payloads the interface does not show: the SDK passes them through.

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc {

/// @brief One call to `{base_url}/conversation[/sub_path][?query]`.
struct ConversationRequest {
  std::string method = "GET";  ///< Any HTTP method token.
  /// Appended below `/conversation`; each segment is percent-encoded, "." and ".." are refused.
  std::string sub_path;
  /// Query parameters, percent-encoded, in this order.
  std::vector<std::pair<std::string, std::string>> query;
  std::string body;  ///< Sent as it is; empty: no body.
  /// `Content-Type` of the body; "application/json" when a body is given without one.
  std::string content_type;
  /// Retried on transient failures only when true: the SDK cannot know whether
  /// an unknown method is safe to repeat.
  bool idempotent = false;
  CallOptions call;  ///< Timeouts, body cap and retry policy for this call.
};

/// @brief A 2xx answer of `/conversation` as it came: status, headers, body.
struct RawResponse {
  int status = 0;    ///< The HTTP status (2xx).
  Headers headers;   ///< The response's header fields.
  std::string body;  ///< The body bytes, unparsed.

  /// @brief The body parsed as JSON; ErrorKind::decode when it is not JSON or
  /// nests deeper than 64 levels. Needs <studentsvc/json.hpp> (json_body()):
  /// a template, so that this header names nlohmann::json without including it.
  template <class Json = nlohmann::json>
  [[nodiscard]] Result<Json> json() const {
    return json_body(*this, std::type_identity<Json>{});  // found in json.hpp by argument-dependent lookup
  }
};

}  // namespace studentsvc

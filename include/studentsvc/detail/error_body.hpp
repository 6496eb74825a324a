#pragma once
/// @file detail/error_body.hpp
/// @brief decode_error_body: the service's JSON error bodies (WebApiInvalidModel,
/// SimpleMessageModel, AuthErrorBody) mapped to an ApiError.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <studentsvc/detail/json_depth.hpp>
#include <studentsvc/errors.hpp>

namespace studentsvc {
namespace detail {

[[nodiscard]] inline std::string string_member(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

[[nodiscard]] inline ModelState decode_model_state(const nlohmann::json& object) {
  ModelState state;
  if (!object.is_object()) return state;
  auto it = object.find("modelState");
  if (it == object.end() || !it->is_object()) return state;
  for (const auto& [name, messages] : it->items()) {
    auto& list = state[name];
    if (messages.is_array()) {
      for (const auto& m : messages) {
        if (m.is_string()) list.push_back(m.get<std::string>());
      }
    } else if (messages.is_string()) {
      list.push_back(messages.get<std::string>());
    }
  }
  return state;
}

/// The parsed body, or `discarded` when it is not JSON or nests past the limit:
/// the interface's error objects nest 3 deep, so a deeper body is kept as an
/// excerpt instead of being built into a DOM of millions of levels.
[[nodiscard]] inline nlohmann::json parse_error_body(std::string_view body) {
  if (json_nests_deeper_than(body, max_json_depth)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
}

/// True when `body` is the interface's SimpleMessageModel: a JSON object with a
/// string `message`. The student endpoints answer 401 and 404 with it.
[[nodiscard]] inline bool is_simple_message_body(std::string_view body) {
  const auto json = parse_error_body(body);
  if (!json.is_object()) return false;
  const auto it = json.find("message");
  return it != json.end() && it->is_string();
}

}  // namespace detail

/// @brief Maps a non-2xx status and its body to an ApiError.
///
/// The body is decoded as the interface's error objects when it is JSON; a body
/// that is not JSON (an HTML page from a proxy) still maps by status alone.
[[nodiscard]] inline ApiError decode_error_body(int status, std::string_view body) {
  ApiError e;
  e.status = status;
  e.retryable = is_retryable_status(status);
  switch (status) {
    case 400: e.kind = ErrorKind::bad_request; break;
    case 401: e.kind = ErrorKind::unauthorized; break;
    case 404: e.kind = ErrorKind::not_found; break;
    default: e.kind = ErrorKind::http_status; break;
  }
  const auto json = detail::parse_error_body(body);
  const bool decoded = json.is_object();
  if (decoded) {
    e.message = detail::string_member(json, "message");
    e.detail = detail::string_member(json, "detail");
    if (e.kind == ErrorKind::bad_request) e.model_state = detail::decode_model_state(json);
  }
  if (e.message.empty()) e.message = e.detail.empty() ? detail::default_status_message(status) : e.detail;
  if ((!decoded || e.kind == ErrorKind::http_status) && !body.empty()) e.body_excerpt = detail::excerpt(body);
  return e;
}

}  // namespace studentsvc

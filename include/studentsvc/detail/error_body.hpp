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
  // The interface's error objects nest 3 deep: a body nested past the limit is
  // kept as an excerpt instead of being built into a DOM of millions of levels.
  const auto json = detail::json_nests_deeper_than(body, detail::max_json_depth)
                        ? nlohmann::json(nlohmann::json::value_t::discarded)
                        : nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
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

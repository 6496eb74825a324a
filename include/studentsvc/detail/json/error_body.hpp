#pragma once
/// @file detail/json/error_body.hpp
/// @brief decode_error_body: the service's JSON error bodies (WebApiInvalidModel,
/// SimpleMessageModel, AuthErrorBody) mapped to an ApiError.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/detail/json/sax.hpp>
#include <studentsvc/errors.hpp>

namespace studentsvc {
namespace detail {

/// SAX handler for the interface's error objects, read in one pass with no
/// DOM: the top-level `message` and `detail` when they are strings, and
/// `modelState`'s entries (an array of strings, or one string). A key that
/// comes twice counts as its last value, as a DOM would keep it. Values are
/// built only at the fixed depths of those fields (1 to 3); anything deeper is
/// skipped by counting depth_, so its nesting costs no memory or stack.
class ErrorBodySax {
 public:
  using json = nlohmann::json;

  bool message_is_string = false;     ///< its `message` is a string (SimpleMessageModel)
  std::string message;                ///< `message`, when a string
  std::string detail;                 ///< `detail`, when a string (AuthErrorBody)
  ModelState model_state;             ///< `modelState` (WebApiInvalidModel)

  bool null() { return value(nullptr); }
  bool boolean(bool) { return value(nullptr); }
  bool number_integer(json::number_integer_t) { return value(nullptr); }
  bool number_unsigned(json::number_unsigned_t) { return value(nullptr); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(nullptr); }
  bool binary(json::binary_t&) { return value(nullptr); }
  bool string(json::string_t& text) { return value(&text); }
  bool start_object(std::size_t) {
    if (depth_ == 0) object_ = true;
    if (depth_ == 1 && member_ == Member::model_state) in_model_state_ = true;
    ++depth_;
    return true;
  }
  bool end_object() {
    if (--depth_ == 1) in_model_state_ = false;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 2 && in_model_state_) messages_ = entry_;
    ++depth_;
    return true;
  }
  bool end_array() {
    if (--depth_ == 2) messages_ = nullptr;
    return true;
  }
  bool key(json::string_t& name) {
    if (depth_ == 1) {
      member_ = name == "message"      ? Member::message
                : name == "detail"     ? Member::detail
                : name == "modelState" ? Member::model_state
                                       : Member::other;
      if (member_ == Member::message) {
        message.clear();
        message_is_string = false;
      } else if (member_ == Member::detail) {
        detail.clear();
      } else if (member_ == Member::model_state) {
        model_state.clear();
      }
    } else if (depth_ == 2 && in_model_state_) {
      entry_ = &model_state[std::move(name)];
      entry_->clear();
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
  /// True when the body is a JSON object (anything else holds none of the fields).
  [[nodiscard]] bool object() const noexcept { return object_; }

 private:
  enum class Member { other, message, detail, model_state };

  // A scalar (`text` when it is a string) at the current depth.
  bool value(json::string_t* text) {
    if (text == nullptr) return true;
    if (depth_ == 1 && member_ == Member::message) {
      message = std::move(*text);
      message_is_string = true;
    } else if (depth_ == 1 && member_ == Member::detail) {
      detail = std::move(*text);
    } else if (depth_ == 2 && in_model_state_) {
      entry_->push_back(std::move(*text));
    } else if (depth_ == 3 && messages_ != nullptr) {
      messages_->push_back(std::move(*text));
    }
    return true;
  }

  bool object_ = false;                            // the body is a JSON object
  std::size_t depth_ = 0;                          // containers open
  Member member_ = Member::other;                  // the top-level key whose value comes next
  bool in_model_state_ = false;                    // depth 2 is the modelState object
  std::vector<std::string>* entry_ = nullptr;      // the modelState entry whose value comes next
  std::vector<std::string>* messages_ = nullptr;   // depth 3 is that entry's array of messages
};

/// `body` read as the interface's error objects; nullopt when it is not a JSON
/// object. Any depth is read: nlohmann's SAX parser keeps one bit per open
/// level (no recursion) and ErrorBodySax builds nothing below depth 3, so a
/// deep unknown value anywhere is only counted through, and the documented
/// fields around it still count (a depth limit here lost them).
[[nodiscard]] inline std::optional<ErrorBodySax> read_error_body(std::string_view body) {
  ErrorBodySax sax;
  if (!sax_parse_json(body, &sax) || !sax.object()) return std::nullopt;
  return sax;
}

/// decode_error_body on a body already read (`read`: read_error_body(body)),
/// for a caller that needs more of the reading than the ApiError keeps.
[[nodiscard]] inline ApiError error_from_body(int status, std::string_view body, std::optional<ErrorBodySax> read) {
  ApiError e;
  e.status = status;
  e.retryable = is_retryable_status(status);
  e.kind = error_of_status(status).value_or(ErrorKind::http_status);
  if (read) {
    e.message = std::move(read->message);
    e.detail = std::move(read->detail);
    if (e.kind == ErrorKind::bad_request) e.model_state = std::move(read->model_state);
  }
  if (e.message.empty()) e.message = e.detail.empty() ? default_status_message(status) : e.detail;
  if ((!read || e.kind == ErrorKind::http_status) && !body.empty()) e.body_excerpt = excerpt(body);
  return e;
}

}  // namespace detail

/// @brief Maps a non-2xx status and its body to an ApiError.
///
/// The body is decoded as the interface's error objects when it is JSON; a body
/// that is not JSON (an HTML page from a proxy) still maps by status alone.
[[nodiscard]] inline ApiError decode_error_body(int status, std::string_view body) {
  return detail::error_from_body(status, body, detail::read_error_body(body));
}

}  // namespace studentsvc

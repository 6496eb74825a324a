// Fuzzes the decoding of an error response (status + body) into an ApiError,
// its one-line text, and the scrubbing of secrets out of it. The first two
// bytes pick the status; the next byte, how many of the following 8-byte
// pieces are "secrets"; the rest is the body. The decoded fields are also
// checked against a DOM reading of the same body (nlohmann's parse), so the
// SDK's one-pass SAX reader keeps a DOM's meaning: last key wins, and so on.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/detail/json/error_body.hpp>
#include <studentsvc/detail/call/redact.hpp>
#include <studentsvc/errors.hpp>

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool printable_one_line(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool contains(const std::string& text, const std::string& secret) { return text.find(secret) != std::string::npos; }

// The reference: the body as a DOM, read the way the interface's error objects are.
struct DomReading {
  bool object = false;
  std::string message, detail;
  studentsvc::ModelState model_state;
};

std::string dom_string(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

DomReading read_as_dom(std::string_view body) {
  DomReading r;
  // A container that opens 3 levels down holds nothing read below (at most an
  // entry's array element that is not a string): the parser drops it as it
  // comes, so a body of any depth gives a DOM at most 3 deep.
  const auto shallow = [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    using event_t = nlohmann::json::parse_event_t;
    return depth < 3 || (event != event_t::object_start && event != event_t::array_start);
  };
  const auto json = nlohmann::json::parse(body.begin(), body.end(), shallow, false);
  if (!json.is_object()) return r;
  r.object = true;
  r.message = dom_string(json, "message");
  r.detail = dom_string(json, "detail");
  const auto state = json.find("modelState");
  if (state == json.end() || !state->is_object()) return r;
  for (const auto& [name, messages] : state->items()) {
    auto& list = r.model_state[name];
    if (messages.is_string()) list.push_back(messages.get<std::string>());
    if (!messages.is_array()) continue;
    for (const auto& m : messages) {
      if (m.is_string()) list.push_back(m.get<std::string>());
    }
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const int status = 100 + (data[0] << 8 | data[1]) % 500;  // 100-599
  std::size_t secret_count = data[2] % 4;
  std::string_view rest(reinterpret_cast<const char*>(data) + 3, size - 3);
  std::vector<std::string> secrets;
  for (; secret_count > 0 && rest.size() >= 8; --secret_count) {
    std::string s(rest.substr(0, 8));
    rest.remove_prefix(8);
    // The marker's brackets are excluded, so a replacement can never form a
    // new occurrence across its edges (real keys and JWTs hold no brackets);
    // so is any piece of the marker itself ("REDACTED"), which the replacement
    // necessarily still contains.
    if (s.find_first_of("[]") == std::string::npos &&
        studentsvc::detail::redacted_marker.find(s) == std::string_view::npos) {
      secrets.push_back(std::move(s));
    }
  }
  const std::string_view body = rest;

  studentsvc::ApiError e = studentsvc::decode_error_body(status, body);
  check(e.status == status);
  const DomReading dom = read_as_dom(body);
  if (dom.object) {
    check(e.detail == dom.detail);
    check(e.message == (dom.message.empty() ? (dom.detail.empty() ? e.message : dom.detail) : dom.message));
    check(status != 400 || e.model_state == dom.model_state);
  } else {
    check(e.detail.empty() && e.model_state.empty());
  }
  switch (status) {
    case 400: check(e.kind == studentsvc::ErrorKind::bad_request); break;
    case 401: check(e.kind == studentsvc::ErrorKind::unauthorized); break;
    case 404: check(e.kind == studentsvc::ErrorKind::not_found); break;
    default: check(e.kind == studentsvc::ErrorKind::http_status); break;
  }
  check(e.retryable == studentsvc::is_retryable_status(status));
  check(!e.message.empty());
  check(e.body_excerpt.size() <= studentsvc::detail::body_excerpt_limit + 3);
  check(printable_one_line(e.body_excerpt));
  if (e.kind != studentsvc::ErrorKind::bad_request) check(e.model_state.empty());
  const std::string line = to_string(e);
  check(printable_one_line(line));

  // Scrubbing: afterwards no secret is left in any text of the error.
  std::sort(secrets.begin(), secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  studentsvc::detail::scrub(e, secrets);
  for (const auto& s : secrets) {
    check(!contains(e.message, s) && !contains(e.detail, s) && !contains(e.body_excerpt, s));
    for (const auto& [name, messages] : e.model_state) {
      check(!contains(name, s));
      for (const auto& m : messages) check(!contains(m, s));
    }
    // (to_string(e) is not checked: it only joins these fields with the SDK's
    // own words, "(retryable)" and the like, which an arbitrary secret may spell.)
  }
  return 0;
}

#pragma once
/// @file detail/call/attempt_events.hpp
/// @brief The AttemptEvents of one request, built the same way by every path
/// (single, batch, asynchronous): what is fixed per request, and start/end.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>

namespace studentsvc::detail {

/// Bytes of header fields as they go on the wire: `name: value` and CRLF each.
[[nodiscard]] inline std::size_t header_bytes(const Headers& headers) noexcept {
  std::size_t n = 0;
  for (const auto& [name, value] : headers) n += name.size() + 2 + value.size() + 2;
  return n;
}

/// Why the attempt after `previous` is made.
[[nodiscard]] inline RetryReason retry_reason_after(const Result<HttpResponse>& previous) noexcept {
  if (!previous) return RetryReason::transport;
  return previous->status == 401 ? RetryReason::credentials : RetryReason::status;
}

/// The first value among `names` (in that order), or empty; at most 128
/// bytes of it (an id, not a place for a hostile server to park a megabyte).
template <class Names>
[[nodiscard]] std::string_view find_request_id(const Headers& headers, const Names& names) noexcept {
  constexpr std::size_t max_request_id_bytes = 128;
  for (const auto& name : names) {
    if (const auto v = headers.find(name); v && !v->empty()) return v->substr(0, max_request_id_bytes);
  }
  return {};
}

/// The request id a Client puts in a failed call's ApiError: from the last
/// answer, looked up in the client's ClientOptions::request_id_headers (empty
/// when no answer came). Taken before the outcome is mapped (and moved from).
[[nodiscard]] inline std::string request_id_of(const Result<HttpResponse>& outcome,
                                               const std::vector<std::string>& names) {
  if (!outcome) return {};
  return std::string(find_request_id(outcome->headers, names));
}

/// What stays the same across the attempts of one request. `sink` null: no hooks.
struct AttemptContext {
  Instrumentation* sink = nullptr;
  std::string_view operation;
  std::string_view path_template;
  std::string_view method;
  std::size_t bytes_sent = 0;
  const std::vector<std::string>* request_id_headers = nullptr;
  /// Attempts made before this run (the one retry after a 401 continues the count).
  int attempts_before = 0;
  RetryReason first_reason = RetryReason::none;  ///< Why the run's first attempt is made.
};

/// The route template of an Endpoint; a conversation with a sub-path is
/// "/conversation/{sub_path}" (the sub-path may hold an identifier).
[[nodiscard]] constexpr std::string_view path_template_of(Endpoint endpoint, bool has_sub_path) noexcept {
  switch (endpoint) {
    case Endpoint::get_student: return "/students/v2/students/{perm}";
    case Endpoint::current_student: return "/students/v2/students/current";
    case Endpoint::conversation: return has_sub_path ? "/conversation/{sub_path}" : "/conversation";
  }
  return "";
}

[[nodiscard]] constexpr std::string_view operation_of(Endpoint endpoint) noexcept {
  switch (endpoint) {
    case Endpoint::get_student: return "get_student";
    case Endpoint::current_student: return "current_student";
    case Endpoint::conversation: return "conversation";
  }
  return "call";
}

[[nodiscard]] inline AttemptContext attempt_context(Instrumentation* sink, Endpoint endpoint, bool has_sub_path,
                                                    const HttpRequest& request,
                                                    const std::vector<std::string>& request_id_headers) {
  if (sink == nullptr) return {};
  return AttemptContext{sink,
                        operation_of(endpoint),
                        path_template_of(endpoint, has_sub_path),
                        request.method,
                        header_bytes(request.headers) + request.body.size(),
                        &request_id_headers};
}

/// Hands `event` to the sink; an exception from it is dropped (documented).
inline void notify(Instrumentation& sink, const AttemptEvent& event) noexcept {
  try {
    sink.on_attempt(event);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a hook must never fail a call
  }
}

/// The fields every event of one attempt shares.
[[nodiscard]] inline AttemptEvent attempt_event(const AttemptContext& c, AttemptPhase phase, int attempt,
                                                RetryReason reason) noexcept {
  AttemptEvent e;
  e.phase = phase;
  e.operation = c.operation;
  e.path_template = c.path_template;
  e.method = c.method;
  e.attempt = attempt;
  e.retry_reason = reason;
  e.bytes_sent = c.bytes_sent;
  return e;
}

inline void attempt_started(const AttemptContext& c, int attempt, RetryReason reason) noexcept {
  if (c.sink == nullptr) return;
  notify(*c.sink, attempt_event(c, AttemptPhase::start, attempt, reason));
}

inline void attempt_ended(const AttemptContext& c, int attempt, RetryReason reason,
                          const Result<HttpResponse>& outcome, std::chrono::steady_clock::duration elapsed) noexcept {
  if (c.sink == nullptr) return;
  AttemptEvent e = attempt_event(c, AttemptPhase::end, attempt, reason);
  e.latency = std::chrono::duration_cast<std::chrono::microseconds>(elapsed);
  if (outcome) {
    e.status = outcome->status;
    e.error = error_of_status(outcome->status);
    e.bytes_received = header_bytes(outcome->headers) + outcome->body.size();
    if (c.request_id_headers != nullptr) e.request_id = find_request_id(outcome->headers, *c.request_id_headers);
  } else {
    e.error = outcome.error().kind;
  }
  notify(*c.sink, e);
}

}  // namespace studentsvc::detail

#pragma once
/// @file instrumentation.hpp
/// @brief Instrumentation hooks: a structured event at the start and the end of
/// every attempt of every call (single, batch, asynchronous), for metrics and
/// tracing, that never carries a secret or a student's data.

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc {

/// @brief The response headers that carry a server's request id, in the order
/// they are looked for (ClientOptions::request_id_headers starts as these). The
/// interface names none; these are the common ones of gateways and frameworks.
inline constexpr std::array<std::string_view, 4> default_request_id_headers = {"x-request-id", "request-id",
                                                                               "x-amzn-requestid", "x-correlation-id"};

/// @brief Whether an AttemptEvent opens or closes an attempt.
enum class AttemptPhase { start, end };

/// @brief Why an attempt is a retry (AttemptEvent::retry_reason).
enum class RetryReason {
  none,       ///< The first attempt.
  status,     ///< The previous attempt was answered 408, 429, 500, 502, 503 or 504.
  transport,  ///< The previous attempt failed in the transport (connect, reset, timeout, ...).
  credentials,  ///< The previous attempt was answered 401 and the CredentialProvider was asked afresh.
};

/// @brief The lower-case name of a RetryReason ("none", "status", ...).
[[nodiscard]] constexpr std::string_view to_string(RetryReason reason) noexcept {
  switch (reason) {
    case RetryReason::none: return "none";
    case RetryReason::status: return "status";
    case RetryReason::transport: return "transport";
    case RetryReason::credentials: return "credentials";
  }
  return "none";
}

/// @brief One attempt of one call, as a hook sees it.
///
/// The complete list of what an event carries; by construction it holds no
/// credential, no JWT, no perm and no student field, only the fields below:
/// the path is the route's **template**, the request id is the server's, and
/// every string is one of the SDK's own constants or that id.
/// The string_views are valid only during the hook call: copy what you keep.
struct AttemptEvent {
  AttemptPhase phase = AttemptPhase::start;  ///< start or end.
  /// The operation: "get_student", "current_student" or "conversation" (a
  /// get_students lookup is a "get_student").
  std::string_view operation;
  /// The route's template: "/students/v2/students/{perm}",
  /// "/students/v2/students/current", "/conversation" or "/conversation/{sub_path}".
  std::string_view path_template;
  std::string_view method;  ///< "GET", "POST", ...
  int attempt = 1;          ///< 1 for the first attempt, 2 for the first retry, ...
  RetryReason retry_reason = RetryReason::none;  ///< Why this attempt was made.
  /// End only: the HTTP status, 0 when none came back.
  int status = 0;
  /// End only: how the attempt failed (a transport error, or the kind its status
  /// maps to: 401 unauthorized, 404 not_found, ...); std::nullopt for a 2xx.
  std::optional<ErrorKind> error;
  /// End only: from the attempt's start to its end.
  std::chrono::microseconds latency{0};
  /// Bytes of the request: header fields (names, values, ": " and CRLF) and body.
  std::size_t bytes_sent = 0;
  /// End only: bytes of the response received: header fields and body.
  std::size_t bytes_received = 0;
  /// End only: the server's request id (ClientOptions::request_id_headers), or empty.
  std::string_view request_id;
};

/// @brief The state of a Client's circuit breaker (ClientOptions::circuit_breaker).
enum class CircuitState {
  closed,     ///< Calls go through; consecutive failures are counted.
  open,       ///< Every call fails at once with ErrorKind::circuit_open until the cool-down ends.
  half_open,  ///< The cool-down ended: one probe request is let through.
};

/// @brief The lower-case name of a CircuitState ("closed", "open", "half_open").
[[nodiscard]] constexpr std::string_view to_string(CircuitState state) noexcept {
  switch (state) {
    case CircuitState::closed: return "closed";
    case CircuitState::open: return "open";
    case CircuitState::half_open: return "half_open";
  }
  return "closed";
}

/// @brief A circuit breaker's transition, as a hook sees it (no secret, no student data).
struct CircuitEvent {
  CircuitState state = CircuitState::closed;  ///< The state the breaker moved to.
  /// open: the failures in a row that opened it (1 when a probe failed); else 0.
  int consecutive_failures = 0;
  /// open: the HTTP status of the last failure (500, 502, 503, 504), 0 for a transport error.
  int status = 0;
  /// open: how long calls now fail at once.
  std::chrono::milliseconds cool_down{0};
};

/// @brief Receives an AttemptEvent at the start and the end of every attempt.
///
/// Set ClientOptions::instrumentation. Called on the thread that runs the
/// attempt (the caller's for synchronous calls, the transport's event thread
/// for asynchronous ones), from many threads at once: be thread-safe and
/// quick, and do not throw (an exception is caught and dropped).
///
/// @sa AttemptEvent, ClientOptions::instrumentation
class Instrumentation {
 public:
  Instrumentation() = default;
  Instrumentation(const Instrumentation&) = delete;
  Instrumentation& operator=(const Instrumentation&) = delete;
  virtual ~Instrumentation() = default;

  /// @brief One event; see AttemptEvent for what it holds and never holds.
  virtual void on_attempt(const AttemptEvent& event) = 0;

  /// @brief A transition of the client's circuit breaker (open, half_open,
  /// closed); called on the thread whose call caused it. Default: ignored.
  /// @sa ClientOptions::circuit_breaker, CircuitEvent
  virtual void on_circuit(const CircuitEvent& event) { (void)event; }
};

}  // namespace studentsvc

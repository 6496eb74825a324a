#pragma once
/// @file errors.hpp
/// @brief ErrorKind, ApiError and the Result alias. Decoding the service's
/// error bodies (JSON) lives in detail/json/error_body.hpp, so naming Result costs no JSON parser.

#include <cstddef>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/fwd.hpp>

namespace studentsvc {

/// @brief What went wrong, one value per row of the error table.
enum class ErrorKind {
  invalid_argument,  ///< Bad input caught before anything was sent (status 0).
  transport,         ///< DNS, connect, TLS, timeout, reset, body over the cap (status 0).
  bad_request,       ///< 400: WebApiInvalidModel, with `model_state`.
  unauthorized,      ///< 401: AuthErrorBody `detail` or SimpleMessageModel `message`.
  not_found,         ///< 404: SimpleMessageModel.
  http_status,       ///< Any other non-2xx status.
  decode,            ///< A 2xx whose body is not the documented JSON.
  /// Stopped before it finished (status 0, never retryable): its `std::stop_token`
  /// was stopped, its client or transport was destroyed, or a batch stopped
  /// early (fail-fast) and `message` names the error that stopped it.
  cancelled,
  /// Refused at once, without touching the network, because the client's
  /// circuit breaker is open (ClientOptions::circuit_breaker): the service
  /// failed too often in a row. Status 0, retryable; `message` says when the
  /// next try is allowed.
  circuit_open,
};

/// @brief For ErrorKind::transport: the step that failed, when the transport
/// says (CurlTransport does; a custom Transport may leave it `unspecified`).
/// Lets a batch tell a failure every further request would repeat (the name
/// does not resolve, TLS is refused) from one that may pass next time.
enum class TransportFailure : unsigned char {
  unspecified,      ///< Not said, or not a transport error.
  name_resolution,  ///< The server's or the proxy's host name did not resolve.
  connect,          ///< The TCP connection was refused or unreachable.
  tls_handshake,    ///< The TLS handshake failed (no common protocol or cipher, ...).
  tls_certificate,  ///< The server's or the proxy's certificate failed verification.
  timeout,          ///< The connect or whole-request timeout passed.
  connection_lost,  ///< Reset, closed mid-body, or no response at all.
  proxy,            ///< The proxy refused the tunnel or failed.
  body_too_large,   ///< The response body, or its headers and trailers, exceeded the configured cap.
};

/// @brief The stable lower-case name of a kind ("not_found", ...).
[[nodiscard]] constexpr std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_argument: return "invalid_argument";
    case ErrorKind::transport: return "transport";
    case ErrorKind::bad_request: return "bad_request";
    case ErrorKind::unauthorized: return "unauthorized";
    case ErrorKind::not_found: return "not_found";
    case ErrorKind::http_status: return "http_status";
    case ErrorKind::decode: return "decode";
    case ErrorKind::cancelled: return "cancelled";
    case ErrorKind::circuit_open: return "circuit_open";
  }
  return "unknown";
}

/// @brief The stable lower-case name of a transport failure ("name_resolution", ...).
[[nodiscard]] constexpr std::string_view to_string(TransportFailure failure) noexcept {
  switch (failure) {
    case TransportFailure::unspecified: return "unspecified";
    case TransportFailure::name_resolution: return "name_resolution";
    case TransportFailure::connect: return "connect";
    case TransportFailure::tls_handshake: return "tls_handshake";
    case TransportFailure::tls_certificate: return "tls_certificate";
    case TransportFailure::timeout: return "timeout";
    case TransportFailure::connection_lost: return "connection_lost";
    case TransportFailure::proxy: return "proxy";
    case TransportFailure::body_too_large: return "body_too_large";
  }
  return "unknown";
}

/// @brief Per-name arrays of messages, as in the interface's `modelState`.
using ModelState = std::map<std::string, std::vector<std::string>, std::less<>>;

/// @brief The error value of every call. Never holds a credential or a JWT.
struct ApiError {
  ErrorKind kind = ErrorKind::transport;  ///< Which row of the error table.
  /// HTTP status; 0 when nothing came back (invalid_argument, transport).
  int status = 0;
  /// One human-readable sentence: the server's `message`, or the SDK's reason.
  std::string message;
  /// AuthErrorBody `detail` (401 for a missing or incorrect API key).
  std::string detail;
  /// WebApiInvalidModel `modelState` (400).
  ModelState model_state;
  /// The start of a body that did not decode (an HTML page from a proxy, ...).
  std::string body_excerpt;
  /// True when trying again may succeed (transport failures, 408/429/5xx).
  bool retryable = false;
  /// Server-requested wait from `Retry-After`, in milliseconds; -1 when absent.
  long long retry_after_ms = -1;
  /// How many attempts were made before giving up (0 when nothing was sent).
  int attempts = 0;
  /// For ErrorKind::transport: which step failed, when the transport says.
  TransportFailure transport_failure = TransportFailure::unspecified;
  /// The server's request id for the failed answer (ClientOptions::request_id_headers),
  /// or empty: quote it in a support ticket to the registrar.
  std::string request_id;

  friend bool operator==(const ApiError&, const ApiError&) = default;
};

// Result<T> = std::expected<T, ApiError> is defined in fwd.hpp.

/// @brief Shorthand for `std::unexpected(ApiError{...})` with kind and message.
/// A transport error or circuit_open is marked retryable (set `retryable = false` on one that
/// would fail the same way again); other kinds, `cancelled` among them, are not.
[[nodiscard]] inline std::unexpected<ApiError> make_error(ErrorKind kind, std::string message,
                                                          int status = 0) {
  ApiError e;
  e.kind = kind;
  e.status = status;
  e.message = std::move(message);
  e.retryable = kind == ErrorKind::transport || kind == ErrorKind::circuit_open;
  return std::unexpected(std::move(e));
}

/// @brief True for the statuses the retry policy treats as transient.
[[nodiscard]] constexpr bool is_retryable_status(int status) noexcept {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
         status == 504;
}

namespace detail {

/// The ErrorKind a status maps to on its own (the body can refine it later).
[[nodiscard]] constexpr std::optional<ErrorKind> error_of_status(int status) noexcept {
  if (status >= 200 && status < 300) return std::nullopt;
  switch (status) {
    case 400: return ErrorKind::bad_request;
    case 401: return ErrorKind::unauthorized;
    case 404: return ErrorKind::not_found;
    default: return ErrorKind::http_status;
  }
}

/// Longest part of an undecodable body kept in `ApiError::body_excerpt`.
inline constexpr std::size_t body_excerpt_limit = 256;

/// Cuts `body` to the excerpt limit without splitting a UTF-8 sequence, and
/// replaces control characters so the excerpt prints on one line.
[[nodiscard]] inline std::string excerpt(std::string_view body) {
  std::size_t n = body.size() <= body_excerpt_limit ? body.size() : body_excerpt_limit;
  while (n > 0 && n < body.size() && (static_cast<unsigned char>(body[n]) & 0xC0U) == 0x80U) --n;
  std::string out(body.substr(0, n));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  if (n < body.size()) out += "...";
  return out;
}

[[nodiscard]] inline std::string default_status_message(int status) {
  if (status >= 300 && status < 400) {  // libcurl never follows one: see CurlTransport
    return "redirect (HTTP " + std::to_string(status) + ") not followed: the SDK never follows redirects";
  }
  switch (status) {
    case 400: return "bad request";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not found";
    case 408: return "request timeout";
    case 429: return "too many requests";
    case 500: return "internal server error";
    case 502: return "bad gateway";
    case 503: return "service unavailable";
    case 504: return "gateway timeout";
    default: return "HTTP status " + std::to_string(status);
  }
}

}  // namespace detail

/// @brief One readable line: `not_found (404): Student not found`.
///
/// Holds only what the server or the SDK said; credentials never reach an ApiError.
[[nodiscard]] inline std::string to_string(const ApiError& error) {
  std::string out(to_string(error.kind));
  if (error.status != 0) out += " (" + std::to_string(error.status) + ")";
  out += ": ";
  out += error.message;
  if (!error.detail.empty() && error.detail != error.message) out += " [" + error.detail + "]";
  for (const auto& [name, messages] : error.model_state) {
    for (const auto& m : messages) out += "; " + name + ": " + m;
  }
  if (error.retryable) out += " (retryable)";
  if (!error.request_id.empty()) out += " [request id " + error.request_id + "]";
  // Server text may hold CR/LF or other control characters: keep it one line.
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

}  // namespace studentsvc

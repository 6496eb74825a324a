#pragma once
/// @file detail/batch/fail_fast.hpp
/// @brief Fail-fast for batches: does one lookup's final error show that every
/// further request of the batch would fail the same way? Pure functions.

#include <string>
#include <string_view>

#include <studentsvc/errors.hpp>

namespace studentsvc::detail {

/// Why a batch stops sending, or `none` when the error is the lookup's own.
enum class FailFastReason : unsigned char {
  none,                ///< Per-lookup (a missing student, 400, a timeout, a 5xx, ...): keep going.
  unauthorized,        ///< 401: the API key or credential is refused for every request.
  tls,                 ///< The TLS handshake or the certificate check failed.
  name_resolution,     ///< The service's or the proxy's host name does not resolve.
  endpoint_not_found,  ///< A 404 that is not the service's: the base URL or its path prefix is wrong.
  proxy_refused,       ///< The proxy refused the tunnel (403, 407, ...): its policy, the same for every request.
};

/// The batch-wide cause shown by `error`, a lookup's final error (after its
/// retries: a DNS or handshake failure is retried for one lookup, a resolver
/// hiccup or a reset passes, and is final only once it repeated). Reads
/// `kind`, `status`, `transport_failure` and, for a proxy, `retryable`: a
/// transport that leaves transport_failure `unspecified` never triggers the
/// TLS, DNS or proxy cases (a custom Transport is not second-guessed from its
/// message text). Neither `cancelled` nor `invalid_argument` triggers: the
/// first is the batch's own stop, the second is about one perm.
[[nodiscard]] constexpr FailFastReason fail_fast_reason(const ApiError& error) noexcept {
  if (error.kind == ErrorKind::unauthorized || error.status == 401) {
    return FailFastReason::unauthorized;
  }
  // A student endpoint's 404 without the service's body (the service's own is not_found).
  if (error.kind == ErrorKind::http_status && error.status == 404) return FailFastReason::endpoint_not_found;
  if (error.kind != ErrorKind::transport) return FailFastReason::none;
  switch (error.transport_failure) {
    case TransportFailure::tls_handshake:
    case TransportFailure::tls_certificate: return FailFastReason::tls;
    case TransportFailure::name_resolution: return FailFastReason::name_resolution;
    // Refused by its policy, not retried; one unreachable, or a 5xx, 408 or 429, may pass.
    case TransportFailure::proxy: return error.retryable ? FailFastReason::none : FailFastReason::proxy_refused;
    case TransportFailure::unspecified:
    case TransportFailure::connect:  // a service restarting refuses for a moment
    case TransportFailure::timeout:
    case TransportFailure::connection_lost:
    case TransportFailure::body_too_large: return FailFastReason::none;  // one record too large
  }
  return FailFastReason::none;
}

/// True when `error` shows every further request of the batch would fail the same way.
[[nodiscard]] constexpr bool fails_every_request(const ApiError& error) noexcept {
  return fail_fast_reason(error) != FailFastReason::none;
}

/// The stable name of a reason ("unauthorized", "tls", "name_resolution",
/// "endpoint_not_found", "proxy_refused", "none").
[[nodiscard]] constexpr std::string_view to_string(FailFastReason reason) noexcept {
  switch (reason) {
    case FailFastReason::none: return "none";
    case FailFastReason::unauthorized: return "unauthorized";
    case FailFastReason::tls: return "tls";
    case FailFastReason::name_resolution: return "name_resolution";
    case FailFastReason::endpoint_not_found: return "endpoint_not_found";
    case FailFastReason::proxy_refused: return "proxy_refused";
  }
  return "unknown";
}

/// The error of each lookup a batch did not send after `trigger` (an error for
/// which fails_every_request() holds): kind `cancelled`, status 0, not
/// retryable, nothing sent, and a message that names the triggering error.
[[nodiscard]] inline ApiError skipped_after(const ApiError& trigger) {
  ApiError e;
  e.kind = ErrorKind::cancelled;
  e.retryable = false;
  e.message = "not sent: the batch stopped early (fail-fast) after " + studentsvc::to_string(trigger);
  return e;
}

}  // namespace studentsvc::detail

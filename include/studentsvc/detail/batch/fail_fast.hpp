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
  none,             ///< Per-lookup (404, 400, a timeout, a 5xx, ...): keep going.
  unauthorized,     ///< 401: the API key or credential is refused for every request.
  tls,              ///< The TLS handshake or the certificate check failed.
  name_resolution,  ///< The service's or the proxy's host name does not resolve.
};

/// The batch-wide cause shown by `error`, a lookup's final error (after its
/// retries). Reads `kind`, `status` and `transport_failure` only: a transport
/// that leaves transport_failure `unspecified` never triggers the TLS or DNS
/// cases (a custom Transport is not second-guessed from its message text).
/// Neither `cancelled` nor `invalid_argument` triggers: the first is the
/// batch's own stop, the second is about one perm.
[[nodiscard]] constexpr FailFastReason fail_fast_reason(const ApiError& error) noexcept {
  if (error.kind == ErrorKind::unauthorized || error.status == 401) {
    return FailFastReason::unauthorized;
  }
  if (error.kind != ErrorKind::transport) return FailFastReason::none;
  switch (error.transport_failure) {
    case TransportFailure::tls_handshake:
    case TransportFailure::tls_certificate: return FailFastReason::tls;
    case TransportFailure::name_resolution: return FailFastReason::name_resolution;
    case TransportFailure::unspecified:
    case TransportFailure::connect:  // a service restarting refuses for a moment
    case TransportFailure::timeout:
    case TransportFailure::connection_lost:
    case TransportFailure::proxy:
    case TransportFailure::body_too_large: return FailFastReason::none;
  }
  return FailFastReason::none;
}

/// True when `error` shows every further request of the batch would fail the same way.
[[nodiscard]] constexpr bool fails_every_request(const ApiError& error) noexcept {
  return fail_fast_reason(error) != FailFastReason::none;
}

/// The stable name of a reason ("unauthorized", "tls", "name_resolution", "none").
[[nodiscard]] constexpr std::string_view to_string(FailFastReason reason) noexcept {
  switch (reason) {
    case FailFastReason::none: return "none";
    case FailFastReason::unauthorized: return "unauthorized";
    case FailFastReason::tls: return "tls";
    case FailFastReason::name_resolution: return "name_resolution";
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

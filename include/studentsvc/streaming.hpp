#pragma once
/// @file streaming.hpp
/// @brief Settings and results of Client::for_each_student, the streamed
/// batch: StreamOptions, BatchProgress and BatchSummary.

#include <cstddef>
#include <functional>
#include <optional>

#include <studentsvc/detail/batch/fail_fast.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc {

/// @brief Where a streamed batch is, for a progress callback.
struct BatchProgress {
  std::size_t done = 0;              ///< Results delivered so far (cancelled ones included).
  std::optional<std::size_t> total;  ///< The number of perms, when the input range knows it.
  std::size_t failures = 0;          ///< Delivered results that are errors (cancelled ones included).
};

/// @brief How a streamed batch ended.
struct BatchSummary {
  std::size_t sent = 0;                ///< Lookups started.
  std::size_t not_sent = 0;            ///< Perms reported `cancelled` without being sent.
  std::optional<ApiError> stopped_by;  ///< The fail-fast error that stopped the batch, if one did.
  bool stop_requested = false;         ///< The caller's stop request ended it early.
};

/// @brief Settings of one Client::for_each_student batch.
struct StreamOptions {
  /// Lookups in flight at once (default 16; 0 counts as 1).
  std::size_t max_concurrency = 16;
  /// Stop sending once an answer shows every further lookup would fail the
  /// same way (stops_batch()); the perms not sent complete as `cancelled`,
  /// naming that error.
  bool fail_fast = true;
  /// Applied to every lookup (JWT, API version, timeouts, body cap, retry policy).
  CallOptions call;
  /// Called after each result, on the calling thread (may be empty).
  std::function<void(const BatchProgress&)> on_progress;
  /// A stop request ends the batch: lookups in flight are cancelled, the
  /// rest are not sent; each completes as ErrorKind::cancelled.
  StopToken stop;
};

/// @brief True when `error`, a lookup's final error (after its retries),
/// shows that every further lookup of a batch would fail the same way: what
/// `fail_fast` stops a batch on. A 401; a TLS handshake or certificate
/// failure (an https:// URL to a plain-HTTP port too); a host or proxy name
/// that does not resolve; a proxy that refuses the tunnel; a 404 that is not
/// the service's (`http_status` 404: a wrong base URL path). Never a missing
/// student, a timeout, a refused connect, a 5xx or a cancelled lookup; nor a
/// custom Transport's error that leaves `transport_failure` unspecified.
[[nodiscard]] constexpr bool stops_batch(const ApiError& error) noexcept { return detail::fails_every_request(error); }

}  // namespace studentsvc

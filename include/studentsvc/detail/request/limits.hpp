#pragma once
/// @file detail/request/limits.hpp
/// @brief A request's limits: the ClientOptions' own, checked once when a
/// Client is built (validate_limits), and each call's timeouts, caps and
/// retry policy applied to its HttpRequest (apply_limits).

#include <chrono>
#include <cmath>
#include <string>

#include <studentsvc/detail/auth/readable_file.hpp>
#include <studentsvc/detail/request/tls_options.hpp>
#include <studentsvc/detail/retry/retry_run.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc::detail {

/// Whether the ClientOptions' own limits still need checking: a Client checks
/// them once, when it is built; a direct caller of a build_* function has not.
enum class ClientLimits { check, checked };

/// The client-level settings a Client checks once, when built: a zero or
/// negative timeout is refused rather than sent (libcurl reads 0 as "no
/// timeout", so a bad value would silently remove the bound), and a CA bundle
/// that cannot be read is named now rather than as a TLS error on the first
/// call, and so are the other TLS settings' mistakes (detail/request/tls_options.hpp).
[[nodiscard]] inline Result<void> validate_limits(const ClientOptions& client) {
  constexpr std::chrono::milliseconds zero{0};
  if (!client.ca_bundle.empty()) {
    if (auto why = unreadable_file_reason(client.ca_bundle)) {
      return make_error(ErrorKind::invalid_argument, "ca_bundle: the file " + *why);
    }
  }
  if (auto tls = validate_tls(client.client_certificate, client.ca_pem, client.ca_bundle, client.pinned_public_key,
                              client.base_url, tls_option_names);
      !tls) {
    return tls;
  }
  if (client.connect_timeout <= zero) return make_error(ErrorKind::invalid_argument, "connect_timeout must be positive");
  if (client.timeout <= zero) return make_error(ErrorKind::invalid_argument, "timeout must be positive");
  if (client.max_response_header_bytes == 0) {
    return make_error(ErrorKind::invalid_argument, "max_response_header_bytes must be positive");
  }
  const auto& rate = client.rate_limit;
  if (!std::isfinite(rate.requests_per_second) || rate.requests_per_second < 0) {
    return make_error(ErrorKind::invalid_argument, "rate_limit.requests_per_second must be finite and not negative");
  }
  if (rate.burst < 1) return make_error(ErrorKind::invalid_argument, "rate_limit.burst must be at least 1");
  if (const auto& budget = client.retry_budget) {
    if (!std::isfinite(budget->ratio) || budget->ratio < 0) {
      return make_error(ErrorKind::invalid_argument, "retry_budget.ratio must be finite and not negative");
    }
    if (budget->min_retries < 0) return make_error(ErrorKind::invalid_argument, "retry_budget.min_retries must not be negative");
    if (budget->window < std::chrono::milliseconds{10}) {
      return make_error(ErrorKind::invalid_argument, "retry_budget.window must be at least 10 ms");
    }
  }
  return validate_policy(client.retry);
}

/// Timeouts and the body and header caps: the call's value when set, else the
/// client's. A value from CallOptions is checked here, on every call; one from
/// ClientOptions only when `limits` says it was not checked before.
[[nodiscard]] inline Result<void> apply_limits(HttpRequest& request, const ClientOptions& client,
                                               const CallOptions& call, ClientLimits limits) {
  constexpr std::chrono::milliseconds zero{0};
  const bool client_unchecked = limits == ClientLimits::check;
  request.connect_timeout = call.connect_timeout.value_or(client.connect_timeout);
  if ((call.connect_timeout || client_unchecked) && request.connect_timeout <= zero) {
    return make_error(ErrorKind::invalid_argument, "connect_timeout must be positive");
  }
  request.timeout = call.timeout.value_or(client.timeout);
  if ((call.timeout || client_unchecked) && request.timeout <= zero) {
    return make_error(ErrorKind::invalid_argument, "timeout must be positive");
  }
  request.max_response_bytes = call.max_response_bytes.value_or(client.max_response_bytes);
  request.max_response_header_bytes = call.max_response_header_bytes.value_or(client.max_response_header_bytes);
  if ((call.max_response_header_bytes || client_unchecked) && request.max_response_header_bytes == 0) {
    return make_error(ErrorKind::invalid_argument, "max_response_header_bytes must be positive");
  }
  if (call.retry) return validate_policy(*call.retry);
  return client_unchecked ? validate_policy(client.retry) : Result<void>{};
}

}  // namespace studentsvc::detail

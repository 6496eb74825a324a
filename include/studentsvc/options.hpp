#pragma once
/// @file options.hpp
/// @brief ClientOptions, CallOptions, RetryPolicy and ClientOptions::from_env().

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <studentsvc/auth.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/tls.hpp>

namespace studentsvc {

/// @brief Retries for idempotent calls: transport failures and 408/429/500/502/503/504.
///
/// The wait before retry n (n = 1, 2, ...) is uniform in
/// [0, min(max_backoff, initial_backoff * 2^(n-1))] ("full jitter"), or the
/// server's `Retry-After` (seconds or HTTP-date) capped at max_retry_after.
/// No retry starts once max_total_time would be passed, and a running attempt's
/// timeout is cut to what is left of it.
///
/// Edge values, one meaning each: max_attempts of 0 or less is one attempt;
/// milliseconds::max() in any duration means "no bound" (no overflow);
/// a negative backoff or cap counts as zero; max_total_time of zero or less is
/// refused with ErrorKind::invalid_argument before anything is sent.
struct RetryPolicy {
  int max_attempts = 3;  ///< Attempts in all, the first included; 1 (or 0 or less) turns retries off.
  std::chrono::milliseconds initial_backoff{200};  ///< Upper bound of the first wait.
  std::chrono::milliseconds max_backoff{5'000};     ///< Cap on any computed wait.
  std::chrono::milliseconds max_retry_after{30'000};  ///< Cap on a server's `Retry-After`.
  std::chrono::milliseconds max_total_time{60'000};   ///< Bound on all attempts and waits.
  /// Seeds the jitter generator (for reproducible tests); unset: std::random_device.
  std::optional<std::uint64_t> jitter_seed;  ///< Fixed seed, or std::nullopt for std::random_device.

  /// @brief A policy that makes exactly one attempt.
  [[nodiscard]] static RetryPolicy none() {
    RetryPolicy p;
    p.max_attempts = 1;
    return p;
  }
};

/// @brief Client-wide settings. A CallOptions value overrides the matching field per call.
///
/// A value type: copy it, change it, build a Client from it.
/// @brief A client-wide rate limit: a token bucket of `requests_per_second`
/// on average and up to `burst` at once, shared by every thread, asynchronous
/// call and batch of one Client (and its copies). Every attempt, retries
/// included, takes a token; a caller waits for its token (an asynchronous call
/// on a timer, no thread asleep). Off by default.
struct RateLimitOptions {
  /// Requests per second on average; 0: no limit (the default). Must be
  /// finite and not negative.
  double requests_per_second = 0;
  /// Requests that may go at once after a quiet spell; at least 1.
  int burst = 1;
};

/// @brief A client-wide retry budget (Finagle's RetryBudget; gRPC's and
/// Envoy's throttles are alike): in any `window`, at most `min_retries` plus
/// `ratio` times the first attempts made in it may be retries, so a failing
/// service sees at most `ratio` extra load. A retry over budget is not sent:
/// the call ends with its last attempt's outcome.
struct RetryBudgetOptions {
  double ratio = 0.2;                        ///< Retries per first attempt; not negative.
  int min_retries = 10;                      ///< Retries always allowed per window; not negative.
  std::chrono::milliseconds window{10'000};  ///< The sliding window; at least 10 ms.
};

/// @brief A client-wide circuit breaker (ClientOptions::circuit_breaker):
/// after `failure_threshold` attempts in a row that say the service is down
/// (a transport error, 500, 502, 503 or 504; never 400, 401, 404, 408, 429 or
/// a body that does not decode), every call of the Client fails at once with
/// ErrorKind::circuit_open for `cool_down`; then one probe request goes
/// through: a success closes the breaker, a failure opens it again.
struct CircuitBreakerOptions {
  int failure_threshold = 5;                    ///< Failures in a row that open it; at least 1.
  std::chrono::milliseconds cool_down{30'000};  ///< How long it stays open; positive.
};

/// @brief Hedged lookups (ClientOptions::hedging): when an attempt of
/// get_student or current_student has no answer after `delay`, a second copy
/// is sent; the first answer wins and the other transfer is cancelled.
struct HedgingOptions {
  std::chrono::milliseconds delay{100};  ///< Wait before the hedge; positive.
};

/// @brief Client-wide settings. A CallOptions value overrides the matching field per call.
///
/// A value type: copy it, change it, build a Client from it.
struct ClientOptions {
  /// `https://host[:port][/prefix]`; calls append `/students/v2/students/...`
  /// and `/conversation` to it (trailing slashes are dropped). An
  /// internationalised host goes in its ASCII (punycode, `xn--`) form: a
  /// non-ASCII host is invalid_argument.
  std::string base_url;
  /// Credentials and which headers carry them (x-api-key, svc-api-key, Basic).
  AuthPolicy auth;
  /// `svc-api-version` on the student endpoints.
  std::string api_version = "2.0";
  /// PEM file of trusted CAs; empty: the system's store. Verification is always on.
  std::string ca_bundle;
  /// The trusted CAs as PEM text (`-----BEGIN CERTIFICATE-----` blocks), in
  /// place of the system's store, as ca_bundle is for a file; not both.
  std::string ca_pem{};
  /// A certificate and key to present to a gateway that requires mutual TLS;
  /// none by default. Both files must be readable PEM (checked when the Client is built).
  std::optional<ClientCertificate> client_certificate{};
  /// The server's public key must be one of these, on top of the usual
  /// verification: `sha256//<base64 SHA-256 of its SubjectPublicKeyInfo>`,
  /// several separated by `;` (curl's form); empty: no pin. A mismatch fails
  /// the call as ErrorKind::transport, not retried.
  std::string pinned_public_key{};
  /// Explicit proxy URL; empty: libcurl's environment (`https_proxy`, `no_proxy`, ...).
  std::string proxy;
  /// The perms this Client accepts before sending: exactly 7 ASCII digits
  /// (the interface's form, the default), or 7 ASCII letters or digits for a
  /// deployment that issues alphanumeric perms. Every call form checks it.
  PermSyntax perm_syntax = PermSyntax::digits;
  /// Allows `http://` base URLs, and only to 127.0.0.0/8, ::1 or localhost.
  bool allow_insecure_loopback = false;
  /// TCP and TLS connect; must be positive (0 would mean "no timeout" to libcurl).
  std::chrono::milliseconds connect_timeout = default_connect_timeout;
  /// The whole exchange; must be positive.
  std::chrono::milliseconds timeout = default_request_timeout;
  std::size_t max_response_bytes = default_max_response_bytes;  ///< Larger bodies fail with ErrorKind::transport.
  /// Cap on the response's header fields, trailers and 1xx interim responses
  /// together; more fails with ErrorKind::transport. Must be positive.
  std::size_t max_response_header_bytes = default_max_response_header_bytes;
  RetryPolicy retry;  ///< Retries of idempotent calls.
  Logger logger;      ///< Logging hook; off by default; headers redacted.
  /// Sends a W3C `traceparent` (Trace Context) with every request: the call's
  /// CallOptions::traceparent, else a fresh one. Off by default: the interface
  /// does not mention tracing, so nothing is sent that it did not ask for.
  bool send_traceparent = false;
  /// Receives an AttemptEvent at the start and end of every attempt (metrics,
  /// tracing); null: none. Events never carry a secret or a student's data.
  std::shared_ptr<Instrumentation> instrumentation;
  /// Response headers that carry the server's request id, first match wins:
  /// it goes into ApiError::request_id and AttemptEvent::request_id, so a
  /// support ticket can quote it. The interface names none; these are common.
  std::vector<std::string> request_id_headers{default_request_id_headers.begin(), default_request_id_headers.end()};
  /// A client-wide rate limit (off by default): every attempt of every call,
  /// batch and asynchronous call of this Client takes a token.
  RateLimitOptions rate_limit;
  /// A client-wide retry budget (none by default).
  std::optional<RetryBudgetOptions> retry_budget;
  /// A client-wide circuit breaker (off when empty): see CircuitBreakerOptions.
  std::optional<CircuitBreakerOptions> circuit_breaker;
  /// Concurrent get_student / current_student calls that would send the very
  /// same request (same URL, credentials, JWT and headers) share one request
  /// in flight. Off by default.
  bool coalesce_lookups = false;
  /// Hedged lookups (off when empty): see HedgingOptions.
  std::optional<HedgingOptions> hedging;
  /// The HTTP stack; null: a CurlTransport built from the fields above.
  std::shared_ptr<Transport> transport;

  /// @brief Reads the `STUDENTSVC_*` environment (see the README's table).
  ///
  /// `STUDENTSVC_BASE_URL` and `STUDENTSVC_API_KEY` are required;
  /// `STUDENTSVC_SVC_API_KEY` defaults to the API key ("off" turns the header
  /// off); `STUDENTSVC_NETWORK_ID` and `STUDENTSVC_PASSWORD` go together;
  /// `STUDENTSVC_ALLOW_INSECURE_LOOPBACK=1` is the loopback opt-in;
  /// `STUDENTSVC_LOG=debug|info|warning|...` turns on stderr_logger();
  /// `STUDENTSVC_PERM_SYNTAX=digits|alphanumeric` sets perm_syntax.
  /// TLS: `STUDENTSVC_CA_PEM` (PEM text), `STUDENTSVC_CLIENT_CERT` and
  /// `STUDENTSVC_CLIENT_KEY` (together), `STUDENTSVC_CLIENT_KEY_PASSWORD`,
  /// `STUDENTSVC_PINNED_PUBLIC_KEY`.
  ///
  /// Mistakes are caught here, before any request, as ErrorKind::invalid_argument
  /// naming the variable: a base URL the Client would refuse (scheme, host,
  /// port, http:// without the opt-in), a CA bundle that cannot be read, a
  /// client certificate or key that cannot be read or is not PEM, one without
  /// the other, CA text that is not PEM, a pin not in `sha256//` form, a
  /// value that is not one of the documented ones.
  [[nodiscard]] static Result<ClientOptions> from_env();

  /// @brief Like from_env(), with the lookup supplied (for tests and config files).
  [[nodiscard]] static Result<ClientOptions> from_env(
      const std::function<std::optional<std::string>(std::string_view)>& lookup);
};

/// @brief Per-call settings; each set field beats the ClientOptions one.
struct CallOptions {
  /// `svc-user-jwt` for get_student: only the token's own student is returned.
  /// Set but blank (empty, or only spaces and tabs), with a space or tab first
  /// or last, or over max_header_value_bytes: invalid_argument, nothing sent
  /// (never dropped, which would widen the lookup to any student).
  std::optional<std::string> user_jwt;
  std::optional<std::string> api_version;                    ///< Overrides ClientOptions::api_version.
  std::optional<std::chrono::milliseconds> connect_timeout;  ///< Overrides ClientOptions::connect_timeout.
  std::optional<std::chrono::milliseconds> timeout;          ///< Overrides ClientOptions::timeout.
  std::optional<std::size_t> max_response_bytes;             ///< Overrides ClientOptions::max_response_bytes.
  std::optional<std::size_t> max_response_header_bytes;      ///< Overrides ClientOptions::max_response_header_bytes.
  std::optional<RetryPolicy> retry;                          ///< Overrides ClientOptions::retry.
  /// The caller's W3C `traceparent` (`00-<trace-id>-<parent-id>-<flags>`), so
  /// the call joins the caller's trace; sent even when
  /// ClientOptions::send_traceparent is off. Another form is invalid_argument.
  std::optional<std::string> traceparent;
};

}  // namespace studentsvc

#if STUDENTSVC_HEADER_ONLY
#include <studentsvc/detail/request/options-inl.hpp>
#endif

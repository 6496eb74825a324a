#pragma once
/// @file retry.hpp
/// @brief Retries: which failures retry, the full-jitter backoff, `Retry-After`
/// (delay-seconds or any HTTP-date form), and send_with_retry, the call
/// pipeline's retry loop around one Transport::send.
/// @sa detail/retry/retry_run.hpp, detail/call/pipeline.hpp

#include <utility>

#include <studentsvc/detail/call/pipeline.hpp>
#include <studentsvc/detail/retry/retry_run.hpp>
#include <studentsvc/detail/retry/clock.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc {

/// @brief Sends `request`, retrying per `policy` when `idempotent`, on the
/// clock and sleep of `clock` (simulated time in tests).
///
/// Returns the last outcome: a response (any status) or a transport error.
/// Each attempt's timeout is cut to what is left of max_total_time, so a
/// stalled attempt ends with the bound. `attempts` receives the number of
/// attempts made (0, and invalid_argument, when max_total_time is not positive).
[[nodiscard]] inline Result<HttpResponse> send_with_retry(Transport& transport, const HttpRequest& request,
                                                          const RetryPolicy& policy, bool idempotent,
                                                          JitterSource& jitter, const Logger& logger,
                                                          const detail::RetryClock& clock, int& attempts) {
  static const std::vector<std::string> no_request_id_headers;
  detail::CallContext context;
  context.runtime = detail::CallRuntime{&transport, &clock, true};
  context.logger = &logger;
  context.request_id_headers = &no_request_id_headers;
  context.jitter = &jitter;
  attempts = 0;
  return detail::run_call<HttpResponse>(
      std::move(context),
      detail::CallSpec{"retry", Endpoint::get_student, false, idempotent, policy, false, false,
                       [&request]() -> Result<HttpRequest> { return request; }},
      [](Result<HttpResponse>&& outcome) { return std::move(outcome); }, &attempts);
}

/// @brief Sends `request`, retrying per `policy` when `idempotent`, on the real clock.
///
/// Returns the last outcome: a response (any status) or a transport error.
/// Each attempt's timeout is cut to what is left of max_total_time, so a
/// stalled attempt ends with the bound. `attempts` receives the number of
/// attempts made (0, and invalid_argument, when max_total_time is not positive).
[[nodiscard]] inline Result<HttpResponse> send_with_retry(Transport& transport, const HttpRequest& request,
                                                          const RetryPolicy& policy, bool idempotent,
                                                          JitterSource& jitter, const Logger& logger,
                                                          int& attempts) {
  return send_with_retry(transport, request, policy, idempotent, jitter, logger, detail::RetryClock{}, attempts);
}

}  // namespace studentsvc

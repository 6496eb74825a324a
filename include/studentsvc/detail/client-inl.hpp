#pragma once
/// @file detail/client-inl.hpp
/// @brief Client's bodies: included by client.hpp in header-only mode,
/// compiled once by src/client.cpp otherwise.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/async_call.hpp>
#include <studentsvc/detail/attempt_events.hpp>
#include <studentsvc/detail/default_transport.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/detail/redact.hpp>
#include <studentsvc/detail/url.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/requests.hpp>
#include <studentsvc/responses.hpp>
#include <studentsvc/retry.hpp>
#include <studentsvc/streaming.hpp>

namespace studentsvc {
namespace detail {

/// `user:password@` parts of the base URL and of the proxy URL (the option,
/// else the environment libcurl reads), and the client key's password: a
/// transport error may quote them.
[[nodiscard]] inline std::vector<std::string> client_url_secrets(const ClientOptions& options) {
  std::vector<std::string> out = url_secrets(options.base_url);
  add_secrets(out, client_certificate_secrets(options.client_certificate));
  if (!options.proxy.empty()) {
    add_secrets(out, url_secrets(options.proxy));
    return out;
  }
  for (const char* name : {"https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY"}) {
    // Only read, never written, by the SDK.
    if (const char* v = std::getenv(name); v != nullptr) {  // NOLINT(concurrency-mt-unsafe)
      add_secrets(out, url_secrets(v));
    }
  }
  return out;
}

/// What a Client shares between its copies: its options, checked once here.
struct ClientState {
  explicit ClientState(ClientOptions o)
      : options(std::move(o)),
        base(parse_base_url(options.base_url, options.allow_insecure_loopback)),
        limits(validate_limits(options)),
        transport(options.transport ? options.transport : make_default_transport(options)),
        jitter(options.retry.jitter_seed) {}

  ClientOptions options;
  Result<BaseUrl> base;
  Result<void> limits;  ///< The options' timeouts, header cap and retry policy, checked once here.
  std::shared_ptr<Transport> transport;
  JitterSource jitter;
  std::vector<std::string> url_secrets = client_url_secrets(options);
  AsyncCallRegistry calls;  ///< The asynchronous calls in flight.
  /// The client-wide rate limit, retry budget and Retry-After pause; null
  /// (nothing to pay) when neither a rate limit nor a retry budget is set.
  std::shared_ptr<ClientThrottle> throttle =
      options.rate_limit.requests_per_second > 0 || options.retry_budget
          ? std::make_shared<ClientThrottle>(options.rate_limit, options.retry_budget)
          : nullptr;

  /// The base URL, or why no call can be made.
  [[nodiscard]] Result<const BaseUrl*> ready() const {
    if (!base) return std::unexpected(base.error());
    if (!limits) return std::unexpected(limits.error());
    if (!transport) {
      return make_error(ErrorKind::invalid_argument,
                        "no transport configured (built without curl: set ClientOptions::transport)");
    }
    return &*base;
  }

  /// Everything to scrub from text that came back for a request with these headers.
  [[nodiscard]] std::vector<std::string> secrets(const Headers& headers) const {
    auto out = request_secrets(headers, options.auth);
    add_secrets(out, url_secrets);
    return out;
  }
};

/// Held by every Client handle (not by the calls): when the last handle goes,
/// the client's asynchronous calls are cancelled and waited for.
struct ClientCloser {
  explicit ClientCloser(std::shared_ptr<ClientState> s) : state(std::move(s)) {}
  ClientCloser(const ClientCloser&) = delete;
  ClientCloser& operator=(const ClientCloser&) = delete;
  ~ClientCloser() { state->calls.close(); }
  std::shared_ptr<ClientState> state;
};

/// What an asynchronous call of `state` needs; the call keeps `state` alive.
[[nodiscard]] inline AsyncCallContext async_context(const std::shared_ptr<ClientState>& state) {
  AsyncCallContext c;
  c.owner = state;
  c.transport = state->transport.get();
  c.options = &state->options;
  c.jitter = &state->jitter;
  c.registry = &state->calls;
  c.throttle = state->throttle.get();
  ClientState* raw = state.get();
  c.secrets = [raw](const Headers& headers) { return raw->secrets(headers); };
  return c;
}

/// Starts an asynchronous call of `state`: its base URL first (checked once,
/// at construction), then `make_build(base)` builds each attempt's request.
template <class T, class MakeBuild, class Map>
void start_async(const std::shared_ptr<ClientState>& state, typename AsyncCall<T>::Spec spec, MakeBuild make_build,
                 Map map, Completion<T> done, const StopToken& stop) {
  auto base = state->ready();
  if (!base) {
    done(std::unexpected(std::move(base.error())));
    return;
  }
  AsyncCall<T>::start(async_context(state), std::move(spec), make_build(*base), std::move(map), std::move(done),
                      stop);
}

/// The future form of an asynchronous call, on its completion form.
template <class T, class Start>
[[nodiscard]] std::future<Result<T>> async_future(Start&& start) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  start([promise](Result<T> result) { promise->set_value(std::move(result)); });
  return future;
}

[[nodiscard]] inline std::string_view endpoint_name(Endpoint e) noexcept {
  // In Endpoint's order.
  constexpr std::array<std::string_view, 3> names{"get_student", "current_student", "conversation"};
  const auto i = static_cast<std::size_t>(e);
  return i < names.size() ? names[i] : std::string_view("call");
}

/// Whether a 401 may be an old credential: a CredentialProvider may have a
/// newer one, so it is asked afresh and an idempotent call tries once more.
[[nodiscard]] inline bool may_refresh_credentials(const ClientState& state, const Result<HttpResponse>& outcome,
                                                  bool idempotent) noexcept {
  return idempotent && state.options.auth.provider && outcome && outcome->status == 401;
}

/// Build → send → map, shared by the three calls. `build` makes the request
/// (again after a 401, with fresh credentials). Logs endpoint, status,
/// attempts and time only: never the URL (it holds the perm), headers or body.
/// The request's credentials are scrubbed from a returned ApiError and from
/// the outcome log line, in case a server or proxy echoes them back.
template <class Build, class Map>
[[nodiscard]] auto send_and_map(ClientState& state, Build&& build, Endpoint endpoint, bool has_sub_path,
                                bool idempotent, const CallOptions& call, Map&& map)
    -> decltype(map(std::declval<Result<HttpResponse>&&>())) {
  const Logger& logger = state.options.logger;
  Result<HttpRequest> request = build();
  if (!request) {
    logger.log(LogLevel::warning, std::string(endpoint_name(endpoint)) + ": not sent: " + request.error().message);
    return std::unexpected(std::move(request.error()));
  }
  if (logger.enabled(LogLevel::trace)) {
    logger.log(LogLevel::trace, std::string(endpoint_name(endpoint)) + ": " + request->method +
                                    " headers: " + redacted_headers(request->headers));
  }
  const RetryPolicy& policy = call.retry ? *call.retry : state.options.retry;
  const auto start = std::chrono::steady_clock::now();
  int attempts = 0;
  auto events = attempt_context(state.options.instrumentation.get(), endpoint, has_sub_path, *request,
                                state.options.request_id_headers);
  auto outcome = send_with_retry(*state.transport, *request, policy, idempotent, state.jitter, logger, RetryClock{},
                                 attempts, events, state.throttle.get());
  auto secrets = state.secrets(request->headers);
  if (may_refresh_credentials(state, outcome, idempotent)) {
    state.options.auth.provider->invalidate();
    if (auto again = build(); again) {
      logger.log(LogLevel::info, std::string(endpoint_name(endpoint)) + ": 401, trying once more with fresh credentials");
      events = attempt_context(state.options.instrumentation.get(), endpoint, has_sub_path, *again,
                               state.options.request_id_headers);
      events.attempts_before = attempts;
      events.first_reason = RetryReason::credentials;
      int more = 0;
      outcome = send_with_retry(*state.transport, *again, RetryPolicy::none(), true, state.jitter, logger,
                                RetryClock{}, more, events, state.throttle.get());
      attempts += more;
      add_secrets(secrets, state.secrets(again->headers));
    }
  }
  if (logger.enabled(LogLevel::debug)) {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    std::string line = std::string(endpoint_name(endpoint)) + ": " +
                       (outcome ? "status " + std::to_string(outcome->status)
                                : "transport error: " + outcome.error().message) +
                       " after " + std::to_string(attempts) + " attempt(s), " + std::to_string(ms) + " ms";
    scrub(line, secrets);
    logger.log(LogLevel::debug, line);
  }
  std::string request_id = request_id_of(outcome, state.options.request_id_headers);
  auto result = map(std::move(outcome));
  if (!result) {
    result.error().attempts = attempts;
    result.error().request_id = std::move(request_id);
    // Built only on failure: a successful call carries no text from the server to scrub.
    scrub(result.error(), secrets);
  }
  return result;
}

}  // namespace detail

STUDENTSVC_INLINE Client::Client(ClientOptions options)
    : state_(std::make_shared<detail::ClientState>(std::move(options))),
      closer_(std::make_shared<detail::ClientCloser>(state_)) {}

STUDENTSVC_INLINE Result<Client> Client::create(ClientOptions options) {
  Client client(std::move(options));
  if (!client.state_->base) return std::unexpected(client.state_->base.error());
  if (!client.state_->limits) return std::unexpected(client.state_->limits.error());
  if (!client.state_->transport) return make_error(ErrorKind::invalid_argument, "no transport configured");
  return client;
}

STUDENTSVC_INLINE Result<StudentExtended> Client::get_student(std::string_view perm, const CallOptions& call) const {
  auto base = state_->ready();
  if (!base) return std::unexpected(std::move(base.error()));
  const auto build = [&] {
    return detail::build_get_student(**base, state_->options, perm, call, detail::ClientLimits::checked);
  };
  return detail::send_and_map(*state_, build, Endpoint::get_student, false, true, call,
                              [perm](Result<HttpResponse>&& outcome) { return map_get_student_response(outcome, perm); });
}

STUDENTSVC_INLINE std::vector<Result<StudentExtended>> Client::get_students(std::span<const std::string> perms,
                                                                            const BatchOptions& batch) const {
  // The streamed batch, collected in input order: one engine for every batch.
  std::vector<Result<StudentExtended>> results(perms.size());
  if (perms.empty()) return results;
  StreamOptions stream;
  stream.max_concurrency = batch.max_concurrency;
  stream.fail_fast = batch.fail_fast;
  stream.call = batch.call;
  stream.stop = batch.stop;
  const Logger& logger = state_->options.logger;
  const auto start = std::chrono::steady_clock::now();
  std::size_t failed = 0;
  const auto summary = for_each_student(
      perms,
      [&](std::size_t index, std::string_view, Result<StudentExtended> result) {
        if (!result) ++failed;
        results[index] = std::move(result);
      },
      stream);
  if (summary.stopped_by) {
    logger.log(LogLevel::warning, "get_students: stopped sending after " + to_string(*summary.stopped_by) + "; " +
                                      std::to_string(summary.not_sent) + " lookup(s) not sent");
  }
  if (logger.enabled(LogLevel::debug)) {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    logger.log(LogLevel::debug, "get_students: " + std::to_string(summary.sent) + " sent, " + std::to_string(failed) +
                                    " failed, " + std::to_string(ms) + " ms");
  }
  return results;
}

STUDENTSVC_INLINE Result<StudentExtended> Client::current_student(std::string_view user_jwt,
                                                                  const CallOptions& call) const {
  auto base = state_->ready();
  if (!base) return std::unexpected(std::move(base.error()));
  const auto build = [&] {
    return detail::build_student_request(**base, state_->options, Endpoint::current_student,
                                         std::string(current_student_path), user_jwt, call,
                                         detail::ClientLimits::checked);
  };
  return detail::send_and_map(*state_, build, Endpoint::current_student, false, true, call,
                              [](Result<HttpResponse>&& outcome) {
                                return map_student_response(outcome, Endpoint::current_student);
                              });
}

STUDENTSVC_INLINE Result<RawResponse> Client::conversation(const ConversationRequest& request) const {
  auto base = state_->ready();
  if (!base) return std::unexpected(std::move(base.error()));
  const auto build = [&] {
    return detail::build_conversation(**base, state_->options, request, detail::ClientLimits::checked);
  };
  return detail::send_and_map(
      *state_, build, Endpoint::conversation, !request.sub_path.empty(), request.idempotent, request.call,
      [](Result<HttpResponse>&& outcome) { return map_conversation_response(std::move(outcome)); });
}

STUDENTSVC_INLINE void Client::get_student_async(std::string_view perm, Completion<StudentExtended> done,
                                                  const CallOptions& call, StopToken stop) const {
  const RetryPolicy& policy = call.retry ? *call.retry : state_->options.retry;
  auto build = [state = state_.get(), perm = std::string(perm), call](const auto& base) {
    return [state, base, perm, call] {
      return detail::build_get_student(*base, state->options, perm, call, detail::ClientLimits::checked);
    };
  };
  auto map = [perm = std::string(perm)](Result<HttpResponse>&& outcome) {
    return map_get_student_response(outcome, perm);
  };
  detail::start_async<StudentExtended>(state_, {Endpoint::get_student, false, true, policy}, std::move(build),
                                       std::move(map), std::move(done), stop);
}

STUDENTSVC_INLINE std::future<Result<StudentExtended>> Client::get_student_async(std::string_view perm,
                                                                                 const CallOptions& call,
                                                                                 StopToken stop) const {
  return detail::async_future<StudentExtended>(
      [&](Completion<StudentExtended> done) { get_student_async(perm, std::move(done), call, stop); });
}

STUDENTSVC_INLINE void Client::current_student_async(std::string_view user_jwt, Completion<StudentExtended> done,
                                                      const CallOptions& call, StopToken stop) const {
  const RetryPolicy& policy = call.retry ? *call.retry : state_->options.retry;
  auto build = [state = state_.get(), jwt = std::string(user_jwt), call](const auto& base) {
    return [state, base, jwt, call] {
      return detail::build_student_request(*base, state->options, Endpoint::current_student,
                                           std::string(current_student_path), jwt, call, detail::ClientLimits::checked);
    };
  };
  auto map = [](Result<HttpResponse>&& outcome) { return map_student_response(outcome, Endpoint::current_student); };
  detail::start_async<StudentExtended>(state_, {Endpoint::current_student, false, true, policy}, std::move(build),
                                       std::move(map), std::move(done), stop);
}

STUDENTSVC_INLINE std::future<Result<StudentExtended>> Client::current_student_async(std::string_view user_jwt,
                                                                                     const CallOptions& call,
                                                                                     StopToken stop) const {
  return detail::async_future<StudentExtended>(
      [&](Completion<StudentExtended> done) { current_student_async(user_jwt, std::move(done), call, stop); });
}

STUDENTSVC_INLINE void Client::conversation_async(const ConversationRequest& request, Completion<RawResponse> done,
                                                   StopToken stop) const {
  const RetryPolicy& policy = request.call.retry ? *request.call.retry : state_->options.retry;
  auto build = [state = state_.get(), request](const auto& base) {
    return [state, base, request] {
      return detail::build_conversation(*base, state->options, request, detail::ClientLimits::checked);
    };
  };
  auto map = [](Result<HttpResponse>&& outcome) { return map_conversation_response(std::move(outcome)); };
  detail::start_async<RawResponse>(state_, {Endpoint::conversation, !request.sub_path.empty(), request.idempotent, policy},
                                   std::move(build), std::move(map), std::move(done), stop);
}

STUDENTSVC_INLINE std::future<Result<RawResponse>> Client::conversation_async(const ConversationRequest& request,
                                                                              StopToken stop) const {
  return detail::async_future<RawResponse>(
      [&](Completion<RawResponse> done) { conversation_async(request, std::move(done), stop); });
}

STUDENTSVC_INLINE const ClientOptions& Client::options() const noexcept { return state_->options; }

STUDENTSVC_INLINE const std::shared_ptr<Transport>& Client::transport() const noexcept { return state_->transport; }

}  // namespace studentsvc

#pragma once
/// @file detail/call/client-inl.hpp
/// @brief Client's bodies: included by client.hpp in header-only mode,
/// compiled once by <studentsvc/src.hpp> otherwise.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/call/attempt_events.hpp>
#include <studentsvc/detail/call/circuit_breaker.hpp>
#include <studentsvc/detail/call/coalescer.hpp>
#include <studentsvc/detail/call/pipeline.hpp>
#include <studentsvc/detail/call/registry.hpp>
#include <studentsvc/detail/call/wiped_copy.hpp>
#include <studentsvc/detail/call/default_transport.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/detail/call/redact.hpp>
#include <studentsvc/detail/request/build.hpp>
#include <studentsvc/detail/request/limits.hpp>
#include <studentsvc/detail/request/student_headers.hpp>
#include <studentsvc/detail/request/url.hpp>
#include <studentsvc/detail/response/map.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/instrumentation.hpp>
// Not for the calls (they use detail/response/): with the Client's bodies in
// header-only mode, RawResponse::json() and to_json work wherever a Client does.
#include <studentsvc/json.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/streaming.hpp>

namespace studentsvc {
namespace detail {

/// `user:password@` parts of the base URL and of the proxy URL (the option,
/// else the environment libcurl reads), and the client key's password: a
/// transport error may quote them.
[[nodiscard]] inline SecretList client_url_secrets(const ClientOptions& options) {
  SecretList out = url_secrets(options.base_url);
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

/// The options' timeouts, header cap, retry policy, breaker and hedging, checked once.
[[nodiscard]] inline Result<void> check_client_options(const ClientOptions& options) {
  if (auto limits = validate_limits(options); !limits) return limits;
  return validate_resilience(options);
}

/// What a Client shares between its copies: its options, checked once here.
struct ClientState {
  explicit ClientState(ClientOptions o)
      : options(std::move(o)),
        base(parse_base_url(options.base_url, options.allow_insecure_loopback)),
        limits(check_client_options(options)),
        transport(options.transport ? options.transport : make_default_transport(options)),
        jitter(options.retry.jitter_seed) {}

  ClientOptions options;
  Result<BaseUrl> base;
  Result<void> limits;  ///< The options' timeouts, header cap and retry policy, checked once here.
  std::shared_ptr<Transport> transport;
  JitterSource jitter;
  SecretList url_secrets = client_url_secrets(options);
  /// The student endpoints' headers, built once (none with a CredentialProvider).
  std::optional<StudentHeaders> student_headers = prebuild_student_headers(options);
  CallRegistry calls;  ///< The asynchronous calls in flight.
  /// The client-wide rate limit, retry budget and Retry-After pause; null
  /// (nothing to pay) when neither a rate limit nor a retry budget is set.
  std::shared_ptr<ClientThrottle> throttle =
      options.rate_limit.requests_per_second > 0 || options.retry_budget
          ? std::make_shared<ClientThrottle>(options.rate_limit, options.retry_budget)
          : nullptr;
  /// The circuit breaker shared by every copy and form; null when off.
  std::unique_ptr<CircuitBreaker> breaker =
      options.circuit_breaker ? std::make_unique<CircuitBreaker>(*options.circuit_breaker) : nullptr;
  /// Identical lookups in flight (ClientOptions::coalesce_lookups, and a batch's own).
  Coalescer coalescer;

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
  [[nodiscard]] SecretList secrets(const Headers& headers) const {
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

/// The retry policy of a call: the call's own, else the client's.
[[nodiscard]] inline const RetryPolicy& policy_for(const ClientState& state, const CallOptions& call) noexcept {
  return call.retry ? *call.retry : state.options.retry;
}

/// The name of a call in log lines: its operation, and " (async)" for the asynchronous forms.
[[nodiscard]] inline std::string call_name(Endpoint endpoint, bool async) {
  std::string name(operation_of(endpoint));
  if (async) name += " (async)";
  return name;
}

/// get_student: what the call is and how its request is built (again after a 401).
[[nodiscard]] inline CallSpec get_student_spec(const ClientState& state, const BaseUrl& base, std::string_view perm,
                                               const CallOptions& call, bool async) {
  return {call_name(Endpoint::get_student, async), Endpoint::get_student, false, true, policy_for(state, call),
          state.options.coalesce_lookups, state.options.hedging.has_value(),
          [&state, &base, perm = std::string(perm), call = WipedCopy<CallOptions>(call)] {
            return build_get_student(base, state.options, perm, call.value, ClientLimits::checked,
                                     state.student_headers ? &*state.student_headers : nullptr);
          }};
}

/// get_student's answer, checked to be the student asked for.
[[nodiscard]] inline MapOutcome<StudentExtended> get_student_map(std::string_view perm) {
  return [perm = std::string(perm)](Result<HttpResponse>&& outcome) { return map_get_student_outcome(outcome, perm); };
}

[[nodiscard]] inline CallSpec current_student_spec(const ClientState& state, const BaseUrl& base,
                                                   std::string_view user_jwt, const CallOptions& call, bool async) {
  return {call_name(Endpoint::current_student, async), Endpoint::current_student, false, true, policy_for(state, call),
          state.options.coalesce_lookups, state.options.hedging.has_value(),
          [&state, &base, jwt = Secret(user_jwt), call = WipedCopy<CallOptions>(call)] {
            return build_student_request(base, state.options, Endpoint::current_student,
                                         std::string(current_student_endpoint_path), jwt.reveal(), call.value,
                                         ClientLimits::checked,
                                         state.student_headers ? &*state.student_headers : nullptr);
          }};
}

[[nodiscard]] inline MapOutcome<StudentExtended> current_student_map() {
  return [](Result<HttpResponse>&& outcome) { return map_student_outcome(outcome, Endpoint::current_student); };
}

[[nodiscard]] inline CallSpec conversation_spec(const ClientState& state, const BaseUrl& base,
                                                const ConversationRequest& request, bool async) {
  return {call_name(Endpoint::conversation, async), Endpoint::conversation, !request.sub_path.empty(),
          request.idempotent, policy_for(state, request.call), false, false,
          [&state, &base, request = WipedCopy<ConversationRequest>(request)] {
            return build_conversation(base, state.options, request.value, ClientLimits::checked);
          }};
}

[[nodiscard]] inline MapOutcome<RawResponse> conversation_map() {
  return [](Result<HttpResponse>&& outcome) { return map_conversation_outcome(std::move(outcome)); };
}

/// The pipeline's view of `state`. Blocking: the caller's thread sends and
/// sleeps. Asynchronous: the transport's event thread; the call keeps `state`
/// alive and is counted in the client's registry.
[[nodiscard]] inline CallContext call_context(const std::shared_ptr<ClientState>& state, bool async) {
  static const RetryClock real_clock;
  CallContext c;
  ClientState* raw = state.get();
  c.runtime = CallRuntime{raw->transport.get(), &real_clock, !async};
  c.owner = state;  // blocking too: a shared request it starts may outlive the call
  if (async) c.registry = &raw->calls;
  c.logger = &raw->options.logger;
  c.sink = raw->options.instrumentation.get();
  c.provider = raw->options.auth.provider.get();
  c.request_id_headers = &raw->options.request_id_headers;
  c.jitter = &raw->jitter;
  c.throttle = raw->throttle.get();
  c.breaker = raw->breaker.get();
  c.coalescer = &raw->coalescer;
  c.flight_registry = &raw->calls;
  if (raw->options.hedging) c.hedge_delay = raw->options.hedging->delay;
  c.secrets = [raw](const Headers& headers) { return raw->secrets(headers); };
  return c;
}

/// Hands an asynchronous call's result to the caller's Completion.
template <class T>
[[nodiscard]] CallDone<T> completing(Completion<T> done) {
  return [done = std::move(done)](Result<T>&& result, int) { done(std::move(result)); };
}

/// The future form of an asynchronous call, on its completion form.
template <class T, class Start>
[[nodiscard]] std::future<Result<T>> async_future(Start&& start) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  start([promise](Result<T> result) { promise->set_value(std::move(result)); });
  return future;
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
  return detail::run_call(detail::call_context(state_, false),
                          detail::get_student_spec(*state_, **base, perm, call, false), detail::get_student_map(perm));
}

STUDENTSVC_INLINE std::vector<Result<StudentExtended>> Client::get_students(std::span<const std::string> perms,
                                                                            const BatchOptions& batch) const {
  // The streamed batch over the caller's perms, collected by index: its
  // window looks a repeated perm up once (RepeatedPerms) and hands every
  // position its result, sent or not.
  std::vector<Result<StudentExtended>> results(perms.size());
  if (perms.empty()) return results;
  StreamOptions stream;
  stream.max_concurrency = batch.max_concurrency;
  stream.fail_fast = batch.fail_fast;
  stream.call = batch.call;
  stream.stop = batch.stop;
  const Logger& logger = state_->options.logger;
  const auto start = std::chrono::steady_clock::now();
  const auto summary = for_each_student(
      perms, [&](std::size_t index, std::string_view, Result<StudentExtended> result) { results[index] = std::move(result); },
      stream);
  detail::wipe_secrets(stream.call);  // its copy of the caller's JWT
  const auto failed = static_cast<std::size_t>(std::ranges::count_if(results, [](const auto& r) { return !r; }));
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
  return detail::run_call(detail::call_context(state_, false),
                          detail::current_student_spec(*state_, **base, user_jwt, call, false),
                          detail::current_student_map());
}

STUDENTSVC_INLINE Result<RawResponse> Client::conversation(const ConversationRequest& request) const {
  auto base = state_->ready();
  if (!base) return std::unexpected(std::move(base.error()));
  return detail::run_call(detail::call_context(state_, false), detail::conversation_spec(*state_, **base, request, false),
                          detail::conversation_map());
}

STUDENTSVC_INLINE void Client::get_student_async(std::string_view perm, Completion<StudentExtended> done,
                                                  const CallOptions& call, StopToken stop) const {
  auto base = state_->ready();
  if (!base) return done(std::unexpected(std::move(base.error())));
  detail::start_call(detail::call_context(state_, true), detail::get_student_spec(*state_, **base, perm, call, true),
                     detail::get_student_map(perm), detail::completing(std::move(done)), stop);
}

STUDENTSVC_INLINE void Client::batch_lookup_async(std::string_view perm, Completion<StudentExtended> done,
                                                   const CallOptions& call, StopToken stop) const {
  auto base = state_->ready();
  if (!base) return done(std::unexpected(std::move(base.error())));
  auto spec = detail::get_student_spec(*state_, **base, perm, call, true);
  spec.coalesce = true;
  detail::start_call(detail::call_context(state_, true), std::move(spec), detail::get_student_map(perm),
                     detail::completing(std::move(done)), stop);
}

STUDENTSVC_INLINE std::future<Result<StudentExtended>> Client::get_student_async(std::string_view perm,
                                                                                 const CallOptions& call,
                                                                                 StopToken stop) const {
  return detail::async_future<StudentExtended>(
      [&](Completion<StudentExtended> done) { get_student_async(perm, std::move(done), call, stop); });
}

STUDENTSVC_INLINE void Client::current_student_async(std::string_view user_jwt, Completion<StudentExtended> done,
                                                      const CallOptions& call, StopToken stop) const {
  auto base = state_->ready();
  if (!base) return done(std::unexpected(std::move(base.error())));
  detail::start_call(detail::call_context(state_, true),
                     detail::current_student_spec(*state_, **base, user_jwt, call, true),
                     detail::current_student_map(), detail::completing(std::move(done)), stop);
}

STUDENTSVC_INLINE std::future<Result<StudentExtended>> Client::current_student_async(std::string_view user_jwt,
                                                                                     const CallOptions& call,
                                                                                     StopToken stop) const {
  return detail::async_future<StudentExtended>(
      [&](Completion<StudentExtended> done) { current_student_async(user_jwt, std::move(done), call, stop); });
}

STUDENTSVC_INLINE void Client::conversation_async(const ConversationRequest& request, Completion<RawResponse> done,
                                                   StopToken stop) const {
  auto base = state_->ready();
  if (!base) return done(std::unexpected(std::move(base.error())));
  detail::start_call(detail::call_context(state_, true), detail::conversation_spec(*state_, **base, request, true),
                     detail::conversation_map(), detail::completing(std::move(done)), stop);
}

STUDENTSVC_INLINE std::future<Result<RawResponse>> Client::conversation_async(const ConversationRequest& request,
                                                                              StopToken stop) const {
  return detail::async_future<RawResponse>(
      [&](Completion<RawResponse> done) { conversation_async(request, std::move(done), stop); });
}

STUDENTSVC_INLINE const ClientOptions& Client::options() const noexcept { return state_->options; }

STUDENTSVC_INLINE const std::shared_ptr<Transport>& Client::transport() const noexcept { return state_->transport; }

}  // namespace studentsvc

#pragma once
/// @file detail/client-inl.hpp
/// @brief Client's bodies: included by client.hpp in header-only mode,
/// compiled once by src/client.cpp otherwise.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/default_transport.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/detail/redact.hpp>
#include <studentsvc/detail/url.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/requests.hpp>
#include <studentsvc/responses.hpp>
#include <studentsvc/retry.hpp>

namespace studentsvc {
namespace detail {

/// `user:password@` parts of the base URL and of the proxy URL (the option,
/// else the environment libcurl reads): a transport error may quote them.
[[nodiscard]] inline std::vector<std::string> client_url_secrets(const ClientOptions& options) {
  std::vector<std::string> out = url_secrets(options.base_url);
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

[[nodiscard]] inline std::string_view endpoint_name(Endpoint e) noexcept {
  // In Endpoint's order.
  constexpr std::array<std::string_view, 3> names{"get_student", "current_student", "conversation"};
  const auto i = static_cast<std::size_t>(e);
  return i < names.size() ? names[i] : std::string_view("call");
}

/// Send → map, shared by the three calls. Logs endpoint, status, attempts
/// and time only: never the URL (it holds the perm), headers or body.
/// The request's credentials are scrubbed from a returned ApiError and from
/// the outcome log line, in case a server or proxy echoes them back.
template <class Map>
[[nodiscard]] auto send_and_map(ClientState& state, Result<HttpRequest>& request, Endpoint endpoint, bool idempotent,
                                const CallOptions& call, Map&& map)
    -> decltype(map(std::declval<Result<HttpResponse>&&>())) {
  const Logger& logger = state.options.logger;
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
  auto outcome = send_with_retry(*state.transport, *request, policy, idempotent, state.jitter, logger, attempts);
  if (logger.enabled(LogLevel::debug)) {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    std::string line = std::string(endpoint_name(endpoint)) + ": " +
                       (outcome ? "status " + std::to_string(outcome->status)
                                : "transport error: " + outcome.error().message) +
                       " after " + std::to_string(attempts) + " attempt(s), " + std::to_string(ms) + " ms";
    scrub(line, state.secrets(request->headers));
    logger.log(LogLevel::debug, line);
  }
  auto result = map(std::move(outcome));
  if (!result) {
    result.error().attempts = attempts;
    // Built only on failure: a successful call carries no text from the server to scrub.
    scrub(result.error(), state.secrets(request->headers));
  }
  return result;
}

}  // namespace detail

STUDENTSVC_INLINE Client::Client(ClientOptions options)
    : state_(std::make_shared<detail::ClientState>(std::move(options))) {}

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
  auto request = detail::build_get_student(**base, state_->options, perm, call, detail::ClientLimits::checked);
  return detail::send_and_map(*state_, request, Endpoint::get_student, true, call,
                              [perm](Result<HttpResponse>&& outcome) { return map_get_student_response(outcome, perm); });
}

STUDENTSVC_INLINE std::vector<Result<StudentExtended>> Client::get_students(std::span<const std::string> perms,
                                                                            const BatchOptions& batch) const {
  std::vector<Result<StudentExtended>> results(perms.size());
  if (perms.empty()) return results;
  auto base = state_->ready();
  if (!base) {
    for (auto& r : results) r = std::unexpected(base.error());
    return results;
  }
  std::vector<HttpRequest> requests;
  std::vector<std::size_t> owner;  // index into `results` of each request
  requests.reserve(perms.size());
  owner.reserve(perms.size());
  for (std::size_t i = 0; i < perms.size(); ++i) {
    auto request =
        detail::build_get_student(**base, state_->options, perms[i], batch.call, detail::ClientLimits::checked);
    if (!request) {
      results[i] = std::unexpected(std::move(request.error()));
      continue;
    }
    requests.push_back(std::move(*request));
    owner.push_back(i);
  }
  const Logger& logger = state_->options.logger;
  if (requests.size() < perms.size()) {
    logger.log(LogLevel::warning, "get_students: " + std::to_string(perms.size() - requests.size()) +
                                      " lookup(s) not sent: invalid input");
  }
  if (requests.empty()) return results;
  const RetryPolicy& policy = batch.call.retry ? *batch.call.retry : state_->options.retry;
  // Every request of the batch carries the same headers: one set of secrets to scrub.
  const auto secrets = state_->secrets(requests.front().headers);
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> attempts;
  int rounds = 0;
  auto outcomes = detail::send_all_with_retry(*state_->transport, requests, batch.max_concurrency, policy,
                                              state_->jitter, logger, detail::RetryClock{}, attempts, rounds);
  std::size_t failed = 0;
  for (std::size_t k = 0; k < requests.size(); ++k) {
    auto result = map_get_student_response(outcomes[k], perms[owner[k]]);
    if (!result) {
      result.error().attempts = attempts[k];
      detail::scrub(result.error(), secrets);
      ++failed;
    }
    results[owner[k]] = std::move(result);
  }
  if (logger.enabled(LogLevel::debug)) {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    logger.log(LogLevel::debug, "get_students: " + std::to_string(requests.size()) + " sent, " +
                                    std::to_string(failed) + " failed, " + std::to_string(rounds) + " round(s), " +
                                    std::to_string(ms) + " ms");
  }
  return results;
}

STUDENTSVC_INLINE Result<StudentExtended> Client::current_student(std::string_view user_jwt,
                                                                  const CallOptions& call) const {
  auto base = state_->ready();
  if (!base) return std::unexpected(std::move(base.error()));
  auto request =
      detail::build_student_request(**base, state_->options, Endpoint::current_student,
                                    std::string(current_student_path), user_jwt, call, detail::ClientLimits::checked);
  return detail::send_and_map(*state_, request, Endpoint::current_student, true, call,
                              [](Result<HttpResponse>&& outcome) {
                                return map_student_response(outcome, Endpoint::current_student);
                              });
}

STUDENTSVC_INLINE Result<RawResponse> Client::conversation(const ConversationRequest& request) const {
  auto base = state_->ready();
  if (!base) return std::unexpected(std::move(base.error()));
  auto built = detail::build_conversation(**base, state_->options, request, detail::ClientLimits::checked);
  return detail::send_and_map(
      *state_, built, Endpoint::conversation, request.idempotent, request.call,
      [](Result<HttpResponse>&& outcome) { return map_conversation_response(std::move(outcome)); });
}

STUDENTSVC_INLINE const ClientOptions& Client::options() const noexcept { return state_->options; }

STUDENTSVC_INLINE const std::shared_ptr<Transport>& Client::transport() const noexcept { return state_->transport; }

}  // namespace studentsvc

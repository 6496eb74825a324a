#pragma once
/// @file client.hpp
/// @brief Client: the three calls of the interface, each one straight path
/// (validate → build → authorise → send with retries → map).

#include <algorithm>
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

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/config.hpp>
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

#if STUDENTSVC_WITH_CURL
#include <studentsvc/curl_transport.hpp>
#endif

namespace studentsvc {

/// @brief Settings of one Client::get_students batch.
struct BatchOptions {
  /// Most requests in flight at once (default 16; 0 counts as 1). CurlTransport
  /// runs them on the curl multi interface, over at most this many connections
  /// to the host (fewer with HTTP/2 multiplexing); a custom Transport that only
  /// implements `send` runs them one after another.
  std::size_t max_concurrency = 16;
  /// Applied to every lookup of the batch (JWT, API version, timeouts, body cap, retry policy).
  CallOptions call;
};

/// @brief The client of the Student Information and Conversation Service.
///
/// Thread safety: a Client is immutable once built; any number of threads may
/// call the same Client (or copies of it, which share one transport) at once.
/// No call throws: every failure is an ApiError in the returned Result.
class Client {
 public:
  /// @brief Builds a client, checking its options once. A bad base URL,
  /// timeout, header cap or retry policy, or a missing transport, is reported
  /// by every call (or up front by Client::create).
  explicit Client(ClientOptions options) : state_(std::make_shared<State>(std::move(options))) {}

  /// @brief Builds a client, or says why the options cannot work.
  [[nodiscard]] static Result<Client> create(ClientOptions options) {
    Client client(std::move(options));
    if (!client.state_->base) return std::unexpected(client.state_->base.error());
    if (!client.state_->limits) return std::unexpected(client.state_->limits.error());
    if (!client.state_->transport) return make_error(ErrorKind::invalid_argument, "no transport configured");
    return client;
  }

  /// @brief `GET /students/v2/students/{perm}`. With CallOptions::user_jwt set,
  /// only the token's own student is returned. Extended-only fields are
  /// std::nullopt unless the service account is approved for them.
  [[nodiscard]] Result<StudentExtended> get_student(std::string_view perm, const CallOptions& call = {}) const {
    auto base = ready();
    if (!base) return std::unexpected(std::move(base.error()));
    auto request = detail::build_get_student(**base, state_->options, perm, call, detail::ClientLimits::checked);
    return send_and_map(request, Endpoint::get_student, true, call, [perm](Result<HttpResponse>&& outcome) {
      return map_get_student_response(outcome, perm);
    });
  }

  /// @brief Many get_student lookups at once: result `i` belongs to `perms[i]`.
  ///
  /// Each perm is its own lookup. An invalid perm fails alone with
  /// invalid_argument and is never sent; a failed lookup never fails the
  /// others. Up to `batch.max_concurrency` requests are in flight at once
  /// (Transport::send_all: CurlTransport uses the curl multi interface over
  /// reused connections, HTTP/2 multiplexing where the server offers it).
  ///
  /// Retries follow the call's RetryPolicy, batch-wise: once a round is done,
  /// the lookups whose outcome is retryable (transport failure, 408, 429, 500,
  /// 502, 503, 504) are sent again together, after one wait (full-jitter
  /// backoff, or the longest `Retry-After` among them, capped by
  /// max_retry_after), until max_attempts or max_total_time. A failed
  /// lookup's ApiError::attempts counts its own attempts.
  [[nodiscard]] std::vector<Result<StudentExtended>> get_students(std::span<const std::string> perms,
                                                                  const BatchOptions& batch = {}) const {
    std::vector<Result<StudentExtended>> results(perms.size());
    if (perms.empty()) return results;
    auto base = ready();
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
    const auto secrets = this->secrets(requests.front().headers);
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
                                      std::to_string(failed) + " failed, " + std::to_string(rounds) +
                                      " round(s), " + std::to_string(ms) + " ms");
    }
    return results;
  }

  /// @brief `GET /students/v2/students/current` for the student named by
  /// `user_jwt` (required, opaque). Only the StudentMinimal fields are filled.
  [[nodiscard]] Result<StudentExtended> current_student(std::string_view user_jwt,
                                                        const CallOptions& call = {}) const {
    auto base = ready();
    if (!base) return std::unexpected(std::move(base.error()));
    auto request = detail::build_student_request(**base, state_->options, Endpoint::current_student,
                                                 std::string(current_student_path), user_jwt, call,
                                                 detail::ClientLimits::checked);
    return send_and_map(request, Endpoint::current_student, true, call, [](Result<HttpResponse>&& outcome) {
      return map_student_response(outcome, Endpoint::current_student);
    });
  }

  /// @brief `{method} /conversation[/sub_path]`: the interface shows neither
  /// method nor payload, so the call passes both through and returns the raw
  /// answer. Retried only when `request.idempotent` is set.
  [[nodiscard]] Result<RawResponse> conversation(const ConversationRequest& request = {}) const {
    auto base = ready();
    if (!base) return std::unexpected(std::move(base.error()));
    auto built = detail::build_conversation(**base, state_->options, request, detail::ClientLimits::checked);
    return send_and_map(built, Endpoint::conversation, request.idempotent, request.call,
                        [](Result<HttpResponse>&& outcome) { return map_conversation_response(std::move(outcome)); });
  }

  /// @brief The options this client was built with.
  [[nodiscard]] const ClientOptions& options() const noexcept { return state_->options; }

  /// @brief The transport in use (the one given, or the default CurlTransport).
  [[nodiscard]] const std::shared_ptr<Transport>& transport() const noexcept { return state_->transport; }

 private:
  struct State {
    explicit State(ClientOptions o)
        : options(std::move(o)),
          base(detail::parse_base_url(options.base_url, options.allow_insecure_loopback)),
          limits(detail::validate_limits(options)),
          transport(options.transport),
          jitter(options.retry.jitter_seed) {
#if STUDENTSVC_WITH_CURL
      if (!transport) {
        transport = std::make_shared<CurlTransport>(
            CurlTransportOptions{options.ca_bundle, options.proxy, options.allow_insecure_loopback});
      }
#endif
    }
    ClientOptions options;
    Result<detail::BaseUrl> base;
    Result<void> limits;  ///< The options' timeouts, header cap and retry policy, checked once here.
    std::shared_ptr<Transport> transport;
    JitterSource jitter;
    /// `user:password@` parts of the proxy URL (the option, else the
    /// environment libcurl reads): a transport error may quote the proxy URL.
    std::vector<std::string> url_secrets = proxy_secrets(options);
  };

  [[nodiscard]] static std::vector<std::string> proxy_secrets(const ClientOptions& options) {
    std::vector<std::string> out = detail::url_secrets(options.base_url);
    if (!options.proxy.empty()) {
      detail::add_secrets(out, detail::url_secrets(options.proxy));
      return out;
    }
    for (const char* name : {"https_proxy", "HTTPS_PROXY", "http_proxy", "all_proxy", "ALL_PROXY"}) {
      // Only read, never written, by the SDK.
      if (const char* v = std::getenv(name); v != nullptr) {  // NOLINT(concurrency-mt-unsafe)
        detail::add_secrets(out, detail::url_secrets(v));
      }
    }
    return out;
  }

  /// Everything to scrub from text that came back for a request with these headers.
  [[nodiscard]] std::vector<std::string> secrets(const Headers& headers) const {
    auto out = detail::request_secrets(headers, state_->options.auth);
    detail::add_secrets(out, state_->url_secrets);
    return out;
  }

  [[nodiscard]] Result<const detail::BaseUrl*> ready() const {
    if (!state_->base) return std::unexpected(state_->base.error());
    if (!state_->limits) return std::unexpected(state_->limits.error());
    if (!state_->transport) {
      return make_error(ErrorKind::invalid_argument,
                        "no transport configured (built without curl: set ClientOptions::transport)");
    }
    return &*state_->base;
  }

  [[nodiscard]] static std::string_view endpoint_name(Endpoint e) noexcept {
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
  [[nodiscard]] auto send_and_map(Result<HttpRequest>& request, Endpoint endpoint, bool idempotent,
                                  const CallOptions& call, Map&& map) const
      -> decltype(map(std::declval<Result<HttpResponse>&&>())) {
    const Logger& logger = state_->options.logger;
    if (!request) {
      logger.log(LogLevel::warning, std::string(endpoint_name(endpoint)) + ": not sent: " + request.error().message);
      return std::unexpected(std::move(request.error()));
    }
    if (logger.enabled(LogLevel::trace)) {
      logger.log(LogLevel::trace, std::string(endpoint_name(endpoint)) + ": " + request->method +
                                      " headers: " + redacted_headers(request->headers));
    }
    const RetryPolicy& policy = call.retry ? *call.retry : state_->options.retry;
    const auto start = std::chrono::steady_clock::now();
    int attempts = 0;
    auto outcome = send_with_retry(*state_->transport, *request, policy, idempotent, state_->jitter, logger, attempts);
    if (logger.enabled(LogLevel::debug)) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      std::string line = std::string(endpoint_name(endpoint)) + ": " +
                         (outcome ? "status " + std::to_string(outcome->status)
                                  : "transport error: " + outcome.error().message) +
                         " after " + std::to_string(attempts) + " attempt(s), " + std::to_string(ms) + " ms";
      detail::scrub(line, secrets(request->headers));
      logger.log(LogLevel::debug, line);
    }
    auto result = map(std::move(outcome));
    if (!result) {
      result.error().attempts = attempts;
      // Built only on failure: a successful call carries no text from the server to scrub.
      detail::scrub(result.error(), secrets(request->headers));
    }
    return result;
  }

  std::shared_ptr<State> state_;
};

}  // namespace studentsvc

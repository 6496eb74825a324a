#pragma once
/// @file client.hpp
/// @brief Client: the three calls of the interface, each one straight path
/// (validate → build → authorise → send with retries → map).

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/config.hpp>
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

/// @brief The client of the Student Information and Conversation Service.
///
/// Thread safety: a Client is immutable once built; any number of threads may
/// call the same Client (or copies of it, which share one transport) at once.
/// No call throws: every failure is an ApiError in the returned Result.
class Client {
 public:
  /// @brief Builds a client. A bad base URL or missing transport is reported
  /// by every call (or up front by Client::create).
  explicit Client(ClientOptions options) : state_(std::make_shared<State>(std::move(options))) {}

  /// @brief Builds a client, or says why the options cannot work.
  [[nodiscard]] static Result<Client> create(ClientOptions options) {
    Client client(std::move(options));
    if (!client.state_->base) return std::unexpected(client.state_->base.error());
    if (!client.state_->transport) return make_error(ErrorKind::invalid_argument, "no transport configured");
    return client;
  }

  /// @brief `GET /students/v2/students/{perm}`. With CallOptions::user_jwt set,
  /// only the token's own student is returned. Extended-only fields are
  /// std::nullopt unless the service account is approved for them.
  [[nodiscard]] Result<StudentExtended> get_student(std::string_view perm, const CallOptions& call = {}) const {
    auto base = ready();
    if (!base) return std::unexpected(std::move(base.error()));
    auto request = build_get_student_request(**base, state_->options, perm, call);
    return send_and_map(request, Endpoint::get_student, true, call, [](Result<HttpResponse>&& outcome) {
      return map_student_response(outcome, Endpoint::get_student);
    });
  }

  /// @brief `GET /students/v2/students/current` for the student named by
  /// `user_jwt` (required, opaque). Only the StudentMinimal fields are filled.
  [[nodiscard]] Result<StudentExtended> current_student(std::string_view user_jwt,
                                                        const CallOptions& call = {}) const {
    auto base = ready();
    if (!base) return std::unexpected(std::move(base.error()));
    auto request = build_current_student_request(**base, state_->options, user_jwt, call);
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
    auto built = build_conversation_request(**base, state_->options, request);
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
    std::shared_ptr<Transport> transport;
    JitterSource jitter;
  };

  [[nodiscard]] Result<const detail::BaseUrl*> ready() const {
    if (!state_->base) return std::unexpected(state_->base.error());
    if (!state_->transport) {
      return make_error(ErrorKind::invalid_argument,
                        "no transport configured (built without curl: set ClientOptions::transport)");
    }
    return &*state_->base;
  }

  [[nodiscard]] static std::string_view endpoint_name(Endpoint e) noexcept {
    switch (e) {
      case Endpoint::get_student: return "get_student";
      case Endpoint::current_student: return "current_student";
      case Endpoint::conversation: return "conversation";
    }
    return "call";
  }

  /// Send → map, shared by the three calls. Logs endpoint, status, attempts
  /// and time only: never the URL (it holds the perm), headers or body.
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
    auto outcome =
        send_with_retry(*state_->transport, std::move(*request), policy, idempotent, state_->jitter, logger, attempts);
    if (logger.enabled(LogLevel::debug)) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
      logger.log(LogLevel::debug, std::string(endpoint_name(endpoint)) + ": " +
                                      (outcome ? "status " + std::to_string(outcome->status)
                                               : "transport error: " + outcome.error().message) +
                                      " after " + std::to_string(attempts) + " attempt(s), " + std::to_string(ms) +
                                      " ms");
    }
    auto result = map(std::move(outcome));
    if (!result) result.error().attempts = attempts;
    return result;
  }

  std::shared_ptr<State> state_;
};

}  // namespace studentsvc

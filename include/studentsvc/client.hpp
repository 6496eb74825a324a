#pragma once
/// @file client.hpp
/// @brief Client: the three calls of the interface, each one straight path
/// (validate → build → authorise → send with retries → map). The bodies are in
/// detail/client-inl.hpp (header-only mode) or the studentsvc library (compiled
/// mode), so this header needs neither JSON nor libcurl.

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/config.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc {

namespace detail {
struct ClientState;  // options checked once, the transport, the jitter source (client-inl.hpp)
}  // namespace detail

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
  explicit Client(ClientOptions options);

  /// @brief Builds a client, or says why the options cannot work.
  [[nodiscard]] static Result<Client> create(ClientOptions options);

  /// @brief `GET /students/v2/students/{perm}`. With CallOptions::user_jwt set,
  /// only the token's own student is returned. Extended-only fields are
  /// std::nullopt unless the service account is approved for them.
  [[nodiscard]] Result<StudentExtended> get_student(std::string_view perm, const CallOptions& call = {}) const;

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
                                                                  const BatchOptions& batch = {}) const;

  /// @brief `GET /students/v2/students/current` for the student named by
  /// `user_jwt` (required, opaque). Only the StudentMinimal fields are filled.
  [[nodiscard]] Result<StudentExtended> current_student(std::string_view user_jwt,
                                                        const CallOptions& call = {}) const;

  /// @brief `{method} /conversation[/sub_path]`: the interface shows neither
  /// method nor payload, so the call passes both through and returns the raw
  /// answer. Retried only when `request.idempotent` is set.
  [[nodiscard]] Result<RawResponse> conversation(const ConversationRequest& request = {}) const;

  /// @brief The options this client was built with.
  [[nodiscard]] const ClientOptions& options() const noexcept;

  /// @brief The transport in use (the one given, or the default one: a CurlTransport).
  [[nodiscard]] const std::shared_ptr<Transport>& transport() const noexcept;

 private:
  std::shared_ptr<detail::ClientState> state_;
};

}  // namespace studentsvc

#if STUDENTSVC_HEADER_ONLY
#include <studentsvc/detail/client-inl.hpp>
#endif

#pragma once
/// @file testing/fake_transport.hpp
/// @brief FakeTransport: records exactly what would be sent and replays canned
/// responses, with no network. For the SDK's unit tests and your app's own.

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc::testing {

/// @brief A Transport that answers from a queue of canned outcomes, then from
/// an optional handler, and records every request. Thread-safe.
///
/// @code
/// auto fake = std::make_shared<studentsvc::testing::FakeTransport>();
/// fake->respond(200, R"({"perm":"1234567","firstName":"Ana"})");
/// options.transport = fake;
/// // ... call the client, then inspect fake->requests()
/// @endcode
class FakeTransport : public Transport {
 public:
  /// Answers a request once the queue of canned outcomes is empty.
  using Handler = std::function<Result<HttpResponse>(const HttpRequest&)>;

  FakeTransport() = default;
  /// @brief Answers every request not served by the queue with `handler`.
  explicit FakeTransport(Handler handler) : handler_(std::move(handler)) {}

  /// @brief Queues a response with this status, body and headers.
  void respond(int status, std::string body = {}, Headers headers = {}) {
    enqueue(HttpResponse{status, std::move(headers), std::move(body)});
  }
  /// @brief Queues a full response.
  void enqueue(HttpResponse response) {
    const std::lock_guard lock(mutex_);
    queue_.emplace_back(std::move(response));
  }
  /// @brief Queues a transport failure (ErrorKind::transport unless `error` says otherwise).
  void fail(ApiError error) {
    const std::lock_guard lock(mutex_);
    queue_.emplace_back(std::unexpected(std::move(error)));
  }
  /// @brief Queues a transport failure with this message.
  void fail(std::string message) {
    ApiError e;
    e.kind = ErrorKind::transport;
    e.message = std::move(message);
    e.retryable = true;
    fail(std::move(e));
  }
  /// @brief Replaces the handler used once the queue is empty.
  void set_handler(Handler handler) {
    const std::lock_guard lock(mutex_);
    handler_ = std::move(handler);
  }

  [[nodiscard]] Result<HttpResponse> send(const HttpRequest& request) override {
    Handler handler;
    {
      const std::lock_guard lock(mutex_);
      requests_.push_back(request);
      if (!queue_.empty()) {
        auto next = std::move(queue_.front());
        queue_.pop_front();
        return next;
      }
      handler = handler_;
    }
    if (handler) return handler(request);
    return make_error(ErrorKind::transport, "FakeTransport: no canned response left");
  }

  /// @brief Every request sent so far, in order.
  [[nodiscard]] std::vector<HttpRequest> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }
  /// @brief How many requests were sent.
  [[nodiscard]] std::size_t request_count() const {
    const std::lock_guard lock(mutex_);
    return requests_.size();
  }
  /// @brief The most recent request; an empty HttpRequest when none was sent.
  [[nodiscard]] HttpRequest last_request() const {
    const std::lock_guard lock(mutex_);
    return requests_.empty() ? HttpRequest{} : requests_.back();
  }
  /// @brief How many canned outcomes are still queued.
  [[nodiscard]] std::size_t pending() const {
    const std::lock_guard lock(mutex_);
    return queue_.size();
  }
  /// @brief Forgets recorded requests and queued outcomes.
  void clear() {
    const std::lock_guard lock(mutex_);
    requests_.clear();
    queue_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::deque<Result<HttpResponse>> queue_;
  std::vector<HttpRequest> requests_;
  Handler handler_;
};

}  // namespace studentsvc::testing

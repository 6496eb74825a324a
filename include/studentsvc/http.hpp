#pragma once
/// @file http.hpp
/// @brief Headers, HttpRequest, HttpResponse and the Transport interface that
/// every HTTP stack (CurlTransport, FakeTransport, your own) implements.

#include <algorithm>
#include <initializer_list>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <studentsvc/detail/text/ascii.hpp>
#include <studentsvc/detail/text/wipe.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc {

/// @brief An ordered list of HTTP header fields; names compare case-insensitively.
///
/// A request's headers carry the credentials (API key, svc-api-key, Basic
/// value, user JWT), so every value's memory is overwritten before it is
/// freed or reused: on destruction, clear(), erase(), set(), assignment, and
/// when the list grows (a short value lives inside the list's own storage);
/// so is the argument set() and add() moved a value from. Copies made with
/// find() or by iterating are the caller's.
class Headers {
 public:
  using Field = std::pair<std::string, std::string>;  ///< One field: name and value.

  Headers() = default;
  /// @brief The fields in this order.
  Headers(std::initializer_list<Field> fields) : fields_(fields) {}
  /// @brief A copy of the other's fields.
  Headers(const Headers& other) = default;
  /// @brief Takes the other's fields (their memory moves with them).
  Headers(Headers&& other) noexcept = default;
  /// @brief Wipes this list's values, then copies the other's fields.
  Headers& operator=(const Headers& other) {
    if (this != &other) {
      wipe_values(0);
      fields_ = other.fields_;
    }
    return *this;
  }
  /// @brief Wipes this list's values, then takes the other's fields.
  Headers& operator=(Headers&& other) noexcept {
    if (this != &other) {
      wipe_values(0);
      fields_ = std::move(other.fields_);
    }
    return *this;
  }
  /// @brief Wipes every value before the memory is freed.
  ~Headers() { wipe_values(0); }

  /// @brief Sets `name` to `value`, replacing any earlier field of that name.
  void set(std::string_view name, std::string value) {
    erase(name);
    grow_for_one();
    fields_.emplace_back(std::string(name), std::move(value));
    detail::wipe_string(value);  // moved from: a short value's bytes stay in its inline buffer
  }
  /// @brief Appends a field, keeping earlier ones of the same name.
  void add(std::string name, std::string value) {
    grow_for_one();
    fields_.emplace_back(std::move(name), std::move(value));
    detail::wipe_string(value);  // moved from: a short value's bytes stay in its inline buffer
  }
  /// @brief Removes every field called `name` (their values wiped).
  void erase(std::string_view name) {
    const auto matches = [&](const Field& f) { return detail::iequals(f.first, name); };
    for (auto& f : fields_) {
      if (matches(f)) detail::wipe_string(f.second);
    }
    const auto kept = static_cast<std::size_t>(std::remove_if(fields_.begin(), fields_.end(), matches) - fields_.begin());
    wipe_values(kept);  // the moved-from tail may still hold a short value's bytes
    fields_.erase(fields_.begin() + static_cast<std::ptrdiff_t>(kept), fields_.end());
  }
  /// @brief The first value of `name`, if present.
  [[nodiscard]] std::optional<std::string_view> find(std::string_view name) const {
    for (const auto& f : fields_) {
      if (detail::iequals(f.first, name)) return std::string_view(f.second);
    }
    return std::nullopt;
  }
  /// @brief True when a field called `name` is present.
  [[nodiscard]] bool contains(std::string_view name) const { return find(name).has_value(); }
  /// @brief The number of fields.
  [[nodiscard]] std::size_t size() const noexcept { return fields_.size(); }
  /// @brief True when there is no field.
  [[nodiscard]] bool empty() const noexcept { return fields_.empty(); }
  /// @brief Removes every field (their values wiped).
  void clear() noexcept {
    wipe_values(0);
    fields_.clear();
  }
  /// @brief Reserves room for `n` fields.
  void reserve(std::size_t n) {
    if (n > fields_.capacity()) move_to_capacity(n);
  }
  /// @brief The first field, in insertion order.
  [[nodiscard]] auto begin() const noexcept { return fields_.begin(); }
  /// @brief Past the last field.
  [[nodiscard]] auto end() const noexcept { return fields_.end(); }

  friend bool operator==(const Headers& a, const Headers& b) { return a.fields_ == b.fields_; }

 private:
  /// Wipes the values of the fields from `from` on.
  void wipe_values(std::size_t from) noexcept {
    for (std::size_t i = from; i < fields_.size(); ++i) detail::wipe_string(fields_[i].second);
  }
  /// Room for one more field without the vector moving the fields itself:
  /// a short value moved by the vector would leave its bytes in freed storage.
  void grow_for_one() {
    if (fields_.size() == fields_.capacity()) move_to_capacity(std::max<std::size_t>(8, fields_.capacity() * 2));
  }
  void move_to_capacity(std::size_t n) {
    std::vector<Field> bigger;
    bigger.reserve(n);
    for (auto& f : fields_) bigger.push_back(std::move(f));
    wipe_values(0);  // the moved-from values: a short one's bytes stay in its inline buffer
    fields_.swap(bigger);
  }

  std::vector<Field> fields_;
};

/// @brief Which call a request belongs to; the auth policy's header table is per endpoint.
enum class Endpoint { get_student, current_student, conversation };

/// @brief Default connect timeout (10 s).
inline constexpr std::chrono::milliseconds default_connect_timeout{10'000};
/// @brief Default whole-request timeout (30 s).
inline constexpr std::chrono::milliseconds default_request_timeout{30'000};
/// @brief Default cap on a response body (4 MiB; a student record is under 2 KiB).
inline constexpr std::size_t default_max_response_bytes = 4U * 1024U * 1024U;
/// @brief Default cap on a response's header section, trailers and any 1xx
/// interim responses counted together (64 KiB: the service sends well under
/// 2 KiB of headers, and 64 KiB is above what common servers and proxies emit).
inline constexpr std::size_t default_max_response_header_bytes = 64U * 1024U;

/// @brief Cap on one request header value the SDK sends (16 KiB): the API key,
/// svc-api-key, Basic credential (base64 of `network_id:password`), user JWT,
/// `api_version` and a conversation's `content_type`. A longer value is
/// `invalid_argument` ("... is N bytes, over the 16384-byte cap on a request
/// header value; nothing was sent"), never sent. Servers refuse far shorter
/// header lines (8 KiB is common), and libcurl fails a long one in ways that
/// look like the server's answer.
inline constexpr std::size_t max_header_value_bytes = 16U * 1024U;
/// @brief Cap on the URL of a request the SDK builds (8 KiB, the request line
/// limit of common servers and gateways): a longer one (a long base URL path,
/// or a conversation's `sub_path` and `query`) is `invalid_argument` saying
/// nothing was sent.
inline constexpr std::size_t max_request_url_bytes = 8U * 1024U;

/// @brief One HTTP request, fully built: the transport sends it as it is.
struct HttpRequest {
  std::string method = "GET";  ///< The HTTP method token.
  /// Absolute URL: scheme, host, path and query.
  std::string url;
  Headers headers;   ///< Every header to send, credentials included (already validated).
  std::string body;  ///< The body; empty: none.
  /// Bound on the TCP and TLS connect.
  std::chrono::milliseconds connect_timeout = default_connect_timeout;
  /// Bound on the whole exchange, connect included.
  std::chrono::milliseconds timeout = default_request_timeout;
  /// The transport fails with ErrorKind::transport once the body grows past this.
  std::size_t max_response_bytes = default_max_response_bytes;
  /// The transport fails with ErrorKind::transport once the status lines,
  /// header fields and trailers received for this request grow past this.
  std::size_t max_response_header_bytes = default_max_response_header_bytes;
  /// False: the request must not be sent twice (a POST that creates something),
  /// so the transport never replays it, not even on a connection it found dead.
  bool idempotent = true;
};

/// @brief What came back: status, header fields and the body bytes.
struct HttpResponse {
  int status = 0;    ///< The HTTP status code.
  Headers headers;   ///< The response's header fields, in order.
  std::string body;  ///< The body bytes (at most the request's max_response_bytes).

  /// @brief True for a 2xx status.
  [[nodiscard]] bool ok() const noexcept { return status >= 200 && status < 300; }
};

/// @brief Receives the outcome of Transport::send_async, exactly once.
using SendCompletion = std::function<void(Result<HttpResponse>)>;

/// @brief The error of a request or wait ended by a stop request or by the
/// transport's destruction: ErrorKind::cancelled, not retryable.
[[nodiscard]] inline ApiError cancelled_error(std::string message = "cancelled (stop requested)") {
  ApiError e;
  e.kind = ErrorKind::cancelled;
  e.retryable = false;
  e.message = std::move(message);
  return e;
}

/// @brief Sends requests. Implementations must be safe to call from many threads.
///
/// `send` returns the response for any status; only a failure to get one
/// (DNS, connect, TLS, timeout, reset, body over the cap) is an ApiError with
/// ErrorKind::transport. Such an error is retried (for idempotent calls) only
/// when its `retryable` is true: set it false when another attempt would fail
/// the same way (a certificate that does not verify, a body over the cap).
class Transport {
 public:
  virtual ~Transport() = default;

  /// @brief Sends one request and waits for its response.
  [[nodiscard]] virtual Result<HttpResponse> send(const HttpRequest& request) = 0;

  /// @brief Sends a batch; results come back in input order.
  ///
  /// The default sends one after another, so a custom transport needs only
  /// `send`. CurlTransport overrides it to run up to `max_concurrency` at once.
  [[nodiscard]] virtual std::vector<Result<HttpResponse>> send_all(std::span<const HttpRequest> requests,
                                                                   std::size_t max_concurrency) {
    (void)max_concurrency;
    std::vector<Result<HttpResponse>> out;
    out.reserve(requests.size());
    for (const auto& r : requests) out.push_back(send(r));
    return out;
  }

  /// @brief Starts sending `request` and returns; `done` gets the outcome
  /// exactly once. A stop request on `stop` ends it as ErrorKind::cancelled.
  ///
  /// The default is the fallback for a transport that implements only `send`:
  /// it sends here, on the calling thread, and calls `done` before returning.
  /// CurlTransport overrides it to run the request on its event thread (the
  /// curl multi interface) and call `done` there.
  virtual void send_async(HttpRequest request, SendCompletion done, StopToken stop) {
    if (stop.stop_requested()) {
      done(std::unexpected(cancelled_error()));
      return;
    }
    done(send(request));
  }

  /// @brief Calls `fn(true)` once `delay` has passed, or `fn(false)` when a
  /// stop request on `stop` (or the transport's destruction) comes first: the
  /// wait of an asynchronous retry or rate limit.
  ///
  /// The default, for a transport that implements only `send`, waits here on
  /// the calling thread (looking at `stop` every 10 ms); CurlTransport runs it
  /// as a timer on its event thread, with no thread asleep.
  virtual void run_after(std::chrono::milliseconds delay, std::function<void(bool)> fn, StopToken stop) {
    const auto until = std::chrono::steady_clock::now() + std::max(delay, std::chrono::milliseconds{0});
    while (std::chrono::steady_clock::now() < until) {
      if (stop.stop_requested()) {
        fn(false);
        return;
      }
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds{10}, until - std::chrono::steady_clock::now()));
    }
    fn(!stop.stop_requested());
  }
};

}  // namespace studentsvc

#pragma once
/// @file http.hpp
/// @brief Headers, HttpRequest, HttpResponse and the Transport interface that
/// every HTTP stack (CurlTransport, FakeTransport, your own) implements.

#include <algorithm>
#include <initializer_list>
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/detail/ascii.hpp>
#include <studentsvc/errors.hpp>

namespace studentsvc {

/// @brief An ordered list of HTTP header fields; names compare case-insensitively.
class Headers {
 public:
  using Field = std::pair<std::string, std::string>;  ///< One field: name and value.

  Headers() = default;
  /// @brief The fields in this order.
  Headers(std::initializer_list<Field> fields) : fields_(fields) {}

  /// @brief Sets `name` to `value`, replacing any earlier field of that name.
  void set(std::string_view name, std::string value) {
    erase(name);
    fields_.emplace_back(std::string(name), std::move(value));
  }
  /// @brief Appends a field, keeping earlier ones of the same name.
  void add(std::string name, std::string value) { fields_.emplace_back(std::move(name), std::move(value)); }
  /// @brief Removes every field called `name`.
  void erase(std::string_view name) {
    std::erase_if(fields_, [&](const Field& f) { return detail::iequals(f.first, name); });
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
  /// @brief Removes every field.
  void clear() noexcept { fields_.clear(); }
  /// @brief Reserves room for `n` fields.
  void reserve(std::size_t n) { fields_.reserve(n); }
  /// @brief The first field, in insertion order.
  [[nodiscard]] auto begin() const noexcept { return fields_.begin(); }
  /// @brief Past the last field.
  [[nodiscard]] auto end() const noexcept { return fields_.end(); }

  friend bool operator==(const Headers&, const Headers&) = default;

 private:
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
};

}  // namespace studentsvc

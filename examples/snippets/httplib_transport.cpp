// httplib_transport: plug your own HTTP stack into studentsvc.
//
//   httplib_transport [perm]          # against the bundled mock server, no network
//   httplib_transport --env [perm]    # STUDENTSVC_BASE_URL, STUDENTSVC_API_KEY, ... (see docs/configuration.md)
//
// An app that already has an HTTP client, or cannot link libcurl, builds the
// SDK with -DSTUDENTSVC_WITH_CURL=OFF (no libcurl anywhere: CMake does not even
// look for it) and sets ClientOptions::transport to its own studentsvc::Transport.
// Only one member is required: send(). It gets a fully built HttpRequest
// (method, absolute URL, headers, body, timeouts, body cap) and returns the
// HttpResponse for ANY status, or an ApiError of kind `transport` when no
// response came back. Retries, auth headers, validation and the mapping of
// statuses to errors stay in the SDK. send_all() has a default that calls
// send() once per request, in order.
//
// The adapter below sits on cpp-httplib's client (httplib::Client). It is an
// example, not a production transport; if you adapt it, mind these caveats:
//  - TLS: cpp-httplib uses OpenSSL when built with CPPHTTPLIB_OPENSSL_SUPPORT
//    (Debian's package is; check yours). Certificate and host-name
//    verification must stay on (they are cpp-httplib's default and this adapter
//    never turns them off); a CA bundle goes to set_ca_cert_path(). Without
//    OpenSSL support an https:// URL fails here with a transport error rather
//    than being sent in clear. CurlTransport also offers HTTP/2, proxies from
//    the environment and connection reuse across threads; this adapter does not.
//  - Timeouts: cpp-httplib has connect, read and write timeouts per socket
//    operation, not one bound on the whole exchange, so HttpRequest::timeout is
//    applied to each read and write.
//  - Concurrency: one httplib::Client per origin (scheme, host, port), reused
//    for keep-alive, with a mutex per origin. The adapter is safe to share
//    between threads (the Transport contract), but requests to one origin run
//    one at a time; a pool of clients would lift that.
//  - Plain http:// is for the loopback mock only; the Client refuses http://
//    to other hosts unless told otherwise, whatever the transport.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <httplib.h>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>  // only for the default (mock) mode

namespace {

/// A studentsvc::Transport on cpp-httplib's client.
class HttplibTransport final : public studentsvc::Transport {
 public:
  /// `ca_bundle`: PEM file of trusted CAs for https (empty: OpenSSL's default store).
  explicit HttplibTransport(std::string ca_bundle = {}) : ca_bundle_(std::move(ca_bundle)) {}

  studentsvc::Result<studentsvc::HttpResponse> send(const studentsvc::HttpRequest& request) override {
    // 1. Split the absolute URL into origin ("https://host:port") and target ("/path?query").
    const auto scheme_end = request.url.find("://");
    if (scheme_end == std::string::npos) return transport_error("not an absolute URL", false);
    const auto path_start = request.url.find('/', scheme_end + 3);
    const std::string origin = request.url.substr(0, path_start);
    const std::string target = path_start == std::string::npos ? "/" : request.url.substr(path_start);

    Origin& connection = origin_for(origin);
    const std::lock_guard lock(connection.mutex);  // one request at a time per httplib::Client
    httplib::Client& client = *connection.client;
    if (!client.is_valid()) {
      return transport_error("cannot open a client for this URL (is TLS support built in?)", false);
    }

    // 2. Per-request settings: timeouts and nothing that weakens TLS.
    const auto [connect_s, connect_us] = split(request.connect_timeout);
    const auto [io_s, io_us] = split(request.timeout);
    client.set_connection_timeout(connect_s, connect_us);
    client.set_read_timeout(io_s, io_us);
    client.set_write_timeout(io_s, io_us);

    // 3. The request exactly as the SDK built it: method, target, headers, body.
    httplib::Request out;
    out.method = request.method;
    out.path = target;
    for (const auto& [name, value] : request.headers) out.headers.emplace(name, value);
    out.body = request.body;
    if (!request.body.empty() && !request.headers.contains("Content-Type")) {
      out.headers.emplace("Content-Type", "application/octet-stream");
    }

    // 4. The body, streamed into a string that may not grow past the cap.
    std::string body;
    bool over_cap = false;
    out.content_receiver = [&](const char* data, std::size_t length, std::uint64_t, std::uint64_t) {
      if (body.size() + length > request.max_response_bytes) {
        over_cap = true;
        return false;  // cpp-httplib stops reading: Error::Canceled
      }
      body.append(data, length);
      return true;
    };

    httplib::Response in;
    httplib::Error error = httplib::Error::Success;
    if (!client.send(out, in, error)) {
      if (over_cap) {  // trying again would only fetch the same oversized body
        return transport_error(
            "response body exceeds the " + std::to_string(request.max_response_bytes) + "-byte limit", false);
      }
      // A failed certificate check will fail again; a refused or reset connection may not.
      const bool retryable =
          error != httplib::Error::SSLServerVerification && error != httplib::Error::SSLLoadingCerts;
      return transport_error("cpp-httplib: " + httplib::to_string(error), retryable);
    }

    // 5. Any status is a response; the SDK maps 4xx/5xx to ApiError itself.
    studentsvc::HttpResponse response;
    response.status = in.status;
    for (const auto& [name, value] : in.headers) response.headers.add(name, value);
    response.body = std::move(body);
    return response;
  }

 private:
  struct Origin {
    std::mutex mutex;
    std::unique_ptr<httplib::Client> client;
  };

  Origin& origin_for(const std::string& origin) {
    const std::lock_guard lock(origins_mutex_);
    auto& slot = origins_[origin];
    if (!slot) {
      slot = std::make_unique<Origin>();
      slot->client = std::make_unique<httplib::Client>(origin);
      slot->client->set_keep_alive(true);
      slot->client->set_follow_location(false);  // a redirect is the SDK's to see, not to follow
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
      slot->client->enable_server_certificate_verification(true);
      if (!ca_bundle_.empty()) slot->client->set_ca_cert_path(ca_bundle_);
#endif
    }
    return *slot;
  }

  static std::pair<time_t, time_t> split(std::chrono::milliseconds ms) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(ms).count();
    return {static_cast<time_t>(us / 1'000'000), static_cast<time_t>(us % 1'000'000)};
  }

  /// Kind `transport`, like CurlTransport's failures; `retryable` tells the
  /// SDK's retry policy whether another attempt may succeed.
  static std::unexpected<studentsvc::ApiError> transport_error(std::string message, bool retryable) {
    studentsvc::ApiError e;
    e.kind = studentsvc::ErrorKind::transport;
    e.message = std::move(message);
    e.retryable = retryable;
    return std::unexpected(std::move(e));
  }

  std::string ca_bundle_;
  std::mutex origins_mutex_;
  std::map<std::string, std::unique_ptr<Origin>> origins_;
};

}  // namespace

int main(int argc, char** argv) {
  const bool use_env = argc > 1 && std::string_view(argv[1]) == "--env";
  const int first = use_env ? 2 : 1;
  const std::string_view perm = argc > first ? argv[first] : "1234567";

  std::optional<studentsvc::testing::MockServer> mock;
  auto options = use_env ? studentsvc::ClientOptions::from_env() : mock.emplace().client_options();
  if (!options) {
    std::cerr << "configuration: " << to_string(options.error()) << '\n';
    return 1;
  }
  options->transport = std::make_shared<HttplibTransport>(options->ca_bundle);  // the one line that plugs it in

  const studentsvc::Client client(*options);
  const auto student = client.get_student(perm);
  if (!student) {
    std::cerr << "get_student: " << to_string(student.error()) << '\n';
    return 1;
  }
  std::cout << student->perm << ": " << student->first_name << ' ' << student->last_name << " <"
            << student->email << ">\n";

  // Errors still come back typed: a perm the service does not know is not_found.
  const auto missing = client.get_student("9999999");
  std::cout << "9999999: " << (missing ? std::string("found?!") : to_string(missing.error())) << '\n';

  std::cout << "transport: cpp-httplib " CPPHTTPLIB_VERSION "; CurlTransport compiled in: "
            << (STUDENTSVC_WITH_CURL ? "yes" : "no") << "; User-Agent: " << studentsvc::user_agent << '\n';
  if (mock && mock->last_request().header("user-agent") != std::string(studentsvc::user_agent)) {
    std::cerr << "the mock did not see the SDK's User-Agent\n";
    return 1;
  }
  return missing || missing.error().kind != studentsvc::ErrorKind::not_found ? 1 : 0;
}

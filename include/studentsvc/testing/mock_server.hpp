#pragma once
/// @file testing/mock_server.hpp
/// @brief MockServer: an in-process fake of the Student Information and
/// Conversation Service on cpp-httplib, as strict as the interface, for the
/// SDK's tests and your app's. Link `studentsvc::testing`. It listens on
/// 127.0.0.1 on a free port.
///
/// Every request meets these steps in this order; the first that fails answers:
///  1. record, MockServerOptions::latency, MockServerOptions::intercept (fault injection);
///  2. `x-api-key`, on every path and method: exactly one field, equal to
///     MockServerOptions::api_key, else 401 AuthErrorBody `{"detail": ...}`;
///  3. routing: an unknown path → 404 SimpleMessageModel; a method other than
///     GET (HEAD included) on a student path → 405 with `Allow: GET`; an empty
///     perm segment → 404 (or validation, see MockServerOptions::empty_perm);
///     `/conversation[/...]` takes any method and goes to its handler here;
///  4. `svc-api-key`, then HTTP Basic: exactly one field each, a known value,
///     else 401 SimpleMessageModel with `WWW-Authenticate: Basic realm="..."`;
///  5. `svc-api-version`: absent means `2.0`; present (even empty) it must be
///     a single field naming one of MockServerOptions::api_versions, else 400;
///  6. validation: the perm is of MockServerOptions::perm_syntax (7 ASCII
///     digits by default), `/current` has `svc-user-jwt`,
///     else 400 WebApiInvalidModel with `modelState`;
///  7. the end-user token, when sent: one non-empty field naming a known token,
///     else 401; on the per-perm endpoint it must name that perm, else 404;
///  8. the lookup: 404 SimpleMessageModel, or 200.
/// Student-endpoint answers (steps 4 to 8) are `text/json; charset=utf-8` when
/// `Accept` ranks text/json above application/json, else `application/json`
/// (detail::prefers_text_json); the others are always application/json.
///
/// Header fields are checked as sent, not as cpp-httplib 0.11 reports them
/// (it drops empty ones and percent-decodes values): see detail/header_tap.hpp.
/// Over HTTPS cpp-httplib's own parsing stays, so there an empty field is not
/// seen (a repeated one still is).

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/auth.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/testing/detail/separate.hpp>
#include <studentsvc/testing/mock_data.hpp>

// The server itself (cpp-httplib's, ~6 s of parsing a TU) only where the
// bodies are: header-only, or the one TU of the library (src/testing.cpp).
#if !STUDENTSVC_TESTING_SEPARATE || defined(STUDENTSVC_TESTING_SOURCE)
#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>
#include <thread>
#include <utility>

#include <httplib.h>

#include <studentsvc/testing/detail/content_negotiation.hpp>
#include <studentsvc/testing/detail/header_tap.hpp>
#else
// What MockServerOptions::intercept and ::conversation take: a TU that writes
// one includes <httplib.h> itself.
namespace httplib {
struct Request;
struct Response;
}  // namespace httplib
#endif

namespace studentsvc::testing {

/// @brief One request as the mock received it.
struct RecordedRequest {
  std::string method;  ///< The HTTP method.
  std::string path;    ///< Path without the query.
  std::string target;  ///< Path with the query, as sent.
  std::multimap<std::string, std::string> query;  ///< Decoded query parameters.
  /// Names lower-cased, values as sent (empty ones kept); the first of repeated fields.
  std::map<std::string, std::string, std::less<>> headers;
  /// Every header field, repeated ones included, names lower-cased; sorted by
  /// name, the copies of one name in the order sent.
  std::multimap<std::string, std::string, std::less<>> fields;
  std::string body;    ///< The request body.
  std::string remote;  ///< "address:port" of the client's socket (one per connection).

  /// @brief The header's value, or std::nullopt; `name` in lower case.
  [[nodiscard]] std::optional<std::string> header(std::string_view name) const {
    const auto it = headers.find(name);
    if (it == headers.end()) return std::nullopt;
    return it->second;
  }
};

/// @brief What the mock answers for `/students/v2/students/` (an empty perm).
/// The interface does not say; a route template with a required segment does
/// not match it, so the default is 404.
enum class EmptyPermAnswer {
  not_found,      ///< 404 SimpleMessageModel at routing, before svc-api-key and Basic.
  invalid_model,  ///< 400 WebApiInvalidModel naming `perm`, at validation.
};

/// @brief The message texts of the mock's error bodies. The interface gives
/// none (only the meaning of the x-api-key one), so these are the mock's
/// choice; change them when your app shows or matches the service's texts.
struct MockMessages {
  std::string invalid_api_key = "Invalid API key. Supply a valid API key in the x-api-key header.";  ///< 401 `detail`.
  std::string no_route = "No HTTP resource was found that matches the request URI.";                ///< 404.
  std::string method_not_allowed = "The requested resource does not support this HTTP method.";     ///< 405.
  std::string invalid_svc_api_key = "Authorization has been denied for this request: invalid svc-api-key.";  ///< 401.
  std::string invalid_basic = "Authorization has been denied for this request.";  ///< 401.
  std::string invalid_user_token = "The user token is not valid.";                 ///< 401.
  std::string invalid_request = "The request is invalid.";                         ///< 400 `message`.
  std::string invalid_perm = "The perm must be a 7-digit number.";                 ///< 400 `modelState.perm`.
  /// 400 `modelState.perm` when MockServerOptions::perm_syntax is alphanumeric.
  std::string invalid_alphanumeric_perm = "The perm must be 7 letters or digits.";
  std::string missing_user_token = "The svc-user-jwt header is required.";         ///< 400 `modelState.svc-user-jwt`.
  std::string unsupported_version = "The API version requested is not supported.";  ///< 400 `modelState.svc-api-version`.
  std::string student_not_found = "Student not found.";                            ///< 404.
};

/// @brief What the mock accepts and serves; every field may be changed by a
/// test. The defaults are strict; the fields marked "lenient" relax a check
/// on purpose (an app that passes only with them has not proved it works).
struct MockServerOptions {
  /// Expected `x-api-key` (every request); missing, empty, repeated or different → 401 AuthErrorBody.
  std::string api_key = "mock-api-key";
  /// Expected `svc-api-key` on the student endpoints. It differs from `api_key`
  /// by default so that an app proves it configures both (client_options() does).
  /// std::nullopt (lenient): the header is not checked.
  std::optional<std::string> svc_api_key = std::string("mock-svc-api-key");
  /// Require HTTP Basic from one of `accounts` on the student endpoints.
  /// false (lenient): no Authorization needed, and every field is served.
  bool require_basic = true;
  /// Accounts accepted for HTTP Basic; the first is the one client_options() uses.
  std::vector<MockAccount> accounts = default_accounts();
  /// End-user tokens (opaque to the SDK) and the perm each one names.
  std::map<std::string, std::string> jwts = default_jwts();
  /// Students keyed by perm, as raw JSON (so tests can serve nulls, odd codes or wrong types).
  std::map<std::string, nlohmann::json> students = default_students();
  /// The perms the mock accepts (validation, step 6), as a deployment would:
  /// 7 ASCII digits by default; alphanumeric also takes letters. Its
  /// client_options() carry the same rule. Serve alphanumeric students by
  /// adding them, e.g. from alphanumeric_students().
  PermSyntax perm_syntax = PermSyntax::digits;
  /// `svc-api-version` values accepted; an absent header means "2.0".
  std::set<std::string> api_versions = {"2.0"};
  /// Test option: forces this Content-Type (e.g. "text/json") on every
  /// student-endpoint answer, whatever `Accept` says. std::nullopt (default):
  /// chosen by `Accept` (see the file comment).
  std::optional<std::string> content_type;
  /// The answer for an empty perm segment (the interface leaves it open).
  EmptyPermAnswer empty_perm = EmptyPermAnswer::not_found;
  /// The realm of `WWW-Authenticate: Basic realm="..."` on student-endpoint 401s.
  std::string basic_realm = "studentsvc-mock";
  /// The texts of the error bodies.
  MockMessages messages;
  /// Prefix the routes live under, e.g. "/api" (the interface leaves the base path open).
  /// Read once by the constructor (trailing slashes dropped); update() cannot move the routes.
  std::string path_prefix;
  /// Answers `/conversation[/...]` (any method) after the x-api-key check; no
  /// other header is checked there, as the interface names only the API key.
  /// The default echoes method, sub-path, query, content type and body as JSON;
  /// set this to model the real endpoint's methods and validation.
  std::function<void(const httplib::Request&, httplib::Response&)> conversation;
  /// The port to listen on (127.0.0.1); 0, the default: a free one. Read once
  /// by the constructor; a port in use leaves the server not running().
  int port = 0;
  /// Added before every answer, intercepted ones included (to model a slow service).
  std::chrono::milliseconds latency{0};
  /// Worker threads: cpp-httplib holds one for each busy keep-alive
  /// connection, so a client keeping more connections than this open waits
  /// for a thread (a load test of an app with a large pool wants more).
  /// Read once by the constructor; at least 1.
  std::size_t worker_threads = 32;
  /// How long an idle keep-alive connection stays open (whole seconds, at least 1;
  /// read once by the constructor). Over plain HTTP stop() ends idle connections
  /// at once; over HTTPS (cpp-httplib 0.11 cannot interrupt them) stop() and the
  /// destructor wait up to this long for a client that still holds one open.
  std::chrono::seconds keep_alive_timeout{2};
  /// How many of the latest requests requests() and last_request() keep (the
  /// oldest go first); request_count() counts every one all the same. Every
  /// request by default; a mock that serves a long run (the `studentsvc`
  /// tool's) keeps none, so its memory stays flat. Read per request.
  std::size_t max_recorded_requests = std::numeric_limits<std::size_t>::max();
  /// Runs first on every request (after recording and latency, with the body
  /// read); return true when it has answered (fault injection).
  std::function<bool(const httplib::Request&, httplib::Response&)> intercept;

  /// @brief The seed students (see mock_data.hpp).
  [[nodiscard]] static std::map<std::string, nlohmann::json> default_students() {
    return testing::default_students();
  }
};

/// @brief `options` for a deployment that issues alphanumeric perms: its
/// perm_syntax set to alphanumeric, alphanumeric_students() added to its
/// students, and the end-user token `mock-jwt-avery` naming `A1B2C3D`.
[[nodiscard]] inline MockServerOptions with_alphanumeric_perms(MockServerOptions options = {}) {
  options.perm_syntax = PermSyntax::alphanumeric;
  options.students.merge(alphanumeric_students());
  options.jwts.emplace("mock-jwt-avery", "A1B2C3D");
  return options;
}

/// @brief A faithful fake of the service on 127.0.0.1 (plain HTTP, or HTTPS
/// when built with a certificate). Started by the constructor, stopped by the
/// destructor. Thread-safe.
///
/// @code
/// studentsvc::testing::MockServer server;
/// auto options = server.client_options();  // base URL, both keys and Basic for the mock
/// studentsvc::Client client(options);
/// auto student = client.get_student("1234567");
/// @endcode
class MockServer {
 public:
  /// @brief Starts a plain-HTTP mock on 127.0.0.1 and a free port, with the
  /// default MockServerOptions (built where the bodies are, not in the caller's TU).
  MockServer();
  /// @brief Starts a plain-HTTP mock on 127.0.0.1 with these options.
  explicit MockServer(MockServerOptions options);

  /// @brief Starts an HTTPS mock with this PEM certificate (chain) and key.
  MockServer(MockServerOptions options, const std::string& cert_file, const std::string& key_file);

  ~MockServer();
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  /// @brief Stops listening and joins the server thread; safe to call twice.
  /// Waits for requests in progress; over HTTPS also up to
  /// MockServerOptions::keep_alive_timeout for clients that keep an idle connection open.
  void stop();

  /// @brief True when the server is listening.
  [[nodiscard]] bool running() const;
  /// @brief The port it listens on (0 when binding failed).
  [[nodiscard]] int port() const noexcept;
  /// @brief `http://127.0.0.1:PORT` (or https), plus the path prefix.
  [[nodiscard]] std::string base_url() const;

  /// @brief ClientOptions that this mock accepts: its base URL, API key and
  /// `svc-api-key` (SvcApiKeyMode::custom when it differs from the API key, as
  /// by default), the first (extended-approved) account, and the loopback
  /// opt-in for plain HTTP.
  [[nodiscard]] ClientOptions client_options() const;

  /// @brief Every request received so far, in arrival order.
  [[nodiscard]] std::vector<RecordedRequest> requests() const;
  /// @brief The most recent request (empty when none arrived).
  [[nodiscard]] RecordedRequest last_request() const;
  /// @brief How many requests arrived.
  [[nodiscard]] std::size_t request_count() const;
  /// @brief How many distinct client connections were seen.
  [[nodiscard]] std::size_t connection_count() const;
  /// @brief The most requests that were being handled at the same moment.
  [[nodiscard]] int max_in_flight() const noexcept;
  /// @brief Forgets recorded requests and connection counts.
  void clear_requests();

  /// @brief Runs `change` on the options under the server's lock (e.g. add a student).
  void update(const std::function<void(MockServerOptions&)>& change);

 private:
  class Impl;  // the server, its routes and state: defined with the bodies below
  std::unique_ptr<Impl> impl_;
};

// The bodies: the server (its routes: every handler), and MockServer's calls
// into it. Header-only by default; studentsvc::testing compiles them once
// (src/testing.cpp, STUDENTSVC_TESTING_SEPARATE=1, set by the target).
#if !STUDENTSVC_TESTING_SEPARATE || defined(STUDENTSVC_TESTING_SOURCE)
class MockServer::Impl {
 public:
  Impl(MockServerOptions options, const std::string& cert_file, const std::string& key_file);
  ~Impl() { stop(); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void stop() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  [[nodiscard]] bool running() const { return port_ > 0 && server_ && server_->is_running(); }
  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] std::string base_url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + prefix_;
  }

  [[nodiscard]] ClientOptions client_options() const;

  [[nodiscard]] std::vector<RecordedRequest> requests() const {
    const std::lock_guard lock(mutex_);
    return {requests_.begin(), requests_.end()};
  }
  [[nodiscard]] RecordedRequest last_request() const {
    const std::lock_guard lock(mutex_);
    return requests_.empty() ? RecordedRequest{} : requests_.back();
  }
  [[nodiscard]] std::size_t request_count() const {
    const std::lock_guard lock(mutex_);
    return received_;
  }
  [[nodiscard]] std::size_t connection_count() const {
    const std::lock_guard lock(mutex_);
    return connections_.size();
  }
  [[nodiscard]] int max_in_flight() const noexcept { return max_in_flight_.load(); }
  void clear_requests() {
    const std::lock_guard lock(mutex_);
    requests_.clear();
    received_ = 0;
    connections_.clear();
    max_in_flight_ = 0;
  }

  void update(const std::function<void(MockServerOptions&)>& change) {
    const std::lock_guard lock(mutex_);
    change(options_);
  }

 private:
  using Query = std::multimap<std::string, std::string>;

  /// Counts requests being answered at once.
  struct InFlight {
    explicit InFlight(Impl& server) : self(server) {
      const int now = ++self.in_flight_;
      int seen = self.max_in_flight_.load();
      while (now > seen && !self.max_in_flight_.compare_exchange_weak(seen, now)) {
      }
    }
    ~InFlight() { --self.in_flight_; }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    Impl& self;
  };

  /// Where routing sends a request.
  enum class Route { unknown, conversation, current, perm, empty_perm };

  static void send_json(httplib::Response& res, int status, const nlohmann::json& body,
                        const std::string& content_type = "application/json") {
    res.status = status;
    res.set_content(body.dump(), content_type + "; charset=utf-8");
  }

  /// The header's fields: how many were sent, and the first one's value.
  struct Field {
    std::size_t count = 0;
    std::string value;
  };
  [[nodiscard]] static Field field(const httplib::Request& req, const std::string& name) {
    Field f;
    f.count = req.get_header_value_count(name);
    if (f.count > 0) f.value = req.get_header_value(name);
    return f;
  }
  /// A credential is one non-empty field with the expected value; an empty or
  /// repeated one is refused even when a copy is right (a strict gateway does).
  [[nodiscard]] static bool credential_is(const httplib::Request& req, const std::string& name,
                                          const std::string& expected) {
    const Field f = field(req, name);
    return f.count == 1 && !f.value.empty() && f.value == expected;
  }

  /// The query of the request target. cpp-httplib fills Request::params from
  /// the target before the pre-routing hook and adds form-body fields after it,
  /// so the hook keeps a copy for the route handler of the same request
  /// (both run on one worker thread).
  [[nodiscard]] static Query& pending_query() {
    thread_local Query query;
    return query;
  }

  void record(const httplib::Request& req, const Query& query) {
    RecordedRequest r;
    r.method = req.method;
    r.path = req.path;
    r.target = req.target;
    r.query = query;
    for (const auto& [k, v] : req.headers) {
      std::string name;
      for (const char c : k) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      // Over HTTPS cpp-httplib adds the socket's addresses as pseudo-headers; they were not sent.
      if (tls_ && (name == "remote_addr" || name == "remote_port" || name == "local_addr" || name == "local_port")) {
        continue;
      }
      r.headers.emplace(name, v);
      r.fields.emplace(std::move(name), v);
    }
    r.body = req.body;
    r.remote = req.remote_addr + ":" + std::to_string(req.remote_port);
    const std::lock_guard lock(mutex_);
    connections_.insert(r.remote);
    ++received_;
    if (options_.max_recorded_requests == 0) return;
    if (requests_.size() >= options_.max_recorded_requests) requests_.pop_front();
    requests_.push_back(std::move(r));
  }

  [[nodiscard]] Route route_of(const std::string& path) const {
    const std::string conversation = prefix_ + "/conversation";
    if (path == conversation || path.starts_with(conversation + "/")) return Route::conversation;
    const std::string students = prefix_ + "/students/v2/students/";
    if (!path.starts_with(students)) return Route::unknown;
    const std::string_view rest = std::string_view(path).substr(students.size());
    if (rest.find('/') != std::string_view::npos) return Route::unknown;
    if (rest == "current") return Route::current;
    return rest.empty() ? Route::empty_perm : Route::perm;
  }

  /// Steps 2 to 8 of the file comment (step 1 is front_door).
  void dispatch(const httplib::Request& req, httplib::Response& res, const Query& query) {
    const MockServerOptions o = snapshot();
    if (!credential_is(req, "x-api-key", o.api_key)) {
      send_json(res, 401, nlohmann::json{{"detail", o.messages.invalid_api_key}});
      return;
    }
    const Route route = route_of(req.path);
    if (route == Route::conversation) {
      handle_conversation(req, res, o, query);
      return;
    }
    if (route == Route::unknown || (route == Route::empty_perm && o.empty_perm == EmptyPermAnswer::not_found)) {
      send_json(res, 404, nlohmann::json{{"message", o.messages.no_route}});
      return;
    }
    if (req.method != "GET") {
      res.set_header("Allow", "GET");
      send_json(res, 405, nlohmann::json{{"message", o.messages.method_not_allowed}});
      return;
    }
    const Answer answer{res, o, negotiated_type(req, o)};
    bool extended = true;
    if (!student_auth_ok(req, answer, extended) || !api_version_ok(req, answer)) return;
    if (route == Route::current) {
      handle_current(req, answer);
    } else {
      handle_student(req, answer, extended);
    }
  }

  /// The Content-Type of student-endpoint answers. Repeated Accept fields are
  /// one list (RFC 9110 §5.3).
  [[nodiscard]] static std::string negotiated_type(const httplib::Request& req, const MockServerOptions& o) {
    if (o.content_type) return *o.content_type;
    std::string accept;
    const auto [first, last] = req.headers.equal_range("Accept");
    for (auto it = first; it != last; ++it) accept += (it == first ? "" : ", ") + it->second;
    return detail::prefers_text_json(accept) ? "text/json" : "application/json";
  }

  /// Writes student-endpoint answers in the negotiated content type.
  struct Answer {
    httplib::Response& res;
    const MockServerOptions& o;
    std::string content_type;

    void json(int status, const nlohmann::json& body) const { send_json(res, status, body, content_type); }
    void message(int status, const std::string& text) const { json(status, nlohmann::json{{"message", text}}); }
    void unauthorized(const std::string& text) const {
      res.set_header("WWW-Authenticate", "Basic realm=\"" + o.basic_realm + "\"");
      message(401, text);
    }
    void invalid(const std::string& name, const std::string& text) const {
      json(400, nlohmann::json{{"message", o.messages.invalid_request}, {"modelState", {{name, {text}}}}});
    }
  };

  /// svc-api-key, then Basic. Sets `extended` to the account's approval.
  [[nodiscard]] static bool student_auth_ok(const httplib::Request& req, const Answer& a, bool& extended) {
    if (a.o.svc_api_key && !credential_is(req, "svc-api-key", *a.o.svc_api_key)) {
      a.unauthorized(a.o.messages.invalid_svc_api_key);
      return false;
    }
    if (!a.o.require_basic) return true;
    const Field auth = field(req, "Authorization");
    const auto space = auth.value.find(' ');
    if (auth.count == 1 && space != std::string::npos &&
        detail::lower_ascii(std::string_view(auth.value).substr(0, space)) == "basic") {  // RFC 9110 §11.1
      const std::string credentials = auth.value.substr(space + 1);
      for (const auto& account : a.o.accounts) {
        if (basic_authorization_value(BasicCredential{account.network_id, account.password}) ==
            "Basic " + credentials) {
          extended = account.extended_approved;
          return true;
        }
      }
    }
    a.unauthorized(a.o.messages.invalid_basic);
    return false;
  }

  [[nodiscard]] static bool api_version_ok(const httplib::Request& req, const Answer& a) {
    const Field version = field(req, "svc-api-version");
    if (version.count > 1 || a.o.api_versions.count(version.count == 0 ? "2.0" : version.value) == 0) {
      a.invalid("svc-api-version", a.o.messages.unsupported_version);
      return false;
    }
    return true;
  }

  /// The perm the end-user token names; std::nullopt after answering 401
  /// (an empty, repeated or unknown token).
  [[nodiscard]] static std::optional<std::string> token_perm(const Field& token, const Answer& a) {
    const auto it = token.count == 1 && !token.value.empty() ? a.o.jwts.find(token.value) : a.o.jwts.end();
    if (it == a.o.jwts.end()) {
      a.unauthorized(a.o.messages.invalid_user_token);
      return std::nullopt;
    }
    return it->second;
  }

  /// Withheld extended-only fields are left out; stored nulls of the other fields stay.
  static nlohmann::json without_extended_only(nlohmann::json student) {
    for (const char* key : {"firstNameLegal", "middleName", "gender"}) student.erase(key);
    return student;
  }

  static nlohmann::json minimal_of(const nlohmann::json& student) {
    nlohmann::json out = nlohmann::json::object();
    for (const char* key : {"perm", "firstName", "lastName", "suffix", "email"}) {
      if (student.contains(key)) out[key] = student[key];
    }
    return out;
  }

  static void handle_current(const httplib::Request& req, const Answer& a) {
    const Field token = field(req, "svc-user-jwt");
    if (token.count == 0) {
      a.invalid("svc-user-jwt", a.o.messages.missing_user_token);
      return;
    }
    const auto perm = token_perm(token, a);
    if (!perm) return;
    const auto student = a.o.students.find(*perm);
    if (student == a.o.students.end()) {
      a.message(404, a.o.messages.student_not_found);
      return;
    }
    a.json(200, minimal_of(student->second));
  }

  static void handle_student(const httplib::Request& req, const Answer& a, bool extended) {
    const std::string perm = req.path.substr(req.path.rfind('/') + 1);
    if (!is_valid_perm(perm, a.o.perm_syntax)) {
      a.invalid("perm", a.o.perm_syntax == PermSyntax::alphanumeric ? a.o.messages.invalid_alphanumeric_perm
                                                                     : a.o.messages.invalid_perm);
      return;
    }
    const Field token = field(req, "svc-user-jwt");
    if (token.count > 0) {
      const auto named = token_perm(token, a);
      if (!named) return;
      if (*named != perm) {  // the token restricts the answer to its own student
        a.message(404, a.o.messages.student_not_found);
        return;
      }
    }
    const auto student = a.o.students.find(perm);
    if (student == a.o.students.end()) {
      a.message(404, a.o.messages.student_not_found);
      return;
    }
    a.json(200, extended ? student->second : without_extended_only(student->second));
  }

  void handle_conversation(const httplib::Request& req, httplib::Response& res, const MockServerOptions& o,
                           const Query& query) const {
    if (o.conversation) {
      o.conversation(req, res);
      return;
    }
    nlohmann::json echo_query = nlohmann::json::object();
    for (const auto& [k, v] : query) echo_query[k] = v;
    const std::string base = prefix_ + "/conversation";
    send_json(res, 200,
              nlohmann::json{{"method", req.method},
                             {"subPath", req.path.size() > base.size() ? req.path.substr(base.size()) : ""},
                             {"query", echo_query},
                             {"contentType", req.get_header_value("Content-Type")},
                             {"body", req.body}});
  }

  [[nodiscard]] MockServerOptions snapshot() const {
    const std::lock_guard lock(mutex_);
    return options_;
  }

  /// cpp-httplib reads the body of these methods only after its pre-routing
  /// hook, so they are answered from a route instead (else the recorded body is
  /// empty and an intercepted body is left unread on the keep-alive
  /// connection, corrupting the next request).
  [[nodiscard]] static bool body_read_after_pre_routing(const httplib::Request& req) {
    return req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE";
  }

  /// Every request, once: step 1 (record, latency, intercept), then dispatch.
  void serve(const httplib::Request& req, httplib::Response& res, const Query& query) {
    record(req, query);
    const InFlight guard(*this);
    std::chrono::milliseconds latency{0};
    std::function<bool(const httplib::Request&, httplib::Response&)> intercept;
    {
      const std::lock_guard lock(mutex_);
      latency = options_.latency;
      intercept = options_.intercept;
    }
    if (latency.count() > 0) std::this_thread::sleep_for(latency);
    if (intercept && intercept(req, res)) return;
    dispatch(req, res, query);
  }

  void install_routes() {
    // Every method and path reaches serve(): from this hook when the body
    // needs no reading (GET, HEAD, OPTIONS, ...), else from the routes below.
    server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      Query query(req.params.begin(), req.params.end());
      if (body_read_after_pre_routing(req)) {
        pending_query() = std::move(query);
        return httplib::Server::HandlerResponse::Unhandled;
      }
      serve(req, res, query);
      return httplib::Server::HandlerResponse::Handled;
    });
    const auto with_body = [this](const httplib::Request& req, httplib::Response& res) {
      const Query query = std::exchange(pending_query(), Query());
      serve(req, res, query);
    };
    server_->Post(".*", with_body);
    server_->Put(".*", with_body);
    server_->Patch(".*", with_body);
    server_->Delete(".*", with_body);
  }

  /// "" or "/a/b": a leading slash, no trailing slash.
  [[nodiscard]] static std::string normalise_prefix(std::string prefix) {
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (!prefix.empty() && prefix.front() != '/') prefix.insert(prefix.begin(), '/');
    return prefix;
  }

  MockServerOptions options_;
  std::string prefix_;  ///< options_.path_prefix, normalised, fixed at construction.
  bool tls_ = false;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::deque<RecordedRequest> requests_;  ///< The latest max_recorded_requests.
  std::size_t received_ = 0;              ///< Every request since the start (or clear_requests()).
  std::set<std::string> connections_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
};

STUDENTSVC_TESTING_INLINE MockServer::Impl::Impl(MockServerOptions options, const std::string& cert_file,
                                              const std::string& key_file)
    : options_(std::move(options)), prefix_(normalise_prefix(options_.path_prefix)), tls_(!cert_file.empty()) {
  options_.path_prefix = prefix_;
  if (tls_) {
    server_ = std::make_unique<httplib::SSLServer>(cert_file.c_str(), key_file.c_str());
  } else {
    server_ = detail::make_plain_server();
  }
  const std::size_t threads = std::max<std::size_t>(1, options_.worker_threads);
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_keep_alive_max_count(100000);
  server_->set_tcp_nodelay(true);  // no Nagle/delayed-ACK stall between header and body writes
  const auto keep_alive = std::max<std::chrono::seconds::rep>(1, options_.keep_alive_timeout.count());
  server_->set_keep_alive_timeout(static_cast<time_t>(keep_alive));
  install_routes();
  if (options_.port > 0 && options_.port <= 65535) {
    port_ = server_->bind_to_port("127.0.0.1", options_.port) ? options_.port : 0;
  } else if (options_.port == 0) {
    port_ = server_->bind_to_any_port("127.0.0.1");
  }
  if (port_ > 0) {
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // cpp-httplib 0.11 has no wait_until_ready(); poll is_running() briefly.
    for (int i = 0; i < 2000 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

STUDENTSVC_TESTING_INLINE ClientOptions MockServer::Impl::client_options() const {
  const MockServerOptions o = snapshot();
  ClientOptions c;
  c.base_url = base_url();
  c.auth.api_key = o.api_key;
  if (o.svc_api_key && *o.svc_api_key != o.api_key) {
    c.auth.svc_api_key_mode = SvcApiKeyMode::custom;
    c.auth.svc_api_key = *o.svc_api_key;
  }
  if (!o.accounts.empty()) c.auth.basic = BasicCredential{o.accounts.front().network_id, o.accounts.front().password};
  c.allow_insecure_loopback = !tls_;
  c.perm_syntax = o.perm_syntax;
  return c;
}

// MockServer's calls, each into its Impl.
STUDENTSVC_TESTING_INLINE MockServer::MockServer() : MockServer(MockServerOptions{}) {}
STUDENTSVC_TESTING_INLINE MockServer::MockServer(MockServerOptions options)
    : MockServer(std::move(options), std::string(), std::string()) {}
STUDENTSVC_TESTING_INLINE MockServer::MockServer(MockServerOptions options, const std::string& cert_file,
                                              const std::string& key_file)
    : impl_(std::make_unique<Impl>(std::move(options), cert_file, key_file)) {}
STUDENTSVC_TESTING_INLINE MockServer::~MockServer() = default;
STUDENTSVC_TESTING_INLINE void MockServer::stop() { impl_->stop(); }
STUDENTSVC_TESTING_INLINE bool MockServer::running() const { return impl_->running(); }
STUDENTSVC_TESTING_INLINE int MockServer::port() const noexcept { return impl_->port(); }
STUDENTSVC_TESTING_INLINE std::string MockServer::base_url() const { return impl_->base_url(); }
STUDENTSVC_TESTING_INLINE ClientOptions MockServer::client_options() const { return impl_->client_options(); }
STUDENTSVC_TESTING_INLINE std::vector<RecordedRequest> MockServer::requests() const { return impl_->requests(); }
STUDENTSVC_TESTING_INLINE RecordedRequest MockServer::last_request() const { return impl_->last_request(); }
STUDENTSVC_TESTING_INLINE std::size_t MockServer::request_count() const { return impl_->request_count(); }
STUDENTSVC_TESTING_INLINE std::size_t MockServer::connection_count() const { return impl_->connection_count(); }
STUDENTSVC_TESTING_INLINE int MockServer::max_in_flight() const noexcept { return impl_->max_in_flight(); }
STUDENTSVC_TESTING_INLINE void MockServer::clear_requests() { impl_->clear_requests(); }
STUDENTSVC_TESTING_INLINE void MockServer::update(const std::function<void(MockServerOptions&)>& change) {
  impl_->update(change);
}
#endif

}  // namespace studentsvc::testing

#pragma once
/// @file testing/mock_server.hpp
/// @brief MockServer: an in-process fake of the Student Information and
/// Conversation Service on cpp-httplib, for the SDK's tests and your app's.
/// Link `studentsvc::testing`. It listens on 127.0.0.1 on a free port.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <studentsvc/auth.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc::testing {

/// @brief A service account the mock accepts on the student endpoints (HTTP Basic).
struct MockAccount {
  std::string network_id;  ///< The Basic user name.
  std::string password;    ///< The Basic password.
  /// Approved for the extended-only fields (firstNameLegal, middleName, gender).
  bool extended_approved = false;
};

/// @brief One request as the mock received it.
struct RecordedRequest {
  std::string method;  ///< The HTTP method.
  std::string path;    ///< Path without the query.
  std::string target;  ///< Path with the query, as sent.
  std::multimap<std::string, std::string> query;  ///< Decoded query parameters.
  std::map<std::string, std::string, std::less<>> headers;  ///< Names lower-cased.
  std::string body;    ///< The request body.
  std::string remote;  ///< "address:port" of the client's socket (one per connection).

  /// @brief The header's value, or std::nullopt; `name` in lower case.
  [[nodiscard]] std::optional<std::string> header(std::string_view name) const {
    const auto it = headers.find(name);
    if (it == headers.end()) return std::nullopt;
    return it->second;
  }
};

/// @brief What the mock accepts and serves; every field may be changed by a test.
struct MockServerOptions {
  /// Expected `x-api-key`; missing or different → 401 AuthErrorBody `{"detail": ...}`.
  std::string api_key = "mock-api-key";
  /// Expected `svc-api-key` on student endpoints; std::nullopt: the header is not checked.
  std::optional<std::string> svc_api_key = std::string("mock-api-key");
  /// Require HTTP Basic from one of `accounts` on student endpoints.
  bool require_basic = true;
  /// Accounts accepted for HTTP Basic; the first is the one client_options() uses.
  std::vector<MockAccount> accounts = {{"svc-registrar-app", "mock-password", true},
                                       {"svc-roster-app", "mock-password-2", false}};
  /// End-user tokens (opaque to the SDK) and the perm each one names.
  std::map<std::string, std::string> jwts = {{"mock-jwt-ana", "1234567"}, {"mock-jwt-li", "2345678"}};
  /// Students keyed by perm, as raw JSON (so tests can serve nulls, odd codes or wrong types).
  std::map<std::string, nlohmann::json> students = default_students();
  /// `svc-api-version` values accepted; anything else → 400 with modelState.
  std::set<std::string> api_versions = {"2.0"};
  /// Content-Type of successful student answers: "application/json" or "text/json".
  std::string content_type = "application/json";
  /// Prefix the routes live under, e.g. "/api" (the interface leaves the base path open).
  /// Read once by the constructor (trailing slashes dropped); update() cannot move the routes.
  std::string path_prefix;
  /// Answers `/conversation[/...]` (any method) after the API key check; the
  /// default echoes method, sub-path, query, content type and body as JSON.
  std::function<void(const httplib::Request&, httplib::Response&)> conversation;
  /// Added before every answer, intercepted ones included (to model a slow service).
  std::chrono::milliseconds latency{0};
  /// How long an idle keep-alive connection stays open (whole seconds, at least 1;
  /// read once by the constructor). cpp-httplib 0.11 cannot interrupt an idle
  /// connection, so stop() and the destructor wait up to this long for a client
  /// that still holds one open.
  std::chrono::seconds keep_alive_timeout{2};
  /// Runs first on every request (after recording and latency, with the body
  /// read); return true when it has answered (fault injection).
  std::function<bool(const httplib::Request&, httplib::Response&)> intercept;

  /// @brief Five realistic fake students (no real people), covering accents and
  /// 4-byte UTF-8, nulls and absent fields, an unknown code and the NFR flag.
  [[nodiscard]] static std::map<std::string, nlohmann::json> default_students() {
    using nlohmann::json;
    std::map<std::string, json> s;
    s["1234567"] = json{{"perm", "1234567"},
                        {"firstName", "Ana"},
                        {"lastName", "Núñez"},
                        {"suffix", ""},
                        {"email", "ana.nunez@example.edu"},
                        {"firstNameLegal", "Ana María"},
                        {"middleName", "Lucía"},
                        {"gender", "F"},
                        {"birthDate", "20040315"},
                        {"nfr", false},
                        {"internationalStudentCode", nullptr},
                        {"firstCensusQuarter", "20224"},
                        {"lastCensusQuarter", "20252"},
                        {"lastRegisteredQuarter", "20252"},
                        {"admitLevel", "FR"},
                        {"admitQuarter", "20224"},
                        {"pronounCode", "SH"}};
    s["2345678"] = json{{"perm", "2345678"},
                        {"firstName", "Li"},
                        {"lastName", "Wei"},
                        {"suffix", nullptr},
                        {"email", "li.wei@example.edu"},
                        {"firstNameLegal", "Wei"},
                        {"middleName", nullptr},
                        {"gender", "M"},
                        {"birthDate", "20011130"},
                        {"nfr", true},
                        {"internationalStudentCode", "F"},
                        {"firstCensusQuarter", "20203"},
                        {"lastCensusQuarter", "20244"},
                        {"lastRegisteredQuarter", "20244"},
                        {"admitLevel", "TR"},
                        {"admitQuarter", "20203"},
                        {"pronounCode", "HE"}};
    // Basic fields only; every extended field absent.
    s["3456789"] = json{{"perm", "3456789"},
                        {"firstName", "Jordan"},
                        {"lastName", "Okafor"},
                        {"suffix", "JR"},
                        {"email", "jordan.okafor@example.edu"}};
    // Unknown codes and an invalid birth date: kept raw, never a decode failure.
    s["4567890"] = json{{"perm", "4567890"},
                        {"firstName", "Sam"},
                        {"lastName", "Rivera"},
                        {"suffix", ""},
                        {"email", "sam.rivera@example.edu"},
                        {"gender", "X"},
                        {"birthDate", "20230230"},
                        {"internationalStudentCode", "Q"},
                        {"admitLevel", "GR"},
                        {"nfr", nullptr},
                        {"campusBuilding", "extra field the SDK ignores"}};
    // 4-byte UTF-8 and a resident alien.
    s["5678901"] = json{{"perm", "5678901"},
                        {"firstName", "Zoë 🌟"},
                        {"lastName", "Ørsted-Çelik"},
                        {"suffix", "III"},
                        {"email", "zoe.orsted@example.edu"},
                        {"internationalStudentCode", "R"},
                        {"admitLevel", ""},
                        {"birthDate", "19991231"},
                        {"nfr", false}};
    return s;
  }
};

/// @brief A faithful fake of the service on 127.0.0.1 (plain HTTP, or HTTPS
/// when built with a certificate). Started by the constructor, stopped by the
/// destructor. Thread-safe.
///
/// @code
/// studentsvc::testing::MockServer server;
/// auto options = server.client_options();  // base URL, keys and Basic for the mock
/// studentsvc::Client client(options);
/// auto student = client.get_student("1234567");
/// @endcode
class MockServer {
 public:
  /// @brief Starts a plain-HTTP mock on 127.0.0.1 and a free port.
  explicit MockServer(MockServerOptions options = {}) : MockServer(std::move(options), std::string(), std::string()) {}

  /// @brief Starts an HTTPS mock with this PEM certificate (chain) and key.
  MockServer(MockServerOptions options, const std::string& cert_file, const std::string& key_file)
      : options_(std::move(options)), prefix_(normalise_prefix(options_.path_prefix)), tls_(!cert_file.empty()) {
    options_.path_prefix = prefix_;
    if (tls_) {
      server_ = std::make_unique<httplib::SSLServer>(cert_file.c_str(), key_file.c_str());
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
    server_->new_task_queue = [] { return new httplib::ThreadPool(32); };
    server_->set_keep_alive_max_count(100000);
    server_->set_tcp_nodelay(true);  // no Nagle/delayed-ACK stall between header and body writes
    const auto keep_alive = std::max<std::chrono::seconds::rep>(1, options_.keep_alive_timeout.count());
    server_->set_keep_alive_timeout(static_cast<time_t>(keep_alive));
    install_routes();
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ > 0) {
      thread_ = std::thread([this] { server_->listen_after_bind(); });
      // cpp-httplib 0.11 has no wait_until_ready(); poll is_running() briefly.
      for (int i = 0; i < 2000 && !server_->is_running(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }

  ~MockServer() { stop(); }
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  /// @brief Stops listening and joins the server thread; safe to call twice.
  /// Waits for requests in progress, and up to MockServerOptions::keep_alive_timeout
  /// for clients that keep an idle connection open.
  void stop() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  /// @brief True when the server is listening.
  [[nodiscard]] bool running() const { return port_ > 0 && server_ && server_->is_running(); }
  /// @brief The port it listens on (0 when binding failed).
  [[nodiscard]] int port() const noexcept { return port_; }
  /// @brief `http://127.0.0.1:PORT` (or https), plus the path prefix.
  [[nodiscard]] std::string base_url() const {
    return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + prefix_;
  }

  /// @brief ClientOptions that this mock accepts: its base URL, API key, the
  /// first (extended-approved) account, and the loopback opt-in for plain HTTP.
  [[nodiscard]] ClientOptions client_options() const {
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
    return c;
  }

  /// @brief Every request received so far, in arrival order.
  [[nodiscard]] std::vector<RecordedRequest> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }
  /// @brief The most recent request (empty when none arrived).
  [[nodiscard]] RecordedRequest last_request() const {
    const std::lock_guard lock(mutex_);
    return requests_.empty() ? RecordedRequest{} : requests_.back();
  }
  /// @brief How many requests arrived.
  [[nodiscard]] std::size_t request_count() const {
    const std::lock_guard lock(mutex_);
    return requests_.size();
  }
  /// @brief How many distinct client connections were seen.
  [[nodiscard]] std::size_t connection_count() const {
    const std::lock_guard lock(mutex_);
    return connections_.size();
  }
  /// @brief The most requests that were being handled at the same moment.
  [[nodiscard]] int max_in_flight() const noexcept { return max_in_flight_.load(); }
  /// @brief Forgets recorded requests and connection counts.
  void clear_requests() {
    const std::lock_guard lock(mutex_);
    requests_.clear();
    connections_.clear();
    max_in_flight_ = 0;
  }

  /// @brief Runs `change` on the options under the server's lock (e.g. add a student).
  void update(const std::function<void(MockServerOptions&)>& change) {
    const std::lock_guard lock(mutex_);
    change(options_);
  }

 private:
  /// Counts requests being answered at once.
  struct InFlight {
    explicit InFlight(MockServer& server) : self(server) {
      const int now = ++self.in_flight_;
      int seen = self.max_in_flight_.load();
      while (now > seen && !self.max_in_flight_.compare_exchange_weak(seen, now)) {
      }
    }
    ~InFlight() { --self.in_flight_; }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    MockServer& self;
  };

  static void send_json(httplib::Response& res, int status, const nlohmann::json& body,
                        const std::string& content_type = "application/json") {
    res.status = status;
    res.set_content(body.dump(), (content_type + "; charset=utf-8").c_str());
  }
  static void message(httplib::Response& res, int status, const std::string& text) {
    send_json(res, status, nlohmann::json{{"message", text}});
  }
  static void invalid_model(httplib::Response& res, const std::string& field, const std::string& text) {
    send_json(res, 400,
              nlohmann::json{{"message", "The request is invalid."}, {"modelState", {{field, {text}}}}});
  }

  /// The query of the request target only (req.params also holds the fields
  /// of a form-encoded body).
  static std::multimap<std::string, std::string> query_of(const httplib::Request& req) {
    httplib::Params params;
    if (const auto q = req.target.find('?'); q != std::string::npos) {
      httplib::detail::parse_query_text(req.target.substr(q + 1), params);
    }
    return {params.begin(), params.end()};
  }

  void record(const httplib::Request& req) {
    RecordedRequest r;
    r.method = req.method;
    r.path = req.path;
    r.target = req.target;
    r.query = query_of(req);
    for (const auto& [k, v] : req.headers) {
      std::string name;
      for (const char c : k) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      // cpp-httplib adds the socket's addresses as pseudo-headers; they were not sent.
      if (name == "remote_addr" || name == "remote_port" || name == "local_addr" || name == "local_port") continue;
      r.headers.emplace(std::move(name), v);
    }
    r.body = req.body;
    r.remote = req.remote_addr + ":" + std::to_string(req.remote_port);
    const std::lock_guard lock(mutex_);
    connections_.insert(r.remote);
    requests_.push_back(std::move(r));
  }

  /// The x-api-key check every endpoint shares: 401 AuthErrorBody.
  [[nodiscard]] bool api_key_ok(const httplib::Request& req, httplib::Response& res, const MockServerOptions& o) {
    if (!req.has_header("x-api-key") || req.get_header_value("x-api-key") != o.api_key) {
      send_json(res, 401, nlohmann::json{{"detail", "Invalid API key. Supply a valid API key in the x-api-key header."}});
      return false;
    }
    return true;
  }

  /// svc-api-key, Basic and svc-api-version on the student endpoints.
  /// Sets `extended` to the account's approval.
  [[nodiscard]] bool student_auth_ok(const httplib::Request& req, httplib::Response& res, const MockServerOptions& o,
                                     bool& extended) {
    if (o.svc_api_key && req.get_header_value("svc-api-key") != *o.svc_api_key) {
      message(res, 401, "Authorization has been denied for this request: invalid svc-api-key.");
      return false;
    }
    extended = true;
    if (o.require_basic) {
      const std::string auth = req.get_header_value("Authorization");
      bool found = false;
      for (const auto& account : o.accounts) {
        if (auth == basic_authorization_value(BasicCredential{account.network_id, account.password})) {
          found = true;
          extended = account.extended_approved;
          break;
        }
      }
      if (!found) {
        message(res, 401, "Authorization has been denied for this request.");
        return false;
      }
    }
    const std::string version = req.has_header("svc-api-version") ? req.get_header_value("svc-api-version") : "2.0";
    if (o.api_versions.count(version) == 0) {
      invalid_model(res, "svc-api-version", "The API version requested is not supported.");
      return false;
    }
    return true;
  }

  static nlohmann::json without_extended_only(nlohmann::json student) {
    for (const char* key : {"firstNameLegal", "middleName", "gender"}) {
      if (student.contains(key)) student[key] = nullptr;
    }
    return student;
  }

  static nlohmann::json minimal_of(const nlohmann::json& student) {
    nlohmann::json out = nlohmann::json::object();
    for (const char* key : {"perm", "firstName", "lastName", "suffix", "email"}) {
      if (student.contains(key)) out[key] = student[key];
    }
    return out;
  }

  void handle_current(const httplib::Request& req, httplib::Response& res) {
    const MockServerOptions o = snapshot();
    bool extended = false;
    if (!api_key_ok(req, res, o) || !student_auth_ok(req, res, o, extended)) return;
    if (!req.has_header("svc-user-jwt") || req.get_header_value("svc-user-jwt").empty()) {
      invalid_model(res, "svc-user-jwt", "The svc-user-jwt header is required.");
      return;
    }
    const auto token = o.jwts.find(req.get_header_value("svc-user-jwt"));
    if (token == o.jwts.end()) {
      message(res, 401, "The user token is not valid.");
      return;
    }
    const auto student = o.students.find(token->second);
    if (student == o.students.end()) {
      message(res, 404, "Student not found.");
      return;
    }
    send_json(res, 200, minimal_of(student->second), o.content_type);
  }

  void handle_student(const httplib::Request& req, httplib::Response& res) {
    const MockServerOptions o = snapshot();
    bool extended = false;
    if (!api_key_ok(req, res, o) || !student_auth_ok(req, res, o, extended)) return;
    const std::string perm = req.matches.size() > 1 ? std::string(req.matches[1]) : std::string();
    if (perm.size() != 7 || perm.find_first_not_of("0123456789") != std::string::npos) {
      invalid_model(res, "perm", "The perm must be a 7-digit number.");
      return;
    }
    if (req.has_header("svc-user-jwt")) {
      const auto token = o.jwts.find(req.get_header_value("svc-user-jwt"));
      if (token == o.jwts.end()) {
        message(res, 401, "The user token is not valid.");
        return;
      }
      if (token->second != perm) {  // the token restricts the answer to its own student
        message(res, 404, "Student not found.");
        return;
      }
    }
    const auto student = o.students.find(perm);
    if (student == o.students.end()) {
      message(res, 404, "Student not found.");
      return;
    }
    send_json(res, 200, extended ? student->second : without_extended_only(student->second), o.content_type);
  }

  void handle_conversation(const httplib::Request& req, httplib::Response& res) {
    const MockServerOptions o = snapshot();
    if (!api_key_ok(req, res, o)) return;
    if (o.conversation) {
      o.conversation(req, res);
      return;
    }
    nlohmann::json query = nlohmann::json::object();
    for (const auto& [k, v] : query_of(req)) query[k] = v;
    const std::string base = prefix_ + "/conversation";
    send_json(res, 200,
              nlohmann::json{{"method", req.method},
                             {"subPath", req.path.size() > base.size() ? req.path.substr(base.size()) : ""},
                             {"query", query},
                             {"contentType", req.get_header_value("Content-Type")},
                             {"body", req.body}});
  }

  [[nodiscard]] MockServerOptions snapshot() const {
    const std::lock_guard lock(mutex_);
    return options_;
  }

  /// cpp-httplib reads the body of these methods only after its pre-routing
  /// hook, so they are recorded and intercepted from the route instead (else
  /// the recorded body is empty and an intercepted body is left unread on the
  /// keep-alive connection, corrupting the next request).
  [[nodiscard]] static bool body_read_after_pre_routing(const httplib::Request& req) {
    return req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE";
  }

  /// What every request meets first, once: record, latency, intercept.
  /// True when the intercept hook has answered.
  [[nodiscard]] bool front_door(const httplib::Request& req, httplib::Response& res) {
    record(req);
    const InFlight guard(*this);
    std::chrono::milliseconds latency{0};
    std::function<bool(const httplib::Request&, httplib::Response&)> intercept;
    {
      const std::lock_guard lock(mutex_);
      latency = options_.latency;
      intercept = options_.intercept;
    }
    if (latency.count() > 0) std::this_thread::sleep_for(latency);
    return intercept && intercept(req, res);
  }

  /// `text` with the characters that std::regex (ECMAScript) treats specially escaped.
  [[nodiscard]] static std::string regex_escape(const std::string& text) {
    std::string out;
    for (const char c : text) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
    return out;
  }

  void install_routes() {
    server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (body_read_after_pre_routing(req)) return httplib::Server::HandlerResponse::Unhandled;
      return front_door(req, res) ? httplib::Server::HandlerResponse::Handled
                                  : httplib::Server::HandlerResponse::Unhandled;
    });

    using Member = void (MockServer::*)(const httplib::Request&, httplib::Response&);
    auto route = [this](Member handler) {
      return [this, handler](const httplib::Request& q, httplib::Response& s) {
        if (body_read_after_pre_routing(q) && front_door(q, s)) return;
        const InFlight guard(*this);
        (this->*handler)(q, s);
      };
    };

    const std::string prefix = regex_escape(prefix_);
    const std::string students = prefix + "/students/v2/students";
    server_->Get(students + "/current", route(&MockServer::handle_current));
    server_->Get(students + "/([^/]*)", route(&MockServer::handle_student));

    const std::string conv = prefix + "/conversation(/.*)?";
    const auto conversation = route(&MockServer::handle_conversation);
    server_->Get(conv, conversation);
    server_->Post(conv, conversation);
    server_->Put(conv, conversation);
    server_->Patch(conv, conversation);
    server_->Delete(conv, conversation);
    server_->Options(conv, conversation);

    // Any other path: 404 SimpleMessageModel (after record and intercept).
    const auto unknown = route(&MockServer::handle_unknown);
    server_->Get(".*", unknown);
    server_->Post(".*", unknown);
    server_->Put(".*", unknown);
    server_->Patch(".*", unknown);
    server_->Delete(".*", unknown);
    server_->Options(".*", unknown);
  }

  void handle_unknown(const httplib::Request&, httplib::Response& res) {
    message(res, 404, "No HTTP resource was found that matches the request URI.");
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
  std::vector<RecordedRequest> requests_;
  std::set<std::string> connections_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
};

}  // namespace studentsvc::testing

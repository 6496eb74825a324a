#include "server.hpp"

#include <chrono>
#include <csignal>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <studentsvc/asio.hpp>
#include <studentsvc/client.hpp>

#include "bearer.hpp"
#include "page.hpp"

namespace student_portal {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
constexpr auto no_throw = net::as_tuple(net::use_awaitable);

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// What a request turned into, for the access log (never the token, a header
// or a student field).
struct Outcome {
  explicit Outcome(Page p, std::string_view type = "text/html; charset=utf-8",
                   std::optional<studentsvc::ErrorKind> error = std::nullopt)
      : page(std::move(p)), content_type(type), upstream_error(error) {}
  Page page;
  std::string_view content_type;
  std::optional<studentsvc::ErrorKind> upstream_error;
};

class Portal {
 public:
  Portal(net::io_context& io, studentsvc::ClientOptions options, std::ostream& log)
      : io_(io), acceptor_(io), signals_(io, SIGTERM, SIGINT), deadline_(io),
        client_(io.get_executor(), studentsvc::Client(std::move(options))), log_(log) {}

  bool listen(const Settings& settings, std::ostream& out) {
    boost::system::error_code ec;
    const auto address = net::ip::make_address(settings.host, ec);
    if (ec) {
      log_ << "student-portal: --listen: " << settings.host << " is not an IP address\n";
      return false;
    }
    const tcp::endpoint endpoint(address, settings.port);
    if (acceptor_.open(endpoint.protocol(), ec); !ec) {
      acceptor_.set_option(net::socket_base::reuse_address(true), ec);
      acceptor_.bind(endpoint, ec);
    }
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      log_ << "student-portal: cannot listen on " << settings.host << ':' << settings.port << ": " << ec.message()
           << '\n';
      return false;
    }
    const auto bound = acceptor_.local_endpoint();
    const std::string host = bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string();
    out << "student-portal: listening on http://" << host << ':' << bound.port() << std::endl;
    net::co_spawn(io_, accept_loop(), net::detached);
    signals_.async_wait([this](const boost::system::error_code& error, int signal) {
      if (!error) stop(signal == SIGTERM ? "SIGTERM" : "SIGINT");
    });
    return true;
  }

 private:
  // One connection's state, listed so that stop() can end idle keep-alive reads.
  struct Connection {
    beast::tcp_stream stream;
    bool reading = false;
  };

  net::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(no_throw);
      if (stopping_) break;
      if (ec) {  // out of descriptors, or a connection reset before it was accepted: pause, not spin
        net::steady_timer pause(io_, 50ms);
        co_await pause.async_wait(no_throw);
        continue;
      }
      connections_.emplace_back(Connection{beast::tcp_stream(std::move(socket))});
      net::co_spawn(io_, session(std::prev(connections_.end())), net::detached);
    }
  }

  net::awaitable<void> session(std::list<Connection>::iterator connection) {
    beast::tcp_stream& stream = connection->stream;
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(16 * 1024);
      parser.body_limit(4 * 1024);
      connection->reading = true;
      stream.expires_after(30s);
      auto [read_error, read_bytes] = co_await http::async_read(stream, buffer, parser, no_throw);
      connection->reading = false;
      if (read_error == http::error::end_of_stream || stopping_idle(read_error)) break;
      if (read_error) {
        if (read_error != beast::error::timeout && read_error != net::error::operation_aborted) {
          co_await write(stream, Request{}, Outcome{bad_request_page()}, false);
        }
        break;
      }
      Request request = parser.release();
      const auto started = std::chrono::steady_clock::now();
      Outcome outcome = co_await respond(request);
      const bool keep_alive = request.keep_alive() && !stopping_;
      log_request(request, outcome, std::chrono::steady_clock::now() - started);
      if (!co_await write(stream, request, std::move(outcome), keep_alive) || !keep_alive) break;
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    connections_.erase(connection);
    if (stopping_ && connections_.empty()) deadline_.cancel();
  }

  bool stopping_idle(const boost::system::error_code& ec) const {
    return stopping_ && ec == net::error::operation_aborted;
  }

  net::awaitable<Outcome> respond(const Request& request) {
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      co_return Outcome{method_not_allowed_page()};
    }
    const std::string_view target = request.target();
    const std::string_view path = target.substr(0, target.find('?'));
    if (path == "/healthz") co_return Outcome{Page{200, "ok\n"}, "text/plain; charset=utf-8"};
    if (path == stylesheet_path) co_return Outcome{Page{200, std::string(stylesheet())}, "text/css; charset=utf-8"};
    if (path != "/") co_return Outcome{not_found_page()};

    const auto token = bearer_token(request[http::field::authorization]);
    if (!token) co_return Outcome{sign_in_page()};
    // Whose token this is, then that student's record with the same token, so
    // the service returns only the token's own student.
    auto current = co_await client_.async_current_student(*token, net::use_awaitable);
    if (!current) co_return Outcome{error_page(current.error()), "text/html; charset=utf-8", current.error().kind};
    studentsvc::CallOptions call;
    call.user_jwt = std::string(*token);
    auto student = co_await client_.async_get_student(current->perm, call, net::use_awaitable);
    if (!student) co_return Outcome{error_page(student.error()), "text/html; charset=utf-8", student.error().kind};
    co_return Outcome{student_page(*student)};
  }

  static net::awaitable<bool> write(beast::tcp_stream& stream, const Request& request, Outcome outcome,
                                    bool keep_alive) {
    Response response(static_cast<http::status>(outcome.page.status), request.version() == 10 ? 10 : 11);
    response.set(http::field::content_type, outcome.content_type);
    for (const auto& [name, value] : security_headers) response.set(name, value);
    if (outcome.page.status == 401) response.set(http::field::www_authenticate, "Bearer");
    if (outcome.page.status == 405) response.set(http::field::allow, "GET, HEAD");
    response.keep_alive(keep_alive);
    response.content_length(outcome.page.html.size());
    if (request.method() != http::verb::head) response.body() = std::move(outcome.page.html);
    stream.expires_after(30s);
    auto [ec, written] = co_await http::async_write(stream, response, no_throw);
    co_return !ec;
  }

  void log_request(const Request& request, const Outcome& outcome, std::chrono::steady_clock::duration took) {
    // Only the paths the portal serves are written out: a URL may hold anything.
    const std::string_view target = request.target();
    const std::string_view path = target.substr(0, target.find('?'));
    const bool known = path == "/" || path == "/healthz" || path == stylesheet_path;
    log_ << "student-portal: " << request.method_string() << ' ' << (known ? path : "(other path)") << ' '
         << outcome.page.status << ' ' << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << "ms";
    if (outcome.upstream_error) log_ << " upstream=" << to_string(*outcome.upstream_error);
    log_ << '\n' << std::flush;
  }

  void stop(std::string_view signal) {
    log_ << "student-portal: " << signal << ", stopping\n" << std::flush;
    stopping_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (Connection& c : connections_) {
      if (c.reading) c.stream.socket().cancel(ignored);  // busy ones answer, then close
    }
    if (connections_.empty()) return;
    deadline_.expires_after(10s);
    deadline_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) io_.stop();  // requests still waiting on the service are dropped
    });
  }

  net::io_context& io_;
  tcp::acceptor acceptor_;
  net::signal_set signals_;
  net::steady_timer deadline_;
  studentsvc::asio::client client_;
  std::ostream& log_;
  std::list<Connection> connections_;
  bool stopping_ = false;
};

}  // namespace

int serve(const Settings& settings, studentsvc::ClientOptions options, std::ostream& out, std::ostream& log) {
  net::io_context io(1);
  Portal portal(io, std::move(options), log);
  if (!portal.listen(settings, out)) return exit_failure;
  io.run();
  log << "student-portal: stopped\n" << std::flush;
  return exit_ok;
}

}  // namespace student_portal

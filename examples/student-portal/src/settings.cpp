#include "settings.hpp"

#include <charconv>

namespace student_portal {

std::expected<std::optional<Settings>, std::string> parse_arguments(std::span<const std::string_view> args) {
  std::optional<std::string_view> listen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") return std::optional<Settings>{};
    if (arg == "--listen" && i + 1 < args.size()) {
      listen = args[++i];
    } else if (arg.starts_with("--listen=")) {
      listen = arg.substr(9);
    } else {
      return std::unexpected(arg == "--listen" ? "--listen needs HOST:PORT" : "unknown argument " + std::string(arg));
    }
  }
  if (!listen) return std::unexpected("--listen HOST:PORT is required");
  const std::size_t colon = listen->rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::unexpected("--listen takes HOST:PORT");
  std::string_view host = listen->substr(0, colon);
  const std::string_view port_text = listen->substr(colon + 1);
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535) {
    return std::unexpected("--listen: the port must be a number from 0 to 65535");
  }
  if (host.empty()) return std::unexpected("--listen: the host is empty");
  return std::optional<Settings>{Settings{std::string(host), static_cast<std::uint16_t>(port)}};
}

studentsvc::ClientOptions portal_client_options(studentsvc::ClientOptions options) {
  using namespace std::chrono_literals;
  options.circuit_breaker = studentsvc::CircuitBreakerOptions{.failure_threshold = 3, .cool_down = 10s};
  options.connect_timeout = 2s;
  options.timeout = 5s;
  options.retry.max_attempts = 2;
  options.retry.initial_backoff = 100ms;
  options.retry.max_retry_after = 1s;
  options.retry.max_total_time = 8s;
  return options;
}

}  // namespace student_portal

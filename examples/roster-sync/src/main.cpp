// roster-sync: the nightly job that keeps a database's `students` table in
// step with the Student Information Service (README.md).
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/options.hpp>

#include "command_line.hpp"
#include "exit_codes.hpp"
#include "sync.hpp"

int main(int argc, char** argv) {
  using namespace roster_sync;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  const auto env = [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto command = parse_command_line(args, env);
  if (!command) {
    std::cerr << "roster-sync: " << command.error() << " (roster-sync --help)\n";
    return exit_usage;
  }
  if (command->help) {
    std::cout << usage_text;
    return exit_synced;
  }

  auto options = studentsvc::ClientOptions::from_env();
  if (!options) {
    std::cerr << "roster-sync: " << studentsvc::to_string(options.error()) << "\n";
    return exit_configuration;
  }
  // A service that is down stops the run at once (exit 75), instead of every perm waiting out its retries.
  if (!options->circuit_breaker) {
    options->circuit_breaker = studentsvc::CircuitBreakerOptions{.failure_threshold = command->breaker_threshold};
  }
  const auto perms = PermFile::open(command->settings.perms_path, command->settings.perm_column);
  if (!perms) {
    std::cerr << "roster-sync: " << perms.error() << "\n";
    return exit_configuration;
  }
  auto db = open_database(command->settings.db_url);
  if (!db) {
    std::cerr << "roster-sync: " << db.error().message << "\n";
    return exit_configuration;
  }
  const studentsvc::Client client(std::move(*options));
  return run_sync(command->settings, client, **db, *perms, std::cerr);
}

#pragma once
// One command of the tool, as the GitHub CLI has one per pkg/cmd/<command>/:
// its name, help, options, misuse rules and run function, in its own folder
// under cmd/, collected in one table (commands.cpp) that run_cli() walks. A
// command writes only to the streams of its Session (io_streams.hpp).

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include <studentsvc/studentsvc.hpp>

#include "args.hpp"
#include "io_streams.hpp"

namespace studentsvc_cli {

class ConfigSources;
struct GetInput;

/// What run_cli() sets up before a command runs.
enum class Needs {
  nothing,        ///< only the arguments (version, mock)
  configuration,  ///< the settings and where each came from (config, doctor)
  client,         ///< a Client built from them (get, current, conversation)
};

/// What a command runs with; run_cli() fills what the command's Needs asks for.
struct Session {
  Session(const Args& a, IoStreams streams) : args(a), io(streams) {}
  const Args& args;
  IoStreams io;                                ///< where the command writes
  std::shared_ptr<GetInput> get_input;         ///< what get's prepare() opened: the perms
  const ConfigSources* sources = nullptr;      ///< Needs::configuration and Needs::client
  const studentsvc::Client* client = nullptr;  ///< Needs::client
  std::optional<std::string> demo_jwt;         ///< --mock: the mock's demo user JWT
};

struct Command {
  std::string_view name;
  std::string_view help;  ///< `studentsvc help NAME`, `NAME --help`
  Needs needs = Needs::nothing;
  /// Registers the command's own options on its CLI11 subcommand.
  void (*add_options)(CLI::App& sub, Args& a) = nullptr;
  /// The rules CLI11 does not check; nullopt when the arguments fit.
  std::optional<std::string> (*misuse)(const Args& a) = nullptr;
  /// Runs before anything starts (mock, profile, client): a usage or input
  /// error is reported first. Returns an exit status to stop with, or nullopt.
  std::optional<int> (*prepare)(Session& s) = nullptr;
  int (*run)(Session& s) = nullptr;
  /// Needs::client: adjusts the ClientOptions before the Client is made.
  void (*configure)(const Args& a, studentsvc::ClientOptions& options) = nullptr;
};

/// The misuse rule every command but `get` shares.
[[nodiscard]] std::optional<std::string> batch_format_misuse(const Args& a);

}  // namespace studentsvc_cli

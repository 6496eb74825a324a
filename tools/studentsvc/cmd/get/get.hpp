#pragma once
// `studentsvc get`: one perm, or a roster (arguments, --from FILE|-, a CSV
// column) on the library's streamed batch, results in input order.

#include <cstddef>
#include <optional>
#include <string>

#include <studentsvc/studentsvc.hpp>

#include "command.hpp"

namespace studentsvc_cli {

/// The input as the output names a failed lookup: a perm-like input as it is;
/// anything else (a secret pasted into the wrong place, say) as its position "#N".
[[nodiscard]] std::string shown_perm(const std::string& input, std::size_t index);

/// A failure worth retrying later (--failed-to): the transport, 429, 5xx (or
/// anything the SDK marks retryable), an error every lookup would repeat (401,
/// TLS, a wrong address: retry once the configuration is fixed), or a lookup
/// not sent (cancelled); not the service's 404, a 400 or a bad perm.
[[nodiscard]] bool worth_retrying(const studentsvc::ApiError& e);

/// Opens the perms before anything starts (get's Command::prepare); an exit status to stop with, or nullopt.
[[nodiscard]] std::optional<int> prepare_get(Session& s);

/// Looks up the perms prepare_get() opened with the session's client and writes them; the exit status.
[[nodiscard]] int run_get(Session& s);

extern const Command get_command;

}  // namespace studentsvc_cli

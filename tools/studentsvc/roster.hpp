#pragma once
// Roster lookups for `studentsvc get`: many perms, results handed on in input
// order as each chunk completes, so output streams and memory stays flat.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>

namespace studentsvc_cli {

/// A 404 that is not the service's (the SDK's "endpoint not found" hint): the
/// base URL or its path prefix is wrong, so every lookup would get it.
[[nodiscard]] inline bool is_wrong_address(const studentsvc::ApiError& e) {
  return e.kind == studentsvc::ErrorKind::http_status && e.status == 404 &&
         e.message.starts_with("endpoint not found");
}

/// An error that every further lookup of the batch would repeat: the API key or
/// Basic credential refused (401), or a transport failure that retrying cannot
/// cure (TLS or certificate, a host that does not resolve), or a wrong address.
[[nodiscard]] inline bool repeats_for_every_lookup(const studentsvc::ApiError& e) {
  using studentsvc::ErrorKind;
  return e.kind == ErrorKind::unauthorized || (e.kind == ErrorKind::transport && !e.retryable) ||
         is_wrong_address(e);
}

/// Called with each perm and its result, in input order; return false to stop sending.
using ResultSink = std::function<bool(const std::string& perm, const studentsvc::Result<studentsvc::StudentExtended>&)>;

/// Looks up `perms` through Client::get_students in chunks of `chunk` (a few
/// times the concurrency), handing each result to `sink` as its chunk completes.
/// Returns how many perms were looked up (fewer when `sink` said stop).
/// The one place the library's streaming batch API (issue 10) will replace.
inline std::size_t look_up_in_chunks(const studentsvc::Client& client, std::span<const std::string> perms,
                                     const studentsvc::BatchOptions& batch, std::size_t chunk,
                                     const ResultSink& sink) {
  chunk = std::max<std::size_t>(chunk, 1);
  std::size_t done = 0;
  while (done < perms.size()) {
    const auto part = perms.subspan(done, std::min(chunk, perms.size() - done));
    const auto results = client.get_students(part, batch);
    for (std::size_t i = 0; i < part.size(); ++i) {
      ++done;
      if (!sink(part[i], results[i])) return done;
    }
  }
  return done;
}

}  // namespace studentsvc_cli

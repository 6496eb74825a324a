#pragma once
// Roster lookups for `studentsvc get`: many perms on the library's streamed
// batch, results handed on in input order as they come, so output streams and
// memory stays flat.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

/// Called with each input's position, perm and result, in input order; return false to stop sending.
using ResultSink = std::function<bool(std::size_t index, const std::string& perm,
                                      const studentsvc::Result<studentsvc::StudentExtended>&)>;
/// Called with each result as it arrives (completion order); return false to stop sending.
using ArrivalCheck = std::function<bool(const studentsvc::Result<studentsvc::StudentExtended>&)>;

/// Looks up `perms` through Client::for_each_student (the library's streamed
/// batch: at most `options.max_concurrency` in flight) and hands each result
/// to `sink` in input order, as soon as it and every earlier one are in; only
/// results that came back ahead of a slower earlier lookup wait. Returns how
/// many results went to `sink`: fewer when it said stop, which also cancels
/// the lookups in flight and sends no more.
///
/// `on_arrival`, when set, sees each result the moment it arrives, so a
/// decision over "the first N answers" does not wait for a slow earlier
/// lookup while more are sent. When it says stop, the answers already in are
/// still handed to `sink` (in input order, with gaps where a lookup was
/// cancelled), so none is lost.
inline std::size_t look_up_in_order(const studentsvc::Client& client, std::span<const std::string> perms,
                                    studentsvc::StreamOptions options, const ResultSink& sink,
                                    const ArrivalCheck& on_arrival = {}) {
  std::map<std::size_t, studentsvc::Result<studentsvc::StudentExtended>> ahead;  // in, but not yet in order
  std::size_t next = 0;
  std::size_t delivered = 0;
  bool stopped = false;
#if STUDENTSVC_HAS_STOP_TOKEN
  std::stop_source stop;
  options.stop = stop.get_token();
#endif
  const auto stop_sending = [&] {
    stopped = true;
#if STUDENTSVC_HAS_STOP_TOKEN
    stop.request_stop();
#endif
  };
  client.for_each_student(
      perms,
      [&](std::size_t index, std::string_view, studentsvc::Result<studentsvc::StudentExtended> result) {
        if (stopped) return;
        const bool go_on = !on_arrival || on_arrival(result);
        ahead.emplace(index, std::move(result));
        if (!go_on) {
          stop_sending();
          for (const auto& [i, r] : ahead) {  // every answer in is handed on, in input order
            ++delivered;
            (void)sink(i, perms[i], r);
          }
          ahead.clear();
          return;
        }
        while (!ahead.empty() && ahead.begin()->first == next) {
          const auto node = ahead.extract(ahead.begin());
          ++next;
          ++delivered;
          if (!sink(node.key(), perms[node.key()], node.mapped())) {
            stop_sending();
            return;
          }
        }
      },
      options);
  return delivered;
}

}  // namespace studentsvc_cli

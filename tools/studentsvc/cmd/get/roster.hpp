#pragma once
// Roster lookups for `studentsvc get`: many perms on the library's streamed
// batch, results handed on in input order as they come, so output streams and
// memory stays flat.

#include <atomic>
#include <cstddef>
#include <functional>
#include <span>
#include <string>

#include <studentsvc/studentsvc.hpp>

namespace studentsvc_cli {

class PermInput;

/// A 404 that is not the service's (the SDK's "endpoint not found" hint): the
/// base URL or its path prefix is wrong, so every lookup would get it.
[[nodiscard]] bool is_wrong_address(const studentsvc::ApiError& e);

/// Called with each input's position, perm and result, in input order; return false to stop sending.
using ResultSink = std::function<bool(std::size_t index, const std::string& perm,
                                      const studentsvc::Result<studentsvc::StudentExtended>&)>;
/// Called with each result as it arrives (completion order); return false to stop sending.
using ArrivalCheck = std::function<bool(const studentsvc::Result<studentsvc::StudentExtended>&)>;
/// Called, in any order, with each input that did not go to the sink because
/// the batch had stopped: a perm not sent, cancelled in flight, or answered
/// after the stop.
using UnwrittenSink = std::function<void(std::size_t index, const std::string& perm,
                                         const studentsvc::Result<studentsvc::StudentExtended>&)>;

/// Who stops a batch: the sink, the arrival check, or a signal (stop_from_anywhere).
class BatchStop {
 public:
  /// Thread-safe: the signal watcher calls it.
  void request() noexcept {
    requested_.store(true);
    source_.request_stop();
  }
  [[nodiscard]] bool requested() const noexcept { return requested_.load(); }
  [[nodiscard]] studentsvc::StopToken token() const noexcept { return source_.get_token(); }

 private:
  std::atomic<bool> requested_{false};
  studentsvc::StopSource source_;
};

/// Looks up `perms` (any input range of strings, read lazily) through
/// Client::for_each_student (the library's streamed batch: at most
/// `options.max_concurrency` in flight) and hands each result to `sink` in
/// input order, as soon as it and every earlier one are in; only results that
/// came back ahead of a slower earlier lookup wait. Returns how many results
/// went to `sink`.
///
/// A stop (the sink says so, `on_arrival` does, or `stop` is requested from
/// outside) cancels the lookups in flight and sends no more; every input that
/// did not go to `sink` then goes to `unwritten`, so none is lost. When
/// `on_arrival` says stop, the answers already in still go to `sink` first (in
/// input order, with gaps where a lookup was still in flight).
template <class Perms>
std::size_t look_up_in_order(const studentsvc::Client& client, Perms&& perms, studentsvc::StreamOptions options,
                             BatchStop& stop, const ResultSink& sink, const ArrivalCheck& on_arrival = {},
                             const UnwrittenSink& unwritten = {});

// Defined in roster.cpp for the two inputs `get` has: its arguments and --from.
extern template std::size_t look_up_in_order<std::span<const std::string>>(const studentsvc::Client&,
                                                                           std::span<const std::string>&&,
                                                                           studentsvc::StreamOptions, BatchStop&,
                                                                           const ResultSink&, const ArrivalCheck&,
                                                                           const UnwrittenSink&);
extern template std::size_t look_up_in_order<PermInput&>(const studentsvc::Client&, PermInput&,
                                                         studentsvc::StreamOptions, BatchStop&, const ResultSink&,
                                                         const ArrivalCheck&, const UnwrittenSink&);

}  // namespace studentsvc_cli

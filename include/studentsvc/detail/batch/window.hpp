#pragma once
/// @file detail/batch/window.hpp
/// @brief The streaming batch's driver, transport-agnostic: reads any input
/// range lazily on the calling thread, keeps at most `max_concurrency` lookups
/// in flight, hands each result to the caller's callback on the calling thread
/// as it comes, stops sending on a stop request or a fail-fast error, and
/// reports each lookup it did not send as `cancelled`. Memory is flat in the
/// number of inputs: only the in-flight inputs and undelivered results are kept.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <string>
#include <unordered_map>
#include <utility>

#include <studentsvc/detail/batch/fail_fast.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/streaming.hpp>

namespace studentsvc::detail {

/// Where a batch is (the public type).
using BatchProgress = studentsvc::BatchProgress;

/// How a batch runs.
struct BatchWindowOptions {
  std::size_t max_concurrency = 16;  ///< Lookups in flight at once; 0 is 1.
  bool fail_fast = true;             ///< Stop sending after an error for which fails_every_request() holds.
};

/// How a batch ended (the public type).
using BatchWindowSummary = studentsvc::BatchSummary;

/// The error of an input not sent because the caller asked the batch to stop.
[[nodiscard]] inline ApiError not_sent_after_stop() {
  ApiError e;
  e.kind = ErrorKind::cancelled;
  e.message = "not sent: the batch was stopped (stop requested)";
  return e;
}

/// A stop token for a batch nobody stops.
struct NeverStop {
  [[nodiscard]] static constexpr bool stop_requested() noexcept { return false; }
};

/// A progress callback that does nothing.
struct NoProgress {
  void operator()(const BatchProgress&) const noexcept {}
};

/// @brief Runs one lookup per input of `inputs`, at most
/// `options.max_concurrency` at once, and returns when every input has a result.
///
/// - `start(index, input, done)` starts the lookup of `input` (the index-th,
///   0-based) and must arrange for `done(Result<T>)` to be called exactly once,
///   from any thread, synchronously too. It is called on this thread.
/// - `on_result(index, input, Result<T>)` and `on_progress(BatchProgress)` run
///   on this thread, one at a time, in completion order, so they may block
///   (the batch waits) and need no locking of their own.
/// - `stop` is anything with `stop_requested()` (std::stop_token): once true,
///   nothing more is started. In-flight lookups are the caller's to cancel
///   (give each the same token); the batch waits for their results.
/// - With `fail_fast`, an error for which fails_every_request() holds stops
///   the sending; lookups already in flight finish.
/// - Every input not started is delivered as `cancelled`: skipped_after(trigger)
///   after fail-fast, not_sent_after_stop() after a stop request.
/// - An exception from a callback propagates; lookups still in flight then end
///   into state they share with `done`, never into freed memory.
template <class T, std::ranges::input_range Inputs, class Start, class OnResult, class Stop = NeverStop,
          class OnProgress = NoProgress>
BatchWindowSummary run_batch_window(Inputs&& inputs, Start&& start, OnResult&& on_result,
                                    BatchWindowOptions options = {}, const Stop& stop = {},
                                    OnProgress&& on_progress = {}) {
  using Input = std::ranges::range_value_t<Inputs>;
  struct Finished {
    std::size_t index;
    Result<T> result;
  };
  // Shared with every `done`: one may still be returning after the batch has.
  struct Shared {
    std::mutex mutex;
    std::condition_variable ready_cv;
    std::deque<Finished> ready;
  };
  const auto shared = std::make_shared<Shared>();
  const std::size_t window = std::max<std::size_t>(options.max_concurrency, 1);

  BatchWindowSummary summary;
  BatchProgress progress;
  if constexpr (std::ranges::sized_range<Inputs>) progress.total = static_cast<std::size_t>(std::ranges::size(inputs));
  std::unordered_map<std::size_t, Input> in_flight;  // at most `window` inputs kept
  std::size_t next_index = 0;

  const auto deliver = [&](std::size_t index, const Input& input, Result<T> result) {
    if (!result) {
      ++progress.failures;
      if (options.fail_fast && !summary.stopped_by && fails_every_request(result.error())) {
        summary.stopped_by = result.error();
      }
    }
    ++progress.done;
    on_result(index, input, std::move(result));
    on_progress(static_cast<const BatchProgress&>(progress));
  };

  auto it = std::ranges::begin(inputs);
  const auto end = std::ranges::end(inputs);
  for (;;) {
    std::deque<Finished> finished;
    {
      const std::lock_guard lock(shared->mutex);
      finished.swap(shared->ready);
    }
    for (auto& f : finished) {
      auto node = in_flight.extract(f.index);
      deliver(f.index, node.mapped(), std::move(f.result));
    }
    const bool stopping = summary.stopped_by.has_value() || stop.stop_requested();
    if (!stopping && it != end && in_flight.size() < window) {
      const std::size_t index = next_index++;
      const Input& input = in_flight.emplace(index, *it).first->second;
      ++it;
      ++summary.sent;
      start(index, input, [shared, index](Result<T> result) {
        {
          const std::lock_guard lock(shared->mutex);
          shared->ready.push_back(Finished{index, std::move(result)});
        }
        shared->ready_cv.notify_one();
      });
      continue;
    }
    if (stopping && it != end) {
      for (; it != end; ++it) {
        ++summary.not_sent;
        const Input input = *it;
        const ApiError why = summary.stopped_by ? skipped_after(*summary.stopped_by) : not_sent_after_stop();
        deliver(next_index++, input, std::unexpected(why));
      }
      continue;
    }
    if (in_flight.empty() && it == end) break;
    // Wait for a result; wake now and then to see a stop request.
    std::unique_lock lock(shared->mutex);
    shared->ready_cv.wait_for(lock, std::chrono::milliseconds{20}, [&] { return !shared->ready.empty(); });
  }
  summary.stop_requested = !summary.stopped_by && stop.stop_requested();
  return summary;
}

}  // namespace studentsvc::detail

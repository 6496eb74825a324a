#pragma once
/// @file detail/call/hedge.hpp
/// @brief The hedging stage of a call (ClientOptions::hedging): one attempt
/// sent as up to two copies (HedgeRace); the first answer wins, the other
/// copy's transfer is stopped. Call::send_attempt hands an attempt here when
/// hedges() says so.
/// @sa docs/pipeline.md, HedgingOptions

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <studentsvc/detail/call/circuit_breaker.hpp>
#include <studentsvc/detail/call/context.hpp>
#include <studentsvc/detail/call/stop.hpp>
#include <studentsvc/detail/limits/rate_limit.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

/// The two copies of one attempt and the timer of the second. Each has its
/// own stop, following the call's, so the loser (and the timer) can be
/// stopped alone. Completions may come from two threads: one mutex. The race
/// keeps the call alive until it is decided, and no longer: the loser's
/// transfer, still being stopped, holds only the race.
class HedgeRace {
 public:
  HedgeRace(std::shared_ptr<void> call_owner, const StopToken& call)
      : owner_(std::move(call_owner)), timer_(std::make_shared<CallStop>(call, StopToken{})) {
    copies_[0] = std::make_shared<CallStop>(call, StopToken{});
  }
  /// The stop of copy `i` (0 the first, 1 the hedge); the timer's for `i` = 2.
  [[nodiscard]] StopToken token(std::size_t i) const {
    const std::lock_guard lock(mutex_);
    return i == 2 ? timer_->token() : copies_[i]->token();
  }
  /// Before sending the hedge: false when an answer is already in.
  [[nodiscard]] bool add_hedge(const StopToken& call) {
    const std::lock_guard lock(mutex_);
    if (decided_) return false;
    copies_[1] = std::make_shared<CallStop>(call, StopToken{});
    return true;
  }
  [[nodiscard]] bool decided() const {
    const std::lock_guard lock(mutex_);
    return decided_;
  }
  /// An answer from copy `i`: the call (to hand the answer to) for the first,
  /// whose other copy and timer are stopped; null for the loser's (ignored).
  [[nodiscard]] std::shared_ptr<void> win(std::size_t i) {
    std::shared_ptr<CallStop> loser;
    std::shared_ptr<void> owner;
    {
      const std::lock_guard lock(mutex_);
      if (decided_) return nullptr;
      decided_ = true;
      loser = copies_[1 - i];
      owner = std::move(owner_);
    }
    if (loser) loser->request_stop();
    timer_->request_stop();
    return owner;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<void> owner_;
  std::array<std::shared_ptr<CallStop>, 2> copies_;
  std::shared_ptr<CallStop> timer_;
  bool decided_ = false;
};

/// The call a hedged attempt belongs to, as the stage sees it. The race holds
/// the call until an answer is in; the copies and the timers hold only the
/// race and `call` (weak). `context` and `name` are the call's own: read only
/// while `call` is alive.
struct HedgedCall {
  using Deliver = void (*)(const std::shared_ptr<void>& call, Result<HttpResponse>&& outcome);

  std::weak_ptr<void> call;
  const CallContext* context = nullptr;
  const std::string* name = nullptr;
  StopToken stop;             ///< The call's stop: each copy's follows it.
  Deliver deliver = nullptr;  ///< Hands the winning answer to the call (it classifies it).
};

/// Whether an attempt is hedged: only an idempotent lookup on the asynchronous
/// runtime (two transfers at once), and never the circuit breaker's probe.
[[nodiscard]] inline bool hedges(const CallContext& context, const CallSpec& spec, bool probe) noexcept {
  return spec.hedge && spec.idempotent && !context.runtime.blocking && !probe &&
         context.hedge_delay > std::chrono::milliseconds{0};
}

/// Sends copy `i` of the attempt; its answer goes to the call if it wins.
inline void send_hedge_copy(const HedgedCall& h, const std::shared_ptr<HedgeRace>& race, std::size_t i,
                            const HttpRequest& request) {
  h.context->runtime.send(
      request,
      [race, i, deliver = h.deliver](Result<HttpResponse> outcome) {
        if (auto owner = race->win(i)) deliver(owner, std::move(outcome));
      },
      race->token(i));
}

/// The hedge itself, once the delay passed with no answer: not while the
/// breaker is anything but closed, and only with a token from the retry
/// budget (refused: no hedge). The call is alive (its caller holds it).
inline void send_hedge(const HedgedCall& h, const std::shared_ptr<HedgeRace>& race, HttpRequest request) {
  if (race->decided()) return;
  const CallContext& context = *h.context;
  if (context.breaker != nullptr && context.breaker->state() != CircuitState::closed) return;
  std::chrono::milliseconds wait{0};
  if (context.throttle != nullptr) {
    const Admission a = context.throttle->admit(AttemptKind::retry);
    if (!a.allowed) {
      context.logger->log(LogLevel::debug, *h.name + ": hedge not sent: the client's retry budget is spent");
      return;
    }
    wait = a.wait;
  }
  auto go = [h, race, request = std::move(request)](bool elapsed) mutable {
    auto self = h.call.lock();
    if (!elapsed || !self || !race->add_hedge(h.stop)) return;
    const Logger& logger = *h.context->logger;
    if (logger.enabled(LogLevel::debug)) {
      logger.log(LogLevel::debug, *h.name + ": no answer after " + std::to_string(h.context->hedge_delay.count()) +
                                      " ms, sending a second copy (hedge)");
    }
    send_hedge_copy(h, race, 1, std::move(request));
  };
  if (wait > std::chrono::milliseconds{0}) {
    context.runtime.after(wait, go, race->token(2));
  } else {
    go(true);
  }
}

/// Sends the attempt; if no answer came after the hedge delay, a second copy
/// (send_hedge). The first answer wins and goes on to classify; the other is
/// stopped. `owner` is the call: the race holds it until an answer is in.
inline void send_hedged(const HedgedCall& h, std::shared_ptr<void> owner, HttpRequest sending) {
  auto race = std::make_shared<HedgeRace>(std::move(owner), h.stop);
  send_hedge_copy(h, race, 0, sending);
  if (race->decided()) return;  // answered at once (a transport that sends inline)
  h.context->runtime.after(
      h.context->hedge_delay,
      [h, race, sending = std::move(sending)](bool elapsed) mutable {
        auto self = h.call.lock();
        if (elapsed && self) send_hedge(h, race, std::move(sending));
      },
      race->token(2));
}

}  // namespace studentsvc::detail

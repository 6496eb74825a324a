#pragma once
/// @file detail/call/stop.hpp
/// @brief CallStop: one stop for a call or a batch, requested by the caller's
/// token, by a second token (the client closing), or directly.

#include <optional>

#include <studentsvc/stop_token.hpp>

namespace studentsvc::detail {

/// A stop source that follows the caller's token and a second one, whichever
/// stops first, and can be stopped directly; token() is what goes to the
/// transport. Without std::stop_token, only request_stop() stops it, and the
/// transport gets a token that never stops.
class CallStop {
 public:
  CallStop(const StopToken& caller, const StopToken& other) {
    if (caller.stop_possible()) on_caller_.emplace(caller, Forward{&source_});
    if (other.stop_possible()) on_other_.emplace(other, Forward{&source_});
  }
  CallStop(const CallStop&) = delete;
  CallStop& operator=(const CallStop&) = delete;
  [[nodiscard]] StopToken token() const noexcept { return source_.get_token(); }
  [[nodiscard]] bool stop_requested() const noexcept { return source_.stop_requested(); }
  void request_stop() noexcept { source_.request_stop(); }

 private:
  struct Forward {
    StopSource* source;
    void operator()() const noexcept { source->request_stop(); }
  };
  StopSource source_;
  std::optional<StopCallback<Forward>> on_caller_;
  std::optional<StopCallback<Forward>> on_other_;
};

}  // namespace studentsvc::detail

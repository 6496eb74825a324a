#pragma once
/// @file stop_token.hpp
/// @brief StopToken: what the asynchronous calls and streamed batches take to
/// be cancelled. It is `std::stop_token` wherever the standard library has it
/// (libstdc++ 10+, MSVC); elsewhere (libc++ 16 without its experimental
/// library) a token that never stops, and STUDENTSVC_HAS_STOP_TOKEN is 0.
///
/// The only file that reads STUDENTSVC_HAS_STOP_TOKEN: the SDK passes a
/// StopToken everywhere, and uses StopSource and detail::StopCallback
/// (std::stop_source and std::stop_callback, or stand-ins) where it stops one;
/// a program that makes its own tokens uses StopSource too.

#include <atomic>
#include <version>

#if defined(__cpp_lib_jthread) && __cpp_lib_jthread >= 201911L
#include <stop_token>
/// @brief 1 when StopToken is std::stop_token (cancellation works), else 0.
#define STUDENTSVC_HAS_STOP_TOKEN 1
#else
/// @brief 1 when StopToken is std::stop_token (cancellation works), else 0.
#define STUDENTSVC_HAS_STOP_TOKEN 0
#endif

namespace studentsvc {

#if STUDENTSVC_HAS_STOP_TOKEN
/// @brief The token a caller passes to cancel an asynchronous call or a batch:
/// `std::stop_token`, so `std::stop_source::get_token()` and `std::jthread`'s
/// token work as they are.
using StopToken = std::stop_token;

/// @brief What makes StopTokens: `std::stop_source`.
using StopSource = std::stop_source;

namespace detail {
template <class Callback>
using StopCallback = std::stop_callback<Callback>;
}  // namespace detail
#else
/// @brief Stand-in for `std::stop_token` where the standard library lacks it:
/// never stops (only destroying the transport or client cancels there).
class StopToken {
 public:
  /// @brief Always false.
  [[nodiscard]] static constexpr bool stop_requested() noexcept { return false; }
  /// @brief Always false: nothing can stop it.
  [[nodiscard]] static constexpr bool stop_possible() noexcept { return false; }
};

/// @brief Stand-in for `std::stop_source`: request_stop() sets its own flag,
/// but the tokens it hands out never stop.
class StopSource {
 public:
  /// @brief A token that never stops.
  [[nodiscard]] static StopToken get_token() noexcept { return {}; }
  /// @brief True once request_stop() was called.
  [[nodiscard]] bool stop_requested() const noexcept { return stopped_.load(std::memory_order_relaxed); }
  /// @brief Sets the flag; true the first time.
  bool request_stop() noexcept { return !stopped_.exchange(true, std::memory_order_relaxed); }

 private:
  std::atomic<bool> stopped_{false};
};

namespace detail {
/// Stand-in for `std::stop_callback`: its token never stops, so it never runs.
template <class Callback>
class StopCallback {
 public:
  template <class C>
  StopCallback(const StopToken&, C&&) noexcept {}
  StopCallback(const StopCallback&) = delete;
  StopCallback& operator=(const StopCallback&) = delete;
};
}  // namespace detail
#endif

}  // namespace studentsvc

#pragma once
/// @file detail/layout.hpp
/// @brief The size and alignment of the SDK's classes, as one TU sees them
/// (layout_in_this_tu(), evaluated at compile time where it is called) and
/// as the TU that holds the SDK's bodies saw them (library_layout(): in
/// compiled mode, the studentsvc library). Not public API: the test that no
/// class layout of the compiled library depends on whether coroutines are
/// enabled, or <studentsvc/awaitable.hpp> included (tests/layout_test.cpp),
/// compares the two.

#include <array>
#include <cstddef>
#include <string_view>

#include <studentsvc/auth.hpp>
#include <studentsvc/client.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/config.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/streaming.hpp>
#if STUDENTSVC_WITH_CURL
#include <studentsvc/curl_transport.hpp>
#endif

namespace studentsvc::detail {

/// One class's sizeof and alignof.
struct TypeLayout {
  std::string_view name;
  std::size_t size = 0;
  std::size_t align = 0;
};

template <class T>
[[nodiscard]] constexpr TypeLayout layout_of(std::string_view name) noexcept {
  return {name, sizeof(T), alignof(T)};
}

/// The classes a program and the compiled library share by value.
inline constexpr std::size_t layout_types = 18 + (STUDENTSVC_WITH_CURL ? 2 : 0);
using Layout = std::array<TypeLayout, layout_types>;

/// The layouts as the calling TU sees them. Call it where a constant is
/// required (`static constexpr auto here = layout_in_this_tu();`): a call
/// left to run time could be any TU's copy of this inline function.
[[nodiscard]] constexpr Layout layout_in_this_tu() noexcept {
  return {
      layout_of<Client>("Client"),
      layout_of<ClientOptions>("ClientOptions"),
      layout_of<CallOptions>("CallOptions"),
      layout_of<BatchOptions>("BatchOptions"),
      layout_of<StreamOptions>("StreamOptions"),
      layout_of<BatchProgress>("BatchProgress"),
      layout_of<BatchSummary>("BatchSummary"),
      layout_of<RetryPolicy>("RetryPolicy"),
      layout_of<AuthPolicy>("AuthPolicy"),
      layout_of<Logger>("Logger"),
      layout_of<ConversationRequest>("ConversationRequest"),
      layout_of<RawResponse>("RawResponse"),
      layout_of<StudentExtended>("StudentExtended"),
      layout_of<ApiError>("ApiError"),
      layout_of<HttpRequest>("HttpRequest"),
      layout_of<HttpResponse>("HttpResponse"),
      layout_of<Result<StudentExtended>>("Result<StudentExtended>"),
      layout_of<Result<RawResponse>>("Result<RawResponse>"),
#if STUDENTSVC_WITH_CURL
      layout_of<CurlTransportOptions>("CurlTransportOptions"),
      layout_of<CurlTransport>("CurlTransport"),
#endif
  };
}

/// The layouts as the TU that holds the SDK's bodies saw them: in compiled
/// mode, the library's (detail/layout-inl.hpp, compiled by <studentsvc/src.hpp>).
[[nodiscard]] Layout library_layout() noexcept;

}  // namespace studentsvc::detail

#if STUDENTSVC_HEADER_ONLY
#include <studentsvc/detail/layout-inl.hpp>
#endif

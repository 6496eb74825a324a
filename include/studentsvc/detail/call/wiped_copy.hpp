#pragma once
/// @file detail/call/wiped_copy.hpp
/// @brief WipedCopy: the copy a call keeps of what its caller passed (a
/// CallOptions, a ConversationRequest), whose user JWT is wiped when it goes.

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/text/wipe.hpp>
#include <studentsvc/options.hpp>

namespace studentsvc::detail {

/// The user JWT of a CallOptions (or a ConversationRequest's) the SDK copied:
/// wiped with WipedCopy.
inline void wipe_secrets(CallOptions& call) noexcept {
  if (call.user_jwt) wipe_string(*call.user_jwt);
}
inline void wipe_secrets(ConversationRequest& request) noexcept { wipe_secrets(request.call); }

/// A copy a call keeps of what its caller passed (a CallOptions, a
/// ConversationRequest): its user JWT is wiped when the copy goes.
template <class T>
struct WipedCopy {
  T value;
  explicit WipedCopy(const T& v) : value(v) {}
  WipedCopy(const WipedCopy&) = default;
  WipedCopy(WipedCopy&&) = default;  // the moved-from copy's destructor wipes what its inline buffer kept
  WipedCopy& operator=(const WipedCopy&) = delete;
  WipedCopy& operator=(WipedCopy&&) = delete;
  ~WipedCopy() { wipe_secrets(value); }
};

}  // namespace studentsvc::detail

#pragma once
/// @file url.hpp
/// @brief URLs as a program may show them: without their `user:password@`
/// part. A proxy URL (`http://user:pw@proxy:3128`) and, now and then, a base
/// URL carry credentials that must never reach a log, a terminal or a ticket.
/// @sa ClientOptions::proxy, ClientOptions::base_url

#include <string>
#include <string_view>

#include <studentsvc/detail/request/url_userinfo.hpp>

namespace studentsvc {

/// @brief `text` with the userinfo of every URL-like word removed:
/// "http://u:p@proxy:3128" becomes "http://proxy:3128", "u:p@proxy" becomes
/// "proxy". A word with '@' in its path loses more than its userinfo
/// (over-scrubbing is the safe side).
/// @sa has_url_userinfo
[[nodiscard]] inline std::string strip_url_userinfo(std::string_view text) { return detail::strip_url_userinfo(text); }

/// @brief Whether `url` holds a `user[:password]@` part in its authority.
/// @sa strip_url_userinfo
[[nodiscard]] inline bool has_url_userinfo(std::string_view url) { return detail::find_userinfo(url).has_value(); }

}  // namespace studentsvc

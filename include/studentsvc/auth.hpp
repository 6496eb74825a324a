#pragma once
/// @file auth.hpp
/// @brief BasicCredential and AuthPolicy: which credential headers each endpoint
/// carries (interface section 5).

#include <optional>
#include <string>
#include <string_view>

#include <studentsvc/detail/base64.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>

namespace studentsvc {

/// @brief The service account's `<network_id>:<password>` pair for HTTP Basic.
struct BasicCredential {
  std::string network_id;  ///< The service account's network ID (the Basic user name).
  std::string password;    ///< Its password; never logged or put in an ApiError.

  friend bool operator==(const BasicCredential&, const BasicCredential&) = default;
};

/// @brief The `Authorization` value: `Basic base64(network_id:password)`.
///
/// The bytes are encoded as given (UTF-8 stays UTF-8); a `:` is allowed in the
/// password but not in the network id (RFC 7617), see AuthPolicy::apply.
[[nodiscard]] inline std::string basic_authorization_value(const BasicCredential& credential) {
  std::string pair;
  pair.reserve(credential.network_id.size() + 1 + credential.password.size());
  pair.append(credential.network_id).append(":").append(credential.password);
  return "Basic " + detail::base64_encode(pair);
}

/// @brief What to send as `svc-api-key` on the student endpoints. The interface
/// does not say how it relates to `x-api-key`, so all three are possible.
enum class SvcApiKeyMode {
  same_as_api_key,  ///< Send the API key again (the default).
  custom,           ///< Send AuthPolicy::svc_api_key.
  off,              ///< Do not send the header.
};

/// @brief Composes the credential headers of each endpoint:
///
/// | header | student endpoints | conversation |
/// |---|---|---|
/// | `x-api-key` | API key | API key |
/// | `svc-api-key` | per SvcApiKeyMode | — |
/// | `Authorization` | Basic, when configured | — |
/// | `svc-user-jwt` | the user JWT when given (required on current) | — |
///
/// The JWT is opaque: it is sent as it is and never parsed. A value type, safe
/// to share between threads once built.
struct AuthPolicy {
  std::string api_key;  ///< Sent as `x-api-key` on every call.
  /// What `svc-api-key` carries on the student endpoints: the API key, `svc_api_key`, or nothing.
  SvcApiKeyMode svc_api_key_mode = SvcApiKeyMode::same_as_api_key;
  std::string svc_api_key;  ///< Used when svc_api_key_mode is custom.
  std::optional<BasicCredential> basic;  ///< HTTP Basic on the student endpoints, when set.

  /// @brief Adds this endpoint's credential headers to `headers`.
  ///
  /// Fails with invalid_argument, naming the setting but never its value, when
  /// the API key is empty, the current-student JWT is empty, or the network id
  /// holds a ':'.
  [[nodiscard]] Result<void> apply(Endpoint endpoint, std::string_view user_jwt, Headers& headers) const {
    if (api_key.empty()) return make_error(ErrorKind::invalid_argument, "API key is not set");
    headers.set("x-api-key", api_key);
    if (endpoint == Endpoint::conversation) return {};

    switch (svc_api_key_mode) {
      case SvcApiKeyMode::same_as_api_key: headers.set("svc-api-key", api_key); break;
      case SvcApiKeyMode::custom:
        if (svc_api_key.empty()) {
          return make_error(ErrorKind::invalid_argument, "svc-api-key mode is custom but no svc-api-key is set");
        }
        headers.set("svc-api-key", svc_api_key);
        break;
      case SvcApiKeyMode::off: break;
    }
    if (basic) {
      if (basic->network_id.find(':') != std::string::npos) {
        return make_error(ErrorKind::invalid_argument, "network id must not contain ':'");
      }
      headers.set("Authorization", basic_authorization_value(*basic));
    }
    if (endpoint == Endpoint::current_student && user_jwt.empty()) {
      return make_error(ErrorKind::invalid_argument, "user JWT is required for current_student and is empty");
    }
    if (!user_jwt.empty()) headers.set("svc-user-jwt", std::string(user_jwt));
    return {};
  }
};

}  // namespace studentsvc

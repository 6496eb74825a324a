#pragma once
/// @file auth.hpp
/// @brief BasicCredential and AuthPolicy: which credential headers each endpoint
/// carries (interface section 5).

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <studentsvc/credential_provider.hpp>
#include <studentsvc/detail/text/base64.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/secret.hpp>

namespace studentsvc {

/// @brief The service account's `<network_id>:<password>` pair for HTTP Basic.
struct BasicCredential {
  std::string network_id;  ///< The service account's network ID (the Basic user name).
  Secret password;         ///< Its password; never logged or put in an ApiError (reveal() to read it).

  friend bool operator==(const BasicCredential&, const BasicCredential&) = default;
};

/// @brief The `Authorization` value: `Basic base64(network_id:password)`.
///
/// The bytes are encoded as given (UTF-8 stays UTF-8); a `:` is allowed in the
/// password but not in the network id (RFC 7617), see AuthPolicy::apply.
[[nodiscard]] inline std::string basic_authorization_value(std::string_view network_id, std::string_view password) {
  std::string pair;
  pair.reserve(network_id.size() + 1 + password.size());
  pair.append(network_id).append(":").append(password);
  const Secret wiped(std::move(pair));  // the plain pair is wiped once encoded
  std::string value("Basic ");  // held inline; append_base64 sizes it once
  detail::append_base64(value, wiped.reveal());
  return value;
}

/// @brief The `Authorization` value of `credential`.
[[nodiscard]] inline std::string basic_authorization_value(const BasicCredential& credential) {
  return basic_authorization_value(credential.network_id, credential.password.reveal());
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
/// The JWT is opaque: it is sent as it is and never parsed. The API key, the
/// `svc-api-key` and the Basic password are Secret values: assigned from a
/// string, never streamed or formatted, wiped when the policy goes. A value
/// type, safe to share between threads once built.
///
/// @sa Secret, CredentialProvider
struct AuthPolicy {
  Secret api_key;  ///< Sent as `x-api-key` on every call. Assign a string; reveal() to read it.
  /// What `svc-api-key` carries on the student endpoints: the API key, `svc_api_key`, or nothing.
  SvcApiKeyMode svc_api_key_mode = SvcApiKeyMode::same_as_api_key;
  Secret svc_api_key;  ///< Used when svc_api_key_mode is custom.
  std::optional<BasicCredential> basic;  ///< HTTP Basic on the student endpoints, when set.
  /// When set, asked for the API key, `svc-api-key` and Basic credential on
  /// every request (rotation without a restart); `api_key`, `svc_api_key` and
  /// `basic` above are then unused. svc_api_key_mode still applies.
  std::shared_ptr<CredentialProvider> provider;

  /// @brief Adds this endpoint's credential headers to `headers`.
  ///
  /// Fails with invalid_argument, naming the setting but never its value, when
  /// the API key is empty, the current-student JWT is empty, the network id
  /// holds a ':', or the API key, a custom svc-api-key, a given JWT, the
  /// network id or the password is blank (empty, or only spaces and tabs);
  /// with the provider's error when the provider fails. The request builders
  /// then check every header value (detail::validate_header_value).
  [[nodiscard]] Result<void> apply(Endpoint endpoint, std::string_view user_jwt, Headers& headers) const {
    if (provider) {
      const auto current = provider->credentials();
      if (!current) return std::unexpected(current.error());
      return apply_credentials(current->api_key.reveal(), current->svc_api_key.reveal(), !current->network_id.empty(),
                               current->network_id, current->password.reveal(), endpoint, user_jwt, headers);
    }
    return apply_credentials(api_key.reveal(), svc_api_key.reveal(), basic.has_value(),
                             basic ? std::string_view(basic->network_id) : std::string_view(),
                             basic ? basic->password.reveal() : std::string_view(), endpoint, user_jwt, headers);
  }

 private:
  /// One path for the fixed fields and a provider's answer.
  [[nodiscard]] Result<void> apply_credentials(std::string_view key, std::string_view svc_key, bool with_basic,
                                               std::string_view network_id, std::string_view password,
                                               Endpoint endpoint, std::string_view user_jwt, Headers& headers) const {
    if (key.empty()) return make_error(ErrorKind::invalid_argument, "API key is not set");
    if (is_blank(key)) return blank_error("API key");
    headers.set("x-api-key", std::string(key));
    if (endpoint == Endpoint::conversation) return {};

    switch (svc_api_key_mode) {
      case SvcApiKeyMode::same_as_api_key: headers.set("svc-api-key", std::string(key)); break;
      case SvcApiKeyMode::custom:
        if (svc_key.empty()) {
          return make_error(ErrorKind::invalid_argument, "svc-api-key mode is custom but no svc-api-key is set");
        }
        if (is_blank(svc_key)) return blank_error("svc-api-key");
        headers.set("svc-api-key", std::string(svc_key));
        break;
      case SvcApiKeyMode::off: break;
    }
    if (with_basic) {
      if (network_id.find(':') != std::string_view::npos) {
        return make_error(ErrorKind::invalid_argument, "network id must not contain ':'");
      }
      if (is_blank(network_id)) return blank_error("network id (of the Basic credential)");
      if (is_blank(password)) return blank_error("password (of the Basic credential)");
      headers.set("Authorization", basic_authorization_value(network_id, password));
    }
    if (endpoint == Endpoint::current_student && user_jwt.empty()) {
      return make_error(ErrorKind::invalid_argument, "user JWT is required for current_student and is empty");
    }
    if (!user_jwt.empty()) {
      if (is_blank(user_jwt)) return blank_error("user JWT (svc-user-jwt)");
      headers.set("svc-user-jwt", std::string(user_jwt));
    }
    return {};
  }

  /// Empty, or only spaces and tabs: a credential that cannot be one.
  [[nodiscard]] static bool is_blank(std::string_view value) noexcept {
    return value.find_first_not_of(" \t") == std::string_view::npos;
  }
  [[nodiscard]] static Result<void> blank_error(const std::string& what) {
    return make_error(ErrorKind::invalid_argument,
                      what + " is blank (empty, or only spaces and tabs); nothing was sent");
  }
};

}  // namespace studentsvc

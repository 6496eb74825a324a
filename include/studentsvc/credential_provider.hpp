#pragma once
/// @file credential_provider.hpp
/// @brief Credentials that rotate without a restart: the CredentialProvider
/// interface an AuthPolicy asks on every request, and the Credentials it returns.

#include <string>

#include <studentsvc/errors.hpp>
#include <studentsvc/secret.hpp>

namespace studentsvc {

/// @brief What a CredentialProvider hands out for one request.
struct Credentials {
  Secret api_key;      ///< `x-api-key` (and `svc-api-key` when AuthPolicy::svc_api_key_mode is same_as_api_key).
  Secret svc_api_key;  ///< `svc-api-key` when AuthPolicy::svc_api_key_mode is custom.
  /// The service account's network id for HTTP Basic; empty: no Basic credential.
  std::string network_id;
  Secret password;  ///< Its password (with network_id).
};

/// @brief The source of the current credentials, asked on every request.
///
/// Campus IT rotates keys and passwords by policy: a provider lets a
/// long-running Client follow them without being rebuilt. Set
/// AuthPolicy::provider; the AuthPolicy's own credential fields are then unused.
///
/// @sa FileCredentialProvider, AuthPolicy
class CredentialProvider {
 public:
  CredentialProvider() = default;
  CredentialProvider(const CredentialProvider&) = delete;
  CredentialProvider& operator=(const CredentialProvider&) = delete;
  virtual ~CredentialProvider() = default;

  /// @brief The credentials for the request being built. Called once per
  /// request, from any thread at once: it must be thread-safe and quick
  /// (cache, and check for changes cheaply). An error fails that request
  /// before anything is sent.
  [[nodiscard]] virtual Result<Credentials> credentials() = 0;

  /// @brief Called when the service answered 401, before the one retry an
  /// idempotent call then makes: forget anything cached, so that the next
  /// credentials() reads the source afresh. The default has nothing to forget.
  virtual void invalidate() {}
};

}  // namespace studentsvc

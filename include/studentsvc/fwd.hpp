#pragma once
/// @file fwd.hpp
/// @brief Forward declarations of the SDK's public types (like nlohmann's
/// json_fwd.hpp): name them in your own headers without the SDK's definitions,
/// nlohmann or libcurl. Include the real headers where the types are used.

#include <expected>

namespace studentsvc {

// errors.hpp
enum class ErrorKind;
struct ApiError;
/// @brief The result of every call: the value or an ApiError. No call throws.
/// (Defined here, the one place: an alias template cannot be declared twice.)
template <class T>
using Result = std::expected<T, ApiError>;

// models.hpp
enum class Gender;
enum class InternationalStatus;
enum class AdmitLevel;
enum class ReleaseStatus;
struct StudentMinimal;
struct StudentExtended;

// http.hpp
class Headers;
enum class Endpoint;
struct HttpRequest;
struct HttpResponse;
class Transport;

// logging.hpp
enum class LogLevel;
struct Logger;

// secret.hpp
class Secret;

// credential_provider.hpp, file_credentials.hpp
struct Credentials;
class CredentialProvider;
struct FileCredentialFiles;
class FileCredentialProvider;

// auth.hpp
struct BasicCredential;
enum class SvcApiKeyMode;
struct AuthPolicy;

// tls.hpp
struct ClientCertificate;

// options.hpp
struct RetryPolicy;
struct CircuitBreakerOptions;
struct HedgingOptions;
struct ClientOptions;
struct CallOptions;

// conversation.hpp
struct ConversationRequest;
struct RawResponse;

// streaming.hpp
struct BatchProgress;
struct BatchSummary;
struct StreamOptions;

// client.hpp
struct BatchOptions;
class Client;

// awaitable.hpp
class ResumeVia;
template <class T>
class Awaitable;

// curl_transport.hpp (only when libcurl is available)
struct CurlTransportOptions;
class CurlTransport;

}  // namespace studentsvc

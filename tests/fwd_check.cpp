// Compile test: <studentsvc/fwd.hpp>'s declarations match the real ones. It
// comes first, then every real header; a declaration of another kind (enum vs
// class, another enum base) does not compile, and each static_assert needs the
// declared name to be defined, so a type renamed or dropped in its header
// fails here rather than in a user's build.

#include <studentsvc/fwd.hpp>

#include <type_traits>

// Named through the forward declarations alone, before any definition.
namespace fwd_only {
studentsvc::Result<studentsvc::StudentExtended> lookup(const studentsvc::Client& client, studentsvc::Transport* t);
void log(studentsvc::LogLevel level, const studentsvc::ApiError& error, studentsvc::ErrorKind kind);
}  // namespace fwd_only

#include <studentsvc/studentsvc.hpp>

namespace {

template <class T>
constexpr bool complete = sizeof(T) > 0;

static_assert(std::is_enum_v<studentsvc::ErrorKind> && std::is_enum_v<studentsvc::Gender> &&
              std::is_enum_v<studentsvc::InternationalStatus> && std::is_enum_v<studentsvc::AdmitLevel> &&
              std::is_enum_v<studentsvc::ReleaseStatus> && std::is_enum_v<studentsvc::Endpoint> &&
              std::is_enum_v<studentsvc::LogLevel> && std::is_enum_v<studentsvc::SvcApiKeyMode>);
static_assert(complete<studentsvc::ApiError> && complete<studentsvc::StudentMinimal> &&
              complete<studentsvc::StudentExtended> && complete<studentsvc::Headers> &&
              complete<studentsvc::HttpRequest> && complete<studentsvc::HttpResponse> &&
              complete<studentsvc::Transport> && complete<studentsvc::Logger> &&
              complete<studentsvc::BasicCredential> && complete<studentsvc::AuthPolicy> &&
              complete<studentsvc::RetryPolicy> && complete<studentsvc::ClientOptions> &&
              complete<studentsvc::CallOptions> && complete<studentsvc::ConversationRequest> &&
              complete<studentsvc::RawResponse> && complete<studentsvc::BatchOptions> &&
              complete<studentsvc::Client> && complete<studentsvc::ClientCertificate> &&
              complete<studentsvc::CircuitBreakerOptions> && complete<studentsvc::HedgingOptions>);
#if STUDENTSVC_WITH_CURL
static_assert(complete<studentsvc::CurlTransportOptions> && complete<studentsvc::CurlTransport>);
static_assert(std::is_base_of_v<studentsvc::Transport, studentsvc::CurlTransport>);
#endif
static_assert(std::is_same_v<studentsvc::Result<int>, std::expected<int, studentsvc::ApiError>>);
static_assert(std::is_base_of_v<studentsvc::StudentMinimal, studentsvc::StudentExtended>);

}  // namespace

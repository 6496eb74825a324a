#pragma once
/// @file detail/request/build.hpp
/// @brief Builds the HttpRequest of each call: validate the input, build URL and
/// headers, let the AuthPolicy add its credentials, then check every header.
/// Nothing is sent here. The public build_*_request (requests.hpp) and the
/// Client's calls (detail/call/client-inl.hpp) both call these.

#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/request/header_validation.hpp>
#include <studentsvc/detail/request/limits.hpp>
#include <studentsvc/detail/request/student_headers.hpp>
#include <studentsvc/detail/request/trace_context.hpp>
#include <studentsvc/detail/request/url.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/version.hpp>

namespace studentsvc::detail {

/// The endpoints' paths (requests.hpp names them studentsvc::student_path, ...).
inline constexpr std::string_view student_endpoint_path = "/students/v2/students/";
inline constexpr std::string_view current_student_endpoint_path = "/students/v2/students/current";
inline constexpr std::string_view conversation_endpoint_path = "/conversation";

/// `traceparent`: the call's own (checked), else a fresh one when the client
/// sends trace context, else none.
[[nodiscard]] inline Result<void> apply_trace_context(Headers& headers, const ClientOptions& client,
                                                      const CallOptions& call) {
  if (call.traceparent) {
    if (!is_valid_traceparent(*call.traceparent)) {
      return make_error(ErrorKind::invalid_argument,
                        "traceparent must be W3C version 00: 00-<32 hex>-<16 hex>-<2 hex>, lower-case, ids not zero");
    }
    headers.set("traceparent", *call.traceparent);
  } else if (client.send_traceparent) {
    headers.set("traceparent", make_traceparent());
  }
  return {};
}

/// `prebuilt`: the Client's StudentHeaders, used unless the call sets its own version.
[[nodiscard]] inline Result<HttpRequest> build_student_request(const BaseUrl& base, const ClientOptions& client,
                                                              Endpoint endpoint, std::string url_path,
                                                              std::string_view user_jwt, const CallOptions& call,
                                                              ClientLimits limits,
                                                              const StudentHeaders* prebuilt = nullptr) {
  HttpRequest request;
  request.url = base.join(url_path);
  if (auto r = validate_url_length(request.url, "the base URL's path"); !r) return std::unexpected(std::move(r.error()));
  if (prebuilt != nullptr && !call.api_version) {
    if (auto r = copy_student_headers(*prebuilt, endpoint, user_jwt, request.headers); !r) {
      return std::unexpected(std::move(r.error()));
    }
    if (auto r = apply_trace_context(request.headers, client, call); !r) return std::unexpected(std::move(r.error()));
    if (auto r = apply_limits(request, client, call, limits); !r) return std::unexpected(std::move(r.error()));
    return request;
  }
  request.headers.reserve(8);
  if (auto r = client.auth.apply(endpoint, user_jwt, request.headers); !r) return std::unexpected(std::move(r.error()));
  const std::string& version = call.api_version ? *call.api_version : client.api_version;
  if (version.empty()) return make_error(ErrorKind::invalid_argument, "svc-api-version must not be empty");
  add_student_fixed_headers(request.headers, version);
  if (auto r = apply_trace_context(request.headers, client, call); !r) return std::unexpected(std::move(r.error()));
  if (auto r = apply_limits(request, client, call, limits); !r) return std::unexpected(std::move(r.error()));
  if (auto r = validate_headers(request.headers); !r) return std::unexpected(std::move(r.error()));
  return request;
}

[[nodiscard]] inline Result<HttpRequest> build_get_student(const BaseUrl& base, const ClientOptions& client,
                                                           std::string_view perm, const CallOptions& call,
                                                           ClientLimits limits,
                                                           const StudentHeaders* prebuilt = nullptr) {
  if (!is_valid_perm(perm, client.perm_syntax)) {
    return make_error(ErrorKind::invalid_argument,
                      perm_syntax_rule(client.perm_syntax) + " (got " + std::to_string(perm.size()) + " characters)");
  }
  if (call.user_jwt && call.user_jwt->find_first_not_of(" \t") == std::string::npos) {
    // libcurl drops a blank header: the request would silently widen to any student.
    return make_error(ErrorKind::invalid_argument,
                      "user JWT is set but blank (empty, or only spaces and tabs); nothing was sent");
  }
  std::string path;
  path.reserve(student_endpoint_path.size() + perm.size());
  path.append(student_endpoint_path).append(perm);
  const std::string_view jwt = call.user_jwt ? std::string_view(*call.user_jwt) : std::string_view{};
  return build_student_request(base, client, Endpoint::get_student, std::move(path), jwt, call, limits,
                                       prebuilt);
}

[[nodiscard]] inline Result<HttpRequest> build_conversation(const BaseUrl& base, const ClientOptions& client,
                                                            const ConversationRequest& conversation,
                                                            ClientLimits limits) {
  if (!is_valid_header_name(conversation.method)) {
    return make_error(ErrorKind::invalid_argument, "conversation method must be an HTTP token such as GET or POST");
  }
  auto sub = encode_sub_path(conversation.sub_path);
  if (!sub) return std::unexpected(std::move(sub.error()));
  HttpRequest request;
  request.method = conversation.method;
  request.url = base.join(std::string(conversation_endpoint_path) + *sub + encode_query(conversation.query));
  if (auto r = validate_url_length(request.url, "sub_path and query"); !r) return std::unexpected(std::move(r.error()));
  if (auto r = client.auth.apply(Endpoint::conversation, {}, request.headers); !r) {
    return std::unexpected(std::move(r.error()));
  }
  request.headers.set("Accept", "application/json");
  request.headers.set("User-Agent", std::string(user_agent));
  if (!conversation.body.empty() || !conversation.content_type.empty()) {
    request.headers.set("Content-Type",
                        conversation.content_type.empty() ? std::string("application/json") : conversation.content_type);
  }
  if (auto r = apply_trace_context(request.headers, client, conversation.call); !r) {
    return std::unexpected(std::move(r.error()));
  }
  request.body = conversation.body;
  // The transport must never send a request twice unless the caller said it is safe.
  request.idempotent = conversation.idempotent;
  if (auto r = apply_limits(request, client, conversation.call, limits); !r) {
    return std::unexpected(std::move(r.error()));
  }
  if (auto r = validate_headers(request.headers); !r) return std::unexpected(std::move(r.error()));
  return request;
}

}  // namespace studentsvc::detail

#pragma once
/// @file detail/curl/handles.hpp
/// @brief libcurl's global set-up and RAII owners of its easy and multi handles.

#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL

#include <memory>

#include <curl/curl.h>

namespace studentsvc::detail {

/// libcurl's global state, set up once on first use (thread-safe since C++11
/// statics); never torn down, since other static destructors may still use it.
inline void ensure_curl_global_init() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  (void)code;
}

struct CurlEasyDeleter {
  void operator()(CURL* h) const noexcept { curl_easy_cleanup(h); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;

struct CurlMultiDeleter {
  void operator()(CURLM* m) const noexcept { curl_multi_cleanup(m); }
};
using CurlMulti = std::unique_ptr<CURLM, CurlMultiDeleter>;

}  // namespace studentsvc::detail

#endif  // STUDENTSVC_WITH_CURL

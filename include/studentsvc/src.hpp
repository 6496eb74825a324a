#pragma once
/// @file src.hpp
/// @brief Separate compilation without CMake, as Asio's <asio/impl/src.hpp>:
/// define STUDENTSVC_HEADER_ONLY=0 in every TU and include this header in
/// exactly one of them; that TU holds every non-template body of the SDK
/// (Client's, ClientOptions::from_env, and CurlTransport's when
/// STUDENTSVC_WITH_CURL). The CMake library (STUDENTSVC_HEADER_ONLY=OFF) is
/// built from it too (src/studentsvc.cpp); the README's "Separate compilation
/// without CMake" shows the two commands.
/// @sa client.hpp, options.hpp, curl_transport.hpp

#include <studentsvc/detail/config.hpp>
#include <studentsvc/detail/header_only.hpp>

#if STUDENTSVC_HEADER_ONLY
#error "<studentsvc/src.hpp> is for STUDENTSVC_HEADER_ONLY=0: define it (-DSTUDENTSVC_HEADER_ONLY=0) in every TU of the program, or drop this TU (header-only mode needs no source file)"
#else
// Every *-inl.hpp: a new one goes here, so one TU keeps holding every body.
#include <studentsvc/detail/call/client-inl.hpp>
#include <studentsvc/detail/layout-inl.hpp>
#include <studentsvc/detail/request/options-inl.hpp>
#if STUDENTSVC_WITH_CURL
#include <studentsvc/detail/curl/transport-inl.hpp>
#endif
#endif

#pragma once
/// @file studentsvc.hpp
/// @brief The umbrella header: everything but testing/, the opt-in JSON
/// mapping (<studentsvc/json.hpp>) included. In compiled mode
/// (STUDENTSVC_HEADER_ONLY=0) it leaves out json.hpp and responses.hpp, the
/// two that include <nlohmann/json.hpp>: include them yourself where needed.

#include <studentsvc/auth.hpp>
#include <studentsvc/client.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/config.hpp>
#include <studentsvc/detail/header_only.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/fwd.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/requests.hpp>
#include <studentsvc/retry.hpp>
#include <studentsvc/stop_token.hpp>
#include <studentsvc/streaming.hpp>
#include <studentsvc/tls.hpp>
#include <studentsvc/version.hpp>
#if STUDENTSVC_WITH_CURL
#include <studentsvc/curl_transport.hpp>
#endif
#if STUDENTSVC_HEADER_ONLY
#include <studentsvc/json.hpp>
#include <studentsvc/responses.hpp>
#endif

#pragma once
/// @file studentsvc.hpp
/// @brief The umbrella header: everything but testing/, the opt-in JSON
/// mapping (<studentsvc/json.hpp>) included.

#include <studentsvc/auth.hpp>
#include <studentsvc/client.hpp>
#include <studentsvc/conversation.hpp>
#include <studentsvc/detail/config.hpp>
#include <studentsvc/errors.hpp>
#include <studentsvc/fwd.hpp>
#include <studentsvc/http.hpp>
#include <studentsvc/json.hpp>
#include <studentsvc/logging.hpp>
#include <studentsvc/models.hpp>
#include <studentsvc/options.hpp>
#include <studentsvc/requests.hpp>
#include <studentsvc/responses.hpp>
#include <studentsvc/retry.hpp>
#include <studentsvc/version.hpp>
#if STUDENTSVC_WITH_CURL
#include <studentsvc/curl_transport.hpp>
#endif

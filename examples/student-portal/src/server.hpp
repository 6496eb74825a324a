#pragma once
// The HTTP server: Boost.Beast, one coroutine per connection, on one
// io_context thread; the student service is called through the SDK's Asio
// adapter, so a page waits for it without holding a thread.

#include <ostream>

#include <studentsvc/options.hpp>

#include "settings.hpp"

namespace student_portal {

// Listens on settings.host:settings.port until SIGTERM or SIGINT, then stops
// accepting, lets the requests in progress finish (up to 10 s), and returns
// exit_ok; exit_failure when it cannot listen. Writes "student-portal:
// listening on http://HOST:PORT" to `out` once it accepts connections.
[[nodiscard]] int serve(const Settings& settings, studentsvc::ClientOptions options, std::ostream& out,
                        std::ostream& log);

}  // namespace student_portal

// docs/resilience.md's examples, against the mock
// server: a circuit breaker, coalesced identical lookups and hedged lookups.
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

using namespace std::chrono_literals;

namespace {

bool breaker_example() {
  studentsvc::testing::MockServer gone;  // a mock that stops at once: every attempt to its port fails
  auto options = gone.client_options();
  gone.stop();
  options.retry = studentsvc::RetryPolicy::none();
  // [breaker]
  options.circuit_breaker = studentsvc::CircuitBreakerOptions{.failure_threshold = 3, .cool_down = 30s};
  const studentsvc::Client client(options);
  for (int i = 0; i < 4; ++i) {
    auto student = client.get_student("1234567");
    if (!student && student.error().kind == studentsvc::ErrorKind::circuit_open) {
      // Nothing was sent: "circuit open after 3 consecutive failures (transport error); next try in 30 s"
      std::cerr << student.error().message << '\n';
    }
  }
  // [breaker]
  const auto refused = client.get_student("1234567");
  return !refused && refused.error().kind == studentsvc::ErrorKind::circuit_open && refused.error().attempts == 0;
}

bool coalesce_example(const studentsvc::testing::MockServer& server) {
  // [coalesce]
  auto options = server.client_options();
  options.coalesce_lookups = true;  // identical lookups in flight share one request
  const studentsvc::Client client(options);
  auto a = client.get_student_async("1234567");
  auto b = client.get_student_async("1234567");  // same URL, credentials and JWT: joins a's request
  const bool both = a.get() && b.get();
  // A batch looks each distinct perm up once, with or without the option.
  const std::vector<std::string> roster{"1234567", "2345678", "1234567"};
  auto results = client.get_students(roster);  // two requests, three results
  // [coalesce]
  return both && results.size() == 3 && results[0] && results[2] && results[2]->perm == "1234567";
}

bool hedging_example(const studentsvc::testing::MockServer& server) {
  // [hedging]
  auto options = server.client_options();
  options.hedging = studentsvc::HedgingOptions{.delay = 50ms};  // a second copy after 50 ms without an answer
  options.retry_budget = studentsvc::RetryBudgetOptions{};      // each hedge takes a retry token
  const studentsvc::Client client(options);
  auto student = client.get_student("1234567");  // the first answer wins; the other transfer is cancelled
  // [hedging]
  return student && student->perm == "1234567";
}

}  // namespace

int main() {
  const studentsvc::testing::MockServer server;
  const bool ok = breaker_example() && coalesce_example(server) && hedging_example(server);
  std::cout << (ok ? "resilience example: ok\n" : "resilience example: FAILED\n");
  return ok ? 0 : 1;
}

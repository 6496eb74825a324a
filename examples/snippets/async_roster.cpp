// docs/async.md's "Asynchronous calls and large rosters" example: the future and
// completion forms of an asynchronous call, and a roster streamed from a file
// with progress, fail-fast and a stop token, against MockServer. The test
// suite runs it and looks for "async example: ok".

#include <atomic>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <ranges>
#include <string>

#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

namespace {

bool future_and_completion(const studentsvc::Client& client) {
  // A future: wait for it where blocking is fine (never inside a completion).
  auto pending = client.get_student_async("1234567");
  // A completion: runs once, on the transport's event thread; keep it short.
  std::atomic<bool> called{false};
  std::promise<void> done;
  client.current_student_async("mock-jwt-ana", [&](studentsvc::Result<studentsvc::StudentExtended> me) {
    if (me) std::cout << "signed in: " << me->perm << '\n';
    called = true;
    done.set_value();
  });
  const auto student = pending.get();
  done.get_future().wait();
  return student.has_value() && called;
}

bool roster(const studentsvc::Client& client, const std::string& path) {
  std::ifstream file(path);  // one perm per line, read as the batch goes
  studentsvc::StopSource stop;  // std::stop_source; stop.request_stop() from any thread ends the batch
  studentsvc::StreamOptions options;
  options.max_concurrency = 32;
  options.stop = stop.get_token();
  options.on_progress = [](const studentsvc::BatchProgress& p) {
    std::fprintf(stderr, "\r%zu done, %zu failed", p.done, p.failures);
  };
  std::size_t found = 0;
  const auto summary = client.for_each_student(
      std::views::istream<std::string>(file),
      [&](std::size_t index, std::string_view perm, studentsvc::Result<studentsvc::StudentExtended> student) {
        if (student) {
          ++found;
        } else {
          std::cerr << "\nline " << index + 1 << " (" << perm << "): " << studentsvc::to_string(student.error()) << '\n';
        }
      },
      options);
  if (summary.stopped_by) std::cerr << "stopped early: " << studentsvc::to_string(*summary.stopped_by) << '\n';
  std::fprintf(stderr, "\n");
  return found == 4 && summary.sent == 5;
}

}  // namespace

int main() {
  studentsvc::testing::MockServer server;
  const studentsvc::Client client(server.client_options());
  const std::string path = "async_roster_example.txt";
  std::ofstream(path) << "1234567\n2345678\n3456789\n9999999\n4567890\n";
  const bool ok = future_and_completion(client) && roster(client, path);
  std::remove(path.c_str());
  std::cout << (ok ? "async example: ok" : "async example: FAILED") << '\n';
  return ok ? 0 : 1;
}

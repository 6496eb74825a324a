// End to end: keys rotated on disk while 8 threads call one Client (the real
// CurlTransport) against a MockServer whose accepted keys change with them.
// After each rotation completes no call fails, and the server never sees a
// key that is not one whole generation.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <studentsvc/client.hpp>
#include <studentsvc/file_credentials.hpp>
#include <studentsvc/testing/mock_server.hpp>

#include "support/temp_dir.hpp"

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace credential_rotation_test {

using namespace std::chrono_literals;
using studentsvc::testing::MockServer;
using Clock = std::chrono::steady_clock;

namespace {

std::string api_key_of(int generation) { return "KEY-generation-" + std::to_string(1000 + generation); }
std::string svc_key_of(int generation) { return "SVC-generation-" + std::to_string(1000 + generation); }

/// Replaces `name` in `dir` atomically: a new file renamed over it.
void replace_file(const studentsvc::test::TempDir& dir, const std::string& name, const std::string& content) {
  const std::string tmp = dir.write("." + name + ".new", content + "\n");
  std::filesystem::rename(tmp, dir.path() / name);
}

}  // namespace

TEST_CASE("credentials rotated on disk under 8 threads: no call fails once a rotation is done",
          "[e2e][credentials][concurrency]") {
  MockServer server;
  const auto account = server.client_options().auth.basic;
  REQUIRE(account);
  server.update([](studentsvc::testing::MockServerOptions& o) {
    o.api_key = api_key_of(0);
    o.svc_api_key = svc_key_of(0);
  });

  const studentsvc::test::TempDir dir;
  studentsvc::FileCredentialFiles files;
  files.api_key_file = dir.write("api-key", api_key_of(0) + "\n");
  files.svc_api_key_file = dir.write("svc-api-key", svc_key_of(0) + "\n");
  files.network_id = account->network_id;
  files.password_file = dir.write("password", std::string(account->password.reveal()) + "\n");
  auto provider = studentsvc::FileCredentialProvider::create(files);
  REQUIRE(provider);

  auto options = server.client_options();
  options.auth = {};
  options.auth.svc_api_key_mode = studentsvc::SvcApiKeyMode::custom;
  options.auth.provider = *provider;
  options.retry = studentsvc::RetryPolicy::none();  // a failure must show, not be retried away
  auto client = studentsvc::Client::create(options);
  REQUIRE(client);

  struct Call {
    Clock::time_point start;
    Clock::time_point end;
    bool ok;
  };
  std::mutex calls_mutex;
  std::vector<Call> calls;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      std::vector<Call> mine;
      while (!stop.load()) {
        const auto start = Clock::now();
        const auto r = client->get_student("1234567");
        mine.push_back({start, Clock::now(), r.has_value()});
      }
      const std::lock_guard lock(calls_mutex);
      calls.insert(calls.end(), mine.begin(), mine.end());
    });
  }

  constexpr int rotations = 5;
  std::vector<Clock::time_point> rotation_begun;
  std::vector<Clock::time_point> rotation_done;
  for (int g = 1; g <= rotations; ++g) {
    std::this_thread::sleep_for(200ms);  // calls go on with one generation of keys meanwhile
    rotation_begun.push_back(Clock::now());
    // The service accepts the new keys from now on; the files follow.
    server.update([g](studentsvc::testing::MockServerOptions& o) {
      o.api_key = api_key_of(g);
      o.svc_api_key = svc_key_of(g);
    });
    replace_file(dir, "api-key", api_key_of(g));
    replace_file(dir, "svc-api-key", svc_key_of(g));
    rotation_done.push_back(Clock::now());
  }
  std::this_thread::sleep_for(300ms);
  stop = true;
  for (auto& t : threads) t.join();

  // A call is "after" a rotation when it started once the rotation was done
  // and ended before the next one began: the contract covers it whole. (One
  // that ran into the next rotation may fail, and a slow call on a loaded
  // machine easily does: only the clock of its own start and end can tell.)
  int after = 0;
  int failed_after = 0;
  int failed_during = 0;
  for (const auto& c : calls) {
    bool in_window = c.start >= rotation_done.back();
    for (std::size_t g = 0; g + 1 < rotation_done.size(); ++g) {
      in_window = in_window || (c.start >= rotation_done[g] && c.end < rotation_begun[g + 1]);
    }
    if (in_window) {
      ++after;
      if (!c.ok) ++failed_after;
    } else if (!c.ok) {
      ++failed_during;
    }
  }
  // Every key the server saw was one whole generation.
  std::set<std::string> valid_keys;
  for (int g = 0; g <= rotations; ++g) {
    valid_keys.insert(api_key_of(g));
    valid_keys.insert(svc_key_of(g));
  }
  int foreign = 0;
  for (const auto& request : server.requests()) {
    for (const char* header : {"x-api-key", "svc-api-key"}) {
      const auto it = request.headers.find(header);
      if (it == request.headers.end() || valid_keys.count(it->second) == 0) ++foreign;
    }
  }
  WARN("calls " << calls.size() << ", rotations " << rotations << ", calls after a rotation " << after
                << ", failed after a rotation " << failed_after << ", failed while rotating " << failed_during);
  CHECK(calls.size() > 8U);
  CHECK(after > 0);
  CHECK(failed_after == 0);
  CHECK(foreign == 0);
}

}  // namespace credential_rotation_test

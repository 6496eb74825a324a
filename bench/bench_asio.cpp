// Issue 37's figures (bench/run_bench.py, section (i); scripts/bench.sh):
// awaited lookups through <studentsvc/asio.hpp> against DelayServer on
// 127.0.0.1, the server in a process of its own so that neither the client's
// thread count nor its instructions (callgrind) include it.
//   bench_asio serve DELAY_MS : runs DelayServer (answers after DELAY_MS),
//     prints `PORT <n>`, and serves until its stdin closes.
//   bench_asio throughput URL N CONCURRENCY DELAY_MS : N awaited lookups,
//     CONCURRENCY coroutines on one io_context thread (this one); prints the
//     ratio to ideal (N / CONCURRENCY * DELAY) and the most threads this
//     process had while they ran, with their names.
//   bench_asio throughput-callback URL N CONCURRENCY DELAY_MS : the same load
//     on the callback form, to tell the adapter's share from the SDK's.
//   bench_asio calls URL awaited|callback N : N sequential lookups, one at a
//     time, awaited (use_awaitable) or by the callback form (run under callgrind).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio.hpp>

#include <studentsvc/asio.hpp>
#include <studentsvc/studentsvc.hpp>

#include "delay_server.hpp"

namespace {

namespace net = boost::asio;

constexpr std::string_view student_body =
    R"({"perm":"1234567","firstName":"Ana","lastName":"N","suffix":"","email":"a@example.edu"})";

studentsvc::ClientOptions options_for(const std::string& url, std::size_t connections) {
  studentsvc::ClientOptions o;
  o.base_url = url;
  o.auth.api_key = "bench-key";
  o.allow_insecure_loopback = true;
  o.retry = studentsvc::RetryPolicy::none();
  studentsvc::CurlTransportOptions t;
  t.allow_http = true;
  t.max_connections = connections;
  o.transport = std::make_shared<studentsvc::CurlTransport>(t);
  return o;
}

// This process's threads, by name (Linux: /proc/self/task/*/comm).
std::map<std::string, std::size_t> threads_by_name() {
  std::map<std::string, std::size_t> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    ++out[name];
  }
  return out;
}

std::size_t count(const std::map<std::string, std::size_t>& threads) {
  std::size_t n = 0;
  for (const auto& [name, k] : threads) n += k;
  return n;
}

std::string describe(const std::map<std::string, std::size_t>& threads) {
  std::string out;
  for (const auto& [name, k] : threads) {
    if (!out.empty()) out += ',';
    out += name + "*" + std::to_string(k);
  }
  return out;
}

int serve(std::size_t delay_ms) {
  studentsvc_bench::DelayServer server{std::string(student_body), std::chrono::milliseconds(delay_ms)};
  if (!server.start()) return 1;
  const std::string url = server.base_url();
  std::printf("PORT %s\n", url.substr(url.rfind(':') + 1).c_str());
  std::fflush(stdout);
  // Serves until the parent closes our stdin (or goes away).
  for (std::string line; std::getline(std::cin, line);) {
  }
  return 0;
}

int throughput(const std::string& url, std::size_t n, std::size_t concurrency, std::size_t delay_ms) {
  net::io_context io;
  studentsvc::asio::client client(io.get_executor(), studentsvc::Client(options_for(url, concurrency)));
  std::atomic<std::size_t> next{0};
  std::size_t failed = 0;
  std::map<std::string, std::size_t> peak;
  const auto worker = [&]() -> net::awaitable<void> {
    while (next.fetch_add(1) < n) {
      auto r = co_await client.async_get_student("1234567", net::use_awaitable);
      if (!r) ++failed;
    }
  };
  // Warm-up: the event thread and the connections exist before the clock starts.
  // Named: a lazy coroutine lambda's closure must outlive its frame.
  const auto warm_up = [&]() -> net::awaitable<void> {
    (void)co_await client.async_get_student("1234567", net::use_awaitable);
  };
  net::co_spawn(io, warm_up(), net::detached);
  io.run();
  io.restart();
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < concurrency; ++i) net::co_spawn(io, worker(), net::detached);
  net::steady_timer sample(io);
  std::function<void()> sample_threads = [&] {
    auto now = threads_by_name();
    if (count(now) > count(peak)) peak = std::move(now);
    if (next.load() >= n) return;
    sample.expires_after(std::chrono::milliseconds(50));
    sample.async_wait([&](auto) { sample_threads(); });
  };
  sample_threads();
  io.run();  // this thread is the one io_context thread
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double ideal = static_cast<double>(n) / static_cast<double>(concurrency) * static_cast<double>(delay_ms) / 1000.0;
  std::printf("BENCH asio_throughput_s=%.4f\nBENCH asio_throughput_ideal_s=%.4f\nBENCH asio_fraction_of_ideal=%.4f\n"
              "BENCH asio_process_threads=%zu\nBENCH asio_failed=%zu\n",
              seconds, ideal, ideal / seconds, count(peak), failed);
  std::printf("asio-throughput lookups=%zu concurrency=%zu delay_ms=%zu threads=%s\n", n, concurrency, delay_ms,
              describe(peak).c_str());
  return failed == 0 ? 0 : 1;
}

int throughput_callback(const std::string& url, std::size_t n, std::size_t concurrency, std::size_t delay_ms) {
  const studentsvc::Client sdk(options_for(url, concurrency));
  (void)sdk.get_student_async("1234567").get();  // warm-up
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> active{concurrency};
  std::atomic<std::size_t> failed{0};
  std::promise<void> all_done;
  std::function<void()> issue = [&] {
    sdk.get_student_async("1234567", [&](studentsvc::Result<studentsvc::StudentExtended> r) {
      if (!r) failed.fetch_add(1);
      if (next.fetch_add(1) < n) {
        issue();
      } else if (active.fetch_sub(1) == 1) {
        all_done.set_value();
      }
    });
  };
  const auto start = std::chrono::steady_clock::now();
  next.store(concurrency);
  for (std::size_t i = 0; i < concurrency; ++i) issue();
  all_done.get_future().wait();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double ideal = static_cast<double>(n) / static_cast<double>(concurrency) * static_cast<double>(delay_ms) / 1000.0;
  std::printf("BENCH asio_callback_throughput_s=%.4f\nBENCH asio_callback_fraction_of_ideal=%.4f\n"
              "BENCH asio_callback_failed=%zu\n",
              seconds, ideal / seconds, failed.load());
  return failed.load() == 0 ? 0 : 1;
}

int calls(const std::string& url, std::string_view form, std::size_t n) {
  net::io_context io;
  const studentsvc::Client sdk(options_for(url, 1));
  studentsvc::asio::client client(io.get_executor(), sdk);
  std::size_t ok = 0;
  if (form == "awaited") {
    const auto lookups = [&]() -> net::awaitable<void> {
      for (std::size_t i = 0; i < n; ++i) {
        if (auto r = co_await client.async_get_student("1234567", net::use_awaitable)) ++ok;
      }
    };
    net::co_spawn(io, lookups(), net::detached);
    io.run();
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      std::promise<bool> done;
      sdk.get_student_async("1234567",
                            [&](studentsvc::Result<studentsvc::StudentExtended> r) { done.set_value(r.has_value()); });
      if (done.get_future().get()) ++ok;
    }
  }
  std::printf("asio-calls form=%.*s calls=%zu ok=%zu\n", static_cast<int>(form.size()), form.data(), n, ok);
  return ok == n ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "serve") return serve(std::stoul(args[1]));
  if (args.size() == 5 && args[0] == "throughput") {
    return throughput(args[1], std::stoul(args[2]), std::stoul(args[3]), std::stoul(args[4]));
  }
  if (args.size() == 5 && args[0] == "throughput-callback") {
    return throughput_callback(args[1], std::stoul(args[2]), std::stoul(args[3]), std::stoul(args[4]));
  }
  if (args.size() == 4 && args[0] == "calls") return calls(args[1], args[2], std::stoul(args[3]));
  std::fprintf(stderr,
               "usage: bench_asio serve DELAY_MS | throughput URL N CONCURRENCY DELAY_MS |\n"
               "       throughput-callback URL N CONCURRENCY DELAY_MS | calls URL awaited|callback N\n");
  return 2;
}

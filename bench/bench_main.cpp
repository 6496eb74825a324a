// studentsvc_bench: the measurements behind docs/benchmarks.md.
// scripts/bench.sh runs every mode (through bench/run_bench.py); each mode can
// also be run alone. Every mode prints `BENCH name=value` lines.
//
//   studentsvc_bench body                          the StudentExtended body the servers serve
//   studentsvc_bench seq URL ROUNDS CALLS          (a) get_student vs a raw libcurl loop, alternating
//   studentsvc_bench sdk URL ROUNDS CALLS          get_student alone (beside the Python requests runs)
//   studentsvc_bench stages URL ROUNDS CALLS       (a) where get_student's time over the raw loop goes:
//                                                  the transport + decode, then + the request builder
//   studentsvc_bench calls WHICH URL N             N calls and nothing else (run under callgrind): sdk,
//                                                  sdk-hooks, sdk-metrics (with a hook), raw, or the
//                                                  steps of mode stages: transport, built
//   studentsvc_bench allocs URL N                  (c) operator new calls per call, SDK and raw
//   studentsvc_bench decode ROUNDS ITERS           (d) decode_student vs nlohmann::json::parse
//   studentsvc_bench batch N DELAY_MS              (e) sequential vs get_students at 16 and 64
//   studentsvc_bench memory URL N                  (g) peak RSS and heap in use at 10%, 50%, 100% of N calls
//   studentsvc_bench async N DELAY_MS INFLIGHT     (h) N get_student_async at once, INFLIGHT on the wire:
//                                                  fraction of the ideal, threads the engine added
//   studentsvc_bench stream N DELAY_MS             (h) for_each_student over N perms from a lazy range:
//                                                  peak RSS (run once per N: the peak is the process's)
//   studentsvc_bench breaker N                     N get_student refused by an open circuit breaker:
//                                                  µs per refused call (no network touched)
//   studentsvc_bench hedge N                       N lookups, 64 in flight, 5 % of answers delayed by 1 s:
//                                                  p50/p99 latency with hedging off, then after 50 ms

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <random>
#include <fstream>
#include <future>
#include <memory>
#include <ranges>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <malloc.h>
#include <time.h>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <studentsvc/metrics.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/responses.hpp>  // decode_student: the umbrella leaves it out in compiled mode

#include "delay_server.hpp"

// ---------------------------------------------------------------------------
// Counting global operator new: on only while `counting` is set.
namespace {
std::atomic<bool> counting{false};
std::atomic<std::uint64_t> news{0};

void* counted_alloc(std::size_t n) {
  if (counting.load(std::memory_order_relaxed)) news.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  if (void* p = std::malloc(n)) return p;
  throw std::bad_alloc();
}
void* counted_alloc_aligned(std::size_t n, std::align_val_t al) {
  if (counting.load(std::memory_order_relaxed)) news.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  const auto a = static_cast<std::size_t>(al);
  if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t n, std::align_val_t al) { return counted_alloc_aligned(n, al); }
void* operator new[](std::size_t n, std::align_val_t al) { return counted_alloc_aligned(n, al); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using clock_type = std::chrono::steady_clock;

// The fake service account the benchmark servers are told to expect (nginx
// does not check them; they are sent so both sides carry the same headers).
constexpr const char* bench_api_key = "bench-api-key-0123456789abcdef";
constexpr const char* bench_network_id = "svc-bench-app";
constexpr const char* bench_password = "bench-password";
constexpr const char* bench_perm = "1234567";

// A typical StudentExtended answer: every field present, accents, one null.
constexpr std::string_view student_body =
    R"({"perm":"1234567","firstName":"Ana","lastName":"Núñez","suffix":"","email":"ana.nunez@example.edu",)"
    R"("firstNameLegal":"Ana María","middleName":"Lucía","gender":"F","birthDate":"20040315","nfr":false,)"
    R"("internationalStudentCode":null,"firstCensusQuarter":"20224","lastCensusQuarter":"20252",)"
    R"("lastRegisteredQuarter":"20252","admitLevel":"FR","admitQuarter":"20224","pronounCode":"SH"})";

volatile std::size_t sink = 0;  // keeps the optimiser from dropping work

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "studentsvc_bench: %s\n", why.c_str());
  std::exit(1);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench(const char* name, double value) { std::printf("BENCH %s=%.6g\n", name, value); }

std::size_t to_size(const char* s) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0' || v == 0) die(std::string("not a positive number: ") + s);
  return static_cast<std::size_t>(v);
}

/// The CA that signed the benchmark server's certificate (an https:// URL), from
/// STUDENTSVC_BENCH_CA; empty for plain http://.
std::string bench_ca() {
  const char* ca = std::getenv("STUDENTSVC_BENCH_CA");  // NOLINT(concurrency-mt-unsafe): read before any thread
  return ca != nullptr ? ca : "";
}

/// The i-th of 9,000,000 distinct valid perms (a batch or stream looks a
/// repeated perm up once, so measuring N lookups takes N distinct perms).
std::string distinct_perm(std::size_t i) { return std::to_string(1000000 + i % 9000000); }

studentsvc::ClientOptions client_options(const std::string& base_url) {
  studentsvc::ClientOptions o;
  o.base_url = base_url;
  o.ca_bundle = bench_ca();
  o.allow_insecure_loopback = true;
  o.auth.api_key = bench_api_key;
  o.auth.basic = studentsvc::BasicCredential{bench_network_id, bench_password};
  return o;
}

// --- the SDK loop ----------------------------------------------------------

/// The cheapest useful hook: counts finished attempts. Measures what the SDK
/// spends on building and handing over the events, not what a hook does.
class CountingHooks final : public studentsvc::Instrumentation {
 public:
  void on_attempt(const studentsvc::AttemptEvent& e) override {
    if (e.phase == studentsvc::AttemptPhase::end) ended.fetch_add(1, std::memory_order_relaxed);
  }
  std::atomic<std::uint64_t> ended{0};
};

studentsvc::ClientOptions with_hooks(studentsvc::ClientOptions o, std::shared_ptr<studentsvc::Instrumentation> hooks) {
  o.instrumentation = std::move(hooks);
  return o;
}

struct SdkLoop {
  explicit SdkLoop(const std::string& base_url, std::shared_ptr<studentsvc::Instrumentation> hooks = nullptr)
      : client(with_hooks(client_options(base_url), std::move(hooks))) {}
  void run(std::size_t calls) {
    for (std::size_t i = 0; i < calls; ++i) {
      auto student = client.get_student(bench_perm);
      if (!student) die("get_student failed: " + studentsvc::to_string(student.error()));
      sink = sink + student->email.size();
    }
  }
  studentsvc::Client client;
};

// --- the hand-written raw libcurl loop ---------------------------------------
// One easy handle reused; the SDK's own headers (taken from the SDK's request
// builder once); the body parsed with nlohmann::json::parse.

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

struct RawLoop {
  explicit RawLoop(const std::string& base_url) {
    const auto options = client_options(base_url);
    auto base = studentsvc::detail::parse_base_url(options.base_url, true);
    if (!base) die("bad base URL");
    auto request = studentsvc::build_get_student_request(*base, options, bench_perm);
    if (!request) die("could not build the request");
    url = request->url;
    for (const auto& [name, value] : request->headers) {
      headers = curl_slist_append(headers, (name + ": " + value).c_str());
    }
    handle = curl_easy_init();
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &append_body);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_TCP_KEEPALIVE, 1L);
    if (!options.ca_bundle.empty()) curl_easy_setopt(handle, CURLOPT_CAINFO, options.ca_bundle.c_str());
  }
  ~RawLoop() {
    curl_easy_cleanup(handle);
    curl_slist_free_all(headers);
  }
  RawLoop(const RawLoop&) = delete;
  RawLoop& operator=(const RawLoop&) = delete;

  void run(std::size_t calls) {
    for (std::size_t i = 0; i < calls; ++i) {
      body.clear();
      const CURLcode code = curl_easy_perform(handle);
      long status = 0;
      curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
      if (code != CURLE_OK || status != 200) die("raw transfer failed");
      const auto json = nlohmann::json::parse(body);
      sink = sink + json.size();
    }
  }

  std::string url;
  std::string body;
  curl_slist* headers = nullptr;
  CURL* handle = nullptr;
};

// --- get_student's steps on their own (mode stages) --------------------------
// The same lookup with fewer of the SDK's steps: CurlTransport::send of a
// request built once, then decode_student (TransportLoop); the same with the
// request built on every call (TransportLoop with build_each_call).
// Client::get_student adds the call pipeline (retry, hooks, request id, log)
// on top of these.

studentsvc::detail::BaseUrl base_url_or_die(const std::string& url) {
  auto base = studentsvc::detail::parse_base_url(url, true);
  if (!base) die("bad base URL");
  return std::move(*base);
}

struct TransportLoop {
  explicit TransportLoop(const std::string& base_url, bool build_each_call)
      : options(client_options(base_url)),
        base(base_url_or_die(options.base_url)),
        transport(studentsvc::curl_transport_options(options)),
        build_each(build_each_call) {
    auto built = studentsvc::build_get_student_request(base, options, bench_perm);
    if (!built) die("could not build the request");
    request = std::move(*built);
  }
  void run(std::size_t calls) {
    for (std::size_t i = 0; i < calls; ++i) {
      std::optional<studentsvc::HttpRequest> fresh;
      if (build_each) {
        auto built = studentsvc::build_get_student_request(base, options, bench_perm);
        if (!built) die("could not build the request");
        fresh = std::move(*built);
      }
      const auto response = transport.send(fresh ? *fresh : request);
      if (!response || response->status != 200) die("transport send failed");
      const auto student = studentsvc::decode_student(response->body);
      if (!student) die("decode_student failed");
      sink = sink + student->email.size();
    }
  }
  studentsvc::ClientOptions options;
  studentsvc::detail::BaseUrl base;
  studentsvc::CurlTransport transport;
  bool build_each;
  studentsvc::HttpRequest request;
};

/// Wall-clock and this process's CPU time per call, in ns.
struct PerCall {
  double wall = 0;
  double cpu = 0;
};

double process_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

template <class Loop>
PerCall per_call(Loop& loop, std::size_t calls) {
  const double cpu0 = process_cpu_ns();
  const auto start = clock_type::now();
  loop.run(calls);
  const auto wall = std::chrono::duration<double, std::nano>(clock_type::now() - start).count();
  const double cpu = process_cpu_ns() - cpu0;
  return {wall / static_cast<double>(calls), cpu / static_cast<double>(calls)};
}

// (a) alternating rounds; each ratio is the median of the adjacent pairs' ratios.
// Wall-clock is the figure; CPU time (the client process only, so the server's
// scheduling does not count) is printed beside it.
int mode_seq(const std::string& base_url, std::size_t rounds, std::size_t calls) {
  SdkLoop sdk(base_url);
  RawLoop raw(base_url);
  sdk.run(std::max<std::size_t>(calls / 4, 200));  // warm up: connection, caches, allocator
  raw.run(std::max<std::size_t>(calls / 4, 200));
  std::vector<double> s, r, ratio, s_cpu, r_cpu, ratio_cpu;
  for (std::size_t i = 0; i < rounds; ++i) {
    PerCall a, b;
    if (i % 2 == 0) {
      a = per_call(sdk, calls);
      b = per_call(raw, calls);
    } else {
      b = per_call(raw, calls);
      a = per_call(sdk, calls);
    }
    s.push_back(a.wall);
    r.push_back(b.wall);
    ratio.push_back(a.wall / b.wall);
    s_cpu.push_back(a.cpu);
    r_cpu.push_back(b.cpu);
    ratio_cpu.push_back(a.cpu / b.cpu);
  }
  bench("seq_sdk_us_per_call", median(s) / 1000);
  bench("seq_raw_us_per_call", median(r) / 1000);
  bench("sdk_over_raw", median(ratio));
  bench("seq_sdk_cpu_us_per_call", median(s_cpu) / 1000);
  bench("seq_raw_cpu_us_per_call", median(r_cpu) / 1000);
  bench("sdk_over_raw_cpu", median(ratio_cpu));
  return 0;
}

// Each round runs the four loops in a rotated order; each figure is the
// median over the rounds of a loop's time over the raw loop's in that round.
int mode_stages(const std::string& base_url, std::size_t rounds, std::size_t calls) {
  RawLoop raw(base_url);
  TransportLoop transport(base_url, false);
  TransportLoop built(base_url, true);
  SdkLoop sdk(base_url);
  const std::size_t warm = std::max<std::size_t>(calls / 4, 200);
  raw.run(warm);
  transport.run(warm);
  built.run(warm);
  sdk.run(warm);
  std::vector<double> transport_ratio, built_ratio, sdk_ratio;
  for (std::size_t i = 0; i < rounds; ++i) {
    double t[4] = {};
    for (std::size_t k = 0; k < 4; ++k) {
      switch ((k + i) % 4) {
        case 0: t[0] = per_call(raw, calls).wall; break;
        case 1: t[1] = per_call(transport, calls).wall; break;
        case 2: t[2] = per_call(built, calls).wall; break;
        default: t[3] = per_call(sdk, calls).wall; break;
      }
    }
    transport_ratio.push_back(t[1] / t[0]);
    built_ratio.push_back(t[2] / t[0]);
    sdk_ratio.push_back(t[3] / t[0]);
  }
  bench("stage_transport_decode_over_raw", median(transport_ratio));
  bench("stage_build_transport_decode_over_raw", median(built_ratio));
  bench("stage_sdk_over_raw", median(sdk_ratio));
  return 0;
}

int mode_sdk(const std::string& base_url, std::size_t rounds, std::size_t calls) {
  SdkLoop sdk(base_url);
  sdk.run(std::max<std::size_t>(calls / 4, 200));
  std::vector<double> s, c;
  for (std::size_t i = 0; i < rounds; ++i) {
    const PerCall t = per_call(sdk, calls);
    s.push_back(t.wall);
    c.push_back(t.cpu);
  }
  bench("sdk_us_per_call", median(s) / 1000);
  bench("sdk_cpu_us_per_call", median(c) / 1000);
  return 0;
}

// Under callgrind: the same N calls with the SDK or raw; the script takes the
// difference of two N to remove start-up.
int mode_calls(const std::string& which, const std::string& base_url, std::size_t n) {
  if (which == "sdk") {
    SdkLoop sdk(base_url);
    sdk.run(n);
  } else if (which == "sdk-hooks") {  // the hook cost: the same calls with a counting hook
    SdkLoop sdk(base_url, std::make_shared<CountingHooks>());
    sdk.run(n);
  } else if (which == "sdk-metrics") {  // ... and with AttemptMetrics
    SdkLoop sdk(base_url, std::make_shared<studentsvc::AttemptMetrics>());
    sdk.run(n);
  } else if (which == "raw") {
    RawLoop raw(base_url);
    raw.run(n);
  } else if (which == "transport" || which == "built") {  // the steps of mode stages
    TransportLoop loop(base_url, which == "built");
    loop.run(n);
  } else {
    die("calls: sdk, sdk-hooks, sdk-metrics, raw, transport or built");
  }
  return 0;
}

template <class Loop>
double news_per_call(Loop& loop, std::size_t n) {
  loop.run(200);  // warm: connection made, buffers grown
  news = 0;
  counting = true;
  loop.run(n);
  counting = false;
  return static_cast<double>(news.load()) / static_cast<double>(n);
}

int mode_allocs(const std::string& base_url, std::size_t n) {
  SdkLoop sdk(base_url);
  RawLoop raw(base_url);
  const double a = news_per_call(sdk, n);
  const double b = news_per_call(raw, n);
  bench("sdk_allocs_per_call", a);
  bench("raw_allocs_per_call", b);
  bench("sdk_minus_raw_allocs_per_call", a - b);
  // The decode step alone, for the breakdown.
  counting = true;
  news = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto s = studentsvc::decode_student(student_body);
    sink = sink + s->email.size();
  }
  counting = false;
  bench("decode_allocs_per_call", static_cast<double>(news.load()) / static_cast<double>(n));
  news = 0;
  counting = true;
  for (std::size_t i = 0; i < n; ++i) {
    auto j = nlohmann::json::parse(student_body);
    sink = sink + j.size();
  }
  counting = false;
  bench("parse_allocs_per_call", static_cast<double>(news.load()) / static_cast<double>(n));
  return 0;
}

// (d) decode_student(body) against nlohmann::json::parse(body) alone.
int mode_decode(std::size_t rounds, std::size_t iters) {
  auto decode = [&] {
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < iters; ++i) {
      auto s = studentsvc::decode_student(student_body);
      if (!s) die("decode failed");
      sink = sink + s->email.size();
    }
    return std::chrono::duration<double, std::nano>(clock_type::now() - start).count() / static_cast<double>(iters);
  };
  auto parse = [&] {
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < iters; ++i) {
      auto j = nlohmann::json::parse(student_body);
      sink = sink + j.size();
    }
    return std::chrono::duration<double, std::nano>(clock_type::now() - start).count() / static_cast<double>(iters);
  };
  (void)decode();
  (void)parse();
  std::vector<double> d, p, ratio;
  for (std::size_t r = 0; r < rounds; ++r) {
    double a = 0, b = 0;
    if (r % 2 == 0) {
      a = decode();
      b = parse();
    } else {
      b = parse();
      a = decode();
    }
    d.push_back(a);
    p.push_back(b);
    ratio.push_back(a / b);
  }
  bench("decode_ns", median(d));
  bench("parse_ns", median(p));
  bench("decode_over_parse", median(ratio));
  return 0;
}

// (e) 1,000 perms against a server that adds DELAY_MS to every answer.
int mode_batch(std::size_t n, std::size_t delay_ms) {
  studentsvc_bench::DelayServer server{std::string(student_body), std::chrono::milliseconds(static_cast<long long>(delay_ms))};
  if (!server.start()) die("could not start the delay server");
  const studentsvc::Client client(client_options(server.base_url()));
  std::vector<std::string> perms;
  perms.reserve(n);
  for (std::size_t i = 0; i < n; ++i) perms.push_back(distinct_perm(i));
  auto seconds_since = [](clock_type::time_point t) {
    return std::chrono::duration<double>(clock_type::now() - t).count();
  };
  (void)client.get_student(bench_perm);  // connect

  auto start = clock_type::now();
  for (const auto& perm : perms) {
    auto s = client.get_student(perm);
    if (!s) die("sequential lookup failed: " + studentsvc::to_string(s.error()));
  }
  const double seq = seconds_since(start);
  bench("batch_seq_s", seq);
  const double per_call = seq / static_cast<double>(n);

  for (const std::size_t c : {std::size_t{16}, std::size_t{64}}) {
    studentsvc::BatchOptions batch;
    batch.max_concurrency = c;
    (void)client.get_students(std::vector<std::string>(perms.begin(), perms.begin() + static_cast<std::ptrdiff_t>(c)),
                              batch);  // open the connections
    std::vector<double> times;
    for (int round = 0; round < 5; ++round) {
      start = clock_type::now();
      const auto results = client.get_students(perms, batch);
      times.push_back(seconds_since(start));
      for (const auto& r : results) {
        if (!r) die("batch lookup failed: " + studentsvc::to_string(r.error()));
      }
    }
    const double t = median(times);
    const double waves = std::ceil(static_cast<double>(n) / static_cast<double>(c));
    const double ideal = static_cast<double>(n) / waves;  // latency-bound speed-up
    const double speedup = seq / t;
    const std::string tag = "c" + std::to_string(c);
    bench(("batch_" + tag + "_s").c_str(), t);
    bench(("batch_" + tag + "_speedup").c_str(), speedup);
    bench(("batch_" + tag + "_ideal_speedup").c_str(), ideal);
    bench(("batch_" + tag + "_fraction_of_ideal").c_str(), speedup / ideal);
  }
  bench("batch_sequential_ms_per_call", per_call * 1000);
  bench("batch_server_max_in_flight", static_cast<double>(server.max_in_flight()));
  bench("batch_server_connections", static_cast<double>(server.connections()));
  server.stop();
  return 0;
}

// The number after `key` (say "Threads:") in /proc/self/status; -1 when it is not there.
double proc_self_status(std::string_view key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with(key)) return std::strtod(line.c_str() + key.size(), nullptr);
  }
  return -1;
}

// This process's peak RSS in KiB (VmHWM). Not getrusage's ru_maxrss, which
// Linux carries over an exec: run from bench/run_bench.py it would be the
// Python parent's peak, whatever this process does.
double peak_rss_kb() {
  const double kb = proc_self_status("VmHWM:");
  if (kb < 0) die("no VmHWM in /proc/self/status");
  return kb;
}

// (g) peak RSS (VmHWM) and heap in use (mallinfo2) over N sequential calls.
int mode_memory(const std::string& base_url, std::size_t n) {
  SdkLoop sdk(base_url);
  auto heap_kb = [] { return static_cast<double>(mallinfo2().uordblks) / 1024.0; };
  const std::size_t marks[] = {n / 10, n / 2, n};
  const char* names[] = {"10pct", "50pct", "100pct"};
  std::size_t done = 0;
  double rss[3] = {0, 0, 0}, heap[3] = {0, 0, 0};
  for (int m = 0; m < 3; ++m) {
    sdk.run(marks[m] - done);
    done = marks[m];
    rss[m] = peak_rss_kb();
    heap[m] = heap_kb();
  }
  // Printed only now: stdout's first write allocates its buffer, which is not the SDK's.
  for (int m = 0; m < 3; ++m) {
    bench((std::string("memory_peak_rss_kb_") + names[m]).c_str(), rss[m]);
    bench((std::string("memory_heap_in_use_kb_") + names[m]).c_str(), heap[m]);
  }
  bench("memory_calls", static_cast<double>(n));
  bench("memory_rss_growth_kb", rss[2] - rss[0]);
  bench("memory_heap_growth_kb", heap[2] - heap[0]);
  return 0;
}

}  // namespace

// Threads of this process now.
double thread_count() { return std::max(proc_self_status("Threads:"), 0.0); }

// (h) N asynchronous lookups submitted at once; the transport keeps INFLIGHT
// on the wire (CurlTransportOptions::max_connections). Ideal: N / INFLIGHT waves of DELAY_MS.
int mode_async(std::size_t n, std::size_t delay_ms, std::size_t in_flight) {
  studentsvc_bench::DelayServer server{std::string(student_body), std::chrono::milliseconds(static_cast<long long>(delay_ms))};
  if (!server.start()) die("could not start the delay server");
  auto options = client_options(server.base_url());
  studentsvc::CurlTransportOptions transport;
  transport.allow_http = true;
  transport.max_connections = static_cast<long>(in_flight);
  options.transport = std::make_shared<studentsvc::CurlTransport>(transport);
  const studentsvc::Client client(options);
  const double threads_before = thread_count();
  (void)client.get_student_async(bench_perm).get();  // starts the event thread, opens a connection
  const double threads_engine = thread_count() - threads_before;
  std::vector<double> times;
  for (int round = 0; round < 3; ++round) {
    std::atomic<std::size_t> left{n};
    std::atomic<std::size_t> failed{0};
    std::promise<void> all;
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) {
      client.get_student_async(bench_perm, [&](studentsvc::Result<studentsvc::StudentExtended> r) {
        if (!r) failed.fetch_add(1);
        if (left.fetch_sub(1) == 1) all.set_value();
      });
    }
    all.get_future().wait();
    times.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
    if (failed.load() != 0) die("async lookups failed: " + std::to_string(failed.load()));
  }
  const double t = median(times);
  const double waves = std::ceil(static_cast<double>(n) / static_cast<double>(in_flight));
  const double ideal = waves * static_cast<double>(delay_ms) / 1000.0;
  bench("async_s", t);
  bench("async_ideal_s", ideal);
  bench("async_fraction_of_ideal", ideal / t);
  bench("async_engine_threads", threads_engine);
  bench("async_threads_during", thread_count() - threads_before);
  bench("async_server_max_in_flight", static_cast<double>(server.max_in_flight()));
  server.stop();
  return 0;
}

// (h) for_each_student over N distinct perms generated lazily (never a vector
// of N; a perm listed twice is looked up once): the peak RSS after it, to
// compare between N = 1,000 and 100,000 runs.
int mode_stream(std::size_t n, std::size_t delay_ms) {
  studentsvc_bench::DelayServer server{std::string(student_body), std::chrono::milliseconds(static_cast<long long>(delay_ms))};
  if (!server.start()) die("could not start the delay server");
  const studentsvc::Client client(client_options(server.base_url()));
  auto perms = std::views::iota(std::size_t{0}, n) |
               std::views::transform(distinct_perm);
  std::size_t ok = 0;
  studentsvc::StreamOptions stream;
  stream.max_concurrency = 64;
  const auto start = clock_type::now();
  const auto summary = client.for_each_student(
      perms, [&](std::size_t, std::string_view, studentsvc::Result<studentsvc::StudentExtended> r) { ok += r ? 1 : 0; },
      stream);
  const double t = std::chrono::duration<double>(clock_type::now() - start).count();
  if (ok != n) die("streamed lookups failed: " + std::to_string(n - ok) + " of " + std::to_string(n));
  bench("stream_peak_rss_kb", peak_rss_kb());
  bench("stream_s", t);
  bench("stream_sent", static_cast<double>(summary.sent));
  server.stop();
  return 0;
}

// A call refused by an open circuit breaker: what it costs the caller (the
// request is built, the breaker asked, the circuit_open error mapped; nothing sent).
int mode_breaker(std::size_t n) {
  auto o = client_options("http://127.0.0.1:9");  // the discard port: the one real attempt is refused
  o.retry = studentsvc::RetryPolicy::none();
  o.circuit_breaker = studentsvc::CircuitBreakerOptions{1, std::chrono::hours{1}};
  const studentsvc::Client client(o);
  if (client.get_student(bench_perm)) die("the breaker bench needs a port that refuses connections");
  std::size_t refused = 0;
  const auto start = clock_type::now();
  for (std::size_t i = 0; i < n; ++i) {
    auto r = client.get_student(bench_perm);
    refused += !r && r.error().kind == studentsvc::ErrorKind::circuit_open ? 1 : 0;
  }
  const double t = std::chrono::duration<double>(clock_type::now() - start).count();
  if (refused != n) die("calls were not refused by the open breaker");
  bench("breaker_refused_call_us", t * 1e6 / static_cast<double>(n));
  return 0;
}

// Hedged lookups: N get_student_async, at most 64 in flight, against a
// server that delays 5 % of its answers (a fixed pseudo-random choice) by
// 1 s and answers the rest after 2 ms; the same run without hedging first.
int mode_hedge(std::size_t n) {
  struct Run {
    double p50_ms;
    double p99_ms;
    std::uint64_t requests;
  };
  auto run = [n](bool hedging) -> Run {
    studentsvc_bench::DelayServer server{std::string(student_body), std::chrono::milliseconds{2}};
    std::mt19937_64 rng(42);
    server.set_delays([rng](std::uint64_t) mutable {
      return rng() % 100 < 5 ? std::chrono::milliseconds{1000} : std::chrono::milliseconds{2};
    });
    if (!server.start()) die("could not start the delay server");
    auto o = client_options(server.base_url());
    o.retry = studentsvc::RetryPolicy::none();
    if (hedging) o.hedging = studentsvc::HedgingOptions{std::chrono::milliseconds{50}};
    const studentsvc::Client client(o);
    std::vector<double> latency(n, 0.0);
    std::mutex mutex;
    std::condition_variable cv;
    std::size_t in_flight = 0;
    std::size_t done = 0;
    std::size_t failed = 0;
    for (std::size_t i = 0; i < n; ++i) {
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return in_flight < 64; });
        ++in_flight;
      }
      const auto t0 = clock_type::now();
      client.get_student_async(bench_perm, [&, i, t0](studentsvc::Result<studentsvc::StudentExtended> r) {
        const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
        const std::lock_guard lock(mutex);
        latency[i] = ms;
        failed += r ? 0 : 1;
        --in_flight;
        ++done;
        cv.notify_all();
      });
    }
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return done == n; });
    if (failed != 0) die("hedge bench: " + std::to_string(failed) + " lookups failed");
    std::sort(latency.begin(), latency.end());
    const auto at = [&](double q) { return latency[std::min(n - 1, static_cast<std::size_t>(q * static_cast<double>(n)))]; };
    return Run{at(0.50), at(0.99), server.requests()};
  };
  const Run off = run(false);
  const Run on = run(true);
  bench("hedge_off_p50_ms", off.p50_ms);
  bench("hedge_off_p99_ms", off.p99_ms);
  bench("hedge_off_requests", static_cast<double>(off.requests));
  bench("hedge_on_p50_ms", on.p50_ms);
  bench("hedge_on_p99_ms", on.p99_ms);
  bench("hedge_on_requests", static_cast<double>(on.requests));
  return 0;
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) die("usage: see the comment at the top of bench/bench_main.cpp");
  const std::string& mode = args[0];
  curl_global_init(CURL_GLOBAL_DEFAULT);
  if (mode == "body") {
    std::fwrite(student_body.data(), 1, student_body.size(), stdout);
    return 0;
  }
  if (mode == "seq" && args.size() == 4) return mode_seq(args[1], to_size(argv[3]), to_size(argv[4]));
  if (mode == "sdk" && args.size() == 4) return mode_sdk(args[1], to_size(argv[3]), to_size(argv[4]));
  if (mode == "stages" && args.size() == 4) return mode_stages(args[1], to_size(argv[3]), to_size(argv[4]));
  if (mode == "calls" && args.size() == 4) return mode_calls(args[1], args[2], to_size(argv[4]));
  if (mode == "allocs" && args.size() == 3) return mode_allocs(args[1], to_size(argv[3]));
  if (mode == "decode" && args.size() == 3) return mode_decode(to_size(argv[2]), to_size(argv[3]));
  if (mode == "batch" && args.size() == 3) return mode_batch(to_size(argv[2]), to_size(argv[3]));
  if (mode == "memory" && args.size() == 3) return mode_memory(args[1], to_size(argv[3]));
  if (mode == "async" && args.size() == 4) return mode_async(to_size(argv[2]), to_size(argv[3]), to_size(argv[4]));
  if (mode == "hedge" && args.size() == 2) return mode_hedge(to_size(argv[2]));
  if (mode == "breaker" && args.size() == 2) return mode_breaker(to_size(argv[2]));
  if (mode == "stream" && args.size() == 3) return mode_stream(to_size(argv[2]), to_size(argv[3]));
  die("unknown mode or wrong arguments: " + mode);
}

// The roster-sync figures of issue 38 (scripts/bench.sh runs it through
// scripts/bench-roster-sync.sh, which starts the PostgreSQL server):
//   1. 10,000 perms, 64 at a time, against a server that delays each answer
//      by 10 ms: roster-sync's throughput into SQLite and into PostgreSQL,
//      over the SDK's lookup throughput alone (for_each_student, the same
//      server, the same run), the better of two runs of each; target >= 0.9;
//   2. roster-sync's peak RSS at 1,000, 10,000 and 100,000 perms (1 ms
//      answers): flat.
// Prints a table and one `BENCH name=value` line per figure.
//
//   studentsvc_roster_sync_bench --roster-sync PATH --pg-url URL_WITH_%DB% --work DIR [--quick]
// %DB% in the URL is replaced by a database name the caller created:
// sync10k, sync10k_b, rss1k, rss10k, rss100k.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <ranges>
#include <string>
#include <vector>

#include <studentsvc/studentsvc.hpp>

#include "delay_server.hpp"

extern char** environ;

namespace {

constexpr std::string_view student_body =
    R"({"perm":"1234567","firstName":"Ana","lastName":"Núñez","suffix":"","email":"ana.nunez@example.edu",)"
    R"("firstNameLegal":"Ana María","middleName":"Lucía","gender":"F","birthDate":"20040315","nfr":false,)"
    R"("internationalStudentCode":null,"firstCensusQuarter":"20224","lastCensusQuarter":"20252",)"
    R"("lastRegisteredQuarter":"20252","admitLevel":"FR","admitQuarter":"20224","pronounCode":"SH"})";

[[noreturn]] void die(const std::string& what) {
  std::cerr << "roster_sync_bench: " << what << "\n";
  std::exit(1);
}

std::string perm_of(std::size_t i) { return std::to_string(1000000 + i); }

// The SDK alone: for_each_student over n perms, 64 in flight; lookups a second.
double sdk_lookups_per_second(const std::string& base_url, std::size_t n) {
  studentsvc::ClientOptions o;
  o.base_url = base_url;
  o.allow_insecure_loopback = true;
  o.auth.api_key = studentsvc::Secret("bench");
  const studentsvc::Client client(o);
  studentsvc::StreamOptions stream;
  stream.max_concurrency = 64;
  std::size_t ok = 0;
  const auto start = std::chrono::steady_clock::now();
  client.for_each_student(
      std::views::iota(std::size_t{0}, n) | std::views::transform(perm_of),
      [&](std::size_t, std::string_view, studentsvc::Result<studentsvc::StudentExtended> r) { ok += r ? 1 : 0; },
      stream);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (ok != n) die("the SDK alone: " + std::to_string(n - ok) + " lookups failed");
  return static_cast<double>(n) / seconds;
}

struct SyncRun {
  double perms_per_second = 0;
  long peak_rss_kib = 0;
  double cpu_seconds = 0;  // user + system of the roster-sync process
};

// roster-sync as the timer runs it: a process; its wall time and peak RSS (wait4).
SyncRun run_roster_sync(const std::string& binary, const std::string& base_url, const std::string& perms_file,
                        const std::string& db_url, std::size_t n) {
  std::vector<std::string> env_strings = {"STUDENTSVC_BASE_URL=" + base_url, "STUDENTSVC_API_KEY=bench",
                                          "STUDENTSVC_ALLOW_INSECURE_LOOPBACK=1", "ROSTER_SYNC_CONCURRENCY=64",
                                          "PATH=/usr/bin:/bin"};
  std::vector<char*> env;
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  std::vector<std::string> arg_strings = {binary, "--perms", perms_file, "--db", db_url};
  std::vector<char*> args;
  for (auto& s : arg_strings) args.push_back(s.data());
  args.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, binary.c_str(), nullptr, nullptr, args.data(), env.data()) != 0) die("cannot run " + binary);
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) die("wait4");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    die("roster-sync into " + db_url + " exited " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  const auto cpu = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return {static_cast<double>(n) / seconds, usage.ru_maxrss, cpu(usage.ru_utime) + cpu(usage.ru_stime)};
}

std::string write_perms(const std::filesystem::path& dir, std::size_t n) {
  const auto path = (dir / ("perms-" + std::to_string(n) + ".txt")).string();
  std::ofstream out(path);
  for (std::size_t i = 0; i < n; ++i) out << perm_of(i) << "\n";
  return path;
}

std::string replace_db(std::string url, const std::string& db) {
  const auto at = url.find("%DB%");
  if (at == std::string::npos) die("--pg-url needs %DB%");
  return url.replace(at, 4, db);
}

}  // namespace

int main(int argc, char** argv) {
  std::string binary, pg_url, work;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (i + 1 < argc && a == "--roster-sync") {
      binary = argv[++i];
    } else if (i + 1 < argc && a == "--pg-url") {
      pg_url = argv[++i];
    } else if (i + 1 < argc && a == "--work") {
      work = argv[++i];
    } else {
      die("usage: --roster-sync PATH --pg-url URL_WITH_%DB% --work DIR [--quick]");
    }
  }
  if (binary.empty() || pg_url.empty() || work.empty()) die("--roster-sync, --pg-url and --work are required");

  // 1. Throughput at 10 ms an answer.
  const std::size_t n = quick ? 2'000 : 10'000;
  {
    studentsvc_bench::DelayServer server{std::string(student_body), std::chrono::milliseconds(10)};
    if (!server.start()) die("could not start the delay server");
    const auto perms = write_perms(work, n);
    // The SDK alone before and after the syncs: the better figure is the bar.
    // Each sync runs twice, into an empty database each time: the better run
    // counts, as for the SDK (a 2-core VM's noise is larger than the gap).
    const auto better = [](const SyncRun& a, const SyncRun& b) { return a.perms_per_second >= b.perms_per_second ? a : b; };
    const double sdk_before = sdk_lookups_per_second(server.base_url(), n);
    const auto sqlite = better(run_roster_sync(binary, server.base_url(), perms, "sqlite:" + work + "/sync10k.db", n),
                               run_roster_sync(binary, server.base_url(), perms, "sqlite:" + work + "/sync10k_b.db", n));
    const auto pg = better(run_roster_sync(binary, server.base_url(), perms, replace_db(pg_url, "sync10k"), n),
                           run_roster_sync(binary, server.base_url(), perms, replace_db(pg_url, "sync10k_b"), n));
    const double sdk_after = sdk_lookups_per_second(server.base_url(), n);
    const double sdk = std::max(sdk_before, sdk_after);
    std::printf("roster-sync, %zu perms, 64 at a time, 10 ms answers\n", n);
    std::printf("  SDK lookups alone   %8.0f /s (%0.f before, %0.f after)\n", sdk, sdk_before, sdk_after);
    std::printf("  sync into SQLite    %8.0f /s  ratio %.3f  peak RSS %ld KiB  CPU %.2f s\n", sqlite.perms_per_second,
                sqlite.perms_per_second / sdk, sqlite.peak_rss_kib, sqlite.cpu_seconds);
    std::printf("  sync into Postgres  %8.0f /s  ratio %.3f  peak RSS %ld KiB  CPU %.2f s (the server's not counted)\n",
                pg.perms_per_second, pg.perms_per_second / sdk, pg.peak_rss_kib, pg.cpu_seconds);
    std::printf("BENCH roster_sync_sdk_lookups_per_s=%.0f\n", sdk);
    std::printf("BENCH roster_sync_sqlite_per_s=%.0f\nBENCH roster_sync_sqlite_ratio=%.3f\n", sqlite.perms_per_second,
                sqlite.perms_per_second / sdk);
    std::printf("BENCH roster_sync_postgresql_per_s=%.0f\nBENCH roster_sync_postgresql_ratio=%.3f\n",
                pg.perms_per_second, pg.perms_per_second / sdk);
  }

  // 2. Peak RSS against the roster's length, 1 ms answers.
  {
    studentsvc_bench::DelayServer server{std::string(student_body), std::chrono::milliseconds(1)};
    if (!server.start()) die("could not start the delay server");
    std::printf("roster-sync peak RSS (1 ms answers, 64 at a time)\n  perms      SQLite KiB  PostgreSQL KiB\n");
    const std::vector<std::pair<std::size_t, std::string>> sizes =
        quick ? std::vector<std::pair<std::size_t, std::string>>{{1'000, "rss1k"}, {10'000, "rss10k"}}
              : std::vector<std::pair<std::size_t, std::string>>{{1'000, "rss1k"}, {10'000, "rss10k"}, {100'000, "rss100k"}};
    for (const auto& [count, name] : sizes) {
      const auto perms = write_perms(work, count);
      const auto sqlite = run_roster_sync(binary, server.base_url(), perms, "sqlite:" + work + "/" + name + ".db", count);
      const auto pg = run_roster_sync(binary, server.base_url(), perms, replace_db(pg_url, name), count);
      std::printf("  %-9zu  %10ld  %14ld\n", count, sqlite.peak_rss_kib, pg.peak_rss_kib);
      std::printf("BENCH roster_sync_peak_rss_kib_sqlite_%zu=%ld\nBENCH roster_sync_peak_rss_kib_postgresql_%zu=%ld\n",
                  count, sqlite.peak_rss_kib, count, pg.peak_rss_kib);
    }
  }
  return 0;
}

#!/usr/bin/env python3
"""Runs every studentsvc benchmark and reports them: the table, one
`BENCH name=value` line per figure, docs/benchmarks.md and docs/benchmarks.png.

Started by scripts/bench.sh, which builds the programs and runs nginx; run
alone it needs a server that answers GET /students/v2/students/{perm}:

    python3 bench/run_bench.py --bin build/bench/bench/studentsvc_bench \
        --build-dir build/bench --url http://127.0.0.1:PORT [--quick] [--no-docs]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import compile_time  # bench/compile_time.py, next to this script

REPO = Path(__file__).resolve().parent.parent
BENCH_LINE = re.compile(r"^BENCH ([A-Za-z0-9_]+)=([-+0-9.eE]+|nan|inf)$")


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], timeout: float, **kw) -> str:
    """Runs a command, bounded in time; returns stdout; raises on failure."""
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if res.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed ({res.returncode}):\n{res.stderr[-2000:]}")
    return res.stdout


def bench_lines(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        m = BENCH_LINE.match(line.strip())
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


# --- (c) callgrind ------------------------------------------------------------

ANNOTATE_LINE = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+(.*)$")


def callgrind_run(binary: str, which: str, url: str, n: int, outdir: Path) -> tuple[int, Path]:
    out = outdir / f"callgrind.{which}.{n}"
    run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "calls", which, url, str(n)],
        timeout=600)
    text = out.read_text(errors="replace")
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    if not m:
        raise RuntimeError(f"no totals in {out}")
    return int(m.group(1)), out


def inclusive_costs(profile: Path) -> dict[str, int]:
    """Each function's inclusive cost. callgrind_annotate lists a function once
    per source file its inlined code came from; the largest of those entries is
    the one that holds its calls, so that is the function's cost."""
    text = run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--auto=no", str(profile)], timeout=300)
    costs: dict[str, int] = {}
    for line in text.splitlines():
        m = ANNOTATE_LINE.match(line)
        if not m or "=>" in m.group(2):
            continue
        where = m.group(2)
        func = where.split(":", 1)[1] if ":" in where else where
        func = func.rsplit(" [", 1)[0]
        costs[func] = max(costs.get(func, 0), int(m.group(1).replace(",", "")))
    return costs


def cost_of(costs: dict[str, int], *needles: str) -> int:
    """Sum over distinct functions whose name contains one of `needles` (largest match each)."""
    total = 0
    for needle in needles:
        best = 0
        for func, cost in costs.items():
            if needle in func:
                best = max(best, cost)
        total += best
    return total


def measure_callgrind(binary: str, url: str, small: int, large: int, outdir: Path) -> tuple[dict, list]:
    r: dict[str, float] = {}
    per_call: dict[str, dict[str, float]] = {}
    breakdown_rows = []
    for which in ("sdk", "raw", "sdk-hooks", "sdk-metrics"):
        t_small, p_small = callgrind_run(binary, which, url, small, outdir)
        t_large, p_large = callgrind_run(binary, which, url, large, outdir)
        n = large - small
        c_small, c_large = inclusive_costs(p_small), inclusive_costs(p_large)

        def pc(*needles: str) -> float:
            return (cost_of(c_large, *needles) - cost_of(c_small, *needles)) / n

        def pc_outermost(*nested: str) -> float:
            """One step that the compiler may inline into its caller: the largest of
            `nested` (each function around the next) that the profile names."""
            return max(pc(needle) for needle in nested)

        # libcurl's part: the raw loop's curl_easy_perform; the SDK drives its
        # event loop's multi handle on the calling thread instead.
        transfer = ("curl_easy_perform",) if which == "raw" else (
            "curl_multi_perform", "curl_multi_poll", "curl_multi_add_handle", "curl_multi_remove_handle",
            "curl_multi_info_read")
        per_call[which] = {
            "total": (t_large - t_small) / n,
            "transfer": pc(*transfer),
            "callbacks": pc("studentsvc::detail::curl_write_header(", "studentsvc::detail::curl_write_body("),
            "decode": pc_outermost("studentsvc::detail::sax_parse_json<studentsvc::detail::StudentSaxDecoder>(",
                                   "studentsvc::detail::sax_decode_student(",
                                   "studentsvc::detail::decode_student_record(",
                                   "studentsvc::map_get_student_response("),
            "build": pc_outermost("studentsvc::detail::build_student_request(", "studentsvc::detail::build_get_student("),
            "prepare": pc_outermost("studentsvc::detail::curl_prepare(",
                                    "studentsvc::detail::CurlAsyncCompletion::prepare("),
            "finish": pc("studentsvc::detail::curl_transfer_result("),
        }
    sdk, raw = per_call["sdk"], per_call["raw"]
    sdk_own = sdk["total"] - sdk["transfer"] + sdk["callbacks"]
    raw_own = raw["total"] - raw["transfer"]
    # The hooks' cost: the same calls with a counting hook, and with AttemptMetrics.
    r["hook_instructions_per_call"] = per_call["sdk-hooks"]["total"] - sdk["total"]
    r["hook_fraction_of_call"] = r["hook_instructions_per_call"] / sdk["total"]
    r["metrics_hook_instructions_per_call"] = per_call["sdk-metrics"]["total"] - sdk["total"]
    r["metrics_hook_fraction_of_call"] = r["metrics_hook_instructions_per_call"] / sdk["total"]
    r["sdk_instructions_per_call"] = sdk["total"]
    r["raw_instructions_per_call"] = raw["total"]
    r["sdk_extra_instructions_per_call"] = sdk["total"] - raw["total"]
    r["sdk_own_instructions_per_call"] = sdk_own
    r["raw_own_instructions_per_call"] = raw_own
    r["sdk_libcurl_instructions_per_call"] = sdk["transfer"] - sdk["callbacks"]
    r["raw_libcurl_instructions_per_call"] = raw["transfer"]
    breakdown_rows = [
        ("libcurl transfer (the multi handle driven on the calling thread; the raw loop's "
         "curl_easy_perform), without the SDK's callbacks", sdk["transfer"] - sdk["callbacks"], raw["transfer"]),
        ("map the answer: JSON decode into StudentExtended (SAX) / nlohmann::json::parse (DOM)", sdk["decode"],
         raw_own),
        ("build the request (validate, URL, auth and headers)", sdk["build"], 0.0),
        ("take a pooled handle, set its options and header list, read its result",
         sdk["prepare"] + sdk["finish"], 0.0),
        ("header and body callbacks", sdk["callbacks"], 0.0),
        ("everything else (the call pipeline: retry, hooks, request id, log; the event loop's bookkeeping, "
         "handle pool, freeing request and response, moving the result out)",
         sdk_own - sdk["decode"] - sdk["build"] - sdk["prepare"] - sdk["finish"] - sdk["callbacks"], 0.0),
        ("total per call", sdk["total"], raw["total"]),
    ]
    return r, breakdown_rows


# --- (f) compile time -----------------------------------------------------------

def compile_command(build_dir: Path, source_name: str) -> tuple[list[str], str]:
    entries = json.loads((build_dir / "compile_commands.json").read_text())
    for e in entries:
        if e["file"].endswith(source_name):
            cmd = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
            return cmd, e["directory"]
    raise RuntimeError(f"{source_name} is not in {build_dir}/compile_commands.json")


# Probes a build may lack: the Asio ones exist only with studentsvc::asio (Boost found).
OPTIONAL_PROBES = {"asio", "asio_baseline"}


def measure_compile(build_dir: Path, repeats: int, only: set[str] | None = None) -> dict[str, float]:
    """CPU time (user + sys of the compiler and its children) is the figure: on a
    shared machine it does not depend on what else runs. The minimum of
    `repeats` runs of each probe (compile_time.py), with the build's own command.
    `only`: these probes and the baseline. An optional probe the build has no
    command for (no Boost: no Asio probes) is left out, and said so."""
    with tempfile.TemporaryDirectory() as tmp:
        cmds = {}
        for key, (name, _, _) in compile_time.PROBES.items():
            if only is not None and key not in only and key != "baseline":
                continue
            try:
                cmd, cwd = compile_command(build_dir, name)
            except RuntimeError as e:
                if key not in OPTIONAL_PROBES:
                    raise
                log(f"(f) {e}: the {key} probe is left out")
                continue
            i = cmd.index("-o")
            cmd[i + 1] = str(Path(tmp) / f"{key}.o")
            cmds[key] = (cmd, cwd)
        r = compile_time.measure(cmds, repeats)
    if "compile_asio_s" in r and "compile_asio_baseline_s" in r:
        # (i): the Asio TU over the same TU on Boost.Asio's headers alone.
        r["compile_asio_over_asio_baseline"] = r["compile_asio_s"] / r["compile_asio_baseline_s"]
        r["compile_asio_minus_asio_baseline_s"] = r["compile_asio_s"] - r["compile_asio_baseline_s"]
    return r


# --- (i) Asio: awaited lookups (bench/bench_asio.cpp) -----------------------------

class DelayServerProcess:
    """`bench_asio serve DELAY_MS` in a process of its own: the client's thread
    count and its callgrind instructions then hold none of the server's."""

    def __init__(self, asio_bin: str, delay_ms: int) -> None:
        self.proc = subprocess.Popen([asio_bin, "serve", str(delay_ms)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "PORT":
            self.close()
            raise RuntimeError(f"{asio_bin} serve did not print its port: {line}")
        self.url = f"http://127.0.0.1:{line[1]}"

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()  # the server ends when its stdin closes
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "DelayServerProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def callgrind_total(cmd: list[str], out: Path) -> int:
    run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd], timeout=900)
    m = re.search(r"^(?:summary|totals):\s+(\d+)", out.read_text(errors="replace"), re.M)
    if not m:
        raise RuntimeError(f"no totals in {out}")
    return int(m.group(1))


ASIO_CALLGRIND_PAIRS = 3


def measure_asio(asio_bin: str, params: dict, outdir: Path) -> dict[str, float]:
    """(i): `async_n` awaited lookups, 64 at a time, on one io_context thread,
    against DelayServer (its own process) answering after `batch_delay_ms`;
    the same load on the callback form; and callgrind's instructions of one
    awaited lookup over one by the callback form (the difference of a
    `cg_large`- and a `cg_small`-call run of each, so start-up cancels out)."""
    r: dict[str, float] = {}
    n, delay = params["async_n"], params["batch_delay_ms"]
    with DelayServerProcess(asio_bin, delay) as server:
        r.update(bench_lines(run([asio_bin, "throughput", server.url, str(n), "64", str(delay)], timeout=600)))
        r.update(bench_lines(run([asio_bin, "throughput-callback", server.url, str(n), "64", str(delay)],
                                 timeout=600)))
    small, large = params["cg_small"], params["cg_large"]
    with DelayServerProcess(asio_bin, 0) as server:
        per_call = {}
        for form in ("awaited", "callback"):
            # The median of three pairs: one pair moves by about 1% with the event loop's wake-ups.
            pairs = []
            for k in range(ASIO_CALLGRIND_PAIRS):
                t_small = callgrind_total([asio_bin, "calls", server.url, form, str(small)],
                                          outdir / f"asio.{form}.{small}.{k}")
                t_large = callgrind_total([asio_bin, "calls", server.url, form, str(large)],
                                          outdir / f"asio.{form}.{large}.{k}")
                pairs.append((t_large - t_small) / (large - small))
            per_call[form] = statistics.median(pairs)
    r["asio_awaited_instructions_per_call"] = per_call["awaited"]
    r["asio_callback_instructions_per_call"] = per_call["callback"]
    r["asio_instructions_over_callback"] = per_call["awaited"] / per_call["callback"]
    return r


# --- the report -------------------------------------------------------------------

TARGETS = {
    # name: (description, op, threshold)
    "sdk_over_raw": ("(a) at most 1.05", "<=", 1.05),
    "https_sdk_over_raw": ("(a) HTTPS at most 1.03", "<=", 1.03),
    "requests_over_sdk": ("(b) at least 5", ">=", 5.0),
    "decode_over_parse": ("(d) at most 1.3", "<=", 1.3),
    "batch_c16_fraction_of_ideal": ("(e) at least 0.95", ">=", 0.95),
    "batch_c64_fraction_of_ideal": ("(e) at least 0.9", ">=", 0.9),
    "async_fraction_of_ideal": ("(h) at least 0.9", ">=", 0.9),
    "async_engine_threads": ("(h) one event thread", "<=", 1.0),
    "stream_rss_growth_kb": ("(h) within 10 MiB", "<=", 10240.0),
    "memory_rss_growth_kb": ("(g) no growth", "<=", 0.0),
    "hook_fraction_of_call": ("(c) under 1% of a call", "<=", 0.01),
    "compile_sdk_over_baseline": ("(f) at most 1.3", "<=", 1.3),
    "compile_http_over_baseline": ("(f) at most 0.5", "<=", 0.5),
    "asio_fraction_of_ideal": ("(i) at least 0.9", ">=", 0.9),
    "asio_process_threads": ("(i) the loop's + the SDK's event thread", "<=", 2.0),
    "asio_instructions_over_callback": ("(i) at most 1.05", "<=", 1.05),
}


def verdict(name: str, value: float) -> str:
    if name not in TARGETS:
        return ""
    _, op, thr = TARGETS[name]
    ok = value <= thr if op == "<=" else value >= thr
    return "met" if ok else "MISSED"


def fmt(v: float) -> str:
    if v != v:  # nan
        return "n/a"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


ROWS = [
    # (section, label, key, unit)
    ("a", "get_student, studentsvc", "seq_sdk_us_per_call", "µs/call"),
    ("a", "same loop, raw libcurl + nlohmann::json::parse", "seq_raw_us_per_call", "µs/call"),
    ("a", "SDK / raw", "sdk_over_raw", "ratio"),
    ("a", "  client CPU time per call, SDK / raw", "sdk_over_raw_cpu", "ratio"),
    ("a", "over HTTPS + HTTP/2: get_student, studentsvc", "https_seq_sdk_us_per_call", "µs/call"),
    ("a", "over HTTPS + HTTP/2: raw libcurl loop", "https_seq_raw_us_per_call", "µs/call"),
    ("a", "over HTTPS + HTTP/2: SDK / raw", "https_sdk_over_raw", "ratio"),
    ("a", "  of which CurlTransport::send + decode_student / raw", "https_stage_transport_decode_over_raw", "ratio"),
    ("a", "  ... + the request built each call / raw", "https_stage_build_transport_decode_over_raw", "ratio"),
    ("a", "  ... + the call pipeline (Client::get_student) / raw", "https_stage_sdk_over_raw", "ratio"),
    ("b", "same loop, Python requests.Session", "requests_us_per_call", "µs/call"),
    ("b", "get_student, studentsvc (same window)", "sdk_us_per_call", "µs/call"),
    ("b", "requests / SDK", "requests_over_sdk", "ratio"),
    ("b", "  client CPU time per call, requests / SDK", "requests_over_sdk_cpu", "ratio"),
    ("c", "instructions per call, SDK (whole process)", "sdk_instructions_per_call", "instr"),
    ("c", "instructions per call, raw loop", "raw_instructions_per_call", "instr"),
    ("c", "SDK's own instructions per call (outside libcurl)", "sdk_own_instructions_per_call", "instr"),
    ("c", "raw loop's own instructions per call (json::parse)", "raw_own_instructions_per_call", "instr"),
    ("c", "SDK instructions over the raw loop", "sdk_extra_instructions_per_call", "instr"),
    ("c", "instrumentation hook (counting) per call", "hook_instructions_per_call", "instr"),
    ("c", "  fraction of a call", "hook_fraction_of_call", "fraction"),
    ("c", "AttemptMetrics hook per call", "metrics_hook_instructions_per_call", "instr"),
    ("c", "  fraction of a call", "metrics_hook_fraction_of_call", "fraction"),
    ("c", "heap allocations per call, SDK (operator new)", "sdk_allocs_per_call", "allocs"),
    ("c", "heap allocations per call, raw loop", "raw_allocs_per_call", "allocs"),
    ("c", "of which: decode_student / json::parse alone", "decode_allocs_per_call", "allocs"),
    ("d", "decode_student(body)", "decode_ns", "ns"),
    ("d", "nlohmann::json::parse(body) alone", "parse_ns", "ns"),
    ("d", "decode / parse", "decode_over_parse", "ratio"),
    ("e", "1,000 lookups one after another", "batch_seq_s", "s"),
    ("e", "get_students, concurrency 16", "batch_c16_s", "s"),
    ("e", "  speed-up / ideal speed-up", "batch_c16_fraction_of_ideal", "fraction"),
    ("e", "get_students, concurrency 64", "batch_c64_s", "s"),
    ("e", "  speed-up / ideal speed-up", "batch_c64_fraction_of_ideal", "fraction"),
    ("f", "compile CPU time, #include <studentsvc/studentsvc.hpp>", "compile_sdk_s", "s"),
    ("f", "compile CPU time, #include <nlohmann/json.hpp> + <curl/curl.h>", "compile_baseline_s", "s"),
    ("f", "SDK / baseline", "compile_sdk_over_baseline", "ratio"),
    ("f", "compile CPU time, #include <studentsvc/http.hpp> alone", "compile_http_s", "s"),
    ("f", "http.hpp / baseline", "compile_http_over_baseline", "ratio"),
    ("f", "compile CPU time, a TU making the three calls", "compile_calls_s", "s"),
    ("f", "three calls / baseline", "compile_calls_over_baseline", "ratio"),
    ("h", "10,000 get_student_async, 64 in flight", "async_s", "s"),
    ("h", "  fraction of the ideal", "async_fraction_of_ideal", "fraction"),
    ("h", "  threads the engine added", "async_engine_threads", "threads"),
    ("h", "for_each_student peak RSS, 100,000 over 1,000 perms", "stream_rss_growth_kb", "KiB"),
    ("i", "10,000 awaited lookups (use_awaitable), 64 at a time, one io_context thread", "asio_throughput_s", "s"),
    ("i", "  fraction of the ideal", "asio_fraction_of_ideal", "fraction"),
    ("i", "  the process's threads (server in another process)", "asio_process_threads", "threads"),
    ("i", "the same load on the callback form, fraction of the ideal", "asio_callback_fraction_of_ideal",
     "fraction"),
    ("i", "instructions per awaited lookup (use_awaitable)", "asio_awaited_instructions_per_call", "instr"),
    ("i", "instructions per lookup, callback form", "asio_callback_instructions_per_call", "instr"),
    ("i", "  awaited / callback", "asio_instructions_over_callback", "ratio"),
    ("i", "compile CPU time, <studentsvc/asio.hpp> + the three calls awaited", "compile_asio_s", "s"),
    ("i", "compile CPU time, the same TU on Boost.Asio alone (three timers)", "compile_asio_baseline_s", "s"),
    ("i", "  Asio TU with the SDK / Boost.Asio alone", "compile_asio_over_asio_baseline", "ratio"),
    ("g", "peak RSS after 10% of the calls", "memory_peak_rss_kb_10pct", "KiB"),
    ("g", "peak RSS after 50%", "memory_peak_rss_kb_50pct", "KiB"),
    ("g", "peak RSS after 100%", "memory_peak_rss_kb_100pct", "KiB"),
    ("g", "peak RSS growth, 10% → 100%", "memory_rss_growth_kb", "KiB"),
    ("g", "heap in use growth, 10% → 100% (mallinfo2)", "memory_heap_growth_kb", "KiB"),
]


def table(r: dict[str, float]) -> list[str]:
    lines = ["| | figure | value | unit | target |", "|---|---|---:|---|---|"]
    for section, label, key, unit in ROWS:
        if key not in r:
            continue
        target = ""
        if key in TARGETS:
            target = f"{TARGETS[key][0]}: **{verdict(key, r[key])}**"
        lines.append(f"| {section} | {label} | {fmt(r[key])} | {unit} | {target} |")
    return lines


def plain_table(r: dict[str, float]) -> list[str]:
    out = []
    for section, label, key, unit in ROWS:
        if key not in r:
            continue
        target = f"{TARGETS[key][0]}: {verdict(key, r[key])}" if key in TARGETS else ""
        out.append(f"  {section}  {label:<64} {fmt(r[key]):>12} {unit:<9} {target}")
    return out


def chart(r: dict[str, float], png: Path) -> bool:
    if shutil.which("gnuplot") is None:
        log("gnuplot not found: no chart")
        return False
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "seq.dat").write_text(
            f'"raw libcurl" {r["seq_raw_us_per_call"]}\n"studentsvc" {r["seq_sdk_us_per_call"]}\n'
            f'"Python requests" {r["requests_us_per_call"]}\n')
        (t / "batch.dat").write_text(
            f'"c=16" {r["batch_c16_speedup"]} {r["batch_c16_ideal_speedup"]}\n'
            f'"c=64" {r["batch_c64_speedup"]} {r["batch_c64_ideal_speedup"]}\n')
        (t / "decode.dat").write_text(
            f'"json::parse (DOM)" {r["parse_ns"]}\n"decode_student" {r["decode_ns"]}\n')
        run(["gnuplot", "-e", f"dir='{t}'; out='{png}'", str(REPO / "bench" / "benchmarks.gp")], timeout=120)
    return True


def versions() -> dict[str, str]:
    def first_line(cmd: list[str]) -> str:
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            return (res.stdout or res.stderr).strip().splitlines()[0]
        except Exception:  # noqa: BLE001 - informational only
            return "unknown"

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import requests  # type: ignore

        req = requests.__version__
    except Exception:  # noqa: BLE001
        req = "unknown"
    return {
        "cpu": f"{cpu}, {os.cpu_count()} logical CPUs",
        "kernel": platform.release(),
        "compiler": first_line(["c++", "--version"]),
        "libcurl": first_line(["curl-config", "--version"]),
        "nginx": first_line(["nginx", "-v"]),
        "python": f"Python {platform.python_version()}, requests {req}",
        "valgrind": first_line(["valgrind", "--version"]),
    }


# The last line of what write_docs() owns in docs/benchmarks.md: whatever
# follows it (a section another page or engineer appends) is kept as it is.
GENERATED_END = "<!-- end of the part bench/run_bench.py writes; what follows this line is kept -->"


def kept_tail(md: Path) -> str:
    """What follows the generated part of `md`: after GENERATED_END, or, in a
    page written before that line existed, after the BENCH lines' code block."""
    if not md.exists():
        return ""
    text = md.read_text()
    if GENERATED_END in text:
        return text.split(GENERATED_END, 1)[1].lstrip("\n")
    head = "## BENCH lines of this run"
    if head not in text:
        return ""
    after = text.split(head, 1)[1]
    fences = [m.end() for m in re.finditer(r"^```[^\n]*$", after, re.M)]
    return after[fences[1]:].lstrip("\n") if len(fences) >= 2 else ""


def write_docs(r: dict[str, float], breakdown: list, md: Path, png_ok: bool, params: dict, seconds: float) -> None:
    v = versions()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    missed = [k for k in TARGETS if k in r and verdict(k, r[k]) != "met"]
    lines = [
        "# Benchmarks",
        "",
        "What the SDK costs over a hand-written libcurl loop, and what batching buys.",
        "Every figure below comes from one run of",
        "",
        "```sh",
        "bash scripts/bench.sh",
        "```",
        "",
        "which installs its tools (`scripts/install-deps.sh --bench`: nginx-light,",
        "python3-requests, valgrind, gnuplot-nox), builds the `bench` preset",
        "(`cmake --workflow --preset bench`), starts nginx on 127.0.0.1 with a",
        "config in a temporary directory, runs every measurement, stops nginx, prints",
        "the table and one `BENCH name=value` line per figure, and rewrites this page",
        "and `docs/benchmarks.png`. It takes a few minutes. ctest never runs it.",
        "",
        f"Last run: {when} (measurements {seconds:.0f} s). Machine: {v['cpu']}; Linux {v['kernel']}; {v['compiler']};",
        f"libcurl {v['libcurl']}; {v['nginx']}; {v['python']}; {v['valgrind']}.",
        "Timings on a shared machine are noisy: each is the median of many rounds, and the",
        "SDK and its comparison run alternately, so drift hits both sides alike.",
        "",
        "![benchmark chart](benchmarks.png)" if png_ok else "(gnuplot was not available: no chart)",
        "",
        "## Results",
        "",
        *table(r),
        "",
    ]
    if missed:
        lines += ["**Targets missed in this run:** " + ", ".join(f"`{k}`" for k in missed) +
                  " — see the profile below and the notes.", ""]
    else:
        lines += ["Every target was met in this run.", ""]
    lines += [
        "## Where an SDK call's instructions go",
        "",
        "callgrind, per call, from the difference of a "
        f"{params['cg_large']}-call and a {params['cg_small']}-call run (start-up cancels out):",
        "",
        "| part | studentsvc | raw loop |",
        "|---|---:|---:|",
    ]
    for label, sdk_v, raw_v in breakdown:
        lines.append(f"| {label} | {sdk_v:,.0f} | {raw_v:,.0f} |" if raw_v else f"| {label} | {sdk_v:,.0f} | |")
    lines += [
        "",
        "The SDK spends more than the raw loop on building the request (validation,",
        "the Basic value, header checks), on setting the easy handle up per request, on",
        "parsing response headers into `HttpResponse::headers` and on the call pipeline",
        "around the transfer; it wins most of that back in decoding, where it reads the",
        "body once with nlohmann's SAX interface straight into `StudentExtended` instead",
        "of building a DOM first. Its wall time over HTTPS is further from the raw loop's",
        "than its instruction count: what a call touches between two TLS round trips",
        "(code and data the cache has to fetch again) costs more than the instructions",
        "it runs. The step-by-step figures under (a) show where that time goes.",
        "",
        "## Notes on the figures",
        "",
        "- **(a), (c), (d).** The SDK builds and validates a full request per call, sets the",
        "  easy handle up from it and parses every response header, which the raw loop",
        "  does not; it earns that back by decoding with nlohmann's SAX interface",
        "  straight into `StudentExtended` (no DOM: "
        f"{r.get('decode_allocs_per_call', float('nan')):.0f} allocations against "
        f"{r.get('parse_allocs_per_call', float('nan')):.0f} for",
        "  `json::parse`), so the whole call costs about "
        f"{r.get('sdk_extra_instructions_per_call', float('nan')):,.0f} instructions more than the raw loop",
        f"  ({r.get('sdk_instructions_per_call', float('nan')) / r.get('raw_instructions_per_call', float('nan')):.3f}× in instructions).",
        "- **(e).** At concurrency 64 each 10 ms wave carries 64 answers, and the client's",
        "  own work for them (about "
        f"{r.get('seq_sdk_cpu_us_per_call', float('nan')):.0f} µs of CPU per call, "
        f"{64 * r.get('seq_sdk_cpu_us_per_call', float('nan')) / 1000:.1f} ms per wave) shares two cores with",
        "  the server's, so the waves stretch past 10 ms; at 16 the same work is a quarter",
        "  as large. At 64 the figure moves most with whatever else the machine runs.",
        "- **(f).** No target. `-ftime-report` puts most of the difference in parsing the",
        "  SDK's own inline code and instantiating what it uses (the JSON parser for the",
        "  SAX decoder and the error bodies, `std::expected`, `<chrono>` calendar types,",
        "  `<random>` for the jitter); the standard headers it adds cost little beside",
        "  `nlohmann/json.hpp`.",
        "- **(g).** Flat means the peak RSS after 100% of the calls equals the one after",
        "  10%; the heap in use is shown as well.",
        "- **(i).** The thread count is the client process's own: the server runs in",
        "  another process (`studentsvc_bench_asio serve`), so the figure is the",
        "  io_context's thread plus the SDK's one event thread. An awaited lookup adds",
        "  to the callback form what the adapter does (the operation's allocation, the",
        "  post to the io_context) and what Asio's coroutines do (the frame, the pump,",
        "  three more moves of the 608-byte result). Asio recycles a coroutine frame",
        "  only under about 1 KB, so a lookup's arguments stay small: its CallOptions",
        "  travel by pointer. Its fraction of",
        "  the ideal is the machine's as much as the adapter's: read it beside the",
        "  callback form's, measured in the same window on the same server.",
        "",
        "## What each figure measures",
        "",
        "- **Servers.** (a), (b), (c) and (g) use nginx (Debian's nginx-light) on",
        "  127.0.0.1, one worker, answering every `GET /students/v2/students/{perm}` with the",
        f"  same {params['body_bytes']}-byte StudentExtended body from memory over one keep-alive",
        "  connection. (e) uses a small epoll server built into the benchmark",
        "  (`bench/delay_server.hpp`) that answers after 10 ms without a thread per",
        "  connection (the test MockServer pins one of its 32 threads to each keep-alive",
        "  connection, too few for concurrency 64).",
        f"- **(a)** {params['seq_rounds']} alternating rounds of {params['seq_calls']} sequential calls each:",
        "  `Client::get_student` against a raw loop that reuses one easy handle, sends the",
        "  SDK's own header lines and parses the body with `nlohmann::json::parse`. The",
        "  ratio is the median of each adjacent pair's ratio. Wall-clock time is the",
        "  figure; the client process's CPU time per call (`CLOCK_PROCESS_CPUTIME_ID`)",
        "  is shown beside it, because on a busy 2-core machine the server's scheduling",
        "  delay is added to every call on both sides and squeezes wall-clock ratios",
        "  towards 1.",
        "  Over HTTPS the same lookup is also timed with fewer of the SDK's steps, each",
        "  loop in a rotated order every round, each figure the median of its time over",
        "  the raw loop's in the same round: `CurlTransport::send` of a request built once",
        "  followed by `decode_student`; the same with `build_get_student_request` on",
        "  every call; and `Client::get_student`, which adds the call pipeline (retry,",
        "  hooks, request id, logging) on top (`studentsvc_bench stages`).",
        f"- **(b)** `requests.Session().get(...).json()` with the same headers: {params['req_repeats']} pairs of a",
        f"  Python run ({params['req_rounds']}×{params['req_calls']} calls) and an SDK run, alternating; the ratio",
        "  is the median of the pairs' ratios (wall-clock; CPU time beside it, as in (a)).",
        "- **(c)** instructions from valgrind's callgrind (repeatable, unlike time);",
        "  \"own\" is everything outside libcurl (the SDK's header/body callbacks count",
        "  as the SDK's). Heap allocations are calls to the global `operator new`,",
        "  counted by the benchmark binary (libcurl's own `malloc`s are the same on",
        "  both sides and are not counted).",
        f"- **(d)** {params['dec_rounds']} alternating rounds of {params['dec_iters']} decodes of the same body.",
        "- **(e)** 1,000 lookups of distinct perms (`get_students` looks each distinct",
        "  perm up once; the server answers each with its own perm): one after another",
        "  with `get_student`, then `get_students` at concurrency 16 and 64 (median of",
        "  5). The ideal, latency-bound",
        "  speed-up at concurrency c is 1000 / ceil(1000 / c) (15.9 at 16, 62.5 at 64);",
        "  the figure is measured speed-up / ideal.",
        "- **(f)** the build's own compile command (from `compile_commands.json`,",
        f"  `-O3`) on files that only include the headers (the umbrella; http.hpp alone) and on one",
        f"  that makes the three calls, minimum of {params['compile_reps']} (bench/compile_time.py); the",
        "  compiler's CPU time (user + sys), which a busy machine does not inflate the",
        "  way it does wall time (both are in the BENCH lines).",
        f"- **(g)** {params['mem_calls']:,} sequential `get_student` calls; the process's peak RSS",
        "  (`VmHWM` of `/proc/self/status`; `getrusage` would report the Python parent's,",
        "  which Linux carries over the exec) and glibc's heap in use (`mallinfo2`) after",
        "  10%, 50% and 100% of them.",
        f"- **(i)** `<studentsvc/asio.hpp>` (`bench/bench_asio.cpp`, built when Boost is found):",
        f"  {params['async_n']:,} `async_get_student(..., use_awaitable)` from 64 coroutines on one",
        f"  `io_context` thread against DelayServer answering after {params['batch_delay_ms']} ms, in a process",
        "  of its own (ideal: n / 64 × the delay); the process's most threads, sampled",
        "  every 50 ms from `/proc/self/task`; the same load on the callback form.",
        "  Instructions: callgrind on the client process alone (the server is another",
        f"  process), from the difference of a {params['cg_large']}- and a {params['cg_small']}-call run of sequential",
        "  lookups, awaited with `use_awaitable` against the callback form waited on by",
        f"  a future; the median of {ASIO_CALLGRIND_PAIRS} such pairs. Compile: the bench build's command for `bench/compile_probe_asio.cpp`",
        "  (the SDK's Asio header, the three calls awaited) and for",
        "  `bench/compile_probe_asio_baseline.cpp` (Boost.Asio's headers, three awaited",
        "  timers, no SDK), minimum CPU time of the same runs as (f).",
        "",
        "## BENCH lines of this run",
        "",
        "```",
        *[f"BENCH {k}={r[k]:.6g}" for k in sorted(r)],
        "```",
        "",
        GENERATED_END,
        "",
    ]
    tail = kept_tail(md)
    md.write_text("\n".join(lines) + tail)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="studentsvc_bench (required but with --asio-only)")
    ap.add_argument("--build-dir", required=True, help="the bench build directory (compile_commands.json)")
    ap.add_argument("--url", help="base URL of the nginx server, http://127.0.0.1:PORT (required but with --asio-only)")
    ap.add_argument("--asio-bin", help="studentsvc_bench_asio, for section (i) (absent without Boost)")
    ap.add_argument("--asio-only", action="store_true",
                    help="only section (i), the Asio figures (no nginx needed); docs/ left alone")
    ap.add_argument("--tls-url", help="the same server over HTTPS + HTTP/2, https://127.0.0.1:PORT")
    ap.add_argument("--ca", help="the CA that signed the HTTPS server's certificate")
    ap.add_argument("--quick", action="store_true", help="fewer iterations (to check the script)")
    ap.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md and .png")
    args = ap.parse_args()
    if args.asio_only and not args.asio_bin:
        ap.error("--asio-only needs --asio-bin")
    if not args.asio_only and (not args.bin or not args.url):
        ap.error("--bin and --url are required (but with --asio-only)")
    started = time.monotonic()
    q = args.quick
    p = {
        "seq_rounds": 5 if q else 31, "seq_calls": 500 if q else 3000,
        "req_rounds": 1 if q else 3, "req_calls": 200 if q else 1000, "req_repeats": 2 if q else 9,
        "cg_small": 100 if q else 200, "cg_large": 300 if q else 1200,
        "alloc_calls": 1000 if q else 5000,
        "dec_rounds": 5 if q else 31, "dec_iters": 2000 if q else 20000,
        "batch_n": 200 if q else 1000, "batch_delay_ms": 10,
        "async_n": 2000 if q else 10000, "stream_small": 1000, "stream_large": 20000 if q else 100000,
        "compile_reps": 1 if q else 5,
        "mem_calls": 10000 if q else 100000,
    }
    b, url = args.bin, args.url
    r: dict[str, float] = {}
    if args.asio_only:
        log(f"(i) {p['async_n']} awaited lookups at {p['batch_delay_ms']} ms, 64 in flight; instructions; compile")
        with tempfile.TemporaryDirectory() as tmp:
            r.update(measure_asio(args.asio_bin, p, Path(tmp)))
        r.update(measure_compile(Path(args.build_dir), p["compile_reps"], only={"asio", "asio_baseline"}))
        print("\n".join(plain_table(r)))
        for k in sorted(r):
            print(f"BENCH {k}={r[k]:.6g}")
        missed = [k for k in TARGETS if k in r and verdict(k, r[k]) != "met"]
        if missed:
            log("targets missed: " + ", ".join(missed))
        return 0
    p["body_bytes"] = len(run([b, "body"], timeout=30).encode())

    log(f"(a) SDK vs raw libcurl: {p['seq_rounds']} rounds x {p['seq_calls']} calls")
    r.update(bench_lines(run([b, "seq", url, str(p["seq_rounds"]), str(p["seq_calls"])], timeout=600)))
    if args.tls_url:
        log("(a) over HTTPS + HTTP/2: the same alternating rounds")
        tls = bench_lines(run([b, "seq", args.tls_url, str(p["seq_rounds"]), str(p["seq_calls"])], timeout=600,
                              env={**os.environ, "STUDENTSVC_BENCH_CA": args.ca}))
        for key in ("seq_sdk_us_per_call", "seq_raw_us_per_call", "sdk_over_raw", "sdk_over_raw_cpu"):
            r["https_" + key] = tls[key]
        print(f"BENCH https_sdk_over_raw={tls['sdk_over_raw']:.4f}", flush=True)
        log("(a) over HTTPS: where the time over the raw loop goes, step by step")
        stages = bench_lines(run([b, "stages", args.tls_url, str(p["seq_rounds"]), str(p["seq_calls"])],
                                 timeout=900, env={**os.environ, "STUDENTSVC_BENCH_CA": args.ca}))
        for key, value in stages.items():
            r["https_" + key] = value

    log(f"(b) Python requests vs SDK: {p['req_repeats']} alternating pairs")
    pairs = []
    for i in range(p["req_repeats"]):
        def python_side() -> dict[str, float]:
            return bench_lines(run([sys.executable, str(REPO / "bench" / "requests_bench.py"), url,
                                    str(p["req_rounds"]), str(p["req_calls"])], timeout=600))

        def sdk_side() -> dict[str, float]:
            return bench_lines(run([b, "sdk", url, "3", str(p["req_calls"] * 3)], timeout=600))

        if i % 2 == 0:
            py, sd = python_side(), sdk_side()
        else:
            sd, py = sdk_side(), python_side()
        pairs.append((py, sd))
    med = statistics.median
    r["requests_us_per_call"] = med(py["requests_us_per_call"] for py, _ in pairs)
    r["sdk_us_per_call"] = med(sd["sdk_us_per_call"] for _, sd in pairs)
    r["requests_over_sdk"] = med(py["requests_us_per_call"] / sd["sdk_us_per_call"] for py, sd in pairs)
    r["requests_cpu_us_per_call"] = med(py["requests_cpu_us_per_call"] for py, _ in pairs)
    r["sdk_cpu_us_per_call"] = med(sd["sdk_cpu_us_per_call"] for _, sd in pairs)
    r["requests_over_sdk_cpu"] = med(py["requests_cpu_us_per_call"] / sd["sdk_cpu_us_per_call"] for py, sd in pairs)

    log("(c) instructions (callgrind) and allocations per call")
    with tempfile.TemporaryDirectory() as tmp:
        cg, breakdown = measure_callgrind(b, url, p["cg_small"], p["cg_large"], Path(tmp))
    r.update(cg)
    r.update(bench_lines(run([b, "allocs", url, str(p["alloc_calls"])], timeout=600)))

    log("(d) decode vs json::parse")
    r.update(bench_lines(run([b, "decode", str(p["dec_rounds"]), str(p["dec_iters"])], timeout=600)))

    log(f"(e) {p['batch_n']} lookups at {p['batch_delay_ms']} ms: sequential, concurrency 16 and 64")
    r.update(bench_lines(run([b, "batch", str(p["batch_n"]), str(p["batch_delay_ms"])], timeout=600)))

    log("(f) compile time")
    r.update(measure_compile(Path(args.build_dir), p["compile_reps"]))

    log(f"(g) memory over {p['mem_calls']} calls")
    r.update(bench_lines(run([b, "memory", url, str(p["mem_calls"])], timeout=600)))

    log(f"(h) {p['async_n']} async lookups at {p['batch_delay_ms']} ms, 64 in flight; streamed rosters")
    r.update(bench_lines(run([b, "async", str(p["async_n"]), str(p["batch_delay_ms"]), "64"], timeout=600)))
    for n in (p["stream_small"], p["stream_large"]):
        s = bench_lines(run([b, "stream", str(n), "1"], timeout=900))
        r[f"stream_{n}_peak_rss_kb"] = s["stream_peak_rss_kb"]
        r[f"stream_{n}_s"] = s["stream_s"]
    r["stream_rss_growth_kb"] = (r[f"stream_{p['stream_large']}_peak_rss_kb"]
                                 - r[f"stream_{p['stream_small']}_peak_rss_kb"])

    if args.asio_bin:
        log(f"(i) {p['async_n']} awaited lookups (Asio) at {p['batch_delay_ms']} ms, 64 in flight; instructions")
        with tempfile.TemporaryDirectory() as tmp:
            r.update(measure_asio(args.asio_bin, p, Path(tmp)))
    else:
        log("(i) no studentsvc_bench_asio (built only when Boost is found): the Asio figures are left out")

    elapsed = time.monotonic() - started
    print()
    print("studentsvc benchmarks (lower is better unless the target says otherwise)")
    print("\n".join(plain_table(r)))
    print()
    for k in sorted(r):
        print(f"BENCH {k}={r[k]:.6g}")
    if not args.no_docs:
        docs = REPO / "docs"
        docs.mkdir(exist_ok=True)
        png_ok = chart(r, docs / "benchmarks.png")
        write_docs(r, breakdown, docs / "benchmarks.md", png_ok, p, elapsed)
        log(f"wrote {docs / 'benchmarks.md'}" + (f" and {docs / 'benchmarks.png'}" if png_ok else ""))
    missed = [k for k in TARGETS if k in r and verdict(k, r[k]) != "met"]
    if missed:
        log("targets missed: " + ", ".join(missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())

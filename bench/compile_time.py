#!/usr/bin/env python3
"""Compile-time figures (f): CPU time (user + sys, the minimum of a few runs)
to compile a few probe translation units, each as a ratio to the baseline, a
TU with <nlohmann/json.hpp> + <curl/curl.h> compiled in the same run.

  python3 bench/compile_time.py [--cxx g++] [--flags "-std=c++23 -O2"] [--repeats 5]

COMPILED_PROBES are the same kind of TU in compiled mode (-DSTUDENTSVC_HEADER_ONLY=0:
what a TU costs when the bodies are in the studentsvc library); only this
script measures them (run_bench.py times the bench build's header-only probes).

MOCK_PROBES (when pkg-config knows cpp-httplib) are a test TU that starts one
MockServer, header-only and with the compiled studentsvc::testing
(-DSTUDENTSVC_TESTING_SEPARATE=1), side by side in the same run.

Prints a table, one `BENCH name=value` line per measurement, and one
`BENCH compile figure=...` line for each of the three figures CI's brief asks:
  calls_header_only  the TU making the three calls, header-only, / baseline
  calls_compiled     the same calls in compiled mode, / baseline (goal <= 1.1)
  umbrella_own       the umbrella's own cost: its time minus that of a TU that
                     includes just the standard and dependency headers the
                     SDK's headers include (generated from `-H`), / baseline
                     (goal <= 0.5)
and one for the mock (issue 36):
  mock_server_compiled  the MockServer TU with the compiled library, / the same
                     TU header-only (goal <= 1/3: at least 3x faster)
  python3 bench/compile_time.py --probes baseline,mock_server,mock_server_compiled
measures only those.
run_bench.py uses measure() with the bench build's own compile commands.
"""
from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# name: (source in bench/, what it measures, goal as a ratio to the baseline or None)
PROBES = {
    "baseline": ("compile_probe_baseline.cpp", "#include <nlohmann/json.hpp> + <curl/curl.h>", None),
    "sdk": ("compile_probe_sdk.cpp", "#include <studentsvc/studentsvc.hpp> (umbrella)", 1.3),
    "http": ("compile_probe_http.cpp", "#include <studentsvc/http.hpp> alone", 0.5),
    "calls": ("compile_probe_calls.cpp", "the umbrella + a TU making the three calls", None),
    "asio_baseline": ("compile_probe_asio_baseline.cpp", "Boost.Asio's headers, three awaited ops, no SDK", None),
    "asio": ("compile_probe_asio.cpp", "<studentsvc/asio.hpp> + the three calls awaited", None),
}

# Compiled mode: the same TUs built with COMPILED_FLAGS.
COMPILED_FLAGS = ["-DSTUDENTSVC_HEADER_ONLY=0"]
COMPILED_PROBES = {
    "sdk_compiled": ("compile_probe_sdk.cpp", "the umbrella, compiled mode", None),
    "calls_compiled": ("compile_probe_calls_compiled.cpp", "client.hpp + a TU making the three calls, compiled", 1.1),
    "asio_compiled": ("compile_probe_asio.cpp", "<studentsvc/asio.hpp> + the three calls awaited, compiled", None),
}

# MockServer: header-only, then with the bodies in the studentsvc::testing library.
MOCK_COMPILED_FLAGS = ["-DSTUDENTSVC_TESTING_SEPARATE=1"]
MOCK_PROBES = {
    "mock_server": ("compile_probe_mock_server.cpp", "a test TU starting one MockServer, header-only", None),
    "mock_server_compiled": ("compile_probe_mock_server.cpp", "the same, the compiled studentsvc::testing", None),
}
# The ratio of two probes: name -> (numerator, denominator, goal).
PAIR_FIGURES = {"mock_server_compiled": ("mock_server_compiled", "mock_server", 1 / 3)}

# Generated (umbrella_deps_source): the standard and dependency headers that the
# SDK's own headers include, and nothing of the SDK, to tell the umbrella's own cost.
DEPS_PROBE = ("umbrella_deps", "the std + dependency headers the umbrella includes")

# The figures: name -> (numerator probes, subtracted probes, goal or None[, denominator probe:
# "baseline" unless given]).
FIGURES = {
    "calls_header_only": (["calls"], [], None),
    "calls_compiled": (["calls_compiled"], [], 1.1),
    "umbrella_own": (["sdk"], ["umbrella_deps"], 0.5),
    # Issue 37: the Asio TU against the same TU with Boost.Asio's headers and no SDK.
    "asio_header_only": (["asio"], [], None, "asio_baseline"),
    "asio_compiled": (["asio_compiled"], [], None, "asio_baseline"),
}


def system_include_dirs(cxx: str, flags: list[str]) -> list[Path]:
    """The compiler's <...> search list, longest first (to spell a header as it is included)."""
    out = subprocess.run([cxx, *flags, "-xc++", "-E", "-v", "-"], input="", capture_output=True,
                         text=True, check=True).stderr
    lines = out.splitlines()
    start = lines.index("#include <...> search starts here:") + 1
    stop = lines.index("End of search list.")
    dirs = [Path(line.strip().split(" (")[0]).resolve() for line in lines[start:stop]]
    return sorted(dirs, key=lambda d: len(str(d)), reverse=True)


def umbrella_deps_source(cxx: str, flags: list[str], include: str) -> str:
    """A TU including, in first-seen order, each header outside the SDK that a
    header of the SDK includes directly (found with -H on the umbrella probe)."""
    sdk_root = (Path(include) / "studentsvc").resolve()
    run = subprocess.run([cxx, *flags, f"-I{include}", "-E", "-H", "-o", os.devnull,
                          str(REPO / "bench" / PROBES["sdk"][0])], capture_output=True, text=True, check=True)
    dirs = system_include_dirs(cxx, flags)
    stack: list[Path] = []
    seen: list[str] = []
    for line in run.stderr.splitlines():
        dots, _, path = line.partition(" ")
        if not dots or set(dots) != {"."}:
            continue
        depth = len(dots)
        header = Path(path).resolve()
        del stack[depth - 1:]
        parent = stack[-1] if stack else None
        stack.append(header)
        if parent is None or not parent.is_relative_to(sdk_root) or header.is_relative_to(sdk_root):
            continue
        for d in dirs:
            if header.is_relative_to(d):
                name = str(header.relative_to(d))
                if name not in seen:
                    seen.append(name)
                break
    body = "".join(f"#include <{h}>\n" for h in seen)
    return f"// Generated by bench/compile_time.py: {DEPS_PROBE[1]}.\n{body}\nint compile_probe() {{ return 0; }}\n"


def figures(r: dict[str, float]) -> dict[str, float]:
    """FIGURES from the minimum times: (sum of probes - subtracted) / baseline."""
    out = {}
    for name, (plus, minus, *rest) in FIGURES.items():
        denominator = rest[1] if len(rest) > 1 else "baseline"
        if all(f"compile_{k}_s" in r for k in plus + minus + [denominator]):
            t = sum(r[f"compile_{k}_s"] for k in plus) - sum(r[f"compile_{k}_s"] for k in minus)
            out[name] = t / r[f"compile_{denominator}_s"]
    return out


def httplib_flags() -> list[str] | None:
    """cpp-httplib's compile flags (its SSL and compression switches), or None without it."""
    try:
        run = subprocess.run(["pkg-config", "--cflags", "cpp-httplib"], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    return shlex.split(run.stdout) if run.returncode == 0 else None


def cpu_seconds(cmd: list[str], cwd: str | None) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=cwd, check=True, timeout=600, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(cmds: dict[str, tuple[list[str], str | None]], repeats: int) -> dict[str, float]:
    """`cmds`: probe name -> (compile command, working directory). The minimum
    CPU time of `repeats` runs each (the order alternates), and each probe's
    ratio to the baseline."""
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for rep in range(repeats):
        order = list(cmds) if rep % 2 == 0 else list(reversed(cmds))
        for key in order:
            cmd, cwd = cmds[key]
            times[key].append(cpu_seconds(cmd, cwd))
    r = {f"compile_{k}_s": min(v) for k, v in times.items()}
    r.update({f"compile_{k}_median_s": statistics.median(v) for k, v in times.items()})
    for k in cmds:
        if k != "baseline" and k in times:
            r[f"compile_{k}_over_baseline"] = r[f"compile_{k}_s"] / r["compile_baseline_s"]
    return r


def table(r: dict[str, float]) -> list[str]:
    lines = [f"{'probe':<52} {'CPU s':>7} {'/ baseline':>10} {'goal':>6}"]
    probes = {**PROBES, **COMPILED_PROBES, DEPS_PROBE[0]: ("", DEPS_PROBE[1], None), **MOCK_PROBES}
    for key, (_, what, goal) in probes.items():
        if f"compile_{key}_s" not in r:
            continue
        ratio = r.get(f"compile_{key}_over_baseline", 1.0)
        verdict = "" if goal is None else ("ok" if ratio <= goal else "MISSED")
        goal_text = "" if goal is None else f"<= {goal}"
        lines.append(f"{what:<52} {r[f'compile_{key}_s']:>7.2f} {ratio:>10.2f} {goal_text:>6} {verdict}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("--flags", default="-std=c++23 -O2", help="compiler flags (quoted, split like a shell)")
    ap.add_argument("--include", default=str(REPO / "include"), help="the SDK's include directory")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--probes", default="", help="comma-separated probe names to run (default: all; baseline always)")
    args = ap.parse_args()
    flags = shlex.split(args.flags)
    wanted = set(filter(None, args.probes.split(","))) | {"baseline"} if args.probes else None
    httplib = httplib_flags()
    with tempfile.TemporaryDirectory() as tmp:
        deps = Path(tmp) / "compile_probe_umbrella_deps.cpp"
        deps.write_text(umbrella_deps_source(args.cxx, flags, args.include))
        cmds = {}
        for probes, extra in ((PROBES, []), (COMPILED_PROBES, COMPILED_FLAGS)):
            for key, (source, _, _) in probes.items():
                cmds[key] = ([args.cxx, *flags, *extra, f"-I{args.include}", "-c",
                              str(REPO / "bench" / source), "-o", str(Path(tmp) / f"{key}.o")], None)
        cmds[DEPS_PROBE[0]] = ([args.cxx, *flags, f"-I{args.include}", "-c", str(deps),
                                "-o", str(Path(tmp) / "umbrella_deps.o")], None)
        if httplib is not None:
            for key, (source, _, _) in MOCK_PROBES.items():
                extra = MOCK_COMPILED_FLAGS if key.endswith("_compiled") else []
                cmds[key] = ([args.cxx, *flags, *httplib, *extra, f"-I{args.include}", "-c",
                              str(REPO / "bench" / source), "-o", str(Path(tmp) / f"{key}.o")], None)
        else:
            print("compile_time.py: pkg-config has no cpp-httplib; the MockServer probes are left out")
        if wanted is not None:
            cmds = {k: v for k, v in cmds.items() if k in wanted}
        r = measure(cmds, args.repeats)
    print(f"compile CPU time, minimum of {args.repeats}: {args.cxx} {args.flags}")
    print("\n".join(table(r)))
    for k in sorted(r):
        print(f"BENCH {k}={r[k]:.6g}")
    for name, ratio in figures(r).items():
        goal = FIGURES[name][2]
        verdict = "none" if goal is None else ("ok" if ratio <= goal else "missed")
        print(f"BENCH compile figure={name} over_baseline={ratio:.3f} goal={goal or 'none'} verdict={verdict}"
              f" baseline_s={r['compile_baseline_s']:.3f} repeats={args.repeats}")
    for name, (num, den, goal) in PAIR_FIGURES.items():
        if f"compile_{num}_s" in r and f"compile_{den}_s" in r:
            ratio = r[f"compile_{num}_s"] / r[f"compile_{den}_s"]
            verdict = "ok" if ratio <= goal else "missed"
            print(f"BENCH compile figure={name} over_{den}={ratio:.3f} goal={goal:.3f} verdict={verdict}"
                  f" {num}_s={r[f'compile_{num}_s']:.3f} {den}_s={r[f'compile_{den}_s']:.3f} repeats={args.repeats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

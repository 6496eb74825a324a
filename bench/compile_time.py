#!/usr/bin/env python3
"""Compile-time figures (f): CPU time (user + sys, the minimum of a few runs)
to compile a few probe translation units, each as a ratio to the baseline, a
TU with <nlohmann/json.hpp> + <curl/curl.h> compiled in the same run.

  python3 bench/compile_time.py [--cxx g++] [--flags "-std=c++23 -O2"] [--repeats 5]

COMPILED_PROBES are the same kind of TU in compiled mode (-DSTUDENTSVC_HEADER_ONLY=0:
what a TU costs when the bodies are in the studentsvc library); only this
script measures them (run_bench.py times the bench build's header-only probes).

Prints a table and one `BENCH name=value` line per figure. run_bench.py uses
measure() with the bench build's own compile commands.
"""
from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
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
}

# Compiled mode: the same TUs built with COMPILED_FLAGS.
COMPILED_FLAGS = ["-DSTUDENTSVC_HEADER_ONLY=0"]
COMPILED_PROBES = {
    "sdk_compiled": ("compile_probe_sdk.cpp", "the umbrella, compiled mode", None),
    "calls_compiled": ("compile_probe_calls_compiled.cpp", "client.hpp + a TU making the three calls, compiled", 0.5),
}


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
    for k in cmds:
        if k != "baseline":
            r[f"compile_{k}_over_baseline"] = r[f"compile_{k}_s"] / r["compile_baseline_s"]
    return r


def table(r: dict[str, float]) -> list[str]:
    lines = [f"{'probe':<52} {'CPU s':>7} {'/ baseline':>10} {'goal':>6}"]
    for key, (_, what, goal) in {**PROBES, **COMPILED_PROBES}.items():
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
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmds = {}
        for probes, extra in ((PROBES, []), (COMPILED_PROBES, COMPILED_FLAGS)):
            for key, (source, _, _) in probes.items():
                cmds[key] = ([args.cxx, *shlex.split(args.flags), *extra, f"-I{args.include}", "-c",
                              str(REPO / "bench" / source), "-o", str(Path(tmp) / f"{key}.o")], None)
        r = measure(cmds, args.repeats)
    print(f"compile CPU time, minimum of {args.repeats}: {args.cxx} {args.flags}")
    print("\n".join(table(r)))
    for k in sorted(r):
        print(f"BENCH {k}={r[k]:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

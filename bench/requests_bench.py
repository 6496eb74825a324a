#!/usr/bin/env python3
"""(b) The sequential get_student loop in Python requests (Debian's python3-requests).

One requests.Session (keep-alive), the SDK's headers, the body parsed with
.json(). Prints the median over the rounds of the wall-clock time per call
(`BENCH requests_us_per_call=`) and of this process's CPU time per call
(`BENCH requests_cpu_us_per_call=`).

    python3 bench/requests_bench.py BASE_URL ROUNDS CALLS
"""
import base64
import statistics
import sys
import time

import requests

API_KEY = "bench-api-key-0123456789abcdef"  # the same fake account as studentsvc_bench
NETWORK_ID = "svc-bench-app"
PASSWORD = "bench-password"
PERM = "1234567"


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    base_url, rounds, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    url = f"{base_url}/students/v2/students/{PERM}"
    basic = base64.b64encode(f"{NETWORK_ID}:{PASSWORD}".encode()).decode()
    headers = {
        "x-api-key": API_KEY,
        "svc-api-key": API_KEY,
        "Authorization": f"Basic {basic}",
        "svc-api-version": "2.0",
        "Accept": "application/json, text/json",
        "User-Agent": "studentsvc-bench-python-requests",
    }
    session = requests.Session()
    session.trust_env = False  # no proxy or .netrc lookups: loopback only

    def run(n: int) -> tuple[float, float]:
        cpu0 = time.process_time_ns()
        start = time.perf_counter_ns()
        for _ in range(n):
            r = session.get(url, headers=headers)
            if r.status_code != 200:
                raise SystemExit(f"requests: status {r.status_code}")
            student = r.json()
            if student.get("perm") != PERM:
                raise SystemExit("requests: unexpected body")
        wall = time.perf_counter_ns() - start
        return wall / n, (time.process_time_ns() - cpu0) / n

    run(max(calls // 4, 50))  # warm up: connection, imports, caches
    per_call = [run(calls) for _ in range(rounds)]
    print(f"BENCH requests_us_per_call={statistics.median(w for w, _ in per_call) / 1000:.6g}")
    print(f"BENCH requests_cpu_us_per_call={statistics.median(c for _, c in per_call) / 1000:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

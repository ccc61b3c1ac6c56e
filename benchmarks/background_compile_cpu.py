"""Small-op latency while a parallel variant compiles in the background (empty kernel caches).

A fresh process (empty caches) calls ``tl.sin`` on 4e6 float32 elements a few times (the serial
kernel serves them and the second big call starts the parallel variant's compile in the
background), then runs 1,000-element adds for SECONDS and reports their latency: median, p99,
the worst call, calls over 1 ms, and the calls done. Once with the compile in a child process
(the default, runtime/cpu/compile_child.py) and once on a thread of the process
(TENSORLIB_COMPILE_IN_CHILD=0), alternating, ROUNDS times.

    python benchmarks/background_compile_cpu.py [--rounds 2] [--seconds 3]

Measured 2026-12-05 (2 cores, quiet): in-process 150-165 adds over 1 ms, worst 47-52 ms (a full
garbage collection of Numba's objects on the compile thread, GIL held), 0.60-0.65 M adds in
3 s; child: 2-6 over 1 ms, worst 6-8 ms (loading the compiled variant), 0.91-0.96 M adds.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

_CHILD = r"""
import json, os, sys, time
import numpy as np
import tensorlib as tl
rng = np.random.default_rng(0)
big = tl.asarray(rng.standard_normal(4_000_000, dtype=np.float32))
small = tl.asarray(rng.standard_normal(1000, dtype=np.float32))
small + small
tl.sin(small)
for _ in range(12):
    tl.sin(big)
end = time.perf_counter() + float(sys.argv[1])
lat = []
while time.perf_counter() < end:
    t0 = time.perf_counter()
    small + small
    lat.append(time.perf_counter() - t0)
lat.sort()
print(json.dumps({"calls": len(lat), "p50_us": lat[len(lat) // 2] * 1e6,
                  "p99_us": lat[int(len(lat) * 0.99)] * 1e6, "max_ms": lat[-1] * 1e3,
                  "over_1ms": sum(t > 1e-3 for t in lat)}))
"""


def run(in_child: bool, seconds: float) -> dict:
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, TENSORLIB_CACHE_DIR=os.path.join(d, "tl"),
                   NUMBA_CACHE_DIR=os.path.join(d, "numba"),
                   TENSORLIB_COMPILE_IN_CHILD="1" if in_child else "0",
                   PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
        r = subprocess.run([sys.executable, "-c", _CHILD, str(seconds)], env=env,
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise RuntimeError(r.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    print(f"1,000-element float32 adds for {args.seconds:g} s while sin's parallel variant "
          f"compiles (empty caches; load average {os.getloadavg()[0]:.1f})")
    print(f"{'compile':12s} {'calls':>9s} {'p50 us':>8s} {'p99 us':>8s} {'worst ms':>9s} "
          f"{'>1 ms':>6s}")
    for _ in range(args.rounds):
        for label, in_child in (("child", True), ("in-process", False)):
            r = run(in_child, args.seconds)
            print(f"{label:12s} {r['calls']:9d} {r['p50_us']:8.2f} {r['p99_us']:8.2f} "
                  f"{r['max_ms']:9.2f} {r['over_1ms']:6d}")


if __name__ == "__main__":
    main()

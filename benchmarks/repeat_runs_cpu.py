"""A short script run again and again from an empty kernel cache, as a user edits and reruns it:
does a later run reach the compiled kernels its predecessors asked for, and does a run's exit
wait for a background compile?

    PYTHONPATH=src python benchmarks/repeat_runs_cpu.py [--runs 4] [--seconds 1.0] [--pause 5]

Each run is a fresh process (its own empty TENSORLIB_CACHE_DIR / NUMBA_CACHE_DIR, shared by the
runs of one sequence) looping ``acc += row`` on a (25, 40) float32 tensor for ``--seconds``: a
small broadcast op, which takes the cold route (dense copies and the flat loop, ~50-100 us a
call) until its loop nest is compiled or on disk (~8 us a call). Per run: calls made, the
median call, and ``exit``: seconds from the script's last line to the end of interpreter
shutdown (threading's atexit hooks and thread joins). Between runs ``--pause`` seconds pass (a
user rereading output), in which a compile left running in the background may finish.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

_SCRIPT = r"""
import atexit, sys, time
import numpy as np
import tensorlib as tl

rng = np.random.default_rng(0)
row = tl.asarray(rng.random(40, dtype=np.float32))
acc = tl.asarray(rng.standard_normal((25, 40)).astype(np.float32))
t0 = time.perf_counter()
ts = []
while time.perf_counter() - t0 < float(sys.argv[1]):
    a = time.perf_counter()
    acc += row
    ts.append(time.perf_counter() - a)
end = time.perf_counter()
print(len(ts), float(np.median(ts)) * 1e6, end, flush=True)
# (atexit hooks run after threading's exit hooks and the joins of non-daemon threads)
atexit.register(lambda: print(time.perf_counter(), flush=True))
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=1.0, help="each run's loop")
    ap.add_argument("--pause", type=float, default=5.0, help="seconds between runs")
    args = ap.parse_args(argv)
    import time
    # (a compile still running in the background may write into it at the end)
    with tempfile.TemporaryDirectory(prefix="tl-repeat-", ignore_cleanup_errors=True) as cache:
        env = dict(os.environ, TENSORLIB_CACHE_DIR=cache,
                   NUMBA_CACHE_DIR=os.path.join(cache, "numba"))
        print(f"{'run':>4} {'calls':>8} {'median us':>10} {'exit s':>7}")
        for i in range(args.runs):
            out = subprocess.run([sys.executable, "-c", _SCRIPT, str(args.seconds)], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            calls, median, end, at_exit = int(out[0]), float(out[1]), float(out[2]), float(out[3])
            print(f"{i + 1:>4} {calls:>8} {median:>10.1f} {at_exit - end:>7.2f}", flush=True)
            if i + 1 < args.runs:
                time.sleep(args.pause)


if __name__ == "__main__":
    main()

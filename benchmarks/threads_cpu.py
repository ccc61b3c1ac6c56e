"""Throughput of big ops from several Python threads at once (as Dask's threaded scheduler
calls them), and of one thread beside busy-loop processes: tensorlib against NumPy.

    PYTHONPATH=src python benchmarks/threads_cpu.py [--threads 4] [--load 1] [--seconds 2]

Each of ``--threads`` threads runs the op on its own 2e6-element float32 arrays for
``--seconds``; the figure is calls per second over all threads (higher is better), and the
ratio is NumPy's throughput over tensorlib's (<= 1.0: tensorlib at least as fast). tensorlib
and NumPy alternate in rounds so load changes hit both.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time

import numpy as np

import tensorlib as tl

N = 2_000_000


def _ops():
    return {
        "add": (lambda a, b: a + b, lambda a, b: a + b),
        "multiply scalar": (lambda a, b: a * 3.0, lambda a, b: a * np.float32(3.0)),
        "sum": (lambda a, b: tl.sum(a), lambda a, b: a.sum()),
        "exp": (lambda a, b: tl.exp(a), lambda a, b: np.exp(a)),
        "max": (lambda a, b: tl.max(a), lambda a, b: a.max()),
    }


def _throughput(fn, arrays, seconds):
    counts = [0] * len(arrays)
    stop = time.perf_counter() + seconds

    def work(i):
        a, b = arrays[i]
        n = 0
        while time.perf_counter() < stop:
            fn(a, b)
            n += 1
        counts[i] = n
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(arrays))]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--load", type=int, default=0, help="busy-loop processes beside it")
    ap.add_argument("--seconds", type=float, default=1.0, help="per op, implementation, round")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    np_arrays = [(rng.random(N, dtype=np.float32) + 0.5, rng.random(N, dtype=np.float32))
                 for _ in range(args.threads)]
    tl_arrays = [(tl.asarray(a), tl.asarray(b)) for a, b in np_arrays]
    for f_tl, _ in _ops().values():  # compile outside the timing
        f_tl(*tl_arrays[0])
        f_tl(*tl_arrays[0])
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(args.load)]
    try:
        time.sleep(0.2 if procs else 0)
        print(f"{args.threads} threads, {args.load} busy processes, {N:.0e} float32; calls/s "
              f"over all threads (best of {args.rounds} rounds)")
        print(f"{'op':16s} {'tensorlib':>10s} {'numpy':>10s} {'numpy/tl':>9s}")
        worst = 0.0
        for name, (f_tl, f_np) in _ops().items():
            best_tl = best_np = 0.0
            for _ in range(args.rounds):
                best_tl = max(best_tl, _throughput(f_tl, tl_arrays, args.seconds))
                best_np = max(best_np, _throughput(f_np, np_arrays, args.seconds))
            ratio = best_np / best_tl
            worst = max(worst, ratio)
            print(f"{name:16s} {best_tl:10.1f} {best_np:10.1f} {ratio:9.2f}")
        print(f"worst numpy/tensorlib throughput ratio: {worst:.2f} (target <= 1.0)")
    finally:
        for p in procs:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()

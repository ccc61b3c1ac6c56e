"""Parallel kernels beside busy processes: the stall guard of runtime/cpu/cores.py on and off,
in one process, against NumPy (median / p90 / max per call).

    PYTHONPATH=src python benchmarks/busy_cpu.py [LOAD]     # LOAD busy-loop processes (default 1)

"off" disables the guard (a stall never switches to one thread), "on" is the default policy;
rounds alternate so load changes hit both.
"""
import subprocess
import sys
import time

import numpy as np

import tensorlib as tl
from tensorlib.runtime.cpu import cores

REPS = 150
ROUNDS = 3


def _samples(fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return np.array(times) * 1e6


def _cases():
    out = []
    for n in (100_000, 2_000_000):
        a = np.random.rand(n).astype(np.float32)
        b = a.copy()
        ta, tb = tl.asarray(a), tl.asarray(b)
        out.append((f"add {n:.0e}", lambda ta=ta, tb=tb: ta + tb, lambda a=a, b=b: a + b))
        out.append((f"sum {n:.0e}", lambda ta=ta: tl.sum(ta), lambda a=a: a.sum()))
    return out


def main():
    load = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    cases = _cases()
    for _, f_tl, f_np in cases:  # compile (and let deferred parallel compiles finish)
        for _ in range(3):
            f_tl()
        f_np()
    for thread in list(cores._compiling.values()):
        thread.join()
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
    time.sleep(0.3)
    results = {}
    try:
        for _ in range(ROUNDS):
            for mode in ("off", "on"):
                cores.STALL_S = 1e9 if mode == "off" else 0.001
                cores._until = 0.0
                for name, f_tl, f_np in cases:
                    results.setdefault((name, mode), []).append(_samples(f_tl, REPS))
                    results.setdefault((name, "numpy"), []).append(_samples(f_np, REPS))
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for name, _, _ in cases:
        for mode in ("off", "on", "numpy"):
            ts = np.concatenate(results[(name, mode)])
            print(f"load {load} {name:9s} {mode:5s} med {np.median(ts):8.1f} "
                  f"p90 {np.percentile(ts, 90):8.1f} max {ts.max():8.1f} us")


if __name__ == "__main__":
    main()

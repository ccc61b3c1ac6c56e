"""The loops of 2026-12-07's review (masked stores, exact integer clip, bool counts) across
sizes: max / argmax along axis 0, in-place maximum and masked assignment, count_nonzero of a
bool mask, clip of int64 by float bounds; tensorlib against NumPy, median and worst call.

    PYTHONPATH=src python benchmarks/select_loops_cpu.py [TAG]

Run it beside ``python3 -c "while True: pass" &`` for the busy figures, and with
NUMBA_CACHE_DIR / TENSORLIB_CACHE_DIR at empty directories for the compiles (its first calls
then run cold routes or compile: warm up first for steady figures). Not a test.
"""
import sys
import time

import numpy as np

import tensorlib as tl

rng = np.random.default_rng(0)
tag = sys.argv[1] if len(sys.argv) > 1 else "tensorlib"


def cases(n):
    # (rows of axis-0 reductions: n // 1000, at least 10)
    r = max(10, n // 1000); c = n // r
    M = rng.random((r, c), dtype=np.float32); tM = tl.asarray(M)
    x = rng.standard_normal(n).astype(np.float32); tx = tl.asarray(x.copy()); xn = x.copy()
    m = x > 0.3; tm = tl.asarray(m)
    xi = (rng.random(n) * 100).astype(np.int64); txi = tl.asarray(xi)
    return {
        "max axis0": (lambda: tl.max(tM, axis=0), lambda: M.max(axis=0)),
        "argmax axis0": (lambda: tl.argmax(tM, axis=0), lambda: M.argmax(axis=0)),
        "maximum(x,0,out=x)": (lambda: tl.maximum(tx, 0.0, out=tx), lambda: np.maximum(xn, 0, out=xn)),
        "x[mask]=0": (lambda: tx.__setitem__(tm, 0.0), lambda: xn.__setitem__(m, 0.0)),
        "count_nonzero(bool)": (lambda: tl.count_nonzero(tm), lambda: np.count_nonzero(m)),
        "clip(int64,.5,80.5)": (lambda: tl.clip(txi, 0.5, 80.5), lambda: np.clip(xi, 0.5, 80.5)),
    }
def stats(f, budget=0.25):
    f(); f()
    t0 = time.perf_counter(); f(); one = time.perf_counter() - t0
    reps = int(min(400, max(15, budget / max(one, 1e-6))))
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    ts = np.array(ts)
    return np.median(ts), ts.max()
out = []
for n in (1000, 100000, 1000000, 10000000):
    for name, (f, g) in cases(n).items():
        for _ in range(3): f()
        a, amax = stats(f); b, bmax = stats(g)
        out.append(f"{tag} {name:20s} {n:8.0e} tl {a*1e6:9.1f} us (max {amax*1e6:9.1f})  np {b*1e6:9.1f} (max {bmax*1e6:9.1f})  ratio {a/b:5.2f} worst {amax/bmax:5.2f}")
print("\n".join(out))

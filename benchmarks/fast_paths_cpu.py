"""The small-call fast paths across sizes: tensorlib time / NumPy time (median of 7 rounds, same
process) for x*y, x += z (in place), a 1-D strided multiply, where with a Python scalar, argmax
and a transpose made contiguous, at 1e3, 1e5, 1e6 and 1e7 elements.

Run: python benchmarks/fast_paths_cpu.py [SRC_DIR] [--busy]
  SRC_DIR: the tensorlib source tree to measure (default: this checkout's src/), so a base tree
  can be measured beside HEAD; --busy runs one busy-loop process beside the measurement.
Measured 2026-11-28 (2-core Cascade Lake VM, HEAD vs 0e3c9c9): see issue 13's note.
"""
import os
import subprocess
import sys
import time

import numpy as np

_args = [a for a in sys.argv[1:] if a != "--busy"]
sys.path.insert(0, _args[0] if _args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
_busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if "--busy" in sys.argv else None
import tensorlib as tl  # noqa: E402
from tensorlib.runtime.cpu import cores  # noqa: E402

cores.DEFER_PARALLEL_COMPILE = False  # parallel variants compiled up front, not mid-timing


def med(fn, n, r=7):
    ts = []
    for _ in range(r):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        ts.append((time.perf_counter() - t) / n)
    ts.sort()
    return ts[len(ts) // 2]


rng = np.random.default_rng(0)
out = []
for N in (10**3, 10**5, 10**6, 10**7):
    xn = rng.random(N, dtype=np.float32) + 0.5; yn = rng.random(N, dtype=np.float32)
    x, y = tl.asarray(xn), tl.asarray(yn)
    zn, z = np.zeros(N, np.float32), tl.zeros(N)
    mn = xn > 1.0
    m = tl.asarray(mn)
    x2n = rng.random(2 * N, dtype=np.float32)
    x2 = tl.asarray(x2n)
    side = int(N ** 0.5)
    tn = rng.random((side, side), dtype=np.float32)
    t = tl.asarray(tn)
    reps = max(2, 200000 // N)
    cases = [("x*y", lambda: x * y, lambda: xn * yn),
             ("x+=z", lambda: x.add_(z), lambda: np.add(xn, zn, out=xn)),
             ("a[::2]*a[1::2]", lambda: x2[::2] * x2[1::2], lambda: x2n[::2] * x2n[1::2]),
             ("where(m,0,x)", lambda: tl.where(m, 0, x), lambda: np.where(mn, np.float32(0), xn)),
             ("argmax", lambda: tl.argmax(x), lambda: np.argmax(xn)),
             ("T.contiguous", lambda: t.T.contiguous(), lambda: np.ascontiguousarray(tn.T))]
    row = []
    for name, f, g in cases:
        for _ in range(12):  # past HOT_CALLS: the fast path serves the timed calls
            f()
        g()
        row.append(f"{name} {med(f, reps) / med(g, reps):.2f}")
    out.append(f"n={N:.0e}: " + ", ".join(row))
print("\n".join(out))
if _busy is not None:
    _busy.kill()

"""A loop of one op in a fresh process with empty kernel caches: what a user's first script
meets beyond the first call (a runner made at the HOT_CALLS-th call, background compiles).

Each case runs in a new process whose TENSORLIB_CACHE_DIR and NUMBA_CACHE_DIR are new empty
folders; it calls the op for SECONDS and reports the first call, the slowest later call (and
its index), the calls over 1 ms, the calls done, the steady median (the last second) and the
median per half second. Compare trees by running it with PYTHONPATH pointing at each one's
``src`` (the tree whose ``src`` is first on the path is measured).

    python benchmarks/fresh_loop_cpu.py [--seconds 4] [--sizes 1e3,1e5] [--cases exp,sqrt,...]

Measured 2026-12-07 (Zen 3 VM, 2 vCPUs, quiet), 1e3 float32 elements, before -> after the
strided runner's gathering loop moved to the background compile: slowest later call
exp(x[::2]) 0.33-0.53 -> 0.004 s, sqrt 0.36-0.41 -> 0.012-0.034, sin 0.51-0.61 -> 0.07-0.09
(its first call itself takes 2.3-2.6 s); calls meanwhile 12-27 us against ~6 steady, for 1-3
s (fewer calls done in a 3 s script: exp 165k -> 73k). Cheap ops (abs, x * 2.0, x + y)
compile their strided loop at the 32nd call as before (0.14-0.18 s; 0.23-0.38 s once one
operand's steps 2 and -1 got loops of their own).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import sys, time
import numpy as np
import tensorlib as tl
case, n, seconds = sys.argv[1], int(float(sys.argv[2])), float(sys.argv[3])
x = tl.asarray(np.random.default_rng(0).random(2 * n).astype(np.float32) + 0.5)
y = tl.asarray(np.random.default_rng(1).random(2 * n).astype(np.float32))
fn = {"exp": lambda: tl.exp(x[::2]), "sqrt": lambda: tl.sqrt(x[::2]),
      "sin": lambda: tl.sin(x[::2]), "abs": lambda: tl.abs(x[::-2]),
      "mul": lambda: x[::2] * 2.0, "add": lambda: x[::2] + y[1::2]}[case]
times = []
end = time.perf_counter() + seconds
while time.perf_counter() < end:
    t = time.perf_counter()
    fn()
    times.append(time.perf_counter() - t)
ts = np.array(times)
later = ts[1:] if len(ts) > 1 else np.zeros(1)  # (a first call longer than SECONDS)
cum = np.cumsum(ts)
windows = np.searchsorted(cum, np.arange(0.0, cum[-1], 0.5))
halves = [np.median(ts[a:b]) * 1e6 for a, b in zip(windows[:-1], windows[1:]) if b > a]
steady = ts[np.searchsorted(cum, cum[-1] - 1.0):]
print(f"{case:5} {n:>8}  first {ts[0]:.3f} s  slowest later {later.max():.3f} s "
      f"(call {later.argmax() + 1})  >1ms {int((later > 1e-3).sum()):3d}  calls {len(ts):7d}  "
      f"steady {np.median(steady) * 1e6:6.1f} us  per 0.5 s: "
      + " ".join(f"{h:.0f}" for h in halves))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--sizes", default="1e3,1e5")
    ap.add_argument("--cases", default="exp,sqrt,sin,abs,mul,add")
    args = ap.parse_args()
    for case in args.cases.split(","):
        for size in args.sizes.split(","):
            with tempfile.TemporaryDirectory() as tmp:
                env = dict(os.environ, TENSORLIB_CACHE_DIR=os.path.join(tmp, "tl"),
                           NUMBA_CACHE_DIR=os.path.join(tmp, "numba"))
                r = subprocess.run([sys.executable, "-c", _CHILD, case, size,
                                    str(args.seconds)], env=env, capture_output=True, text=True)
                print(r.stdout.strip() if r.returncode == 0 else
                      f"{case} {size}: failed\n{r.stderr[-2000:]}", flush=True)


if __name__ == "__main__":
    main()

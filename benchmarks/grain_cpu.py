"""Where threads start to pay on this machine: each op on one thread against the whole team,
alternating in one process, across sizes (the evidence behind the parallel grains of
kernels/cpu/pointwise.py and kernels/cpu/indexing.py).

    python benchmarks/grain_cpu.py [--sizes 3.3e4,6.6e4,1e5,1.31e5,2.62e5,5.24e5] [--rounds 15]
        [--ops add,mul,sqrt,exp,tanh,sin,clone,take,mask]

The grains are lowered to 4096 for the run, so the team column runs the parallel variants at
every size shown. One thread is forced through the busy-machine cool-down of runtime/cpu/cores.py (what a loaded
machine runs), so both columns run the kernels tensorlib would pick. Parallel variants are
compiled up front. Prints the median microseconds per call of each and their ratio
(team / one thread: below 1, threads pay at that size).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import tensorlib as tl  # noqa: E402
from tensorlib.kernels.cpu import indexing, pointwise  # noqa: E402
from tensorlib.runtime.cpu import cores  # noqa: E402

OPS = {
    "add": lambda x, y, i, m: x + y,
    "mul": lambda x, y, i, m: x * 3.0,
    "sqrt": lambda x, y, i, m: tl.sqrt(x),
    "exp": lambda x, y, i, m: tl.exp(x),
    "tanh": lambda x, y, i, m: tl.tanh(x),
    "sin": lambda x, y, i, m: tl.sin(x),
    "clone": lambda x, y, i, m: x.clone(),
    "take": lambda x, y, i, m: tl.take(x, i),
    "mask": lambda x, y, i, m: x[m],
}


def _per_call(fn, reps):
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="3.3e4,6.6e4,1e5,1.31e5,2.62e5,5.24e5")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--ops", default=",".join(OPS))
    args = ap.parse_args(argv)
    cores.DEFER_PARALLEL_COMPILE = False  # compile the parallel variants at their first call
    # the team from 4096 elements (before any runner is made: runners read the grain once)
    pointwise.GRAIN = pointwise.WIDE_GRAIN = indexing.GRAIN = 1 << 12
    names = args.ops.split(",")
    print(f"team of {cores.team_size()} threads; load {os.getloadavg()[0]:.2f}")
    print("elements  " + "  ".join(f"{n:>22}" for n in names))
    rng = np.random.default_rng(0)
    for n in (int(float(s)) for s in args.sizes.split(",")):
        x = tl.asarray(rng.random(n, np.float32))
        y = tl.asarray(rng.random(n, np.float32))
        idx = tl.asarray(rng.integers(0, n, n))
        mask = tl.asarray(rng.random(n) < 0.5)
        reps = max(5, int(1e6 / n))
        cells = []
        for name in names:
            fn = (lambda op: lambda: op(x, y, idx, mask))(OPS[name])
            one, team = [], []
            for _ in range(3):
                fn()
            for _ in range(args.rounds):
                cores._until = float("inf")  # the one-thread cool-down
                one.append(_per_call(fn, reps))
                cores._until = 0.0
                team.append(_per_call(fn, reps))
            o, t = float(np.median(one)), float(np.median(team))
            cells.append(f"{o * 1e6:7.0f}/{t * 1e6:<7.0f}{t / o:5.2f}")
        print(f"{n:>8}  " + "  ".join(f"{c:>22}" for c in cells), flush=True)
    print("cells: one thread us / team us, team / one thread")
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

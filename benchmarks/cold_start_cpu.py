"""Cold start on the CPU: first-call seconds of everyday ops with empty kernel caches.

    python benchmarks/cold_start_cpu.py [--quick] [--dtypes float32,float64,int64]
        [--only NAME,...] [--profile] [--skip-dayone] [--skip-everyday] [--no-bytecode]

Every measurement runs in a child process whose TENSORLIB_CACHE_DIR and NUMBA_CACHE_DIR point
at fresh empty temporary directories (removed afterwards), so each Numba kernel it needs is
generated and compiled there, as on a machine's very first use.

* day-one script: 13 common ops on a 1e5-element float32 tensor (linspace, sum, mean, mask,
  matmul, sort, where, astype, exp, softmax, max, argmax, unique_values), one call each, in
  one process: seconds per op and the total including ``import tensorlib``.
* everyday ops: one fresh process and fresh caches per dtype (float32, float64, int64); the
  first call of each op of the list (1e5 elements, above the parallel grain: a cold big call
  runs the serial variant), in list order, so a kernel shared by two ops counts at the first.
  ``--quick`` runs a shorter list.
``--profile`` adds, per op, the Numba compiles it triggered (exclusive seconds, top 6). Each op
also shows the process CPU seconds of its call, the total the process CPU seconds up to the end
(on a shared machine wall time also counts other processes' time slices; a cold call is one
busy thread, so its CPU time is the steadier figure).
Python's bytecode cache is not a kernel cache: by default the children run as after a pip install
(tensorlib's modules byte-compiled first, ``compileall``, and PYTHONDONTWRITEBYTECODE dropped
from their environment). ``--no-bytecode`` keeps every module compiled from source in every
process, as where PYTHONDONTWRITEBYTECODE=1 is set and no bytecode was ever written (some
containers, this project's sandbox): measured 2026-12-06 on a Zen 3 VM, that adds ~0.35 s to
``import tensorlib`` and ~0.25 s to the first kernel call (the kernel modules are imported then).
Targets (issue 13, item 5): every first call <= 0.5 s, the day-one total <= 5 s.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

N = 100_000

DAYONE = ["linspace", "sum", "mean", "mask", "matmul", "sort", "where", "astype", "exp",
          "softmax", "max", "argmax", "unique_values"]

EVERYDAY = ["add", "multiply scalar", "subtract", "divide", "maximum", "less", "where",
            "astype", "sum", "mean", "max", "min", "argmax", "sum axis 1", "mean axis 0",
            "cumsum", "std", "sort", "argsort", "unique_values", "mask", "take", "concat",
            "matmul", "exp", "log", "sin", "cos", "tanh", "sqrt", "abs", "softmax", "zeros",
            "arange", "linspace", "clip", "pow scalar", "pow 2.5", "pow 2.7"]

QUICK = ["add", "multiply scalar", "less", "where", "astype", "sum", "mean", "max",
         "argmax", "sum axis 1", "cumsum", "sort", "unique_values", "mask", "take", "matmul",
         "exp", "sin", "tanh", "softmax"]


def _ops(tl, x, y, m, idx, dtype):
    dt = getattr(tl, dtype)
    other = tl.float64 if dtype != "float64" else tl.float32
    return {
        # day-one (x float32 from linspace)
        "linspace": lambda: tl.linspace(0, 1, N, dtype=dt) if dt.kind == "f"
        else tl.arange(N, dtype=dt),
        "sum": lambda: tl.sum(x),
        "mean": lambda: tl.mean(x),
        "mask": lambda: x[x > x[N // 2]],
        "matmul": lambda: x[:10000].reshape((100, 100)) @ x[:10000].reshape((100, 100)),
        "sort": lambda: tl.sort(x),
        "where": lambda: tl.where(x > x[N // 2], x, y),
        "astype": lambda: x.astype(other),
        "exp": lambda: tl.exp(x),
        "softmax": lambda: tl.softmax(x.reshape((100, 1000)), axis=1),
        "max": lambda: tl.max(x),
        "argmax": lambda: tl.argmax(x),
        "unique_values": lambda: tl.unique_values(x),
        # everyday extras
        "add": lambda: x + y,
        "multiply scalar": lambda: x * 3,
        "subtract": lambda: x - y,
        "divide": lambda: x / y,
        "maximum": lambda: tl.maximum(x, y),
        "less": lambda: x < y,
        "min": lambda: tl.min(x),
        "sum axis 1": lambda: tl.sum(x.reshape((100, 1000)), axis=1),
        "mean axis 0": lambda: tl.mean(x.reshape((100, 1000)), axis=0),
        "cumsum": lambda: tl.cumsum(x, axis=0),
        "std": lambda: tl.std(x),
        "argsort": lambda: tl.argsort(x),
        "take": lambda: x[idx],
        "concat": lambda: tl.concat([x, y]),
        "log": lambda: tl.log(x),
        "sin": lambda: tl.sin(x),
        "cos": lambda: tl.cos(x),
        "tanh": lambda: tl.tanh(x),
        "sqrt": lambda: tl.sqrt(x),
        "abs": lambda: tl.abs(x),
        "zeros": lambda: tl.zeros((N,), dtype=dt),
        "arange": lambda: tl.arange(N, dtype=dt),
        "clip": lambda: tl.clip(x, x[10], x[N - 10]),
        "pow scalar": lambda: x ** 2,
        "pow 2.5": lambda: abs(x) ** 2.5,  # (the survey's pow; a half-integer form)
        "pow 2.7": lambda: abs(x) ** 2.7,  # (a general exponent)
    }


class _Compiles:
    """Records each Numba dispatcher compile (exclusive seconds, name) while on."""

    def __init__(self):
        import numba.core.dispatcher as nd
        self.rec = []
        self._stack = []
        orig = nd.Dispatcher.compile
        me = self

        def compile(disp, sig):
            t0 = time.perf_counter()
            me._stack.append(0.0)
            try:
                return orig(disp, sig)
            finally:
                dt = time.perf_counter() - t0
                child = me._stack.pop()
                if me._stack:
                    me._stack[-1] += dt
                f = disp.py_func
                me.rec.append((dt - child, f"{f.__module__}.{f.__qualname__}"))

        nd.Dispatcher.compile = compile

    def take(self, top=6):
        rec, self.rec = self.rec, []
        rec.sort(reverse=True)
        return [f"{s:.2f} {name}" for s, name in rec[:top] if s >= 0.01]


def _ignore_tensorlib_bytecode():
    """Makes this process compile tensorlib's modules from source, as where none was ever
    written, while other packages keep theirs (pip wrote those at install)."""
    import importlib._bootstrap_external as ext
    import importlib.util
    root = importlib.util.find_spec("tensorlib").submodule_search_locations[0]
    found = ext.cache_from_source

    def cache_from_source(path, *args, **kwargs):
        if path.startswith(root):
            raise NotImplementedError  # (SourceLoader.get_code's signal for "no bytecode")
        return found(path, *args, **kwargs)
    ext.cache_from_source = cache_from_source


def _child(mode, dtype, names, profile):
    if os.environ.get("TL_COLD_NO_BYTECODE"):
        _ignore_tensorlib_bytecode()
    t0 = time.perf_counter()
    prof = _Compiles() if profile else None
    import numpy as np

    import tensorlib as tl
    imported = time.perf_counter() - t0
    if mode == "dayone":
        x = tl.linspace(0, 1, N)
        y = tl.asarray(np.linspace(1, 2, N, dtype=np.float32))
        dtype = "float32"
    else:
        rng = np.random.default_rng(0)
        base = rng.random(N) + 0.5 if dtype.startswith("float") else rng.integers(1, 100, N)
        x = tl.asarray(base.astype(dtype))
        y = tl.asarray(base[::-1].astype(dtype))
    m = tl.asarray(np.arange(N) % 3 == 0)
    idx = tl.asarray(np.random.default_rng(1).integers(0, N, 1000))
    setup = time.perf_counter() - t0
    ops = _ops(tl, x, y, m, idx, dtype)
    print(json.dumps({"import": imported, "setup": setup,
                      "compiles": prof.take() if prof else []}), flush=True)
    for name in names:
        t = time.perf_counter()
        c = time.process_time()
        err = None
        try:
            ops[name]()
        except Exception as e:  # noqa: BLE001 - an op a dtype refuses is reported, not fatal
            err = f"{type(e).__name__}: {e}"[:80]
        print(json.dumps({"op": name, "s": time.perf_counter() - t,
                          "cpu": time.process_time() - c, "err": err,
                          "compiles": prof.take() if prof else []}), flush=True)
    print(json.dumps({"total": time.perf_counter() - t0, "cpu": time.process_time()}),
          flush=True)


def _byte_compile():
    """tensorlib's modules byte-compiled beside their sources, as pip does at install."""
    import compileall

    import tensorlib
    compileall.compile_dir(os.path.dirname(tensorlib.__file__), quiet=2)


def _cold_run(mode, dtype, names, profile, bytecode=True):
    """Runs the child with fresh empty kernel caches (with Python's bytecode cache when
    ``bytecode``); returns its records and its wall seconds."""
    tmp = tempfile.mkdtemp(prefix="tl_cold_")
    env = dict(os.environ, TENSORLIB_CACHE_DIR=os.path.join(tmp, "tl"),
               NUMBA_CACHE_DIR=os.path.join(tmp, "numba"))
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env.update(PYTHONDONTWRITEBYTECODE="1", TL_COLD_NO_BYTECODE="1")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--dtypes", dtype,
           "--only", ",".join(names)] + (["--profile"] if profile else [])
    try:
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0  # includes waiting for background compile threads
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    recs = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-3000:])
    return recs, wall


def _print_run(title, recs, wall, limit):
    print(f"\n{title}")
    total = None
    worst = []
    for r in recs:
        if "import" in r:
            print(f"  {'(import tensorlib)':<20}{r['import']:7.2f} s   (setup incl. import "
                  f"{r['setup']:.2f} s)")
            for c in r["compiles"]:
                print(f"      {c}")
        elif "op" in r:
            flag = " !" if r["s"] > limit else ""
            if r["s"] > limit:
                worst.append(r["op"])
            err = f"   [{r['err']}]" if r["err"] else ""
            print(f"  {r['op']:<20}{r['s']:7.2f} s   (cpu {r['cpu']:5.2f} s){flag}{err}")
            for c in r["compiles"]:
                print(f"      {c}")
        elif "total" in r:
            total, cpu = r["total"], r.get("cpu")
    if total is not None:
        print(f"  {'total':<20}{total:7.2f} s   (cpu {cpu:5.2f} s incl. import; process wall "
              f"incl. exit: {wall:.2f} s)")
    ops = [r["s"] for r in recs if "op" in r]
    if ops:
        print(f"  max first call {max(ops):.2f} s; over {limit} s: {', '.join(worst) or 'none'}")
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="shorter everyday list")
    ap.add_argument("--dtypes", default="float32,float64,int64")
    ap.add_argument("--only", default="", help="comma-separated op names (everyday list)")
    ap.add_argument("--profile", action="store_true", help="list the compiles of each op")
    ap.add_argument("--skip-dayone", action="store_true")
    ap.add_argument("--skip-everyday", action="store_true")
    ap.add_argument("--limit", type=float, default=0.5, help="per-op target (s)")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="compile every module from source in every process (see above)")
    ap.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    dtypes = [d for d in args.dtypes.split(",") if d]
    if args.child:
        _child(args.child, dtypes[0], args.only.split(","), args.profile)
        return 0
    t0 = time.perf_counter()
    bytecode = not args.no_bytecode
    if bytecode:
        _byte_compile()
    print("Python bytecode cache: " + ("on (tensorlib byte-compiled, as after a pip install)"
                                       if bytecode else "off (every module compiled from source)"))
    if not args.skip_dayone:
        recs, wall = _cold_run("dayone", "float32", DAYONE, args.profile, bytecode)
        total = _print_run("day-one script (float32, 1e5), cold caches", recs, wall,
                           args.limit)
        if total is not None:
            print(f"  day-one total {total:.2f} s (target <= 5 s)")
    if not args.skip_everyday:
        names = args.only.split(",") if args.only else (QUICK if args.quick else EVERYDAY)
        for dt in dtypes:
            recs, wall = _cold_run("everyday", dt, names, args.profile, bytecode)
            _print_run(f"everyday first calls, {dt} (1e5), cold caches", recs, wall,
                       args.limit)
    print(f"\n(benchmark wall {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the CPU ratio scripts (short_rows_cpu.py, assign_cpu.py, broadcast_cpu.py) share: the
best time of a call, and the per-size summary of tensorlib / NumPy ratios."""
import math
import time


def best_us(f, budget=0.05):
    """The best time of ``f()`` in microseconds over ~``budget`` seconds of batches (one warm
    call first: it compiles, or loads from disk)."""
    f()
    start = time.perf_counter()
    f()
    number = max(1, int(0.01 / max(time.perf_counter() - start, 1e-7)))
    best, spent = math.inf, 0.0
    while spent < budget:
        start = time.perf_counter()
        for _ in range(number):
            f()
        took = time.perf_counter() - start
        spent += took
        best = min(best, took / number)
    return best * 1e6


def summarize(rows, sizes, label=""):
    """Prints, per size, the geometric mean and the worst of tensorlib / NumPy over ``rows``
    of (name, dtype, size, tensorlib us, NumPy us)."""
    for size in sizes:
        sel = [r for r in rows if r[2] == size]
        if not sel:
            continue
        geo = math.exp(sum(math.log(r[3] / r[4]) for r in sel) / len(sel))
        worst = max(sel, key=lambda r: r[3] / r[4])
        print(f"{label}{size:7.0e} geomean {geo:5.2f} worst {worst[3] / worst[4]:5.2f} "
              f"({worst[0]} {worst[1]}: {worst[3]:.1f} vs {worst[4]:.1f} us)")


def run_cases(doc, cases, dtypes):
    """The command line of a ratio script: ``--sizes`` and ``--dtypes`` (default ``dtypes``),
    then each (name, tensorlib call, NumPy call) of ``cases(size, dtype name)`` timed and
    printed, then the per-size summary."""
    import argparse
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--sizes", default="1e3,1e4,1e5,1e6,1e7")
    p.add_argument("--dtypes", default=dtypes)
    args = p.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    rows = []  # (name, dtype, size, tensorlib us, NumPy us)
    for size in sizes:
        for dt in args.dtypes.split(","):
            for name, ours, theirs in cases(size, dt):
                row = (name, dt, size, best_us(ours), best_us(theirs))
                rows.append(row)
                print(f"{name:26s} {dt:8s} {size:7.0e} {row[3]:9.1f} {row[4]:9.1f} us "
                      f"{row[3] / row[4]:6.2f}x", flush=True)
    summarize(rows, sizes)

"""Core CPU path benchmark: tensorlib against NumPy on the issue's cases, with ratios.

Run: python benchmarks/core_cpu.py [--quick]
Each case checks tensorlib's answer against NumPy first, then times both (median of repeats
after warm-up, perf_counter) and prints the ratio ours/NumPy with the target.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np


def _median_time(fn, repeats):
    fn()
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _import_seconds() -> float:
    code = "import time; t=time.perf_counter(); import tensorlib; print(time.perf_counter()-t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(3)]
    return min(runs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 15

    import tensorlib as tl

    rng = np.random.default_rng(0)
    rows = []

    def case(name, ours, theirs, target, check=None, lower_is_better=True, unit="ms"):
        if check is not None:
            check()
        t_ours = _median_time(ours, repeats)
        t_np = _median_time(theirs, repeats)
        ratio = t_ours / t_np if lower_is_better else t_np / t_ours
        ok = ratio <= target if lower_is_better else ratio >= target
        rows.append((name, t_ours * 1e3, t_np * 1e3, ratio,
                     ("<= " if lower_is_better else ">= ") + f"{target}", ok))

    a_np = rng.random(10 ** 7, dtype=np.float32)
    b_np = rng.random(10 ** 7, dtype=np.float32)
    a, b = tl.asarray(a_np), tl.asarray(b_np)
    case("add 1e7 f32 (allocating)", lambda: a + b, lambda: a_np + b_np, 0.35,
         check=lambda: np.testing.assert_allclose((a + b).numpy(), a_np + b_np))

    m_np = rng.random((4000, 2500), dtype=np.float32)
    v_np = rng.random(2500, dtype=np.float32)
    m, v = tl.asarray(m_np), tl.asarray(v_np)
    case("broadcast (4000,2500)+(2500,)", lambda: m + v, lambda: m_np + v_np, 0.7,
         check=lambda: np.testing.assert_allclose((m + v).numpy(), m_np + v_np))
    n_np = rng.random((2500, 4000), dtype=np.float32)
    k_np = rng.random((2500, 4000), dtype=np.float32)
    n, k = tl.asarray(n_np), tl.asarray(k_np)
    case("two transposed views (4000,2500)", lambda: n.T + k.T, lambda: n_np.T + k_np.T, 1.0,
         check=lambda: np.testing.assert_allclose((n.T + k.T).numpy(), n_np.T + k_np.T))
    case("contiguous + transposed (4000,2500)", lambda: m + n.T, lambda: m_np + n_np.T, 1.0,
         check=lambda: np.testing.assert_allclose((m + n.T).numpy(), m_np + n_np.T))

    if hasattr(tl, "sum"):
        for axis in (0, 1):
            case(f"sum axis={axis} (4000,2500) f32", lambda: tl.sum(m, axis=axis),
                 lambda: m_np.sum(axis=axis), 1.0,
                 check=lambda: np.testing.assert_allclose(tl.sum(m, axis=axis).numpy(),
                                                          m_np.sum(axis=axis), rtol=1e-4))
    else:
        rows.append(("sum (not implemented yet)", float("nan"), float("nan"), float("nan"),
                     "<= 1.0", False))

    if hasattr(tl, "matmul"):
        x_np = rng.random((2048, 2048), dtype=np.float32)
        y_np = rng.random((2048, 2048), dtype=np.float32)
        x, y = tl.asarray(x_np), tl.asarray(y_np)
        case("matmul 2048^2 f32 (GFLOP/s ratio)", lambda: x @ y, lambda: x_np @ y_np, 0.95,
             lower_is_better=False,
             check=lambda: np.testing.assert_allclose((x @ y).numpy(), x_np @ y_np, rtol=1e-4))
    else:
        rows.append(("matmul (not implemented yet)", float("nan"), float("nan"), float("nan"),
                     ">= 0.95", False))

    s1, s2 = tl.asarray([1.0]), tl.asarray([2.0])
    t_tiny = _median_time(lambda: [s1 + s2 for _ in range(1000)], repeats) / 1000
    n1 = np.array([1.0], np.float32)
    t_tiny_np = _median_time(lambda: [n1 + n1 for _ in range(1000)], repeats) / 1000
    rows.append(("1-element add (dispatch), us", t_tiny * 1e6, t_tiny_np * 1e6,
                 t_tiny * 1e6, "<= 3 us", t_tiny <= 3e-6))
    t_imp = _import_seconds()
    rows.append(("import tensorlib, s", t_imp, float("nan"), t_imp, "<= 0.3 s", t_imp <= 0.3))

    print(f"{'case':<38} {'tensorlib':>11} {'numpy':>11} {'ratio':>8}  {'target':<9} ok")
    for name, ours, theirs, ratio, target, ok in rows:
        print(f"{name:<38} {ours:>11.3f} {theirs:>11.3f} {ratio:>8.3f}  {target:<9} "
              f"{'yes' if ok else 'NO'}")
    print("(times in ms unless the case says otherwise; ratio = tensorlib/NumPy time, or "
          "NumPy/tensorlib time for GFLOP/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fused softmax / log_softmax / layer_norm backward (the input gradient) on the CPU, as ratios
measured in one run.

Run: python benchmarks/normalization_backward_cpu.py [--rounds N] [--dtype float32|float64]

Per shape (rows x n, normalized over the last axis) and op, best-of-N times of:

* fused:     the one-pass row kernel (tensorlib.ops.normalization_backward, what backward
             without create_graph runs; layer_norm_w: the weight gradient, g * xhat fused
             then summed over rows),
* composite: the same gradient as tensorlib ops (the formulas double backward records:
             2-3 pointwise ops and a row reduction, each a pass over memory),
* numpy:     the composite formula as NumPy expressions.

Ratios are composite / fused and numpy / fused (above 1: the fused kernel is faster). The
target is fused <= composite, i.e. both ratios >= 1 on large inputs.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def _best(fn, rounds, number):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = ap.parse_args()

    import tensorlib as tl
    from tensorlib.ops import normalization_backward as NB

    dt = args.dtype
    rng = np.random.default_rng(0)
    print(f"fused normalization backward, CPU, {dt}, best of {args.rounds} rounds")
    print(f"{'op':<12} {'shape':>12} {'fused ms':>9} {'comp. ms':>9} {'numpy ms':>9} "
          f"{'comp/fused':>10} {'numpy/fused':>11}")
    for shape in [(64, 128), (1024, 1024), (4096, 1024), (256, 8192)]:
        x = rng.standard_normal(shape).astype(dt)
        g = rng.standard_normal(shape).astype(dt)
        w = rng.standard_normal(shape[-1:]).astype(dt)
        xt, gt, wt = tl.asarray(x), tl.asarray(g), tl.asarray(w)
        y, ly = tl.softmax(xt), tl.log_softmax(xt)
        yn, lyn = y.numpy(), ly.numpy()
        n = shape[-1]
        ax = (1,)

        def ln_comp():
            mu = tl.mean(xt, axis=ax, keepdims=True)
            xc = xt - mu
            rstd = 1.0 / tl.sqrt(tl.mean(xc * xc, axis=ax, keepdims=True) + 1e-5)
            xhat = xc * rstd
            gw = gt * wt
            return rstd * (gw - tl.mean(gw, axis=ax, keepdims=True)
                           - xhat * tl.mean(gw * xhat, axis=ax, keepdims=True))

        def ln_np():
            mu = x.mean(axis=1, keepdims=True)
            xc = x - mu
            rstd = 1 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5)
            xhat = xc * rstd
            gw = g * w
            return rstd * (gw - gw.mean(axis=1, keepdims=True)
                           - xhat * (gw * xhat).mean(axis=1, keepdims=True))

        def lnw_comp():
            mu = tl.mean(xt, axis=ax, keepdims=True)
            xc = xt - mu
            rstd = 1.0 / tl.sqrt(tl.mean(xc * xc, axis=ax, keepdims=True) + 1e-5)
            return tl.sum(gt * (xc * rstd), axis=(0,))

        def lnw_np():
            mu = x.mean(axis=1, keepdims=True)
            xc = x - mu
            return (g * (xc / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5))).sum(0)

        cases = {
            "softmax": (lambda: NB.softmax_backward(gt, y, -1),
                        lambda: y * (gt - tl.sum(gt * y, axis=ax, keepdims=True)),
                        lambda: yn * (g - (g * yn).sum(axis=1, keepdims=True))),
            "log_softmax": (lambda: NB.log_softmax_backward(gt, ly, -1),
                            lambda: gt - tl.exp(ly) * tl.sum(gt, axis=ax, keepdims=True),
                            lambda: g - np.exp(lyn) * g.sum(axis=1, keepdims=True)),
            "layer_norm": (lambda: NB.layer_norm_backward(gt, xt, wt, (n,), 1e-5),
                           ln_comp, ln_np),
            "layer_norm_w": (lambda: tl.sum(NB.layer_norm_grad_xhat(gt, xt, (n,), 1e-5),
                                            axis=(0,)), lnw_comp, lnw_np),
        }
        number = max(1, int(2e6 // x.size))
        for op, (fused, comp, npf) in cases.items():
            for f in (fused, comp, npf):  # warm: compiles (the parallel twins too), caches
                for _ in range(3):
                    f()
            np.testing.assert_allclose(fused().numpy(), npf(), rtol=1e-3, atol=1e-4)
            tf = _best(fused, args.rounds, number)
            tc = _best(comp, args.rounds, number)
            tn = _best(npf, args.rounds, number)
            print(f"{op:<12} {str(shape):>12} {tf * 1e3:9.3f} {tc * 1e3:9.3f} {tn * 1e3:9.3f} "
                  f"{tc / tf:10.2f} {tn / tf:11.2f}")


if __name__ == "__main__":
    main()

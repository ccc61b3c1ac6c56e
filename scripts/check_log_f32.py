"""Checks the float32 log, log1p, log2 and log10 kernels (vector_math/exp_log.py, computed in
float32 arithmetic) over every float32 they take a finite result for: all positive finite values
(2**31 - 2**23 patterns, denormals included) and, for log1p, every value in (-1, 0) too. The
reference is the float64 function (libm through Numba: < 1 ulp of float64, ~2**-29 ulp of
float32); the error is |got - ref| in float32 ulps of the reference rounded to float32 (NumPy's
spacing, as tests/kernels/cpu/test_vector_math.py measures). About 15-40 s per function on 2
cores.

    PYTHONPATH=src python scripts/check_log_f32.py [--step K] [--funcs log,log2]
    PYTHONPATH=src python scripts/check_log_f32.py --fit 7      # rederive the coefficients

Prints the max error and where per function (exit status 1 if one exceeds its bound). --fit D
prints the float32 coefficients of P (degree D) with log(1 + f) = f - f^2/2 + f^3 P(f) on
[sqrt(1/2) - 1, sqrt(2) - 1], a minimax fit of the relative error of log(1 + f) (Lawson's
iteratively reweighted least squares on Chebyshev nodes, long double reference).
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from numba import njit, prange

from tensorlib.kernels.cpu.vector_math import exp_log as vm

BOUND = {"log": 1.0, "log1p": 1.0, "log2": 1.1, "log10": 1.0}   # what the tests assert


def _checker(fn, ref):
    @njit(parallel=True, error_model="numpy", nogil=True)
    def check(first, stop, step, nchunks):
        """(max error, its bit pattern) per chunk over the patterns first, first + step, ...
        below stop."""
        count = (stop - first + step - 1) // step
        worst = np.zeros(nchunks)
        where = np.zeros(nchunks, np.uint32)
        for c in prange(nchunks):
            lo = count * c // nchunks
            hi = count * (c + 1) // nchunks
            m = 0.0
            at = np.uint32(0)
            for j in range(lo, hi):
                bits = np.uint32(first + j * step)
                x = vm.bits_f32(bits)
                got = np.float64(fn(x))
                want = ref(np.float64(x))
                w32 = np.float32(want)
                if w32 == 0.0:
                    err = 0.0 if got == 0.0 else np.inf
                else:
                    # ulp of |w32|: 2**(its exponent - 23), at least the smallest denormal
                    top = vm.bits_f32(np.uint32(vm.f32_bits(abs(w32)) & np.uint32(0x7F800000)))
                    ulp = max(np.float64(top) * 2.0 ** -23, 2.0 ** -149)
                    err = abs(got - want) / ulp
                if got != got:
                    err = np.inf
                if err > m:
                    m = err
                    at = bits
            worst[c] = m
            where[c] = at
        return worst, where
    return check


FUNCS = {
    "log": (vm.log_f32, np.log, [(1, 0x7F800000)]),
    "log1p": (vm.log1p_f32, np.log1p, [(1, 0x7F800000), (0x80000001, 0xBF800000)]),
    "log2": (vm.log2_f32, np.log2, [(1, 0x7F800000)]),
    "log10": (vm.log10_f32, np.log10, [(1, 0x7F800000)]),
}


def fit(deg: int, npts: int = 6000, iters: int = 400):
    ld = np.longdouble
    a = ld(np.float32(np.sqrt(0.5))) - 1 - ld(2.0 ** -24)   # the range of f, a little wider
    b = ld(np.float32(np.sqrt(2.0))) - 1 + ld(2.0 ** -23)
    t = np.cos(np.pi * (np.arange(npts) + 0.5) / npts)[::-1].astype(ld)
    f = (a + b) / 2 + (b - a) / 2 * t
    small = np.abs(f) < ld(0.02)
    p = np.empty_like(f)                     # (log1p(f) - f + f^2/2) / f^3
    s = np.zeros(int(small.sum()), ld)
    for n in range(40, 2, -1):
        s = s * f[small] + ld((-1) ** (n + 1)) / ld(n)
    p[small] = s
    fb = f[~small]
    p[~small] = (np.log1p(fb) - fb + fb * fb / 2) / fb ** 3
    w = np.abs(f ** 3 / np.log1p(f))         # error of P -> relative error of log1p(f)
    A = np.vander(f.astype(np.float64), deg + 1, increasing=True)
    y, ww = p.astype(np.float64), w.astype(np.float64)
    u = np.full(npts, 1.0 / npts)
    for _ in range(iters):
        sw = np.sqrt(u) * ww
        c, *_ = np.linalg.lstsq(A * sw[:, None], y * sw, rcond=None)
        e = np.abs((A @ c - y) * ww)
        u = u * e
        u /= u.sum()
    c32 = c.astype(np.float32)
    err = np.abs((np.polyval(c32.astype(ld)[::-1], f) - p) * w).max()
    return c32, float(err)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--funcs", default=",".join(FUNCS))
    ap.add_argument("--fit", type=int, default=0, metavar="DEG")
    args = ap.parse_args(argv)
    if args.fit:
        c, err = fit(args.fit)
        print(f"degree {args.fit}: relative error of log1p(f) 2**{np.log2(err):.1f}")
        print("    " + ", ".join(repr(float(v)) for v in c))
        return 0
    bad = False
    for name in args.funcs.split(","):
        fn, ref, ranges = FUNCS[name]
        bad |= not (report_max(name, fn, ref, ranges, args.step) <= BOUND[name])
    return 1 if bad else 0


def report_max(name, fn, ref, ranges, step):
    """The max ulp error of float32 ``fn`` against float64 ``ref`` over the bit patterns of
    ``ranges`` ((first, stop) pairs, every ``step``-th), printed with where and how long."""
    check = _checker(fn, ref)
    t = time.perf_counter()
    worst, at, count = -1.0, np.uint32(0), 0
    for first, stop in ranges:
        m, w = check(first, stop, step, 256)
        i = int(np.argmax(m))
        count += (stop - first + step - 1) // step
        if m[i] > worst:
            worst, at = m[i], w[i]
    x = np.uint32(at).view(np.float32)
    print(f"{name}: max {worst:.4f} ulp at x={float(x)!r} over {count} float32 values "
          f"({time.perf_counter() - t:.0f} s)", flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main())

"""Fused softmax / log_softmax / layer_norm on the CPU against NumPy's best composed formula.

    PYTHONPATH=src python benchmarks/normalization_cpu.py [--rows 4096] [--cols 1024] [--repeat 20]

One run: each op once to compile / warm, then the minimum of ``--repeat`` timings of
tensorlib and of NumPy (same float32 input, row-wise along the last axis); prints both and the
ratio NumPy / tensorlib (> 1: tensorlib is faster) and checks the results agree.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import tensorlib as tl


def _np_softmax(x, buf):
    # the fastest composed form we know: one scratch buffer, in-place ufuncs
    m = x.max(axis=-1, keepdims=True)
    np.subtract(x, m, out=buf)
    np.exp(buf, out=buf)
    s = buf.sum(axis=-1, keepdims=True)
    return np.divide(buf, s, out=buf)


def _np_log_softmax(x, buf):
    m = x.max(axis=-1, keepdims=True)
    np.subtract(x, m, out=buf)
    e = np.exp(buf)
    ls = np.log(e.sum(axis=-1, keepdims=True))
    return np.subtract(buf, ls, out=buf)


def _np_layer_norm(x, buf, w, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    np.subtract(x, mean, out=buf)
    var = np.einsum("ij,ij->i", buf, buf)[:, None] / x.shape[-1]
    buf *= 1.0 / np.sqrt(var + eps)
    buf *= w
    buf += b
    return buf


def _best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    w = rng.standard_normal(args.cols).astype(np.float32)
    b = rng.standard_normal(args.cols).astype(np.float32)
    buf = np.empty_like(x)
    tx, tw, tb = tl.asarray(x), tl.asarray(w), tl.asarray(b)
    cases = [
        ("softmax", lambda: tl.softmax(tx), lambda: _np_softmax(x, buf)),
        ("log_softmax", lambda: tl.log_softmax(tx), lambda: _np_log_softmax(x, buf)),
        ("layer_norm", lambda: tl.layer_norm(tx, (args.cols,), tw, tb),
         lambda: _np_layer_norm(x, buf, w, b)),
    ]
    import numba
    nthreads = numba.get_num_threads()
    print(f"({args.rows}, {args.cols}) float32, min of {args.repeat}; ratio = numpy / tensorlib; "
          f"tensorlib on 1 and on {nthreads} threads (NumPy's ufuncs use one)")
    print(f"{'op':<12} {'numpy ms':>9} {'tl 1T ms':>9} {'ratio':>6} {f'tl {nthreads}T ms':>10} "
          f"{'ratio':>6}")
    for name, tl_fn, np_fn in cases:
        got = np.asarray(tl_fn()._to_host_numpy())
        want = np_fn()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        t_np = _best(np_fn, args.repeat)
        numba.set_num_threads(1)
        t_1 = _best(tl_fn, args.repeat)
        numba.set_num_threads(nthreads)
        t_n = _best(tl_fn, args.repeat)
        print(f"{name:<12} {t_np * 1e3:9.2f} {t_1 * 1e3:9.2f} {t_np / t_1:6.2f} "
              f"{t_n * 1e3:10.2f} {t_np / t_n:6.2f}")


if __name__ == "__main__":
    main()

"""Numba CPU kernels for the fused backward of softmax, log_softmax and layer_norm (the
gradient of the input), one pass over each row.

The device-generic side (ops/normalization_backward.py) hands over C-contiguous operands
(``nrows`` rows of ``n`` elements back to back) in the compute dtype (float32 or float64; half types are widened before), so the
kernels are plain loops that LLVM vectorizes. Per row:

* softmax:      gx = y * (g - sum(g * y))
* log_softmax:  gx = g - exp(y) * sum(g)   (float32 exp: the forward's vectorizable vexp32)
* layer_norm:   mean and rstd recomputed from x, xhat = (x - mean) * rstd, gw = g * w,
                gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)); and g * xhat, whose
                sum over rows is the weight's gradient (layer_norm_grad_xhat)

Sums are compiled with ``reassoc`` only (vector partial sums). The parallel variants split the
rows into chunks (``prange``) above PAR_GRAIN elements, as the forward kernels do.
"""
from __future__ import annotations

import types

import numpy as np
from numba import njit, prange

from ... import dtypes as _dt
from ...runtime.cpu import cores
from ...runtime.cpu.streams import launch
from .casting import kernel_array
from .normalization import _module as _forward_module

__all__ = ["softmax_backward_kernel", "log_softmax_backward_kernel",
           "layer_norm_backward_kernel", "layer_norm_grad_xhat_kernel", "PAR_GRAIN"]

PAR_GRAIN = 1 << 15   # elements: below this, threads cost more than they save
_CHUNKS_PER_THREAD = 4
_OPTS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})


@njit(inline="always", **{k: v for k, v in _OPTS.items() if k != "cache"})
def _softmax_row(out, g, y, r, n):
    s = g[r, 0] * y[r, 0] * 0
    for i in range(n):
        s += g[r, i] * y[r, i]
    for i in range(n):
        out[r, i] = y[r, i] * (g[r, i] - s)


# float32 exp: the forward kernels' branch-free vexp32 (vectorizes; Numba's np.exp is a scalar
# libm call per element), taken from their generated module; float64 keeps np.exp, as there
_vexp32 = _forward_module("softmax", _dt.float32, _dt.float32, _dt.float32).vexp32


@njit(inline="always", **{k: v for k, v in _OPTS.items() if k != "cache"})
def _log_softmax_row(out, g, y, r, n):
    s = g[r, 0] * 0
    for i in range(n):
        s += g[r, i]
    for i in range(n):
        out[r, i] = g[r, i] - np.exp(y[r, i]) * s


@njit(inline="always", **{k: v for k, v in _OPTS.items() if k != "cache"})
def _log_softmax_row32(out, g, y, r, n):
    s = g[r, 0] * 0
    for i in range(n):
        s += g[r, i]
    for i in range(n):
        out[r, i] = g[r, i] - _vexp32(y[r, i]) * s


@njit(inline="always", **{k: v for k, v in _OPTS.items() if k != "cache"})
def _row_stats(x, eps, r, n):
    """(mean, 1 / sqrt(biased variance + eps)) of row r: layer_norm's forward statistics."""
    zero = x[r, 0] * 0
    tot = zero
    for i in range(n):
        tot += x[r, i]
    mean = tot / n
    q = zero
    for i in range(n):
        d = x[r, i] - mean
        q += d * d
    return mean, 1 / np.sqrt(q / n + eps)


@njit(inline="always", **{k: v for k, v in _OPTS.items() if k != "cache"})
def _layer_norm_row(out, g, x, w, eps, r, n):
    mean, rstd = _row_stats(x, eps, r, n)
    zero = x[r, 0] * 0
    a = zero
    b = zero
    for i in range(n):
        gw = g[r, i] * w[i]
        a += gw
        b += gw * ((x[r, i] - mean) * rstd)
    a = a / n
    b = b / n
    for i in range(n):
        out[r, i] = rstd * (g[r, i] * w[i] - a - ((x[r, i] - mean) * rstd) * b)


# Module-level kernels (closures would not cache on disk), each twice: Numba's cache keys a
# function by its source location, so the parallel twin must be a function of its own.
def _softmax_rows(out, g, y, nchunk):
    nrows, n = g.shape
    for c in range(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _softmax_row(out, g, y, r, n)


def _softmax_rows_par(out, g, y, nchunk):
    nrows, n = g.shape
    for c in prange(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _softmax_row(out, g, y, r, n)


def _log_softmax_rows(out, g, y, nchunk):
    nrows, n = g.shape
    for c in range(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _log_softmax_row(out, g, y, r, n)


def _log_softmax_rows_par(out, g, y, nchunk):
    nrows, n = g.shape
    for c in prange(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _log_softmax_row(out, g, y, r, n)


def _log_softmax_rows32(out, g, y, nchunk):
    nrows, n = g.shape
    for c in range(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _log_softmax_row32(out, g, y, r, n)


def _log_softmax_rows32_par(out, g, y, nchunk):
    nrows, n = g.shape
    for c in prange(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _log_softmax_row32(out, g, y, r, n)


def _layer_norm_rows(out, g, x, w, eps, nchunk):
    nrows, n = g.shape
    for c in range(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _layer_norm_row(out, g, x, w, eps, r, n)


def _layer_norm_rows_par(out, g, x, w, eps, nchunk):
    nrows, n = g.shape
    for c in prange(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _layer_norm_row(out, g, x, w, eps, r, n)


@njit(inline="always", **{k: v for k, v in _OPTS.items() if k != "cache"})
def _grad_xhat_row(out, g, x, eps, r, n):
    mean, rstd = _row_stats(x, eps, r, n)
    for i in range(n):
        out[r, i] = g[r, i] * ((x[r, i] - mean) * rstd)


def _grad_xhat_rows(out, g, x, eps, nchunk):
    nrows, n = g.shape
    for c in range(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _grad_xhat_row(out, g, x, eps, r, n)


def _grad_xhat_rows_par(out, g, x, eps, nchunk):
    nrows, n = g.shape
    for c in prange(nchunk):
        for r in range(nrows * c // nchunk, nrows * (c + 1) // nchunk):
            _grad_xhat_row(out, g, x, eps, r, n)


def _pair(serial, parallel):
    return types.SimpleNamespace(serial=njit(**_OPTS)(serial),
                                 parallel=njit(parallel=True, **_OPTS)(parallel))


_SOFTMAX = _pair(_softmax_rows, _softmax_rows_par)
_LOG_SOFTMAX = _pair(_log_softmax_rows, _log_softmax_rows_par)
_LOG_SOFTMAX32 = _pair(_log_softmax_rows32, _log_softmax_rows32_par)
_LAYER_NORM = _pair(_layer_norm_rows, _layer_norm_rows_par)
_GRAD_XHAT = _pair(_grad_xhat_rows, _grad_xhat_rows_par)


def _rows(t, shape):
    """The (rows, n) NumPy view a kernel indexes for C-contiguous tensor ``t``."""
    a = kernel_array(t)
    return a[t._offset:t._offset + shape[0] * shape[1]].reshape(shape)


def _run(op, mod, out, tensors, extra, nrows, n):
    if nrows == 0 or n == 0:
        return
    shape = (nrows, n)
    nthreads = cores.threads()
    parallel = nthreads > 1 and nrows > 1 and nrows * n >= PAR_GRAIN
    nchunk = min(nrows, nthreads * _CHUNKS_PER_THREAD) if parallel else 1
    args = (_rows(out, shape),) + tuple(_rows(t, shape) for t in tensors) + extra
    if parallel and cores.parallel_ready(mod, args + (nchunk,), nrows * n):
        fn = mod.parallel
    else:
        fn, nchunk = mod.serial, 1
    launch(fn, op, out, tensors, *args, nchunk)


def softmax_backward_kernel(out, grad, result, nrows, n):
    """out, grad, result: C-contiguous tensors of one float dtype, ``nrows`` rows of ``n``."""
    _run("softmax_backward", _SOFTMAX, out, (grad, result), (), nrows, n)


def log_softmax_backward_kernel(out, grad, result, nrows, n):
    mod = _LOG_SOFTMAX32 if out._dtype is _dt.float32 else _LOG_SOFTMAX
    _run("log_softmax_backward", mod, out, (grad, result), (), nrows, n)


def layer_norm_backward_kernel(out, grad, x, weight, eps, nrows, n):
    """weight: a C-contiguous tensor of n elements of the rows' dtype, or None (ones)."""
    w = (kernel_array(weight)[weight._offset:weight._offset + n] if weight is not None
         else np.ones(n, out._dtype.np_dtype))
    _run("layer_norm_backward", _LAYER_NORM, out, (grad, x), (w, w.dtype.type(eps)), nrows, n)


def layer_norm_grad_xhat_kernel(out, grad, x, eps, nrows, n):
    """out = grad * (x - mean) * rstd per row (the weight gradient before its sum over rows)."""
    _run("layer_norm_grad_xhat", _GRAD_XHAT, out, (grad, x), (out._dtype.np_dtype.type(eps),),
         nrows, n)

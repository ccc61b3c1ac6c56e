"""First calls of the CPU float32 / float64 softmax, log_softmax and layer_norm
(kernels/cpu/normalization.py) while their ``serial_rows`` kernel is neither compiled in this
process nor in the disk cache.

Compiling ``serial_rows`` costs 0.5-0.8 s, the largest first call of the everyday ops. The same
bits come from NumPy steps and the module's own ``row_sum`` (a small function, ~0.1 s to
compile, or loaded from the disk cache):

* the row max is order-free (nan-ignoring, as row_max; its zero's sign cannot show: x - 0.0
  and x - -0.0 are equal for x != 0, and exp(+-0) is 1);
* float32: ``vexp32`` is written here again in NumPy float32 operations, each rounded once as
  Numba rounds it (no contraction into FMAs without fastmath); float64: the kernel's
  ``np.exp`` is the C library's ``exp`` per element (Numba without SVML), as ``math.exp`` is;
  with SVML in use nothing runs cold;
* the exps are summed by the module's compiled ``row_sum`` per row (in float64, reassociated
  as LLVM vectorized it: the very function serial_rows calls), and the result is
  exp * (1.0 / sum) (softmax) or (x - max) - log(sum) (log_softmax, libm's log as
  ``math.log``) in float64, rounded to the output dtype, as the kernel stores it;
* layer_norm: the mean is row_sum / float32-or-float64(n) and the variance the module's own
  ``row_sqdev`` per row, then ((x - mean) * rstd) * w + b in float64 with
  rstd = 1 / sqrt(var / n + eps) (eps rounded to the compute dtype first, as the kernel's).

A row holding a nan is left to the kernel: which nan payload survives two nans meeting depends
on the operand order LLVM chose. tests/kernels/cpu/test_cold_start.py holds the two to the same
bits. Only a combination's first call runs here; the second compiles the kernel
(cold_route.py's ``once`` rule: a cold call costs 12-15x the kernel's).
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ... import dtypes as _dt

__all__ = ["cold_supported", "run_cold", "rows_view", "MAX_ROWS", "MAX_F64_ELEMENTS"]

MAX_ROWS = 8192  # row_sum calls (Python-level steps) a cold call may make
MAX_F64_ELEMENTS = 1 << 20  # float64 exps by math.exp (~80 ns each) a cold call may take

_F32 = np.float32


def cold_supported(op, in_dt, acc, out_dt, nrows, n) -> bool:
    """Whether a serial_rows call of ``op`` with these dtypes and ``nrows`` rows of ``n``
    elements can run cold."""
    if (op not in ("softmax", "log_softmax", "layer_norm") or not 0 < nrows <= MAX_ROWS
            or not (in_dt is acc and acc is out_dt)):
        return False
    if acc is _dt.float32 or (acc is _dt.float64 and op == "layer_norm"):
        return True
    # float64 exps: libm's per element, here as in the kernel (not with SVML)
    return (acc is _dt.float64 and nrows * n <= MAX_F64_ELEMENTS
            and not numba.config.USING_SVML)


def rows_view(arr, meta, base):
    """The rows of 1-D kernel array ``arr`` as an (n0, n1, n) view, from serial_rows' meta
    (``base`` 3: the input's offset and row strides; 7: the output's)."""
    n0, n1, n = int(meta[0]), int(meta[1]), int(meta[2])
    off, s0, s1 = (int(v) for v in meta[base:base + 3])
    isz = arr.itemsize
    return as_strided(arr[off:], (n0, n1, n), (s0 * isz, s1 * isz, isz))


def run_cold(op, mod, meta, out, inp, w, b, eps, scratch=None):
    """serial_rows' softmax / log_softmax / layer_norm of float32 or float64 rows (contiguous
    within a row, any row strides) into ``out``; the caller checked cold_supported and that no
    input is a nan."""
    x = rows_view(inp, meta, 3)
    if op == "layer_norm":
        _layer_norm(mod, x, rows_view(out, meta, 7), w, b, eps)
        return
    m = x.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore"):  # (inf - inf: the kernel's nan too)
        d = x - m
        if x.dtype == _F32:
            e = np.ascontiguousarray(_vexp32(d))
        else:  # (d <= 0 or nan: math.exp neither overflows nor raises)
            e = np.fromiter(map(math.exp, d.ravel()), np.float64, d.size)
    e = e.reshape(-1, x.shape[-1])
    s = np.fromiter((mod.row_sum(row) for row in e), np.float64, e.shape[0])
    with np.errstate(invalid="ignore"):
        if op == "softmax":
            y = (e * (1.0 / s)[:, None]).reshape(x.shape)
        else:  # (a sum is >= 1 or nan: math.log returns a nan as it is)
            y = d - np.fromiter(map(math.log, s), np.float64, s.size).reshape(x.shape[:-1] + (1,))
    rows_view(out, meta, 7)[...] = y  # (rounded to the output dtype)


def _layer_norm(mod, x, out, w, b, eps):
    n = x.shape[-1]
    acc = x.dtype.type
    rows = np.ascontiguousarray(x).reshape(-1, n)
    mean = np.fromiter((mod.row_sum(r) for r in rows), np.float64, rows.shape[0]) / acc(n)
    var = np.fromiter((mod.row_sqdev(r, mu) for r, mu in zip(rows, mean)), np.float64,
                      rows.shape[0])
    with np.errstate(all="ignore"):  # (inf - inf, an inf variance: the kernel's nans too)
        rstd = 1.0 / np.sqrt(var / acc(n) + acc(eps))
        y = (rows - mean[:, None]) * rstd[:, None] * w[:n] + b[:n]
    out[...] = y.reshape(x.shape)  # (rounded to the output dtype)


def _vexp32(x):
    """normalization.py's vexp32, operation for operation, on a float32 array."""
    xc = np.where(x > _F32(-104.0), x, _F32(-104.0))
    xc = np.where(xc < _F32(89.0), xc, _F32(89.0))
    k = np.floor(xc * _F32(1.4426950408889634) + _F32(0.5))
    r = xc - k * _F32(0.693145751953125)
    r = r - k * _F32(1.428606765330187e-06)
    p = np.full_like(r, _F32(1.0 / 5040.0))
    for c in (1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0):
        p = p * r + _F32(c)
    ki = k.astype(np.int32)
    k1 = ki >> 1
    k2 = ki - k1
    s1 = ((k1 + 127) << 23).astype(np.uint32).view(_F32)
    s2 = ((k2 + 127) << 23).astype(np.uint32).view(_F32)
    res = p * s1 * s2
    return np.where(x == x, res, x)

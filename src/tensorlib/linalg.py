"""``tl.linalg``: the Array API 2024.12 linear-algebra extension.

Device-generic functions are composed from tensorlib ops (matmul, vecdot, tensordot, diagonal
views, reductions, pointwise): matmul, matrix_transpose, tensordot, vecdot, outer, trace,
diagonal, cross, vector_norm, matrix_norm (except ord 2 / -2 / 'nuc'), matrix_power (n >= 0).

Factorizations and solvers (cholesky, det, eigh, eigvalsh, inv, pinv, qr, slogdet, solve, svd,
svdvals, matrix_rank, and the singular-value matrix norms) are LAPACK work: they run through
``numpy.linalg`` on zero-copy NumPy views of CPU tensors and raise a RuntimeError for tensors on
any other device. Results follow NumPy's dtypes (float32 stays float32; integers compute in
float64); float16 / bfloat16 are refused (LAPACK has no half precision).

Autograd: the LAPACK functions are plain Python, not dispatcher ops, so the Autograd key never
sees them. ``tensorlib.autograd.linalg_backward`` (a higher layer) registers differentiable
versions in ``_GRAD``; a function routes there when an argument requires grad. The composed
functions are differentiable through the ops they call.
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from .dispatch.namespace import ops as tl  # the internal op namespace (filled at import)
from .runtime.cpu import cores as _cores  # (imported by the package already: no import time)

from . import dtypes as _dt
from .shape import broadcast_shapes, normalize_axes
from .tensor import Tensor

__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


# ---------------------------------------------------------------- argument checks
def _tensor(op, x, arg="x"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor, got {type(x).__name__}")


def _matrices(op, x, arg="x", square=False):
    _tensor(op, x, arg)
    if x.ndim < 2:
        raise ValueError(f"{op}(): argument '{arg}' must have at least 2 dimensions, got shape "
                         f"{x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{op}(): argument '{arg}' must be a stack of square matrices, got "
                         f"shape {x.shape}")


def _numeric(op, x, arg="x"):
    if x.dtype is _dt.bool_:
        raise TypeError(f"{op}(): argument '{arg}' must have a numeric dtype, got {x.dtype}")


def _float_result(x):
    """x as the floating dtype a norm returns: integers and bool in the default float."""
    return x.astype(_dt.default_float()) if x.dtype.kind in "biu" else x


# ---------------------------------------------------------------- LAPACK through NumPy
def _host(op, x, arg="x"):
    """A zero-copy NumPy view of CPU tensor ``x`` for numpy.linalg."""
    _tensor(op, x, arg)
    if x.device.type != "cpu":
        raise RuntimeError(f"linalg.{op}(): runs on the CPU only (LAPACK through NumPy); "
                           f"argument '{arg}' is on '{x.device}': use x.to_device('cpu')")
    if x.dtype in (_dt.float16, _dt.bfloat16):
        raise TypeError(f"linalg.{op}(): argument '{arg}' has dtype {x.dtype}, which LAPACK "
                        f"does not support; convert it first, e.g. x.astype(tl.float32)")
    from .runtime.cpu.streams import host_sync
    host_sync(x)  # queued writers on CPU streams finish before NumPy reads
    return x.numpy()


def _lapack(op, fn, *args, **kwargs):
    a = args[0]
    # (through blas_call as products are: one OpenBLAS thread for small work or beside a busy
    # process, whose core a second thread waited for: 400 x 400 inv 5.6 -> 16 ms median, p90
    # 60 ms, max 0.1 s; the team otherwise, timed for stalls)
    work = a.size * min(a.shape[-2:]) if a.ndim >= 2 else a.size
    try:
        return _cores.blas_call(lambda: fn(*args, **kwargs), (), work)
    except np.linalg.LinAlgError as e:
        # keep NumPy's exception type (a ValueError) so callers can catch it, name the op
        raise np.linalg.LinAlgError(f"linalg.{op}(): {e}") from None


def _out(a):
    return tl.asarray(np.asarray(a))


# name -> differentiable version (autograd.Function.apply), filled by autograd.linalg_backward
_GRAD: dict = {}


def _grad_fn(name, *tensors):
    """The differentiable version of ``name`` when an argument requires grad, else None."""
    for t in tensors:
        if isinstance(t, Tensor) and t.requires_grad:
            return _GRAD.get(name)
    return None


# Each LAPACK function checks its arguments, then either runs ``_<name>`` (the bare LAPACK
# call, also the forward of its differentiable version) or, when an argument requires grad,
# the differentiable version registered in _GRAD.
def _cholesky(x, upper=False):
    return _out(_lapack("cholesky", np.linalg.cholesky, _host("cholesky", x),
                        upper=bool(upper)))


def cholesky(x, /, *, upper=False):
    _matrices("cholesky", x, square=True)
    f = _grad_fn("cholesky", x)
    return f(x, bool(upper)) if f else _cholesky(x, upper)


def _det(x):
    return _out(_lapack("det", np.linalg.det, _host("det", x)))


def det(x, /):
    _matrices("det", x, square=True)
    f = _grad_fn("det", x)
    return f(x) if f else _det(x)


def _slogdet(x):
    sign, logabs = _lapack("slogdet", np.linalg.slogdet, _host("slogdet", x))
    return _out(sign), _out(logabs)


def slogdet(x, /):
    _matrices("slogdet", x, square=True)
    f = _grad_fn("slogdet", x)
    return SlogdetResult(*(f(x) if f else _slogdet(x)))


def _inv(x):
    return _out(_lapack("inv", np.linalg.inv, _host("inv", x)))


def inv(x, /):
    _matrices("inv", x, square=True)
    f = _grad_fn("inv", x)
    return f(x) if f else _inv(x)


def _solve(x1, x2):
    return _out(_lapack("solve", np.linalg.solve, _host("solve", x1, "x1"),
                        _host("solve", x2, "x2")))


def solve(x1, x2, /):
    """x1 @ result = x2; x2 is one vector (shape (M,)) or a stack of (M, K) matrices, batch
    dims broadcast (NumPy 2's rule)."""
    _matrices("solve", x1, "x1", square=True)
    _tensor("solve", x2, "x2")
    f = _grad_fn("solve", x1, x2)
    return f(x1, x2) if f else _solve(x1, x2)


def _eigh(x):
    w, v = _lapack("eigh", np.linalg.eigh, _host("eigh", x))
    return _out(w), _out(v)


def eigh(x, /):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices (LAPACK reads the lower
    triangle; gradients are those of a Hermitian input)."""
    _matrices("eigh", x, square=True)
    f = _grad_fn("eigh", x)
    return EighResult(*(f(x) if f else _eigh(x)))


def _eigvalsh(x):
    return _out(_lapack("eigvalsh", np.linalg.eigvalsh, _host("eigvalsh", x)))


def eigvalsh(x, /):
    _matrices("eigvalsh", x, square=True)
    f = _grad_fn("eigvalsh", x)
    return f(x) if f else _eigvalsh(x)


def _qr(x, mode="reduced"):
    q, r = _lapack("qr", np.linalg.qr, _host("qr", x), mode=mode)
    return _out(q), _out(r)


def qr(x, /, *, mode="reduced"):
    _matrices("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr(): argument 'mode' must be 'reduced' or 'complete', got "
                         f"{mode!r}")
    f = _grad_fn("qr", x)
    return QRResult(*(f(x, mode) if f else _qr(x, mode)))


def _svd(x, full_matrices=True):
    u, s, vh = _lapack("svd", np.linalg.svd, _host("svd", x),
                       full_matrices=bool(full_matrices))
    return _out(u), _out(s), _out(vh)


def svd(x, /, *, full_matrices=True):
    _matrices("svd", x)
    f = _grad_fn("svd", x)
    return SVDResult(*(f(x, bool(full_matrices)) if f else _svd(x, full_matrices)))


def _svdvals(x):
    return _out(_lapack("svdvals", np.linalg.svdvals, _host("svdvals", x)))


def svdvals(x, /):
    _matrices("svdvals", x)
    f = _grad_fn("svdvals", x)
    return f(x) if f else _svdvals(x)


def _rtol(op, rtol):
    if rtol is None or isinstance(rtol, (int, float)):
        return rtol
    if isinstance(rtol, Tensor):
        return _host(op, rtol, "rtol")
    raise TypeError(f"linalg.{op}(): argument 'rtol' must be a float, a Tensor or None, got "
                    f"{type(rtol).__name__}")


def _pinv(x, rtol=None):
    return _out(_lapack("pinv", np.linalg.pinv, _host("pinv", x), rtol=_rtol("pinv", rtol)))


def pinv(x, /, *, rtol=None):
    # rtol=None: max(M, N) * eps of x's dtype (the standard's default, NumPy 2's too)
    _matrices("pinv", x)
    _rtol("pinv", rtol)
    f = _grad_fn("pinv", x)
    return f(x, rtol) if f else _pinv(x, rtol)


def matrix_rank(x, /, *, rtol=None):
    # an integer result: nothing to differentiate
    _matrices("matrix_rank", x)
    return _out(_lapack("matrix_rank", np.linalg.matrix_rank, _host("matrix_rank", x),
                        rtol=_rtol("matrix_rank", rtol)))


# ---------------------------------------------------------------- from tensorlib ops
def matmul(x1, x2, /):
    return tl.matmul(x1, x2)


def matrix_transpose(x, /):
    return tl.matrix_transpose(x)


def vecdot(x1, x2, /, *, axis=-1):
    return tl.vecdot(x1, x2, axis=axis)


def tensordot(x1, x2, /, *, axes=2):
    """``axes``: N (the last N axes of x1 with the first N of x2) or a pair of axis sequences.
    Dispatched directly: the generated binding's int[] cannot carry a pair of sequences."""
    from .dispatch.dispatcher import get_op
    _tensor("tensordot", x1, "x1")
    _tensor("tensordot", x2, "x2")
    if isinstance(axes, bool) or not isinstance(axes, (int, list, tuple)):
        try:
            axes = operator.index(axes)
        except TypeError:
            raise TypeError(f"tensordot(): argument 'axes' must be an int or a pair of axis "
                            f"sequences, got {type(axes).__name__} ({axes!r:.60})") from None
    return get_op("tensordot").call(x1, x2, axes)


def diagonal(x, /, *, offset=0):
    """The diagonals of the last two axes (a view), ``offset`` above (+) / below (-) the main."""
    _matrices("diagonal", x)
    return tl.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the ``offset`` diagonal of each matrix; dtype rules as ``sum``."""
    _matrices("trace", x)
    return tl.sum(tl.diagonal(x, offset, -2, -1), axis=-1, dtype=dtype)


def outer(x1, x2, /):
    for arg, v in (("x1", x1), ("x2", x2)):
        _tensor("outer", v, arg)
        if v.ndim != 1:
            raise ValueError(f"outer(): argument '{arg}' must be 1-D, got shape {v.shape}")
        _numeric("outer", v, arg)
    return tl.multiply(tl.reshape(x1, (-1, 1)), tl.reshape(x2, (1, -1)))


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along ``axis`` (of the broadcast shape; negative counts from
    the end of each input, as the standard has it)."""
    op = "cross"
    _tensor(op, x1, "x1")
    _tensor(op, x2, "x2")
    _numeric(op, x1, "x1")
    _numeric(op, x2, "x2")
    # broadcast_to per input (single-output views: each records its own backward)
    shape = broadcast_shapes(x1.shape, x2.shape, op=op)
    a, b = tl.broadcast_to(x1, shape), tl.broadcast_to(x2, shape)
    nd = a.ndim
    if not -nd <= axis < nd or nd == 0:
        raise IndexError(f"{op}(): argument 'axis' = {axis} is out of range for shapes "
                         f"{x1.shape} and {x2.shape}")
    ax = axis % nd
    if a.shape[ax] != 3:
        raise ValueError(f"{op}(): axis {axis} must have size 3 in both inputs, got shapes "
                         f"{x1.shape} and {x2.shape}")
    a0, a1, a2 = (tl.select(a, ax, i) for i in range(3))
    b0, b1, b2 = (tl.select(b, ax, i) for i in range(3))
    parts = [tl.subtract(tl.multiply(a1, b2), tl.multiply(a2, b1)),
             tl.subtract(tl.multiply(a2, b0), tl.multiply(a0, b2)),
             tl.subtract(tl.multiply(a0, b1), tl.multiply(a1, b0))]
    return tl.stack(parts, axis=ax)


def _norm_axes(op, axis, ndim):
    if axis is None:
        return None
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return normalize_axes([operator.index(a) for a in axes], ndim, op)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """The p-norm of ``x`` over ``axis`` (None: all elements): ord = any nonzero real (p),
    0 (count of nonzero elements), inf / -inf (largest / smallest magnitude)."""
    op = "vector_norm"
    _tensor(op, x)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{op}(): argument 'ord' must be a real number, got {ord!r}")
    axes = _norm_axes(op, axis, x.ndim)
    x = _float_result(x)
    if ord == 2 and (axes is None or len(axes) == x.ndim) and x.dtype in (_dt.float32,
                                                                         _dt.float64):
        # the whole of a real tensor: sqrt(x . x), BLAS's dot as NumPy's norm (one pass,
        # no temporaries: 1e5 float64 ~45 -> ~20 us)
        flat = tl.reshape(x, (-1,))
        r = tl.sqrt(tl.matmul(flat, flat))
        return tl.reshape(r, (1,) * x.ndim) if keepdims else r
    mag = tl.abs(x)  # complex -> its real magnitude dtype
    kw = {"axis": axes, "keepdims": keepdims}
    if ord == math.inf:
        return tl.max(mag, **kw)
    if ord == -math.inf:
        return tl.min(mag, **kw)
    if ord == 0:
        return tl.sum(tl.not_equal(mag, 0).astype(mag.dtype), **kw)
    if ord == 1:
        return tl.sum(mag, **kw)
    if ord == 2:
        return tl.sqrt(tl.sum(tl.multiply(mag, mag), **kw))
    return tl.pow(tl.sum(tl.pow(mag, ord), **kw), 1.0 / ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """Norm of each matrix over the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf."""
    op = "matrix_norm"
    _matrices(op, x)
    if isinstance(ord, bool) or ord not in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        raise ValueError(f"{op}(): argument 'ord' must be 'fro', 'nuc', 1, -1, 2, -2, inf or "
                         f"-inf, got {ord!r}")
    if ord in (2, -2, "nuc"):
        s = svdvals(x)  # CPU only
        r = tl.max(s, axis=-1) if ord == 2 else tl.min(s, axis=-1) if ord == -2 else \
            tl.sum(s, axis=-1)
    else:
        mag = tl.abs(_float_result(x))
        if ord == "fro":
            r = tl.sqrt(tl.sum(tl.multiply(mag, mag), axis=(-2, -1)))
        else:
            # 1: largest column sum (sum over rows, axis -2); inf: largest row sum
            sums = tl.sum(mag, axis=-2 if ord in (1, -1) else -1)
            r = tl.max(sums, axis=-1) if ord > 0 else tl.min(sums, axis=-1)
    return tl.reshape(r, r.shape + (1, 1)) if keepdims else r


def matrix_power(x, n, /):
    """x raised to the integer power n by repeated squaring with matmul; n < 0 inverts first
    (CPU only), n == 0 gives identity matrices of x's dtype."""
    op = "matrix_power"
    _matrices(op, x, square=True)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{op}(): argument 'n' must be an int, got {type(n).__name__}") \
            from None
    m = x.shape[-1]
    if n == 0:
        eye = tl.eye(m, dtype=x.dtype, device=x.device)
        return tl.broadcast_to(eye, x.shape).contiguous() if x.ndim > 2 else eye
    base = inv(x) if n < 0 else x
    n = abs(n)
    result = None
    while True:
        if n & 1:
            result = base if result is None else tl.matmul(result, base)
        n >>= 1
        if not n:
            break
        base = tl.matmul(base, base)
    return result.clone() if result is x else result

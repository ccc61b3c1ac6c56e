"""Fused row-wise normalizations, device-generic: softmax, log_softmax (along one axis) and
layer_norm (over the trailing ``normalized_shape`` dims), forward only.

Each op turns its operands into *rows*: ``n`` elements with a column stride, the rows indexed
by at most two outer dims with their own strides in the input and the output
(:class:`RowLayout`). The axis is moved last by stride arithmetic only; a copy is made only
when the outer dims of the input cannot be folded into two (then it is copied into the
output's layout, which always folds). The ``softmax`` / ``log_softmax`` / ``layer_norm``
DispatchStubs run one row per work item.

Semantics (PyTorch's, with NumPy's composed formulas as the value oracle):

* Floating inputs only. Integer / bool inputs raise TypeError unless ``dtype=`` names a
  floating dtype (PyTorch has no integer softmax kernel either; with ``dtype`` it converts
  the input first). Complex is rejected.
* float16 / bfloat16 compute in float32 and round once on store; the result has the input's
  dtype, or ``dtype`` when given (the input is converted to the compute dtype in the kernel).
* softmax is ``exp(x - max) / sum(exp(x - max))``, log_softmax ``x - max - log(sum(...))``:
  a row holding nan or +inf, or only -inf, gives nan everywhere, as the composed formula does.
* A 0-d input is one row of one element (softmax gives 1.0, log_softmax 0.0, as PyTorch).
* layer_norm: ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased variance;
  weight / bias must have exactly ``normalized_shape``; the result is C-contiguous.
"""
from __future__ import annotations

import math
from collections import namedtuple

from .. import dtypes as _dt
from ..dispatch.stub import get_stub
from ..allocation import empty, empty_strided, empty_strided_like_order
from ..storage import Storage
from ..tensor import Tensor
from .views import normalize_axis

__all__ = ["softmax", "log_softmax", "layer_norm", "RowLayout", "compute_dtype_for"]

_HALF = (_dt.float16, _dt.bfloat16)

RowLayout = namedtuple("RowLayout", ["n0", "n1", "n", "x_offset", "x_s0", "x_s1", "x_col",
                                     "out_offset", "out_s0", "out_s1", "out_col"])
RowLayout.__doc__ = """Rows of ``n`` elements: row ``r = i0 * n1 + i1`` starts at element
``x_offset + i0 * x_s0 + i1 * x_s1`` of the input's storage (``out_*`` likewise for the
output); consecutive elements of a row are ``x_col`` / ``out_col`` apart. Offsets and strides
are in elements of each tensor's dtype and may be negative (strides) or zero (broadcast)."""


def compute_dtype_for(dtype):
    """Half types compute in float32; float32 / float64 in themselves."""
    return _dt.float32 if dtype in _HALF else dtype


def _fold(shape, xs, os):
    """Outer dims as (size, x stride, out stride), size-1 dims dropped, ordered by the output's
    strides (outermost first) and merged where both tensors step evenly across them."""
    dims = sorted(((s, a, b) for s, a, b in zip(shape, xs, os) if s != 1),
                  key=lambda d: -abs(d[2]))
    merged = []
    for s, a, b in dims:
        if merged:
            ps, pa, pb = merged[-1]
            if pa == a * s and pb == b * s:
                merged[-1] = (ps * s, a, b)
                continue
        merged.append((s, a, b))
    return merged


def _layout(outer, x, x_outer, x_col, out, out_outer, out_col, n):
    """RowLayout, or None when the outer dims do not fold into two."""
    dims = _fold(outer, x_outer, out_outer)
    if len(dims) > 2:
        return None
    dims = [(1, 0, 0)] * (2 - len(dims)) + dims
    (n0, xs0, os0), (n1, xs1, os1) = dims
    return RowLayout(n0, n1, n, x._offset, xs0, xs1, x_col, out._offset, os0, os1, out_col)


def _check_device(op, arg, t, x):
    if t.device != x.device:
        raise RuntimeError(f"{op}(): argument '{arg}' is on '{t.device}', but 'x' is on "
                           f"'{x.device}'")


# ---------------------------------------------------------------- softmax, log_softmax
def _softmax_dtypes(op, x, dtype):
    """(result dtype, compute dtype)."""
    if dtype is not None:
        if dtype.kind != "f":
            raise TypeError(f"{op}(): argument 'dtype' = {dtype} must be a floating-point "
                            f"dtype")
        if x.dtype.kind == "c":
            raise TypeError(f"{op}(): argument 'x' has dtype {x.dtype}; complex inputs are "
                            f"not supported")
        return dtype, compute_dtype_for(dtype)
    if x.dtype.kind != "f":
        raise TypeError(f"{op}(): argument 'x' has dtype {x.dtype}, but {op} needs a "
                        f"floating-point input (or pass dtype= a floating dtype, as PyTorch "
                        f"requires)")
    return x.dtype, compute_dtype_for(x.dtype)


# Small-call plans: per (op, x's dtype / backend / shape / strides, axis, dtype) the result
# layout and RowLayout the first full call computed without copying x (the result's offset is
# always 0); later calls allocate the result and run the stub, the RowLayout moved to their
# x's offset where it differs (a sliding window's views share one plan). Only what the full
# path accepted is stored, so it raises every error.
_plans: dict = {}
_MAX_PLANS = 4096
_new_tuple = tuple.__new__


def _softmax_like(op, x, axis, dtype):
    if type(x) is Tensor:
        key = (op, x._dtype, x._ks, x._shape, x._strides, axis, dtype)
        try:
            plan = _plans.get(key)
        except TypeError:  # an unhashable axis: the full path says what is wrong with it
            plan = key = None
        if plan is not None:
            nbytes, device, strides, res_dt, rows, acc, x_from = plan
            if x._offset + x_from != rows.x_offset:  # (_replace costs ~4x this)
                rows = _new_tuple(RowLayout, rows[:3] + (x._offset + x_from,) + rows[4:])
            out = Tensor._make(Storage.allocate(nbytes, device), x._shape, strides, 0, res_dt)
            get_stub(op).kernel_for(device.type, res_dt)(out, x, rows, acc)
            return out
        return _softmax_full(op, x, axis, dtype, key)
    return _softmax_full(op, x, axis, dtype, None)


def _softmax_full(op, x, axis, dtype, key):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'x' must be a Tensor, got {type(x).__name__}")
    res_dt, acc = _softmax_dtypes(op, x, dtype)
    ax = normalize_axis(axis, x.ndim, op)
    if x.ndim == 0:
        # one row of one element (PyTorch: softmax of a 0-d tensor is 1.0)
        out = empty((), dtype=res_dt, device=x.device)
        rows = RowLayout(1, 1, 1, x._offset, 0, 0, 1, out._offset, 0, 0, 1)
        get_stub(op).kernel_for(x.device.type, res_dt)(out, x, rows, acc)
        return out
    out = empty_strided_like_order(x.shape, res_dt, x.device, x)
    if out._numel == 0:
        return out
    outer = x.shape[:ax] + x.shape[ax + 1:]

    def strides_of(t):
        return t._strides[:ax] + t._strides[ax + 1:], t._strides[ax]

    (xo, xc), (oo, oc) = strides_of(x), strides_of(out)
    rows = _layout(outer, x, xo, xc, out, oo, oc, x.shape[ax])
    if rows is None:
        # outer dims that do not fold: copy x into the output's (dense) layout, which folds
        xd = empty_strided(x.shape, out._strides, x.dtype, x.device)
        xd.copy_(x)
        (xo, xc) = strides_of(xd)
        rows = _layout(outer, xd, xo, xc, out, oo, oc, x.shape[ax])
        x = xd
        key = None  # (a copy of x each call: no plan)
    get_stub(op).kernel_for(x.device.type, res_dt)(out, x, rows, acc)
    if key is not None and out._offset == 0:
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        st = out._storage
        _plans[key] = (st.nbytes, st.device, out._strides, res_dt, rows, acc,
                       rows.x_offset - x._offset)
    return out


def softmax(x, axis=-1, dtype=None):
    """exp(x - max) / sum(exp(x - max)) along ``axis``, fused (one pass of rows)."""
    return _softmax_like("softmax", x, axis, dtype)


def log_softmax(x, axis=-1, dtype=None):
    """x - max - log(sum(exp(x - max))) along ``axis``, fused."""
    return _softmax_like("log_softmax", x, axis, dtype)


# ---------------------------------------------------------------- layer_norm
def _trailing_col(shape, strides):
    """The single element stride that walks the (C-order) trailing dims ``shape``, or None
    when their strides do not allow one."""
    dims = [(s, st) for s, st in zip(shape, strides) if s != 1]
    if not dims:
        return 1
    for (s0, st0), (s1, st1) in zip(dims, dims[1:]):
        if st0 != st1 * s1:
            return None
    return dims[-1][1]


def _affine(op, arg, t, x, normalized_shape, acc):
    """weight / bias as a contiguous 1-D tensor of the compute dtype (or None)."""
    if t is None:
        return None
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor or None, got "
                        f"{type(t).__name__}")
    if t.shape != normalized_shape:
        raise ValueError(f"{op}(): argument '{arg}' has shape {t.shape}, but "
                         f"normalized_shape is {normalized_shape}")
    if t.dtype.kind != "f":
        raise TypeError(f"{op}(): argument '{arg}' has dtype {t.dtype}; a floating-point "
                        f"dtype is required")
    _check_device(op, arg, t, x)
    flat = t.astype(acc, copy=False).contiguous()
    return flat.reshape((math.prod(normalized_shape),))


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing ``normalized_shape``
    dims (biased variance), fused; forward only."""
    op = "layer_norm"
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'x' must be a Tensor, got {type(x).__name__}")
    ns = tuple(int(s) for s in normalized_shape)
    k = len(ns)
    if k == 0:
        raise ValueError(f"{op}(): argument 'normalized_shape' = {ns} must have at least one "
                         f"dimension")
    if k > x.ndim or x.shape[x.ndim - k:] != ns:
        raise ValueError(f"{op}(): argument 'normalized_shape' = {ns} does not match the "
                         f"trailing dimensions of 'x' of shape {x.shape}")
    if x.dtype.kind != "f":
        raise TypeError(f"{op}(): argument 'x' has dtype {x.dtype}, but {op} needs a "
                        f"floating-point input")
    acc = compute_dtype_for(x.dtype)
    w = _affine(op, "weight", weight, x, ns, acc)
    b = _affine(op, "bias", bias, x, ns, acc)
    out = empty(x.shape, dtype=x.dtype, device=x.device)
    if out._numel == 0:
        return out
    n = math.prod(ns)
    outer = x.shape[:x.ndim - k]
    col = _trailing_col(ns, x._strides[x.ndim - k:])
    rows = None
    if col is not None:
        rows = _layout(outer, x, x._strides[:x.ndim - k], col, out,
                       out._strides[:x.ndim - k], 1, n)
    if rows is None:
        x = x.contiguous()
        rows = _layout(outer, x, x._strides[:x.ndim - k], 1, out,
                       out._strides[:x.ndim - k], 1, n)
    get_stub(op).kernel_for(x.device.type, x.dtype)(out, x, rows, acc, w, b, float(eps))
    return out

"""Reductions and scans: device-generic meta (axes, dtypes, output) and impl (DispatchStubs).

Each public op is a structured kernel ``fn(*schema_args, out)`` registered from ops.yaml. The
meta part builds ``TensorIterator.reduce`` (or, for scans, an iterator over the dims other
than the scan axis); the device kernel behind ``get_stub(name)`` does the loops.
"""
from __future__ import annotations

import math
import numbers

from .. import dtypes as _dt
from ..dispatch.namespace import ops as _ops
from ..allocation import empty_strided_like_order
from ..iterator import TensorIterator, has_internal_overlap, memory_overlap
from ..shape import view_strides
from ..dispatch.stub import UnsupportedKernelError, get_stub
from ..tensor import Tensor
from .copy import contiguous as _contiguous
from .views import normalize_axis, narrow, reshape, select

__all__ = ["sum", "prod", "mean", "max", "min", "argmax", "argmin", "var", "std", "any", "all",
           "count_nonzero", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod"]

_HALF = (_dt.float16, _dt.bfloat16)


def _stub(name, it):
    return get_stub(name).kernel_for(it.device.type, it.common_dtype)


def _check_tensor(op, x):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'x' must be a Tensor, got {type(x).__name__}")


def _default_sum_dtype(dtype):
    """NumPy / Array API: bool and signed ints sum in int64, unsigned in uint64."""
    if dtype.kind in "bi":
        return _dt.int64
    if dtype.kind == "u":
        return _dt.uint64
    return dtype


def _accumulator(dtype):
    # Half types accumulate in float32; a bool result (dtype=bool) counts in int64, as adding
    # and multiplying bools is logical or / and.
    if dtype in _HALF:
        return _dt.float32
    if dtype is _dt.bool_:
        return _dt.int64
    return dtype


def _check_dtype_arg(op, x, dtype):
    if dtype is not None and x.dtype.kind == "c" and dtype.kind != "c":
        raise TypeError(f"{op}(): argument 'dtype' = {dtype} would discard the imaginary part "
                        f"of the {x.dtype} input")


def _fill_or_run(it, name, empty_value, *args):
    """Runs the stub unless there is nothing to compute; an empty reduction gives
    ``empty_value`` (the op's identity) everywhere."""
    res = it.result
    if res._numel == 0:
        return res
    if it.reduced_numel == 0:
        return res.fill_(empty_value)
    _stub(name, it)(it, *args)
    return res


def _no_empty(op, it):
    if it.reduced_numel == 0:
        raise ValueError(f"{op}(): the reduction over axis {_axis_text(it)} of a tensor of shape "
                         f"{it.shape} is empty and {op} has no identity")


def _axis_text(it):
    return it.axes[0] if len(it.axes) == 1 else it.axes


def _real_only(op, x):
    if x.dtype.kind == "c":
        raise TypeError(f"{op}(): argument 'x' has dtype {x.dtype}, but complex numbers are "
                        f"not ordered")


# ---------------------------------------------------------------- plans
# Small-call fast path: per (op, input dtype, backend, shape, strides, axis, keepdims, dtype)
# the device kernel may hand back a plan from the first full-path call (its ``capture``): the
# kernel and loop metadata that call used, which later calls with the same key run directly,
# with their input's offset (a sliding window's views, ``x[i].sum()`` over i, share one plan).
# Everything the full path checks is a function of the key, so a key that raised once never
# gets a plan; a plan declines (returns None) whatever it cannot serve.
_plans: dict = {}
_MAX_PLANS = 4096


def _plan_key(op, x, axis, keepdims, variant):
    """``variant``: the call's other arguments that shape its result (dtype=, var / std's
    correction), hashable."""
    if type(x) is not Tensor or not (axis is None or type(axis) in (int, tuple)):
        return None
    return (op, x._dtype, x._ks, x._shape, x._strides, axis, keepdims, variant)


def _planned(key, x, full, *args):
    """Runs ``full(*args)`` (the full path) and tries to make a plan of it for ``key``."""
    try:
        kern = get_stub(key[0]).kernel_for(x._storage.device.type)  # (loads the backend)
    except UnsupportedKernelError:
        kern = None
    capture = getattr(kern, "capture", None)
    if capture is None:
        res = full(*args)
        run = None  # this backend makes no plans
    else:
        with capture() as c:
            res = full(*args)
        run = c.runner(x, res)
        if run is False:
            return res  # not now (e.g. a user CPU stream is current): no entry yet
    if len(_plans) >= _MAX_PLANS:
        _plans.clear()
    _plans[key] = run
    return res


def _fast(op, x, axis, keepdims, variant, full, *args):
    key = _plan_key(op, x, axis, keepdims, variant)
    if key is None:
        return full(*args)
    run = _plans.get(key)
    if run is not None:
        res = run(x)
        if res is not None:
            return res
    elif key not in _plans:
        return _planned(key, x, full, *args)
    return full(*args)


# ---------------------------------------------------------------- sum, prod
def _sum_prod(op, x, axis, keepdims, dtype, out, identity):
    _check_tensor(op, x)
    _check_dtype_arg(op, x, dtype)
    res = dtype if dtype is not None else _default_sum_dtype(x.dtype)
    it = TensorIterator.reduce(op, x, axis, keepdims, out, out_dtype=res,
                               compute_dtype=_accumulator(res))
    return _fill_or_run(it, op, identity)


def sum(x, axis=None, keepdims=False, dtype=None, out=None):  # noqa: A001
    if out is None:
        return _fast("sum", x, axis, keepdims, dtype, _sum_prod, "sum", x, axis, keepdims,
                     dtype, None, 0)
    return _sum_prod("sum", x, axis, keepdims, dtype, out, 0)


def prod(x, axis=None, keepdims=False, dtype=None, out=None):
    if out is None:
        return _fast("prod", x, axis, keepdims, dtype, _sum_prod, "prod", x, axis, keepdims,
                     dtype, None, 1)
    return _sum_prod("prod", x, axis, keepdims, dtype, out, 1)


# ---------------------------------------------------------------- count_nonzero
def count_nonzero(x, axis=None, keepdims=False):
    """The number of nonzero elements (a nan counts, -0.0 does not), int64: one pass where the
    device has the ``count_nonzero`` kernel, else not_equal then a sum (a bool mask: its
    sum)."""
    _check_tensor("count_nonzero", x)
    if x.dtype is _dt.bool_:
        return sum(x, axis, keepdims, dtype=_dt.default_int())
    return _fast("count_nonzero", x, axis, keepdims, None, _count_nonzero, x, axis, keepdims)


def _count_nonzero(x, axis, keepdims):
    try:
        get_stub("count_nonzero").kernel_for(x.device.type)
    except UnsupportedKernelError:  # (two steps; this layout gets no plan, so it comes here)
        return sum(_ops.not_equal(x, 0), axis, keepdims, dtype=_dt.default_int())
    it = TensorIterator.reduce("count_nonzero", x, axis, keepdims, None,
                               out_dtype=_dt.default_int(), compute_dtype=_dt.int64)
    return _fill_or_run(it, "count_nonzero", 0)


# ---------------------------------------------------------------- mean
def _mean_dtypes(x):
    """(result dtype, compute dtype): integers and bool give the default float, computed in
    float64 so large integers keep their precision until the final rounding (as NumPy's)."""
    if x.dtype.kind in "biu":
        return _dt.default_float(), _dt.float64
    return x.dtype, _accumulator(x.dtype)


def _nan_of(dtype):
    return complex(math.nan, math.nan) if dtype.kind == "c" else math.nan


def mean(x, axis=None, keepdims=False, out=None):
    if out is None:
        return _fast("mean", x, axis, keepdims, None, _mean, x, axis, keepdims, None)
    return _mean(x, axis, keepdims, out)


def _mean(x, axis, keepdims, out):
    _check_tensor("mean", x)
    res, acc = _mean_dtypes(x)
    it = TensorIterator.reduce("mean", x, axis, keepdims, out, out_dtype=res, compute_dtype=acc)
    return _fill_or_run(it, "mean", _nan_of(res))


# ---------------------------------------------------------------- max, min
def _minmax(op, x, axis, keepdims, out):
    _check_tensor(op, x)
    _real_only(op, x)
    acc = _dt.uint8 if x.dtype is _dt.bool_ else _accumulator(x.dtype)
    it = TensorIterator.reduce(op, x, axis, keepdims, out, out_dtype=x.dtype, compute_dtype=acc)
    _no_empty(op, it)
    return _fill_or_run(it, op, None)


def max(x, axis=None, keepdims=False, out=None):  # noqa: A001
    if out is None:
        return _fast("max", x, axis, keepdims, None, _minmax, "max", x, axis, keepdims, None)
    return _minmax("max", x, axis, keepdims, out)


def min(x, axis=None, keepdims=False, out=None):  # noqa: A001
    if out is None:
        return _fast("min", x, axis, keepdims, None, _minmax, "min", x, axis, keepdims, None)
    return _minmax("min", x, axis, keepdims, out)


# ---------------------------------------------------------------- argmax, argmin
def _arg(op, x, axis, keepdims, out):
    _check_tensor(op, x)
    _real_only(op, x)
    acc = _dt.uint8 if x.dtype is _dt.bool_ else _accumulator(x.dtype)
    if axis is None:
        # The answer is a flat (C-order) index, so reduce the flattened tensor.
        shape = (1,) * x.ndim if keepdims else ()
        if out is not None and isinstance(out, Tensor) and out.shape != shape:
            raise ValueError(f"{op}(): argument 'out' has shape {out.shape}, but the result "
                             f"shape is {shape}")
        flat_out = reshape(out, ()) if out is not None else None
        it = TensorIterator.reduce(op, reshape(x, (-1,)), 0, False, flat_out,
                                   out_dtype=_dt.default_index(), compute_dtype=acc)
        _no_empty(op, it)
        _fill_or_run(it, op, None)
        return out if out is not None else reshape(it.result, shape)
    it = TensorIterator.reduce(op, x, axis, keepdims, out, out_dtype=_dt.default_index(),
                               compute_dtype=acc)
    _no_empty(op, it)
    return _fill_or_run(it, op, None)


def _flat_source(x, axis):
    """``x`` for argmax / argmin: without an axis the answer is a flat C-order index, which
    the full path reads from x flattened, a copy where no view flattens it; taken here, the
    copy's layout has a small-call plan (x's had none: (100, 10) float32 x.T.argmax() ran the
    full path, 91-102 us a call). A view that flattens (x[::2], x2[:, ::2]) keeps its own."""
    if (axis is None and type(x) is Tensor and len(x._shape) > 1
            and not (x._contiguous or x.is_contiguous())
            and view_strides(x._shape, x._strides, (x._numel,)) is None):
        return _contiguous(x)
    return x


def argmax(x, axis=None, keepdims=False, out=None):
    if out is None:
        x = _flat_source(x, axis)
        return _fast("argmax", x, axis, keepdims, None, _arg, "argmax", x, axis, keepdims, None)
    return _arg("argmax", x, axis, keepdims, out)


def argmin(x, axis=None, keepdims=False, out=None):
    if out is None:
        x = _flat_source(x, axis)
        return _fast("argmin", x, axis, keepdims, None, _arg, "argmin", x, axis, keepdims, None)
    return _arg("argmin", x, axis, keepdims, out)


# ---------------------------------------------------------------- var, std
def _correction(op, correction):
    if type(correction) in (float, int) and correction >= 0:  # (nan fails the test)
        return float(correction)  # (before the numbers.Real check, an ABC's: ~0.4 us)
    if isinstance(correction, bool) or not isinstance(correction, numbers.Real):
        raise ValueError(f"{op}(): argument 'correction' must be a non-negative real number, "
                         f"got {correction!r}")
    if not correction >= 0:  # also rejects nan
        raise ValueError(f"{op}(): argument 'correction' must be a non-negative real number, "
                         f"got {correction!r}")
    return float(correction)


def _var_std(op, x, axis, keepdims, correction, out):
    _check_tensor(op, x)
    corr = _correction(op, correction)
    if out is None:  # (the plan key carries the correction: it sets the divisor)
        return _fast(op, x, axis, keepdims, corr, _var_std_full, op, x, axis, keepdims, corr,
                     None)
    return _var_std_full(op, x, axis, keepdims, corr, out)


def _var_std_full(op, x, axis, keepdims, corr, out):
    mean_res, acc = _mean_dtypes(x)
    res = _dt.real_for(mean_res)
    # Pass 1: the mean, kept in the compute dtype with the reduced dims as size 1.
    m_it = TensorIterator.reduce(op, x, axis, True, None, out_dtype=acc, compute_dtype=acc)
    # Pass 2: sum of squared deviations from it (two passes: stable for large offsets).
    it = TensorIterator.reduce(op, x, axis, keepdims, out, out_dtype=res,
                               compute_dtype=_dt.real_for(acc), aux=(m_it.result,))
    if it.result._numel == 0:
        return it.result
    n = it.reduced_numel
    if n == 0:
        return it.result.fill_(math.nan)
    _stub("mean", m_it)(m_it)
    # NumPy's ddof rule: divide by max(n - correction, 0), so correction >= n gives inf / nan.
    div = float(n) - corr if n > corr else 0.0
    _stub(op, it)(it, div)
    return it.result


def var(x, axis=None, keepdims=False, correction=0.0, out=None):
    return _var_std("var", x, axis, keepdims, correction, out)


def std(x, axis=None, keepdims=False, correction=0.0, out=None):
    return _var_std("std", x, axis, keepdims, correction, out)


# ---------------------------------------------------------------- any, all
def any(x, axis=None, keepdims=False, out=None):  # noqa: A001
    if out is None:
        return _fast("any", x, axis, keepdims, None, _any, x, axis, keepdims, None)
    return _any(x, axis, keepdims, out)


def _any(x, axis, keepdims, out):
    _check_tensor("any", x)
    it = TensorIterator.reduce("any", x, axis, keepdims, out, out_dtype=_dt.bool_,
                               compute_dtype=_dt.bool_)
    return _fill_or_run(it, "any", False)


def all(x, axis=None, keepdims=False, out=None):  # noqa: A001
    if out is None:
        return _fast("all", x, axis, keepdims, None, _all, x, axis, keepdims, None)
    return _all(x, axis, keepdims, out)


def _all(x, axis, keepdims, out):
    _check_tensor("all", x)
    it = TensorIterator.reduce("all", x, axis, keepdims, out, out_dtype=_dt.bool_,
                               compute_dtype=_dt.bool_)
    return _fill_or_run(it, "all", True)


# ---------------------------------------------------------------- scans
def _scan(op, stub, x, axis, dtype, out, include_initial, identity):
    """Scan of x along ``axis`` (already normalized) into out (allocated when None)."""
    _check_dtype_arg(op, x, dtype)
    res = dtype if dtype is not None else _default_sum_dtype(x.dtype)
    shape = list(x.shape)
    n = shape[axis]
    shape[axis] += int(include_initial)
    shape = tuple(shape)
    if out is None:
        out = empty_strided_like_order(shape, res, x.device, x)
    else:
        _check_scan_output(op, out, shape, res)
        if out.device != x.device:
            raise RuntimeError(f"{op}(): expected the output on '{x.device}', got "
                               f"'{out.device}'")
        if memory_overlap(out, x) != "none":
            x = x.clone()  # out is written while x is still being read
    target = out
    if include_initial:
        narrow(out, axis, 0, 1).fill_(identity)
        target = narrow(out, axis, 1, n)
    if target._numel == 0:
        return out
    it = TensorIterator.build(op, [select(target, axis, 0)], [select(x, axis, 0)],
                              promote_inputs=False, enforce_safe_cast=False,
                              common_dtype=res, compute_dtype=_accumulator(res))
    get_stub(stub).kernel_for(it.device.type, res)(it, n, target._strides[axis],
                                                   x._strides[axis])
    return out


def _check_scan_output(op, out, shape, dtype):
    if out.shape != shape:
        raise ValueError(f"{op}(): argument 'out' has shape {out.shape}, but the result shape "
                         f"is {shape}")
    if out.dtype is not dtype and not _dt.can_cast(dtype, out.dtype, "same_kind"):
        raise TypeError(f"{op}(): result type {dtype} can't be cast to the dtype {out.dtype} of "
                        f"argument 'out'")
    if has_internal_overlap(out):
        raise RuntimeError(f"{op}(): argument 'out' (shape {out.shape}, strides "
                           f"{out.stride()}) has elements that share memory; write to a "
                           f"contiguous copy instead")


def _torch_scan(op, x, axis, dtype, out, identity):
    _check_tensor(op, x)
    if axis is None:
        # Flattened, as NumPy's cumsum(axis=None).
        if out is not None and out.ndim != 1:
            raise ValueError(f"{op}(): argument 'out' has shape {out.shape}, but the result "
                             f"shape is {(x.size,)}")
        return _scan(op, op, reshape(x, (-1,)), 0, dtype, out, False, identity)
    ax = normalize_axis(axis, x.ndim, op)
    if x.ndim == 0:
        res = _scan(op, op, reshape(x, (1,)), 0, dtype,
                    None if out is None else _as_1d(op, out), False, identity)
        return out if out is not None else reshape(res, ())
    return _scan(op, op, x, ax, dtype, out, False, identity)


def _as_1d(op, out):
    if out.shape != ():
        raise ValueError(f"{op}(): argument 'out' has shape {out.shape}, but the result shape "
                         f"is ()")
    return reshape(out, (1,))


def cumsum(x, axis=None, dtype=None, out=None):
    if out is None:
        return _fast("cumsum", x, axis, False, dtype, _torch_scan, "cumsum", x, axis, dtype,
                     None, 0)
    return _torch_scan("cumsum", x, axis, dtype, out, 0)


def cumprod(x, axis=None, dtype=None, out=None):
    if out is None:
        return _fast("cumprod", x, axis, False, dtype, _torch_scan, "cumprod", x, axis, dtype,
                     None, 1)
    return _torch_scan("cumprod", x, axis, dtype, out, 1)


def _cumulative(op, stub, x, axis, dtype, include_initial, out, identity):
    """Array API cumulative_sum / cumulative_prod (NumPy treats a 0-d input as 1-d)."""
    _check_tensor(op, x)
    if x.ndim == 0:
        if axis is not None:
            normalize_axis(axis, 0, op)
        x = reshape(x, (1,))
        axis = 0
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{op}(): argument 'axis' is required for a tensor of "
                             f"{x.ndim} dimensions")
        axis = 0
    ax = normalize_axis(axis, x.ndim, op)
    return _scan(op, stub, x, ax, dtype, out, include_initial, identity)


def cumulative_sum(x, axis=None, dtype=None, include_initial=False, out=None):
    return _cumulative("cumulative_sum", "cumsum", x, axis, dtype, include_initial, out, 0)


def cumulative_prod(x, axis=None, dtype=None, include_initial=False, out=None):
    return _cumulative("cumulative_prod", "cumprod", x, axis, dtype, include_initial, out, 1)

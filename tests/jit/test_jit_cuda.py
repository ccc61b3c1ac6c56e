"""CUDA fusion groups with reductions (jit/fuser_cuda.py), on the interpret backend: a
pointwise chain ending in sum / mean / max / min over the last axis (one program per row)
or over all axes (partials, then a combining launch), and the softmax / row normalization
pattern, each ONE fusion group whose results match eager CUDA: max / min exactly (nan
propagating as eager's), sum / mean within the accumulation order's rounding. Small shapes:
Triton's interpreter runs each program in Python."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import jit

pytestmark = pytest.mark.usefixtures("cuda_interpret")

RNG = np.random.default_rng(16)
TOL = {"float32": 2e-6, "float64": 1e-13, "float16": 2e-3}


def _cuda(a):
    return tl.asarray(a).cuda()


def _data(shape, dtype, nan_rows=True):
    a = RNG.uniform(-3.0, 3.0, size=shape).astype(dtype)
    if nan_rows:  # a nan in one row: max / min must propagate it there, as eager does
        a.reshape(-1, shape[-1])[1, 3] = np.nan
    return a


def _run_fused(fn, *args):
    """Traced results on the specialized graph (called until it ran) and that graph."""
    tf = jit.trace(fn, args)
    for _ in range(2):
        out = tf(*args)
    g = jit.last_executed_optimized_graph()
    return (out if isinstance(out, tuple) else (out,)), g


def _one_group(g, mode):
    """The graph ran as exactly one fusion group (of ``mode``) and no unfused op."""
    groups = g.fusion_groups()
    assert [n.attrs["mode"] for n in groups] == [mode], str(g)
    assert not [n.kind for n in g.nodes if n.kind.startswith("tl::")], str(g)


def _check(got, want, exact, dtype):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.device.type == "cuda" and a.dtype is b.dtype and a.shape == b.shape
        x, y = a.cpu().numpy(), b.cpu().numpy()
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64),
                                       rtol=TOL[dtype], atol=TOL[dtype])


def _reduce(op, x, **kw):
    return getattr(x, op)(**kw)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
def test_last_axis_reduction_fuses_and_matches_eager(op, keepdims, dtype):
    def f(x, y):
        return _reduce(op, x * 2.0 - y, axis=-1, keepdims=keepdims)
    x = _cuda(_data((2, 3, 37), dtype))  # two leading dims: rows indexed through both
    y = _cuda(_data((37,), dtype, nan_rows=False))  # broadcast along the rows
    got, g = _run_fused(f, x, y)
    _one_group(g, "rows")
    _check(got, f(x, y), op in ("max", "min"), dtype)
    # a non-contiguous input (a transposed view) on the same traced function
    xt = _cuda(_data((37, 6), dtype)).transpose(0, 1)
    got, g = _run_fused(f, xt, y)
    _one_group(g, "rows")
    _check(got, f(xt, y), op in ("max", "min"), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
def test_all_axes_reduction_fuses_and_matches_eager(op, dtype):
    def f(x):
        e = x * 2.0 + 1.0
        return _reduce(op, e), e  # an element output stored by the same kernel
    def fk(x):
        return _reduce(op, x - 0.5, axis=(0, 1), keepdims=True)
    # 259 elements: several programs' partials combined by the second launch
    x = _cuda(_data((7, 37), dtype, nan_rows=False))
    xt = _cuda(_data((37, 7), dtype, nan_rows=False)).transpose(0, 1)
    cases = [(f, x), (fk, x), (f, xt)]
    if op in ("max", "min"):  # a nan anywhere gives nan, as eager's
        cases.append((f, _cuda(_data((7, 37), dtype))))
    for fn, arg in cases:
        got, g = _run_fused(fn, arg)
        _one_group(g, "all")
        want = fn(arg)
        if op in ("max", "min"):
            _check(got, want, True, dtype)
        else:
            _check(got[:1], want[:1] if isinstance(want, tuple) else (want,), False, dtype)
            _check(got[1:], want[1:] if isinstance(want, tuple) else (), True, dtype)


def _softmax(x):
    e = tl.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _rownorm(x, w, b):
    d = x - x.mean(-1, keepdims=True)
    return d / tl.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * w + b


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_softmax_and_row_norm_patterns_fuse(dtype):
    x = _cuda(_data((3, 4, 33), dtype, nan_rows=False))
    w, b = (_cuda(_data((33,), dtype, nan_rows=False)) for _ in range(2))
    got, g = _run_fused(_softmax, x)
    _one_group(g, "rows")
    _check(got, _softmax(x), False, dtype)
    got, g = _run_fused(_rownorm, x, w, b)
    _one_group(g, "rows")
    # normalizing divides by a small standard deviation: compare on the output's scale
    tol = {"float16": 2e-2, "float32": 2e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(got[0].cpu().numpy().astype(np.float64),
                               _rownorm(x, w, b).cpu().numpy().astype(np.float64),
                               rtol=tol, atol=tol)


def test_nan_rows_in_a_fused_softmax():
    # a row holding nan is nan throughout (max propagates it), the other rows are unaffected
    x = _cuda(_data((4, 9), "float32"))
    got, g = _run_fused(_softmax, x)
    _one_group(g, "rows")
    out = got[0].cpu().numpy()
    assert np.isnan(out[1]).all() and not np.isnan(np.delete(out, 1, axis=0)).any()
    _check(got, _softmax(x), False, "float32")


def _kernel_events(tf, *args):
    with tl.profiler.profile() as p:
        tf(*args)
        tl.cuda.synchronize()
    return [r.key for r in p.key_averages()]


def test_profiler_shows_the_fused_kernels_only():
    x = _cuda(_data((3, 9), "float32", nan_rows=False))
    tf = jit.trace(_softmax, (x,))
    tf(x)
    names = _kernel_events(tf, x)
    # one event (eager shows max, subtract, exp, sum, divide and their kernels)
    assert names == ["fused_max_subtract_exp_sum_divide"], names
    # an all-axes group: its two stages, named after its ops
    def f(x):
        return (x * 2.0).sum()
    tf = jit.trace(f, (x,))
    tf(x)
    names = _kernel_events(tf, x)
    assert names == ["fused_multiply_sum", "fused_multiply_sum_fin"], names


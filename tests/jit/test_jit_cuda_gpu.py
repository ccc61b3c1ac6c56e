"""tl.jit's fused CUDA reduction kernels (jit/fuser_cuda.py) compiled and run on a real GPU:
long rows (several column blocks per row), short rows (several rows per program), all-axes
reductions with many partials, softmax / row normalization, against eager CUDA. Skipped
without a GPU (see conftest); test_jit_cuda.py runs the same groups on the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import jit

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_real")]

RNG = np.random.default_rng(160)
TOL = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-3, "bfloat16": 2e-2}


def _x(shape, dtype, nan=False):
    a = RNG.uniform(-3.0, 3.0, size=shape).astype(np.float32 if dtype == "bfloat16" else dtype)
    if nan:
        a.reshape(-1, shape[-1])[1, 3] = np.nan
    t = tl.asarray(a)
    return (t.astype(tl.bfloat16) if dtype == "bfloat16" else t).cuda()


def _fused(fn, *args):
    tf = jit.trace(fn, args)
    for _ in range(2):
        out = tf(*args)
    g = jit.last_executed_optimized_graph()
    assert len(g.fusion_groups()) == 1, str(g)
    assert not [n for n in g.nodes if n.kind.startswith("tl::")], str(g)
    return out if isinstance(out, tuple) else (out,)


def _same(got, want, exact, dtype):
    want = want if isinstance(want, tuple) else (want,)
    for a, b in zip(got, want):
        assert a.dtype is b.dtype and a.shape == b.shape
        x = a.cpu().astype(tl.float64).numpy()
        y = b.cpu().astype(tl.float64).numpy()
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(37, 3000), (5000, 24), (2, 3, 700)])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
def test_rows_reduction_on_gpu(op, shape, dtype):
    def f(x):
        return getattr(x * 2.0 - 1.0, op)(axis=-1, keepdims=op in ("mean", "max"))
    x = _x(shape, dtype, nan=op in ("max", "min"))
    _same(_fused(f, x), f(x), op in ("max", "min"), dtype)
    xt = x.transpose(-1, -2).contiguous().transpose(-1, -2)  # column stride != 1
    _same(_fused(f, xt), f(xt), op in ("max", "min"), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("op", ["sum", "mean", "max", "min"])
def test_all_axes_reduction_on_gpu(op, dtype):
    def f(x):
        e = x * 2.0 + 1.0
        return getattr(e, op)(), e
    x = _x((3000, 1001), dtype, nan=False)  # many partials combined by the second launch
    got = _fused(f, x)
    want = f(x)
    _same(got[1:], want[1:], True, dtype)
    _same(got[:1], want[:1], op in ("max", "min"), dtype)
    if op in ("max", "min"):
        xn = _x((3000, 1001), dtype, nan=True)
        _same(_fused(f, xn), f(xn), True, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", [(64, 4096), (4096, 100)])
def test_softmax_and_row_norm_on_gpu(shape, dtype):
    def softmax(x):
        e = tl.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def rownorm(x, w, b):
        d = x - x.mean(-1, keepdims=True)
        return d / tl.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * w + b
    x = _x(shape, dtype)
    w, b = _x(shape[-1:], dtype), _x(shape[-1:], dtype)
    _same(_fused(softmax, x), softmax(x), False, dtype)
    got = _fused(rownorm, x, w, b)[0].cpu().astype(tl.float64).numpy()
    want = rownorm(x, w, b).cpu().astype(tl.float64).numpy()
    tol = 2e-2 if dtype == "float16" else 1e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)

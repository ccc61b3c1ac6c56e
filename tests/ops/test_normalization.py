"""Fused softmax / log_softmax / layer_norm against NumPy's composed formulas (in float64):
every float dtype, every layout from helpers.arrays (transposed, reversed, strided,
broadcast), any axis, 0-d and empty inputs, nan/inf rows, dtype=, the parallel CPU path, the
copy fallback for unfoldable layouts, every error case, and the Triton kernels (single pass
and looped) in interpret mode against the CPU results."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tensorlib as tl
from helpers import arrays, to_numpy

FLOATS = ["float16", "bfloat16", "float32", "float64"]
# unit roundoff of the compute dtype (half types compute in float32) and of the result
_U_ACC = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -24, "float32": 2.0 ** -24,
          "float64": 2.0 ** -53}
_U_OUT = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24,
          "float64": 2.0 ** -53}
# spacing of the result dtype's subnormals: rounding a subnormal result errs by up to this
# much, however small |want| is (a relative bound alone fails there)
_TINY_OUT = {"float16": 2.0 ** -24, "bfloat16": 2.0 ** -133, "float32": 2.0 ** -149,
             "float64": 2.0 ** -1074}


# ---------------------------------------------------------------- oracles
def np_softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def ln_scale(x, k, w=None, b=None, eps=1e-5):
    """Size of layer_norm's rounding errors per row: the mean's error (a few roundings of
    max|x|) is amplified by 1/sqrt(var + eps) and |w|; then |b|."""
    axes = tuple(range(x.ndim - k, x.ndim))
    if x.size == 0:
        return 1.0
    assert np.isfinite(x).all(), "ln_scale: finite inputs only"
    xm = np.max(np.abs(x), axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(np.var(x, axis=axes, keepdims=True) + eps)
    wm = 1.0 if w is None else np.max(np.abs(w))
    bm = 0.0 if b is None else np.max(np.abs(b))
    return 4 * ((xm * rstd + 1) * wm + bm)


def _oracle(fn, x, *args):
    if x.size == 0:
        return x.astype(np.float64)  # NumPy's max has no identity; the result is empty too
    with np.errstate(all="ignore"):
        return fn(x.astype(np.float64), *args)


# ---------------------------------------------------------------- helpers
def _tensor(a, dtype):
    """a (any layout) as a tensor of ``dtype`` (bfloat16: converted from float32 values)."""
    if dtype == "bfloat16":
        return tl.from_numpy(a).astype(tl.bfloat16)
    return tl.from_numpy(a if a.dtype == dtype else a.astype(dtype))


def _values(t):
    """The exact input values (as stored) in float64."""
    return to_numpy(t).astype(np.float64)


def _close(got, want, dtype, scale=1.0):
    """|got - want| <= a few roundings of the compute dtype (times ``scale``, the size of
    intermediate values) plus one rounding of the result."""
    got = np.asarray(got, np.float64)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    tol = 16 * _U_ACC[dtype] * scale + 2 * _U_OUT[dtype] * np.abs(want) + _TINY_OUT[dtype]
    with np.errstate(invalid="ignore"):
        ok = (np.abs(got - want) <= tol) | (np.isnan(got) & np.isnan(want)) | (got == want)
    assert ok.all(), (f"{dtype}: max error {np.nanmax(np.abs(got - want))} at "
                      f"{np.argwhere(~ok)[:3].tolist()}\ngot  {got[~ok][:5]}\nwant {want[~ok][:5]}")


def _elements(dtype, bound=30.0):
    width = {"float16": 16, "float64": 64}.get(dtype, 32)
    return st.floats(-bound, bound, width=width)


def _array(dtype, **kw):
    return arrays("float32" if dtype == "bfloat16" else dtype, elements=_elements(dtype), **kw)


# ---------------------------------------------------------------- softmax, log_softmax (CPU)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@given(data=st.data())
def test_softmax_matches_numpy(op, dtype, data):
    a = data.draw(_array(dtype, min_dims=1, max_dims=3, max_side=6))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    t = _tensor(a, dtype)
    x = _values(t)
    got = getattr(tl, op)(t, axis=axis)
    assert got.dtype is t.dtype and got.shape == t.shape
    fn = np_softmax if op == "softmax" else np_log_softmax
    want = _oracle(fn, x, axis)
    # log_softmax values are up to ~2 * bound in size; softmax's are at most 1
    _close(to_numpy(got), want, dtype, 64.0 if op == "log_softmax" else 1.0)
    np.testing.assert_array_equal(_values(t), x)  # input untouched


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_nan_inf_rows(op, dtype):
    inf, nan = np.inf, np.nan
    x = np.array([[1.0, 2.0, 3.0, 4.0],
                  [1.0, nan, 3.0, 4.0],       # nan -> whole row nan
                  [1.0, inf, 3.0, 4.0],       # +inf max -> inf - inf -> nan
                  [-inf, -inf, -inf, -inf],   # all -inf -> nan
                  [-inf, 0.0, -inf, 1.0],     # -inf entries -> 0 / -inf
                  [nan, nan, nan, nan],
                  [-inf, inf, nan, 0.0],
                  [1e30 if dtype == "float32" else 1e300, 0.0, -1e30, 5.0]], dtype)
    fn = np_softmax if op == "softmax" else np_log_softmax
    for axis in (-1, 0):
        got = to_numpy(getattr(tl, op)(tl.asarray(x), axis=axis))
        with np.errstate(all="ignore"):
            want = fn(x, axis)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


def test_softmax_0d_and_empty():
    assert float(tl.softmax(tl.asarray(3.5)).item()) == 1.0  # PyTorch: 0-d softmax is 1
    assert float(tl.log_softmax(tl.asarray(-2.0)).item()) == 0.0
    assert np.isnan(float(tl.softmax(tl.asarray(np.inf)).item()))
    assert tl.softmax(tl.asarray(1.0), axis=0).shape == ()
    for shape, axis in (((0, 3), -1), ((3, 0), -1), ((3, 0), 0), ((2, 0, 4), 1)):
        r = tl.softmax(tl.zeros(shape), axis=axis)
        assert r.shape == shape and r.dtype is tl.float32
        r = tl.log_softmax(tl.zeros(shape, dtype=tl.float64), axis=axis)
        assert r.shape == shape and r.dtype is tl.float64


def test_softmax_dtype_argument():
    x = np.linspace(-3, 3, 24).reshape(4, 6)
    # half input, float32 result: computed in float32, never rounded to float16 on the way
    h = tl.asarray(x.astype(np.float16))
    got = tl.softmax(h, dtype=tl.float32)
    assert got.dtype is tl.float32
    _close(to_numpy(got), _oracle(np_softmax, x.astype(np.float16)), "float32")
    # integers need dtype= (PyTorch has no integer softmax); then they convert in the kernel
    i = tl.asarray(np.arange(12, dtype=np.int32).reshape(3, 4) - 5)
    got = tl.log_softmax(i, axis=0, dtype="float64")
    assert got.dtype is tl.float64
    _close(to_numpy(got), _oracle(np_log_softmax, np.arange(12).reshape(3, 4) - 5, 0),
           "float64", 16.0)
    r = tl.asarray(x.astype(np.float32)).softmax(0)  # method variant
    _close(to_numpy(r), _oracle(np_softmax, x.astype(np.float32), 0), "float32")


def test_softmax_layouts_no_copy_and_fallback():
    base = np.random.default_rng(1).standard_normal((4, 4, 4, 6)).astype(np.float32)
    cases = [(base[::2, ::2, ::2], -1),          # three outer dims that do not fold: copy
             (base[::2, ::2, ::2], 1),
             (base[:, ::-1, :, ::-1], 2),        # negative strides, axis in the middle
             (base.transpose(3, 1, 0, 2), 0),    # permuted: output follows the input's order
             (np.broadcast_to(base[0, 0, :1], (5, 4, 6)), -1)]   # stride-0 rows
    for a, axis in cases:
        t = tl.from_numpy(a)
        for op, fn in (("softmax", np_softmax), ("log_softmax", np_log_softmax)):
            got = getattr(tl, op)(t, axis=axis)
            _close(to_numpy(got), _oracle(fn, a, axis), "float32", 16.0)
        np.testing.assert_array_equal(to_numpy(t), a)
    got = tl.softmax(tl.from_numpy(base.transpose(3, 1, 0, 2)), axis=1)
    assert sorted(got.stride(), reverse=True) != list(got.stride())  # not forced to C order


def test_parallel_rows():
    # above the CPU kernels' parallel grain: rows split into chunks over threads (one op: the
    # three share the kernel template, and each parallel variant is a slow compile)
    a = np.random.default_rng(2).standard_normal((97, 520)).astype(np.float32) * 4
    _close(to_numpy(tl.softmax(tl.asarray(a))), _oracle(np_softmax, a), "float32")
    t = tl.from_numpy(np.asfortranarray(a))  # column-major: each row gathered, stride 97
    _close(to_numpy(tl.softmax(t, axis=1)), _oracle(np_softmax, a, 1), "float32")


def test_cpu_vexp32_ulps():
    # the vectorizable float32 exp of the CPU kernels against NumPy's, over its whole range
    from tensorlib.kernels.cpu import normalization as N
    vexp = N._module("softmax", tl.float32, tl.float32, tl.float32).vexp32
    xs = np.concatenate([np.linspace(-110.0, 90.0, 1500), np.linspace(-1.0, 1.0, 301),
                         [-np.inf, np.inf, np.nan, 0.0, -0.0, 88.72, 88.73, -87.3, -103.9,
                          -104.0]]).astype(np.float32)
    got = np.array([vexp(np.float32(v)) for v in xs], np.float32)
    with np.errstate(over="ignore"):
        want = np.exp(xs)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    fin = np.isfinite(want)
    ulps = np.abs(got[fin].view(np.int32).astype(np.int64) - want[fin].view(np.int32))
    assert ulps.max() <= 2, xs[fin][ulps > 2][:5]


# ---------------------------------------------------------------- layer_norm (CPU)
@pytest.mark.parametrize("dtype", FLOATS)
@given(data=st.data())
def test_layer_norm_matches_numpy(dtype, data):
    a = data.draw(_array(dtype, min_dims=1, max_dims=3, max_side=6))
    k = data.draw(st.integers(1, a.ndim))
    ns = a.shape[a.ndim - k:]
    t = _tensor(a, dtype)
    x = _values(t)
    use_w, use_b = data.draw(st.booleans()), data.draw(st.booleans())
    wdt = data.draw(st.sampled_from(["float32", "float64", dtype]))
    w = data.draw(arrays("float32", ns, elements=_elements("float32", 4.0))) if use_w else None
    b = data.draw(arrays("float32", ns, elements=_elements("float32", 4.0))) if use_b else None
    tw = _tensor(w, wdt) if use_w else None
    tb = _tensor(b, wdt) if use_b else None
    eps = data.draw(st.sampled_from([1e-5, 1e-3, 0.5]))
    got = tl.layer_norm(t, ns, tw, tb, eps=eps)
    assert got.dtype is t.dtype and got.shape == t.shape
    want = _oracle(np_layer_norm, x, k, None if tw is None else _values(tw),
                   None if tb is None else _values(tb), eps)
    wv = None if tw is None else _values(tw)
    bv = None if tb is None else _values(tb)
    _close(to_numpy(got), want, dtype, ln_scale(x, k, wv, bv, eps))


def test_layer_norm_special_and_empty():
    x = np.array([[1.0, 2.0, 3.0], [np.nan, 1.0, 2.0], [np.inf, 1.0, 2.0], [5.0, 5.0, 5.0]],
                 np.float32)
    got = to_numpy(tl.layer_norm(tl.asarray(x), (3,)))
    np.testing.assert_allclose(got, _oracle(np_layer_norm, x, 1), rtol=1e-5, atol=1e-6,
                               equal_nan=True)
    assert tl.layer_norm(tl.zeros((0, 4)), [4]).shape == (0, 4)
    assert tl.layer_norm(tl.zeros((3, 0)), [0]).shape == (3, 0)
    # the whole tensor normalized, several dims, a transposed (non-foldable) input
    a = np.random.default_rng(4).standard_normal((5, 4, 3)).astype(np.float32)
    for arr, k in ((a, 3), (a.transpose(2, 0, 1), 2), (a[:, ::-1, ::2], 2)):
        got = tl.layer_norm(tl.from_numpy(arr), arr.shape[arr.ndim - k:])
        assert got.is_contiguous()
        _close(to_numpy(got), _oracle(np_layer_norm, arr, k), "float32", ln_scale(arr, k))


# ---------------------------------------------------------------- errors
def test_errors():
    x = tl.asarray(np.ones((2, 3), np.float32))
    with pytest.raises(IndexError, match=r"softmax\(\): argument 'axis' = 2"):
        tl.softmax(x, axis=2)
    with pytest.raises(IndexError, match=r"log_softmax\(\): argument 'axis' = -3"):
        tl.log_softmax(x, axis=-3)
    with pytest.raises(TypeError, match=r"softmax\(\): argument 'x' has dtype int64"):
        tl.softmax(tl.asarray(np.arange(3)))
    with pytest.raises(TypeError, match=r"log_softmax\(\): argument 'x' has dtype bool"):
        tl.log_softmax(tl.asarray(np.array([True, False])))
    with pytest.raises(TypeError, match=r"softmax\(\): argument 'dtype' = int32"):
        tl.softmax(x, dtype=tl.int32)
    with pytest.raises(TypeError, match=r"softmax\(\): argument 'x' has dtype complex64"):
        tl.softmax(tl.asarray(np.ones(3, np.complex64)))
    with pytest.raises(TypeError, match=r"softmax\(\): argument 'axis'"):
        tl.softmax(x, axis=1.5)
    with pytest.raises(ValueError, match=r"layer_norm\(\): argument 'normalized_shape' = \(2,\)"):
        tl.layer_norm(x, (2,))
    with pytest.raises(ValueError,
                       match=r"layer_norm\(\): argument 'normalized_shape' = \(4, 2, 3\)"):
        tl.layer_norm(x, (4, 2, 3))
    with pytest.raises(ValueError, match=r"layer_norm\(\): argument 'normalized_shape' = \(\)"):
        tl.layer_norm(x, ())
    with pytest.raises(ValueError, match=r"layer_norm\(\): argument 'weight' has shape \(2,\)"):
        tl.layer_norm(x, (3,), tl.ones((2,)))
    with pytest.raises(ValueError, match=r"layer_norm\(\): argument 'bias' has shape \(1, 3\)"):
        tl.layer_norm(x, (3,), None, tl.ones((1, 3)))
    with pytest.raises(TypeError, match=r"layer_norm\(\): argument 'weight' has dtype int64"):
        tl.layer_norm(x, (3,), tl.asarray(np.arange(3)))
    with pytest.raises(TypeError, match=r"layer_norm\(\): argument 'x' has dtype int32"):
        tl.layer_norm(tl.asarray(np.ones((2, 3), np.int32)), (3,))
    with pytest.raises(TypeError, match=r"layer_norm\(\): argument 'weight' must be a Tensor"):
        tl.layer_norm(x, (3,), [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"layer_norm\(\): argument 'eps'"):
        tl.layer_norm(x, (3,), eps="small")


# ---------------------------------------------------------------- CUDA (Triton, interpreted)
@pytest.fixture(scope="module")
def interpret_backend(cuda_interpret):
    """CUDA on the interpret backend (conftest.py)."""


@pytest.fixture(params=["single", "looped"])
def cuda_variant(request, interpret_backend, monkeypatch):
    """Both Triton variants: rows in one block, or (tiny limits) looped over 8-lane chunks."""
    if request.param == "looped":
        from tensorlib.kernels.cuda import normalization as CN
        monkeypatch.setattr(CN, "INTERPRET_MAX_BLOCK", 4)
        monkeypatch.setattr(CN, "INTERPRET_LOOP_BLOCK", 8)
    return request.param


def _host(t):
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def _special_rows(dtype):
    x = np.random.default_rng(5).standard_normal((6, 19)).astype(np.float32) * 3
    x[1, 3] = np.nan
    x[2, 7] = np.inf
    x[3] = -np.inf
    x[4, ::2] = -np.inf
    return x.astype(dtype)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_cuda_softmax(op, cuda_variant):
    for dtype, axis in (("float32", -1), ("float32", 0), ("float64", -1), ("bfloat16", -1),
                        ("float16", 0)):
        a = _special_rows("float32" if dtype == "bfloat16" else dtype)
        cpu = _tensor(a, dtype)
        cuda = cpu.to("cuda")
        got = _host(getattr(tl, op)(cuda, axis=axis))
        want_cpu = to_numpy(getattr(tl, op)(cpu, axis=axis))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want_cpu))
        fn = np_softmax if op == "softmax" else np_log_softmax
        _close(got, _oracle(fn, _values(cpu), axis), dtype, 64.0)
        _close(got, want_cpu.astype(np.float64), dtype, 64.0)
    # negative strides / permuted rows through the kernel's strides
    a = np.random.default_rng(6).standard_normal((3, 5, 11)).astype(np.float32)
    cuda = tl.asarray(a, device="cuda")[:, ::-1].permute((2, 1, 0))
    got = _host(getattr(tl, op)(cuda, axis=1))
    fn = np_softmax if op == "softmax" else np_log_softmax
    _close(got, _oracle(fn, a[:, ::-1].transpose(2, 1, 0), 1), "float32", 16.0)


def test_cuda_layer_norm(cuda_variant):
    rng = np.random.default_rng(7)
    for dtype, affine in (("float32", True), ("float32", False), ("float64", True),
                          ("bfloat16", True)):
        a = rng.standard_normal((4, 3, 7)).astype("float32" if dtype == "bfloat16" else dtype)
        w = rng.standard_normal((3, 7)).astype(np.float32) if affine else None
        b = rng.standard_normal((3, 7)).astype(np.float32) if affine else None
        cpu = _tensor(a, dtype)
        tw = None if w is None else tl.asarray(w)
        tb = None if b is None else tl.asarray(b)
        got = _host(tl.layer_norm(cpu.to("cuda"), (3, 7), None if tw is None else tw.to("cuda"),
                                  None if tb is None else tb.to("cuda"), eps=1e-3))
        want_cpu = to_numpy(tl.layer_norm(cpu, (3, 7), tw, tb, eps=1e-3))
        scale = ln_scale(_values(cpu), 2, w, b, 1e-3)
        _close(got, _oracle(np_layer_norm, _values(cpu), 2, w, b, 1e-3), dtype, scale)
        _close(got, want_cpu.astype(np.float64), dtype, scale)
    x = tl.asarray(np.array([[1.0, np.nan, 2.0], [3.0, 3.0, 3.0]], np.float32), device="cuda")
    got = _host(tl.layer_norm(x, (3,)))
    assert np.isnan(got[0]).all() and (got[1] == 0).all()


def test_cuda_int64_indexing(interpret_backend, monkeypatch):
    # the 64-bit index variant (chosen for huge tensors), forced on small ones, looped too
    from tensorlib.kernels.cuda import normalization as CN
    monkeypatch.setattr(CN, "_needs_idx64", lambda rows, block: True)
    a = _special_rows("float32")[:, ::-1]
    cuda = tl.asarray(np.ascontiguousarray(a), device="cuda")
    for loop in (False, True):
        if loop:
            monkeypatch.setattr(CN, "INTERPRET_MAX_BLOCK", 4)
            monkeypatch.setattr(CN, "INTERPRET_LOOP_BLOCK", 8)
        _close(_host(tl.log_softmax(cuda, axis=0)), _oracle(np_log_softmax, a, 0), "float32",
               64.0)
        _close(_host(tl.layer_norm(cuda[:1], (19,))), _oracle(np_layer_norm, a[:1], 1),
               "float32", ln_scale(a[:1], 1))


def test_cuda_0d_empty_and_device_errors(interpret_backend):
    assert float(_host(tl.softmax(tl.asarray(2.0, device="cuda")))) == 1.0
    assert tl.softmax(tl.zeros((0, 5), device="cuda")).shape == (0, 5)
    with pytest.raises(RuntimeError, match=r"layer_norm\(\): argument 'weight' is on 'cpu'"):
        tl.layer_norm(tl.zeros((2, 3), device="cuda"), (3,), tl.ones((3,)))


def test_compiled_launch_arguments_compile(interpret_backend, monkeypatch):
    """The GPU launch path without a GPU: launches captured in compiled mode (single pass,
    looped, layer_norm with and without weights) compile for sm_90 with the signature
    Triton's JIT derives from the arguments."""
    pytest.importorskip("triton")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import mangle_type
    from tensorlib.kernels.cuda import launch
    from tensorlib.kernels.cuda import normalization as CN

    captured = []
    monkeypatch.setattr(launch, "_forced", "compiled")
    monkeypatch.setattr(launch, "launch", lambda kernel, grid, args, device, **kw:
                        captured.append((kernel, grid, args, kw)))
    x = tl.asarray(np.ones((3, 40), np.float32), device="cuda")
    tl.softmax(x)
    monkeypatch.setattr(CN, "GPU_MAX_BLOCK", {4: 16, 8: 16})  # looped on these short rows
    monkeypatch.setattr(CN, "GPU_LOOP_BLOCK", {4: 32, 8: 32})
    tl.log_softmax(x, axis=0)
    tl.layer_norm(x, (40,), tl.ones((40,), device="cuda"), None)
    mine = [c for c in captured if c[0].fn.__module__.startswith("tlcuda_norm_")]
    assert len(mine) == 3
    for kernel, grid, args, kw in mine:
        assert grid in ((3,), (40,))
        options = {k: kw[k] for k in ("num_warps", "enable_fp_fusion")}
        const = {k: v for k, v in kw.items() if k not in options}
        sig = {name: "constexpr" if name in const else mangle_type(value)
               for name, value in zip(kernel.arg_names, list(args) + [None] * len(const))}
        assert set(sig) == set(kernel.arg_names)
        triton.compile(ASTSource(kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=options)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("view", ["rows", "columns"])
def test_plans_serve_views_at_other_offsets(op, view, monkeypatch):
    """softmax / log_softmax plans are keyed without x's offset: one made for a view serves
    the views of its layout at other offsets (a sliding window), each reading its own rows:
    the full path's bits for that view."""
    from tensorlib.ops import normalization
    src = tl.asarray(np.random.default_rng(11).standard_normal((60, 37)).astype(np.float32))
    fn = getattr(tl, op)

    def window(k):
        return src[k:k + 23] if view == "rows" else src[k:k + 23, 1::2].T

    normalization._plans.clear()
    fn(window(0), axis=-1)
    assert len(normalization._plans) == 1
    plan = next(iter(normalization._plans.values()))
    for k in (4, 0, 31, 2):
        got = fn(window(k), axis=-1)
        monkeypatch.setattr(normalization, "_plans", {})  # (the full path, storing no plan)
        want = fn(window(k), axis=-1)
        monkeypatch.undo()
        np.testing.assert_array_equal(to_numpy(got), to_numpy(want))
    assert list(normalization._plans.values()) == [plan]

"""CUDA argmax / argmin (kernels/cuda/reduction.py) and cumsum / cumprod / cumulative_sum /
cumulative_prod (kernels/cuda/scan.py) on the interpret backend, against NumPy.

Covers the value dtype classes (float32/64, float16, bfloat16, signed and unsigned ints, bool),
nan and infinities, ties (first index wins), axis=None / int / keepdims / out=, contiguous,
transposed and negative-stride inputs, reductions and scans longer than one tile (the carried
prefix of the blocked scan, several chunks of the arg reduction), the empty-reduction error and
the compiled-mode launch arguments. Shapes are small: the Triton interpreter is slow per
program, and host data is made and checked with NumPy only (no CPU kernel compiles).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import tensorlib as tl
from helpers import ptxas_available

_RNG = np.random.default_rng(1234)


pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


# ---- helpers -----------------------------------------------------------------------------------
def bf16_round(x) -> np.ndarray:
    """float32 -> nearest-even bfloat16 value, as float32 (NumPy has no bfloat16)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = np.where(nan, ((u >> 16) & 0x8000) | 0x7FC0, r).astype(np.uint32)
    return (r << 16).view(np.float32)


def dev(arr, dtype=None):
    """NumPy values on the device as tensorlib dtype name ``dtype`` (default: arr's dtype);
    bfloat16 values must already be bfloat16-exact float32 (the device cast is then exact)."""
    dtype = dtype or arr.dtype.name
    if dtype == "bfloat16":
        return tl.asarray(np.ascontiguousarray(arr, np.float32), device="cuda").astype(
            tl.bfloat16)
    return tl.asarray(np.ascontiguousarray(arr.astype(dtype)), device="cuda")


def host(t) -> np.ndarray:
    assert t.device == tl.Device("cuda:0")
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def values(dtype, shape, ties=True):
    """Random values of ``dtype`` (bfloat16: exact bfloat16 values as float32); few distinct
    values so extremes repeat, plus nan / inf for floats."""
    if dtype == "bool":
        return _RNG.random(shape) > 0.5
    if dtype in ("float16", "float32", "float64", "bfloat16"):
        x = _RNG.integers(-3, 4, shape).astype(np.float32) if ties else \
            _RNG.uniform(-2, 2, shape).astype(np.float32)
        x = x.astype(np.float64 if dtype == "float64" else np.float32)
        return bf16_round(x) if dtype == "bfloat16" else x.astype(
            "float32" if dtype == "bfloat16" else dtype)
    info = np.iinfo(dtype)
    x = _RNG.integers(-3, 4, shape)
    x[0] = info.min if dtype != "uint8" else 0  # the dtype's extremes occur
    x[-1] = info.max
    return np.clip(x, info.min, info.max).astype(dtype)


def layouts(x, dtype):
    """(NumPy view, device tensor with that view's layout): contiguous, transposed (the
    device tensor is a permuted view of a transposed copy) and reversed / strided."""
    out = [(x, dev(x, dtype))]
    if x.ndim == 3:
        t = tl.permute(dev(x.transpose(2, 0, 1), dtype), (1, 2, 0))
        out.append((x, t))
        out.append((x[::-1, :, ::2], dev(x, dtype)[::-1, :, ::2]))
    return out


# ---- argmax / argmin ---------------------------------------------------------------------------
ARG_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8",
              "bool"]


@pytest.mark.parametrize("dtype", ARG_DTYPES)
def test_argmax_argmin_match_numpy(dtype):
    x = values(dtype, (3, 4, 5))
    if x.dtype.kind == "f":
        x[1, 2, 3] = np.nan
        x[2, 0, 1] = np.inf
        x[0, 3, 0] = -np.inf
    for view, t in layouts(x, dtype):
        for op in ("argmax", "argmin"):
            for axis in (None, 0, 1, -1):
                got = getattr(tl, op)(t, axis=axis)
                want = getattr(np, op)(view, axis=axis)
                assert got.dtype is tl.int64
                np.testing.assert_array_equal(host(got), want, err_msg=f"{op} axis={axis}")
    got = tl.argmin(dev(x, dtype), axis=1, keepdims=True)
    np.testing.assert_array_equal(host(got), np.argmin(x, axis=1, keepdims=True))


# nan, ties and integer extremes: one body on every device in test_reductions.py
# (test_argmax_first_occurrence_nan_ties_and_extremes)


def test_argmax_long_reductions_keepdims_and_out():
    # several BLOCK_R chunks per output, on both an inner and an outer layout
    x = values("float32", (64, 300), ties=True)
    x[5, 250] = 9.0
    x[7, 299] = np.nan
    g = dev(x)
    np.testing.assert_array_equal(host(tl.argmax(g, axis=1)), np.argmax(x, axis=1))
    np.testing.assert_array_equal(host(tl.argmin(g.T, axis=0)), np.argmin(x, axis=1))
    np.testing.assert_array_equal(host(tl.argmax(g, axis=0)), np.argmax(x, axis=0))
    flat = _RNG.integers(-50, 50, 5000).astype(np.int32)  # > one 4096-wide chunk
    flat[4321] = 100
    assert int(host(tl.argmax(dev(flat)))) == 4321
    out = tl.empty((1, 1), dtype=tl.int64, device="cuda")
    assert tl.argmax(g, keepdims=True, out=out) is out
    assert int(host(out)[0, 0]) == np.argmax(x)
    out32 = tl.empty((300,), dtype=tl.int32, device="cuda")
    tl.argmin(g, axis=0, out=out32)
    np.testing.assert_array_equal(host(out32), np.argmin(x, axis=0))
    one = dev(np.ones((4, 1), np.float32))  # the reduced dim has size 1
    np.testing.assert_array_equal(host(tl.argmax(one, axis=1)), [0, 0, 0, 0])
    assert host(tl.argmax(dev(np.zeros((0, 3), np.float32)), axis=1)).shape == (0,)


def test_arg_errors_match_cpu():
    for fn in (tl.argmax, tl.argmin):
        for shape, axis in (((0, 3), 0), ((0,), None), ((2, 0), 1)):
            z = np.zeros(shape, np.float32)
            with pytest.raises(ValueError) as cpu:
                fn(tl.asarray(z), axis=axis)
            with pytest.raises(ValueError, match=fn.__name__) as cuda:
                fn(dev(z), axis=axis)
            assert str(cuda.value) == str(cpu.value)
    with pytest.raises(TypeError, match="argmax"):
        tl.argmax(dev(np.ones(3, np.complex64)))


# ---- cumsum / cumprod --------------------------------------------------------------------------
SCAN_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8",
               "bool"]


def _scan_expected(op, x, dtype, axis, out_dtype=None):
    """NumPy's answer with tensorlib's accumulators: half types scan in float32 and round
    each result once; ints and bool accumulate in int64 (uint64 for unsigned)."""
    with np.errstate(all="ignore"):  # products overflow to inf, inf - inf is nan: expected
        if dtype in ("float16", "bfloat16"):
            r = getattr(np, op)(x.astype(np.float32), axis=axis)
            return bf16_round(r) if dtype == "bfloat16" else r.astype(np.float16)
        return getattr(np, op)(x, axis=axis, dtype=out_dtype)


def _check_scan(got, want, dtype, scale=1.0):
    res = host(got)
    assert res.shape == want.shape
    if want.dtype.kind == "f":
        tol = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 1e-5}.get(dtype, 1e-12)
        # the blocked scan adds in a different order than NumPy's sequential loop
        np.testing.assert_allclose(res, want.astype(res.dtype), rtol=tol, atol=tol * scale,
                                   equal_nan=True)
    else:
        assert res.dtype == want.dtype, (res.dtype, want.dtype)
        np.testing.assert_array_equal(res, want)


@pytest.mark.parametrize("dtype", SCAN_DTYPES)
def test_cumsum_cumprod_match_numpy(dtype):
    x = values(dtype, (3, 4, 5))
    if dtype in ("int8", "uint8", "int32", "int64"):
        x = np.clip(x, -3, 3).astype(dtype)  # products stay exact
    if x.dtype.kind == "f":
        x[1, 2, 3] = np.nan
    for view, t in layouts(x, dtype):
        for op in ("cumsum", "cumprod"):
            for axis in (0, 1, 2, None):
                want = _scan_expected(op, view, dtype, axis)
                _check_scan(getattr(tl, op)(t, axis=axis), want, dtype, scale=10.0)


def test_long_scans_carry_across_tiles():
    # longer than a tile along the contiguous axis (blocked loop, carried prefix) and along a
    # strided one (stepped loop); ints must be exact, including wrap-around in int32
    x = _RNG.integers(-50, 50, (5, 100)).astype(np.int32)
    g = dev(x)
    _check_scan(tl.cumsum(g, axis=1), np.cumsum(x, axis=1), "int32")
    _check_scan(tl.cumsum(g.T, axis=0), np.cumsum(x.T, axis=0), "int32")
    w = np.full((2, 70), 2 ** 30, np.int32)
    _check_scan(tl.cumsum(dev(w), axis=1, dtype=tl.int32),
                np.cumsum(w, axis=1, dtype=np.int32), "int32")
    p = _RNG.choice(np.array([-1, 1, 2], np.int64), (3, 80))
    _check_scan(tl.cumprod(dev(p), axis=1), np.cumprod(p, axis=1), "int64")
    f = _RNG.uniform(-1, 1, (3, 130)).astype(np.float32)
    _check_scan(tl.cumsum(dev(f), axis=1), np.cumsum(f.astype(np.float64), axis=1),
                "float32", scale=10.0)
    _check_scan(tl.cumsum(dev(f).T, axis=0), np.cumsum(f.T.astype(np.float64), axis=0),
                "float32", scale=10.0)
    h = values("float16", (2, 50), ties=False)
    _check_scan(tl.cumsum(dev(h), axis=1), _scan_expected("cumsum", h, "float16", 1),
                "float16", scale=10.0)


def test_scan_special_values():
    z = dev(np.full((2, 40), -0.0, np.float32))
    got = host(tl.cumsum(z, axis=1))
    assert np.all(got == 0) and np.all(np.signbit(got))  # -0.0 stays -0.0 across tiles
    f = np.array([[1.0, np.inf, -np.inf, 2.0], [3.0, np.nan, 1.0, 1.0]], np.float32)
    for op in ("cumsum", "cumprod"):
        _check_scan(getattr(tl, op)(dev(f), axis=1), _scan_expected(op, f, "float32", 1),
                    "float32")
    b = _RNG.random((4, 9)) > 0.5
    _check_scan(tl.cumsum(dev(b), axis=0, dtype=tl.bool), np.cumsum(b, axis=0, dtype=bool),
                "bool")
    u = np.full((3,), 2 ** 63, np.uint64)
    _check_scan(tl.cumsum(dev(u)), np.cumsum(u), "uint64")


# cumulative_sum / cumulative_prod, include_initial, dtype=, out= (also strided), empty and 0-d
# inputs: one body on every device in test_reductions.py (test_cumulative_sum_prod)


# ---- the compiled (GPU) launch path ------------------------------------------------------------


@pytest.mark.skipif(not ptxas_available(), reason="Triton's ptxas is not available")
def test_compiled_launch_arguments_compile(monkeypatch):
    """The compiled-mode paths (tl.reduce / tl.associative_scan, GPU tiles) run only on a GPU:
    capture their launches and compile each with the signature Triton's JIT derives from the
    captured arguments."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import mangle_type
    from tensorlib.kernels.cuda import launch

    captured = []
    monkeypatch.setattr(launch, "_forced", "compiled")
    monkeypatch.setattr(launch, "launch", lambda kernel, grid, args, device, **kw:
                        captured.append((kernel, grid, args, kw)))
    x = dev(np.ones((4, 6), np.float32))
    tl.argmax(x, axis=1)
    tl.cumsum(x, axis=1)
    tl.cumsum(x, axis=0)
    assert len(captured) == 3
    for kernel, grid, args, kw in captured:
        options = {k: kw[k] for k in ("num_warps", "num_stages", "enable_fp_fusion") if k in kw}
        const = {k: v for k, v in kw.items() if k not in options}
        sig = {name: mangle_type(value) for name, value in zip(kernel.arg_names, args)}
        sig.update({name: "constexpr" for name in const})
        assert set(sig) == set(kernel.arg_names)
        triton.compile(ASTSource(kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=options)

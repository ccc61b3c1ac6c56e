"""CUDA complex64 / complex128 reductions (kernels/cuda/reduction.py), scans (scan.py) and
matmul (matmul.py) on the interpret backend, against NumPy.

Covers sum / prod / mean / var / std / any / all over inner, outer, all and tuple axes with
keepdims, on contiguous, transposed and negative-stride inputs; dtype= (real and complex
inputs accumulated in another complex dtype), out= (other complex dtype, a real result into a
complex out), empty reductions, nan / inf placement per component; cumsum / cumprod /
cumulative_* along blocked and stepped axes, longer than one tile; matmul / mm / bmm / vecdot
(conjugated first operand) with transposed, reversed and broadcast operands, ragged K and
K = 0; and the compiled-mode launches of the pair kernels (tl.reduce / tl.associative_scan
over tuples, the two-accumulator matmul) compiled for sm_90. Real and imaginary parts are
compared separately, so a nan in the wrong part fails. Shapes are small: the Triton
interpreter is slow per program.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import tensorlib as tl
from helpers import ptxas_available

pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py

_RNG = np.random.default_rng(2024)
CDTYPES = ["complex64", "complex128"]


def dev(arr):
    return tl.asarray(np.ascontiguousarray(arr), device="cuda")


def host(t) -> np.ndarray:
    assert t.device == tl.Device("cuda:0")
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def crand(shape, dtype, scale=1.0):
    x = _RNG.standard_normal(shape) + 1j * _RNG.standard_normal(shape)
    return (x * scale).astype(dtype)


def _tol(dtype):
    return 2e-5 if np.dtype(dtype) in (np.complex64, np.float32) else 1e-12


def check(got, want, dtype=None, atol=None):
    """Dtype, shape and each component (nan in the same places) against NumPy."""
    res = host(got) if not isinstance(got, np.ndarray) else got
    want = np.asarray(want)
    assert res.dtype == want.dtype, (res.dtype, want.dtype)
    assert res.shape == want.shape, (res.shape, want.shape)
    tol = _tol(dtype or want.dtype)
    atol = tol if atol is None else atol
    if want.dtype.kind == "c":
        for part in ("real", "imag"):
            np.testing.assert_allclose(getattr(res, part), getattr(want, part), rtol=tol,
                                       atol=atol, equal_nan=True, err_msg=part)
    elif want.dtype.kind == "f":
        np.testing.assert_allclose(res, want, rtol=tol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(res, want)


def layouts(x):
    """(NumPy view, device tensor with that layout): contiguous, a permuted view of a
    transposed copy, and a reversed / stepped view."""
    t = tl.permute(dev(x.transpose(2, 0, 1)), (1, 2, 0))
    return [(x, dev(x)), (x, t), (x[::-1, :, ::2], dev(x)[::-1, :, ::2])]


# ---- reductions --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_reductions_match_numpy(dtype):
    # moduli near 1, so products of the 72 elements stay well scaled
    x = (np.exp(1j * _RNG.uniform(-np.pi, np.pi, (3, 4, 6)))
         * _RNG.uniform(0.8, 1.25, (3, 4, 6))).astype(dtype)
    x[1, 2, 3] = complex(np.nan, 0.5)   # nan in the real part only
    x[2, 0, 4] = complex(0.0, 0.0)      # a zero: all() is false along its lines
    x[0, 3, 1] = complex(0.0, -1.5)     # a non-zero with a zero real part
    with np.errstate(all="ignore"):
        for view, t in layouts(x):
            for axis in (None, 0, -1, (0, 2)):
                keep = axis == (0, 2)
                for op in ("sum", "prod", "mean", "var", "std", "any", "all"):
                    got = getattr(tl, op)(t, axis=axis, keepdims=keep)
                    want = getattr(np, op)(view, axis=axis, keepdims=keep)
                    check(got, want, dtype, atol=10 * _tol(dtype))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_prod_long_and_strided(dtype):
    # several BLOCK_R chunks per output on an inner and an outer layout, reversed rows
    ang = _RNG.uniform(-np.pi, np.pi, (5, 300))
    x = (np.exp(1j * ang) * _RNG.uniform(0.99, 1.01, ang.shape)).astype(dtype)
    x[3, 123] = complex(np.nan, 0.0)
    g = dev(x)
    with np.errstate(all="ignore"):
        check(tl.prod(g, axis=1), np.prod(x, axis=1), dtype, atol=1e-4 if dtype ==
              "complex64" else None)
        check(tl.prod(g.T[::-1], axis=0), np.prod(x.T[::-1], axis=0), dtype,
              atol=1e-4 if dtype == "complex64" else None)
        check(tl.sum(g[:, ::-3], axis=1), np.sum(x[:, ::-3], axis=1), dtype, atol=1e-4)
        check(tl.mean(g, axis=0), np.mean(x, axis=0), dtype)


def test_dtype_and_out_arguments():
    f = _RNG.standard_normal((4, 5)).astype(np.float32)
    check(tl.sum(dev(f), axis=1, dtype=tl.complex64), np.sum(f, axis=1, dtype=np.complex64))
    i = _RNG.integers(-3, 4, (3, 4)).astype(np.int32)
    check(tl.prod(dev(i), axis=0, dtype=tl.complex128), np.prod(i, axis=0, dtype=np.complex128))
    h = f.astype(np.float16)
    check(tl.sum(dev(h), axis=0, dtype=tl.complex64),
          np.sum(h.astype(np.float32), axis=0).astype(np.complex64), "complex64", atol=1e-3)
    z = crand((4, 5), np.complex64)
    check(tl.sum(dev(z), axis=0, dtype=tl.complex128), np.sum(z, axis=0, dtype=np.complex128),
          "complex64")
    # a complex128 result into a complex64 out, and a strided out
    w = crand((4, 6), np.complex128)
    out = tl.empty((6,), dtype=tl.complex64, device="cuda")
    assert tl.sum(dev(w), axis=0, out=out) is out
    check(out, np.sum(w, axis=0).astype(np.complex64), "complex64")
    col = tl.empty((4, 2), dtype=tl.complex128, device="cuda")[:, 1]
    tl.mean(dev(w), axis=1, out=col)
    check(col, np.mean(w, axis=1))
    # real results into complex outs: the imaginary part is 0
    cv = tl.full((4,), 7 + 7j, dtype=tl.complex64, device="cuda")
    tl.var(dev(w.astype(np.complex64)), axis=1, correction=1, out=cv)
    check(cv, np.var(w.astype(np.complex64), axis=1, ddof=1).astype(np.complex64))
    cs = tl.full((5,), 7 + 7j, dtype=tl.complex128, device="cuda")
    tl.sum(dev(f), axis=0, out=cs)
    check(cs, np.sum(f, axis=0).astype(np.complex128), "complex64")
    ci = tl.full((5,), 7 + 7j, dtype=tl.complex64, device="cuda")
    tl.argmax(dev(f), axis=0, out=ci)
    check(ci, np.argmax(f, axis=0).astype(np.complex64))
    cb = tl.full((4,), 7 + 7j, dtype=tl.complex64, device="cuda")
    tl.any(dev(z), axis=1, out=cb)
    check(cb, np.any(z, axis=1).astype(np.complex64))


def test_empty_and_special_values():
    e = dev(np.zeros((0, 3), np.complex64))
    check(tl.sum(e, axis=0), np.zeros(3, np.complex64))
    check(tl.prod(e, axis=0), np.ones(3, np.complex64))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy: "mean of empty slice"
        check(tl.mean(e, axis=0), np.mean(np.zeros((0, 3), np.complex64), axis=0))
        check(tl.var(e, axis=0), np.var(np.zeros((0, 3), np.complex64), axis=0))
    assert host(tl.sum(dev(np.zeros((3, 0), np.complex128)), axis=0)).shape == (0,)
    check(tl.all(e, axis=0), np.ones(3, bool))
    # the CPU (and NumPy) divide a complex sum as CPython does: a nan / inf part spreads
    s = np.array([[complex(np.inf, 1.0), 2 + 0j], [complex(np.nan, 1.0), 1j],
                  [complex(-0.0, -0.0), complex(-0.0, -0.0)]], np.complex128)
    with np.errstate(all="ignore"):
        check(tl.mean(dev(s), axis=1), np.mean(s, axis=1))
        got = host(tl.mean(dev(s), axis=1))
    assert np.isnan(got[0].imag) and np.isnan(got[1].imag)
    assert not np.signbit(got[2].real) and not np.signbit(got[2].imag)
    # a nan in the imaginary part only stays there in a sum
    n = np.array([complex(1.0, np.nan), 2 + 3j, 4 - 1j], np.complex64)
    got = host(tl.sum(dev(n)))
    assert got.real == 7 and np.isnan(got.imag)


def test_cuda_matches_cpu_backend():
    x = crand((5, 7), np.complex64)
    x[2, 3] = complex(np.inf, 0.0)
    for op in ("sum", "prod", "mean", "var"):
        with np.errstate(all="ignore"):
            cpu = np.array(getattr(tl, op)(tl.asarray(x), axis=1)._to_host_numpy())
            check(getattr(tl, op)(dev(x), axis=1), cpu, "complex64", atol=1e-4)


# ---- scans -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_scans_match_numpy(dtype):
    x = (np.exp(1j * _RNG.uniform(-np.pi, np.pi, (3, 4, 5)))).astype(dtype)
    x[1, 2, 3] = complex(np.nan, 0.0)
    with np.errstate(all="ignore"):
        for view, t in layouts(x):
            for op in ("cumsum", "cumprod"):
                for axis in (0, 1, 2, None):
                    check(getattr(tl, op)(t, axis=axis), getattr(np, op)(view, axis=axis),
                          dtype, atol=10 * _tol(dtype))


def test_long_scans_and_cumulative():
    # longer than a 32-wide interpreter tile along the contiguous axis (blocked loop, carried
    # prefix) and along a strided one (stepped loop)
    ang = _RNG.uniform(-np.pi, np.pi, (3, 90))
    x = np.exp(1j * ang).astype(np.complex128)
    g = dev(x)
    check(tl.cumprod(g, axis=1), np.cumprod(x, axis=1))
    check(tl.cumprod(g.T, axis=0), np.cumprod(x.T, axis=0))
    check(tl.cumsum(g[:, ::-1], axis=1), np.cumsum(x[:, ::-1], axis=1))
    c = x.astype(np.complex64)[:, :20]
    for inc in (False, True):
        for op in ("cumulative_sum", "cumulative_prod"):
            check(getattr(tl, op)(dev(c), axis=1, include_initial=inc),
                  getattr(np, op)(c, axis=1, include_initial=inc), "complex64", atol=1e-5)
    f = _RNG.standard_normal((2, 9)).astype(np.float32)
    check(tl.cumsum(dev(f), axis=1, dtype=tl.complex64),
          np.cumsum(f, axis=1, dtype=np.complex64))
    out = tl.full((2, 9), 7 + 7j, dtype=tl.complex128, device="cuda")
    assert tl.cumprod(dev(f), axis=1, out=out) is out  # real scan into a complex out
    check(out, np.cumprod(f, axis=1).astype(np.complex128), "complex64")
    o64 = tl.empty((3, 20), dtype=tl.complex64, device="cuda")
    tl.cumsum(dev(x[:, :20]), axis=1, out=o64)
    check(o64, np.cumsum(x[:, :20], axis=1).astype(np.complex64))
    assert host(tl.cumsum(dev(np.zeros((0, 3), np.complex64)), axis=1)).shape == (0, 3)
    z = np.array([complex(-0.0, -0.0), 1 + 1j], np.complex64)
    first = host(tl.cumsum(dev(z)))[0]
    assert np.signbit(first.real) and np.signbit(first.imag)  # as NumPy's first element


# ---- matmul ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", CDTYPES)
def test_matmul_family_matches_numpy(dtype):
    tol = 1e-4 if dtype == "complex64" else 1e-11
    a, b = crand((5, 19), dtype), crand((19, 3), dtype)  # K not a multiple of BLOCK_K
    check(dev(a) @ dev(b), a @ b, dtype, atol=tol)
    check(tl.mm(dev(a.T).T, dev(b[::-1])[::-1]), a @ b, dtype, atol=tol)
    check(tl.matmul(dev(a)[::-1], dev(b)), a[::-1] @ b, dtype, atol=tol)
    A, B = crand((2, 4, 6), dtype), crand((2, 6, 3), dtype)
    check(tl.bmm(dev(A), dev(B)), A @ B, dtype, atol=tol)
    check(tl.matmul(dev(A), dev(b[:6])), A @ b[:6], dtype, atol=tol)   # folded batch
    check(tl.matmul(dev(a[:, :6]), dev(B)), a[:, :6] @ B, dtype, atol=tol)  # broadcast a
    v = crand((19,), dtype)
    check(tl.matmul(dev(v), dev(b)), v @ b, dtype, atol=tol)
    check(tl.matmul(dev(a), dev(v)), a @ v, dtype, atol=tol)
    x, y = crand((3, 7), dtype), crand((3, 7), dtype)
    check(tl.vecdot(dev(x), dev(y)), np.vecdot(x, y), dtype, atol=tol)   # conj(x) . y
    check(tl.vecdot(dev(x.T), dev(y.T), axis=0), np.vecdot(x.T, y.T, axis=0), dtype, atol=tol)
    check(tl.vecdot(dev(x), dev(y[0])), np.vecdot(x, y[0]), dtype, atol=tol)


def test_matmul_mixed_out_and_empty():
    a = crand((4, 5), np.complex64)
    f = _RNG.standard_normal((5, 3))
    check(dev(a) @ dev(f), a @ f, "complex64", atol=1e-4)           # -> complex128
    check(dev(a) @ dev(f.astype(np.float32)), a @ f.astype(np.float32), "complex64",
          atol=1e-4)
    out = tl.full((4, 3), 7 + 7j, dtype=tl.complex64, device="cuda")
    b = crand((5, 3), np.complex64)
    assert tl.matmul(dev(a), dev(b), out=out) is out
    check(out, a @ b, "complex64", atol=1e-4)
    col = tl.empty((3, 4), dtype=tl.complex64, device="cuda").T     # strided out: a temporary
    tl.matmul(dev(a), dev(b), out=col)
    check(col, a @ b, "complex64", atol=1e-4)
    check(dev(np.zeros((3, 0), np.complex64)) @ dev(np.zeros((0, 2), np.complex64)),
          np.zeros((3, 2), np.complex64))
    assert host(dev(np.zeros((0, 4), np.complex128)) @ dev(crand((4, 2), np.complex128))
                ).shape == (0, 2)
    nanm = a.copy()
    nanm[1, 2] = complex(np.nan, 0.0)
    with np.errstate(all="ignore"):
        got = host(dev(nanm) @ dev(b))
    assert np.isnan(got[1]).all() and not np.isnan(np.delete(got, 1, 0)).any()


# ---- the compiled (GPU) launch path ------------------------------------------------------------


@pytest.mark.skipif(not ptxas_available(), reason="Triton's ptxas is not available")
def test_compiled_complex_launches_compile(monkeypatch):
    """The compiled-mode kernels (tl.reduce / tl.associative_scan over (re, im) tuples, the
    two-accumulator matmul) run only on a GPU: capture their launches and compile each with
    the signature Triton's JIT derives from the captured arguments."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import mangle_type
    from tensorlib.kernels.cuda import launch

    captured = []
    monkeypatch.setattr(launch, "_forced", "compiled")
    monkeypatch.setenv("TENSORLIB_AUTOTUNE", "0")
    monkeypatch.setattr(launch, "launch", lambda kernel, grid, args, device, **kw:
                        captured.append((kernel, grid, args, kw)))
    z = dev(np.ones((4, 6), np.complex64))
    tl.prod(z, axis=1)
    tl.cumprod(z, axis=1)
    tl.vecdot(z, z)
    assert len(captured) == 3
    for kernel, grid, args, kw in captured:
        options = {k: kw[k] for k in ("num_warps", "num_stages", "enable_fp_fusion") if k in kw}
        const = {k: v for k, v in kw.items() if k not in options}
        sig = {name: mangle_type(value) for name, value in zip(kernel.arg_names, args)}
        sig.update({name: "constexpr" for name in const})
        assert set(sig) == set(kernel.arg_names)
        triton.compile(ASTSource(kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=options)

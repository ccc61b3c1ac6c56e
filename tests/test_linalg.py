"""tl.linalg (the Array API linear-algebra extension) against numpy.linalg.

Functions composed from tensorlib ops (outer, trace, diagonal, cross, vector_norm, matrix_norm,
matrix_power and the main-namespace wrappers) are checked value by value; the LAPACK ones
(cholesky, det, slogdet, inv, solve, eigh, eigvalsh, qr, svd, svdvals, pinv, matrix_rank) for
argument forwarding, result dtypes / named fields and reconstruction identities. float64 and
float32 only, small shapes (each new dtype signature compiles kernels).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import tensorlib as tl

L = tl.linalg
RNG = np.random.default_rng(7)


def T(a):
    return tl.asarray(np.ascontiguousarray(a))


def N(t):
    return np.array(t.numpy(), copy=True)


def close(got, want, dtype=None):
    got = N(got) if isinstance(got, tl.Tensor) else got
    want = np.asarray(want)
    assert got.dtype == (dtype or want.dtype), f"{got.dtype} != {dtype or want.dtype}"
    rtol = 1e-5 if got.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


A = RNG.standard_normal((2, 3, 3))
SPD = A @ A.transpose(0, 2, 1) + 3 * np.eye(3)


# ---------------------------------------------------------------- composed from tensorlib ops
def test_main_namespace_wrappers():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
    close(L.matmul(T(a), T(b)), a @ b)
    close(L.matrix_transpose(T(a)), np.swapaxes(a, -1, -2))
    close(L.vecdot(T(a), T(a), axis=1), np.linalg.vecdot(a, a, axis=1))
    c = RNG.standard_normal((2, 4, 3))
    close(L.tensordot(T(a), T(c), axes=([1, 2], [2, 1])),
          np.tensordot(a, c, axes=([1, 2], [2, 1])))


def test_outer():
    x, y = np.arange(1.0, 4.0), np.array([2.0, -1.0])
    close(L.outer(T(x), T(y)), np.outer(x, y))
    xi = np.array([1, -2, 3], np.int32)
    got = L.outer(T(xi), T(xi))
    assert got.dtype is tl.int32
    np.testing.assert_array_equal(N(got), np.outer(xi, xi))
    with pytest.raises(ValueError, match=r"outer\(\).*'x2'.*1-D"):
        L.outer(T(x), T(A))


@pytest.mark.parametrize("offset", [0, 1, -1, 5])
def test_trace_and_diagonal(offset):
    a = RNG.standard_normal((2, 3, 4))
    close(L.trace(T(a), offset=offset), np.trace(a, offset=offset, axis1=-2, axis2=-1))
    close(L.diagonal(T(a), offset=offset), np.diagonal(a, offset=offset, axis1=-2, axis2=-1))


def test_trace_dtypes():
    i = np.arange(9, dtype=np.int32).reshape(3, 3)
    r = L.trace(T(i))
    assert r.dtype is tl.int64 and int(r.item()) == 12  # default integer, as sum
    assert L.trace(T(i), dtype=tl.float64).dtype is tl.float64
    with pytest.raises(ValueError, match=r"trace\(\).*'x'.*2 dimensions"):
        L.trace(T(np.ones(3)))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_cross(axis):
    shape = [2, 4]
    shape.insert(axis % 3, 3)
    a, b = RNG.standard_normal(shape), RNG.standard_normal(shape)
    close(L.cross(T(a), T(b), axis=axis), np.cross(a, b, axis=axis))


def test_cross_broadcasts_and_checks():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((3,))
    close(L.cross(T(a), T(b)), np.cross(a, b))
    i = np.array([[1, 0, 0]], np.int64)
    np.testing.assert_array_equal(N(L.cross(T(i), T(np.array([0, 1, 0])))), [[0, 0, 1]])
    with pytest.raises(ValueError, match=r"cross\(\).*size 3"):
        L.cross(T(np.ones((2, 4))), T(np.ones((2, 4))))
    with pytest.raises(IndexError, match=r"cross\(\).*'axis' = 2"):
        L.cross(T(a), T(a), axis=2)


@pytest.mark.parametrize("ord", [2, 1, 0, math.inf, -math.inf, 3, 0.5, -1])
@pytest.mark.parametrize("axis", [None, 1, (0, 2), -1])
def test_vector_norm(ord, axis):
    x = RNG.standard_normal((2, 3, 4))
    x[0, 1, 2] = 0.0
    for keepdims in (False, True):
        with np.errstate(divide="ignore"):  # 0 ** negative ord
            want = np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
        close(L.vector_norm(T(x), axis=axis, keepdims=keepdims, ord=ord), want)


def test_vector_norm_dtypes():
    z = (RNG.standard_normal(5) + 1j * RNG.standard_normal(5)).astype(np.complex64)
    close(L.vector_norm(T(z)), np.linalg.vector_norm(z), np.float32)
    f = RNG.standard_normal(6).astype(np.float32)
    close(L.vector_norm(T(f), ord=1), np.linalg.vector_norm(f, ord=1), np.float32)
    i = np.array([3, -4], np.int32)
    r = L.vector_norm(T(i))
    assert r.dtype is tl.dtypes.default_float() and float(r.item()) == 5.0
    with pytest.raises(TypeError, match=r"vector_norm\(\).*'ord'"):
        L.vector_norm(T(f), ord="fro")


@pytest.mark.parametrize("ord", ["fro", 1, -1, math.inf, -math.inf, 2, -2, "nuc"])
def test_matrix_norm(ord):
    x = RNG.standard_normal((2, 3, 4))
    for keepdims in (False, True):
        close(L.matrix_norm(T(x), keepdims=keepdims, ord=ord),
              np.linalg.matrix_norm(x, keepdims=keepdims, ord=ord))
    with pytest.raises(ValueError, match=r"matrix_norm\(\).*'x'.*2 dimensions"):
        L.matrix_norm(T(np.ones(3)), ord=ord)


def test_matrix_norm_checks_ord():
    with pytest.raises(ValueError, match=r"matrix_norm\(\).*'ord'.*3"):
        L.matrix_norm(T(A), ord=3)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
def test_matrix_power(n):
    got = L.matrix_power(T(SPD), n)
    close(got, np.linalg.matrix_power(SPD, n))
    if n == 1:  # a new tensor, not the input
        assert got.numpy().ctypes.data != SPD.ctypes.data


def test_matrix_power_checks():
    i = np.array([[1, 1], [1, 0]], np.int64)
    np.testing.assert_array_equal(N(L.matrix_power(T(i), 10)), np.linalg.matrix_power(i, 10))
    with pytest.raises(ValueError, match=r"matrix_power\(\).*square"):
        L.matrix_power(T(np.ones((2, 3))), 2)
    with pytest.raises(TypeError, match=r"matrix_power\(\).*'n'"):
        L.matrix_power(T(SPD), 1.5)


# ---------------------------------------------------------------- LAPACK through NumPy
def test_det_slogdet_inv_solve():
    close(L.det(T(A)), np.linalg.det(A))
    sd = L.slogdet(T(A))
    assert sd._fields == ("sign", "logabsdet")
    close(sd.sign, np.linalg.slogdet(A).sign)
    close(sd.logabsdet, np.linalg.slogdet(A).logabsdet)
    close(L.inv(T(A)), np.linalg.inv(A))
    b = RNG.standard_normal((2, 3, 2))
    close(L.solve(T(A), T(b)), np.linalg.solve(A, b))
    v = RNG.standard_normal(3)
    close(L.solve(T(A[0]), T(v)), np.linalg.solve(A[0], v))  # 1-D x2 is a vector
    a32 = A.astype(np.float32)
    assert L.inv(T(a32)).dtype is tl.float32 and L.det(T(a32)).dtype is tl.float32


def test_cholesky_eigh_eigvalsh():
    lo = L.cholesky(T(SPD))
    close(lo, np.linalg.cholesky(SPD))
    up = L.cholesky(T(SPD), upper=True)
    close(up, np.swapaxes(np.linalg.cholesky(SPD), -1, -2))
    close(tl.matmul(L.matrix_transpose(up), up), SPD)
    res = L.eigh(T(SPD))
    assert res._fields == ("eigenvalues", "eigenvectors")
    w, v = res
    close(w, np.linalg.eigvalsh(SPD))
    close(tl.matmul(v, tl.multiply(tl.expand_dims(w, axis=-1), L.matrix_transpose(v))), SPD)
    close(L.eigvalsh(T(SPD)), np.linalg.eigvalsh(SPD))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_qr_svd_svdvals(shape):
    x = RNG.standard_normal(shape)
    for mode in ("reduced", "complete"):
        q, r = L.qr(T(x), mode=mode)
        wq, wr = np.linalg.qr(x, mode=mode)
        assert q.shape == wq.shape and r.shape == wr.shape
        close(tl.matmul(q, r), x)
    assert L.qr(T(x))._fields == ("Q", "R")
    for full in (True, False):
        u, s, vh = L.svd(T(x), full_matrices=full)
        wu, ws, wvh = np.linalg.svd(x, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
        close(s, ws)
    assert L.svd(T(x))._fields == ("U", "S", "Vh")
    close(L.svdvals(T(x)), np.linalg.svd(x, compute_uv=False))
    with pytest.raises(ValueError, match=r"qr\(\).*'mode'.*'r'"):
        L.qr(T(x), mode="r")


def test_pinv_and_matrix_rank():
    x = RNG.standard_normal((4, 3))
    x[:, 2] = x[:, 0] + x[:, 1]  # rank 2
    close(L.pinv(T(x)), np.linalg.pinv(x))
    close(L.pinv(T(x), rtol=0.5), np.linalg.pinv(x, rtol=0.5))
    assert int(L.matrix_rank(T(x)).item()) == 2
    assert int(L.matrix_rank(T(x), rtol=1.0).item()) == np.linalg.matrix_rank(x, rtol=1.0)
    b = np.stack([x, np.eye(4, 3)])
    np.testing.assert_array_equal(N(L.matrix_rank(T(b), rtol=T(np.array([1e-9, 1e-9])))),
                                  np.linalg.matrix_rank(b, rtol=np.array([1e-9, 1e-9])))


def test_lapack_errors_name_the_op():
    with pytest.raises(np.linalg.LinAlgError, match=r"linalg\.inv\(\).*[Ss]ingular"):
        L.inv(T(np.ones((3, 3))))
    with pytest.raises(ValueError, match=r"det\(\).*square.*\(2, 3\)"):
        L.det(T(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"svd\(\).*'x'.*2 dimensions"):
        L.svd(T(np.ones(3)))
    with pytest.raises(TypeError, match=r"linalg\.inv\(\).*float16"):
        L.inv(tl.ones((2, 2), dtype=tl.float16))
    with pytest.raises(TypeError, match=r"inv\(\).*'x'.*ndarray"):
        L.inv(np.eye(2))
    with pytest.raises(TypeError, match=r"pinv\(\).*'rtol'.*str"):
        L.pinv(T(A[0]), rtol="big")


def test_lapack_calls_go_through_blas_call(monkeypatch):
    """LAPACK work runs through cores.blas_call with its multiply-add count, as products do
    (one OpenBLAS thread for small work or beside a busy process: 400 x 400 inv there had
    taken 16 ms median, p90 60 ms, against 5.6 quiet), with the same results and errors."""
    from tensorlib.runtime.cpu import cores
    seen = []
    real = cores.blas_call
    monkeypatch.setattr(cores, "blas_call",
                        lambda fn, args, work: seen.append(work) or real(fn, args, work))
    a = np.random.default_rng(4).random((2, 5, 5)) + 5 * np.eye(5)
    np.testing.assert_allclose(N(L.inv(T(a))), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(N(L.svdvals(T(a[0, :, :3]))),
                               np.linalg.svdvals(a[0, :, :3]), rtol=1e-12)
    assert seen == [2 * 5 * 5 * 5, 5 * 3 * 3]
    with pytest.raises(np.linalg.LinAlgError, match=r"linalg\.inv\(\).*[Ss]ingular"):
        L.inv(T(np.ones((3, 3))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["dense", "strided", "transposed"])
def test_vector_norm_2_over_everything(dtype, layout):
    """ord 2 over all elements of a real tensor: sqrt(x . x) as NumPy (keepdims, strided and
    transposed views, nan and inf propagate)."""
    x = RNG.standard_normal((6, 10)).astype(dtype)
    v = {"dense": x, "strided": x[:, ::3], "transposed": x.T}[layout]
    t = {"dense": T(x), "strided": T(x)[:, ::3], "transposed": T(x).T}[layout]
    for keepdims in (False, True):
        got = L.vector_norm(t, keepdims=keepdims)
        want = np.linalg.vector_norm(v, keepdims=keepdims)
        assert got.dtype.name == np.dtype(dtype).name and got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if dtype == np.float32 else 1e-14)
    for bad in (np.nan, np.inf):
        y = x.copy()
        y[2, 3] = bad
        assert float(L.vector_norm(T(y))) == np.linalg.vector_norm(y) or bad != bad
        if bad != bad:
            assert np.isnan(float(L.vector_norm(T(y))))

"""Autograd through tl.linalg: the LAPACK functions' Functions (autograd/linalg_backward.py) and
the composed functions, checked against finite differences (gradcheck, float64 / complex128),
never against themselves; second derivatives (gradgradcheck) for inv, solve, det, slogdet."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck

L = tl.linalg
KINDS = ["real", "complex"]


def _rand(rng, shape, cplx):
    a = rng.uniform(-1, 1, shape)
    if cplx:
        a = a + 1j * rng.uniform(-1, 1, shape)
    return a


def leaf(shape, cplx=False, seed=0):
    return tl.asarray(_rand(np.random.default_rng(seed), shape, cplx)).requires_grad_()


def well_conditioned(n, cplx=False, batch=(), seed=0):
    """Random matrices with n added to the diagonal: far from singular."""
    a = _rand(np.random.default_rng(seed), batch + (n, n), cplx) + n * np.eye(n)
    return tl.asarray(a).requires_grad_()


def mH(x):
    return tl.conj(x.mT) if x.dtype.kind == "c" else x.mT


def herm(x):
    """The Hermitian part: eigh and cholesky read one triangle, so their gradients are those
    of a Hermitian input; finite differences need a function of all entries."""
    return (x + mH(x)) * 0.5


def spd(x):
    n = x.shape[-1]
    return x @ mH(x) + tl.asarray(n * np.eye(n), dtype=x.dtype)


def phase_free(u):
    """A function of (complex) singular / eigen vectors that does not depend on their arbitrary
    phases: |u|."""
    return tl.abs(u) if u.dtype.kind == "c" else u * 1


def _cases(c):
    return {
        "inv": (L.inv, [well_conditioned(3, c)]),
        "inv_batched": (L.inv, [well_conditioned(2, c, (2,))]),
        "solve": (L.solve, [well_conditioned(3, c), leaf((3, 2), c, 1)]),
        "solve_vector": (L.solve, [well_conditioned(3, c, (2,)), leaf((3,), c, 1)]),
        "solve_broadcast": (L.solve, [well_conditioned(3, c), leaf((2, 3, 2), c, 1)]),
        "det": (L.det, [well_conditioned(3, c)]),
        "det_batched": (L.det, [well_conditioned(2, c, (3,))]),
        "slogdet": (L.slogdet, [well_conditioned(3, c)]),
        "slogdet_negative": (L.slogdet, [tl.asarray(
            np.array([[0.0, 2.0], [1.5, 0.3]]) + (0.2j if c else 0)).requires_grad_()]),
        "cholesky": (lambda a: L.cholesky(spd(a)), [leaf((3, 3), c)]),
        "cholesky_upper": (lambda a: L.cholesky(spd(a), upper=True), [leaf((3, 3), c)]),
        "eigvalsh": (lambda a: L.eigvalsh(herm(a)), [leaf((3, 3), c)]),
        "eigh_values": (lambda a: L.eigh(herm(a)).eigenvalues, [leaf((3, 3), c)]),
        "eigh_vectors": (lambda a: phase_free(L.eigh(herm(a)).eigenvectors),
                         [leaf((3, 3), c)]),
        "eigh_both": (lambda a: (lambda r: (r.eigenvectors * tl.expand_dims(
            tl.exp(r.eigenvalues), axis=-2)) @ mH(r.eigenvectors))(L.eigh(herm(a))),
            [leaf((3, 3), c)]),
        "eigh_batched": (lambda a: (lambda r: (r.eigenvalues, phase_free(r.eigenvectors)))(
            L.eigh(herm(a))), [leaf((2, 2, 2), c)]),
        "cholesky_batched": (lambda a: L.cholesky(spd(a)), [leaf((2, 2, 2), c)]),
        "qr_batched": (L.qr, [leaf((2, 3, 2), c)]),
        "pinv_batched": (L.pinv, [leaf((2, 2, 3), c)]),
        "svdvals": (L.svdvals, [leaf((4, 3), c)]),
        "svd_tall": (lambda a: (lambda r: (phase_free(r.U), r.S, phase_free(r.Vh),
                                           r.U @ r.Vh))(L.svd(a, full_matrices=False)),
                     [leaf((4, 3), c)]),
        "svd_wide": (lambda a: (lambda r: (phase_free(r.U), r.S, phase_free(r.Vh),
                                           r.U @ r.Vh))(L.svd(a, full_matrices=False)),
                     [leaf((3, 4), c)]),
        "svd_batched": (lambda a: (lambda r: (r.S, r.U @ r.Vh))(L.svd(a, full_matrices=False)),
                        [leaf((2, 3, 2), c)]),
        "svd_full_matrices": (lambda a: phase_free(L.svd(a).U[..., :, :2]), [leaf((4, 2), c)]),
        "qr_tall": (L.qr, [leaf((4, 3), c)]),
        "qr_square": (L.qr, [leaf((3, 3), c)]),
        "qr_wide": (L.qr, [leaf((3, 4), c)]),
        "pinv_tall": (L.pinv, [leaf((4, 3), c)]),
        "pinv_wide": (L.pinv, [leaf((2, 4), c)]),
        # composed from the functions above and tensorlib ops
        "matrix_norm_fro": (L.matrix_norm, [leaf((3, 3), c)]),
        "matrix_norm_2": (lambda a: L.matrix_norm(a, ord=2), [leaf((3, 3), c)]),
        "matrix_norm_-2": (lambda a: L.matrix_norm(a, ord=-2), [leaf((3, 3), c)]),
        "matrix_norm_nuc": (lambda a: L.matrix_norm(a, ord="nuc", keepdims=True),
                            [leaf((2, 3, 3), c)]),
        "matrix_norm_1": (lambda a: L.matrix_norm(a, ord=1), [leaf((3, 3), c)]),
        "matrix_norm_inf": (lambda a: L.matrix_norm(a, ord=float("inf")), [leaf((3, 3), c)]),
        "vector_norm_2": (lambda a: L.vector_norm(a, axis=-1), [leaf((2, 3), c)]),
        "vector_norm_3": (lambda a: L.vector_norm(a, ord=3), [leaf((2, 3), c)]),
        "vector_norm_inf": (lambda a: L.vector_norm(a, ord=float("inf"), axis=0),
                            [leaf((2, 3), c)]),
        "matrix_power_3": (lambda a: L.matrix_power(a, 3), [leaf((3, 3), c)]),
        "matrix_power_-2": (lambda a: L.matrix_power(a, -2), [well_conditioned(3, c)]),
        "trace": (lambda a: L.trace(a, offset=1), [leaf((2, 3, 3), c)]),
        "outer": (L.outer, [leaf((3,), c), leaf((2,), c, 1)]),
        "cross": (L.cross, [leaf((2, 3), c), leaf((3,), c, 1)]),
        "matmul": (L.matmul, [leaf((2, 3), c), leaf((3, 2), c, 1)]),
        "vecdot": (L.vecdot, [leaf((2, 3), c), leaf((3,), c, 1)]),
        "tensordot": (lambda a, b: L.tensordot(a, b, axes=([1], [0])),
                      [leaf((2, 3), c), leaf((3, 2), c, 1)]),
        "diagonal": (lambda a: L.diagonal(a, offset=-1) * 1, [leaf((3, 3), c)]),
    }


_NAMES = list(_cases(False))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", _NAMES)
def test_gradcheck(name, kind):
    fn, args = _cases(kind == "complex")[name]
    assert gradcheck(fn, args)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["inv", "solve", "det", "slogdet"])
def test_gradgradcheck(name, kind):
    fn, args = _cases(kind == "complex")[name]
    if name == "slogdet":
        fn = (lambda a: L.slogdet(a).logabsdet)
    assert gradgradcheck(fn, args)


def test_grad_fn_and_no_grad():
    a = well_conditioned(3)
    y = L.inv(a)
    assert y.requires_grad and y.grad_fn.name() == "LinalgInvBackward"
    with tl.no_grad():
        assert not L.inv(a).requires_grad
    plain = tl.asarray(np.eye(2) * 2.0)
    assert not L.inv(plain).requires_grad and L.inv(plain).grad_fn is None
    # the values are LAPACK's either way
    np.testing.assert_allclose(y.detach().numpy(), np.linalg.inv(a.detach().numpy()))


def test_backward_accumulates_matches_closed_form():
    # d/dA sum(inv(A)) = -(A^-T 1 A^-T): an independent closed form from NumPy
    a = well_conditioned(3, seed=3)
    tl.sum(L.inv(a)).backward()
    ai = np.linalg.inv(a.detach().numpy())
    expect = -(ai.T @ np.ones((3, 3)) @ ai.T)
    np.testing.assert_allclose(a.grad.numpy(), expect, rtol=1e-12, atol=1e-12)


def test_multi_output_unused_outputs():
    # only S of svd used: the singular vectors' gradient is absent (not zeros to check)
    a = leaf((3, 3), seed=5)
    r = L.svd(a, full_matrices=False)
    (g,) = tl.autograd.grad(tl.sum(r.S), [a])
    u, vh = r.U.detach().numpy(), r.Vh.detach().numpy()
    np.testing.assert_allclose(g.numpy(), u @ vh, atol=1e-12)


def test_phase_dependent_loss_raises():
    a = leaf((3, 3), cplx=True, seed=2)
    v = L.eigh(herm(a)).eigenvectors
    with pytest.raises(RuntimeError, match="phase"):
        tl.autograd.grad(tl.sum(tl.real(v)), [a])
    u = L.svd(a, full_matrices=False).U
    with pytest.raises(RuntimeError, match="phase"):
        tl.autograd.grad(tl.sum(tl.imag(u)), [a])


def test_qr_complete_tall_not_differentiable():
    a = leaf((4, 2))
    q, r = L.qr(a, mode="complete")
    with pytest.raises(RuntimeError, match="mode='complete'"):
        tl.sum(q).backward()


def test_saved_input_modified_in_place_raises():
    a = well_conditioned(2)
    x = a * 1
    b = leaf((2, 1), seed=1)
    y = L.solve(x, b)
    with tl.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation|version"):
        tl.sum(y).backward()


def test_float32_gradient_dtype():
    a = tl.asarray(np.eye(3, dtype=np.float32) * 2 + 0.1).requires_grad_()
    tl.sum(L.det(a) * 1).backward()
    assert a.grad.dtype == tl.float32
    ai = np.linalg.inv(a.detach().numpy().astype(np.float64))
    expect = np.linalg.det(a.detach().numpy().astype(np.float64)) * ai.T
    np.testing.assert_allclose(a.grad.numpy(), expect, rtol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_det_singular(kind):
    # the gradient of det is the (transposed, conjugated) adjugate, also where inv fails
    a = tl.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]), requires_grad=True)
    L.det(a).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    v = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, -1.0]])
    if kind == "complex":
        v = v * (1 + 0.5j)
    batch = np.stack([v, np.zeros((3, 3), v.dtype)])  # rank 2 and rank 0
    assert gradcheck(L.det, [tl.asarray(batch, requires_grad=True)])

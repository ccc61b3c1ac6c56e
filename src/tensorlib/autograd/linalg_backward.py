"""Autograd for tl.linalg's LAPACK functions (inv, solve, det, slogdet, cholesky, eigh, eigvalsh,
svd, svdvals, qr, pinv).

They are plain Python over numpy.linalg, not dispatcher ops, so each gets an autograd Function
here; importing this module registers their ``apply`` in ``linalg._GRAD``, where the public
functions route when an argument requires grad. Backwards are written in tensorlib ops and the
public (differentiable) linalg functions, so they record a graph under create_graph: double
backward works where the formula's pieces are differentiable (inv, solve, det, slogdet, ...).

Formulas follow PyTorch's (FunctionsManual.cpp), complex inputs under its convention (the
gradient is the conjugate Wirtinger derivative, ``dL = Re tr(G^H dA)``):

* inv:      gA = -Y^H g Y^H                       (Y = A^-1)
* solve:    gB = solve(A^H, g),  gA = -gB X^H     (X = A^-1 B)
* det:      gA = (g conj(det)) A^-H; for a singular A the adjugate, through the SVD
* slogdet:  gA = c A^-H, c = g_logabs + i Im(g_sign conj(sign)) (the sign of a real matrix is
  locally constant: no gradient)
* cholesky: gA = L^-H Phi L^-1, Phi the Hermitian matrix whose lower part is tril(L^H gL) with
  the diagonal halved (and its imaginary part dropped)
* eigh:     gA = V (diag(gL) + F o (M - M^H)/2) V^H, M = V^H gV, F_ij = 1/(l_j - l_i)
* svd:      gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS) + i Im diag(U^H gU) / S]
  V^H plus the parts of gU (gV) outside the span of U (V) when the matrix is not square;
  E_ij = s_j^2 - s_i^2
* qr:       gA = (gQ + Q N) R^-H, N the Hermitian copy of triu(gR R^H - Q^H gQ) (m >= n); wide
  matrices split A = [X | Y] as PyTorch does
* pinv:     the Golub-Pereyra derivative (constant rank)

eigh and cholesky read only the lower triangle of their input: their gradients are those of a
Hermitian input (symmetrize the input to check them with finite differences). Repeated
eigenvalues / singular values make the eigenvector / singular vector gradients infinite, as in
PyTorch; a loss that depends on the arbitrary phase of complex eigenvectors / singular vectors
raises RuntimeError, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from .. import linalg as _la
from .formulas import conj, sum_to
from .function import Function
from ..dispatch.namespace import ops as tl

__all__ = ["LinalgInv", "LinalgSolve", "LinalgDet", "LinalgSlogdet", "LinalgCholesky",
           "LinalgEigh", "LinalgEigvalsh", "LinalgSvd", "LinalgSvdvals", "LinalgQr",
           "LinalgPinv"]


def _mH(x):
    """Conjugate transpose of the last two dims."""
    return conj(tl.matrix_transpose(x))


def _eye_like(x, n):
    return tl.eye(n, dtype=x.dtype, device=x.device)


def _diag_embed(v):
    """Square matrices with ``v`` (..., n) on the diagonal."""
    n = v.shape[-1]
    return tl.expand_dims(v, axis=-1) * _eye_like(v, n)


def _diag(x):
    return tl.diagonal(x, 0, -2, -1)


def _row(v):
    """(..., k) -> (..., 1, k): v[j] scales column j."""
    return tl.expand_dims(v, axis=-2)


def _col(v):
    """(..., k) -> (..., k, 1): v[i] scales row i."""
    return tl.expand_dims(v, axis=-1)


def _check_gauge(op, im_diag, ref, what):
    """A loss of complex eigen/singular vectors must not depend on their arbitrary phases:
    then Im diag(V^H gV) vanishes. PyTorch raises here too (with a looser tolerance)."""
    im = np.abs(im_diag.detach().numpy())  # (linalg runs on the CPU only)
    scale = 1.0 + float(np.max(np.abs(ref.detach().numpy()), initial=0.0))
    tol = np.sqrt(np.finfo(im.dtype).eps) * scale
    if im.size and float(im.max()) > tol:
        raise RuntimeError(
            f"linalg.{op}(): the loss depends on the phase of the {what}, which is arbitrary "
            f"(any v * exp(i phi) is as valid), so its gradient is not defined (max |Im diag| = "
            f"{float(im.max()):.3g}); use a phase-invariant function of them")


# ---------------------------------------------------------------- inv, solve, det, slogdet
class LinalgInv(Function):
    @staticmethod
    def forward(ctx, a):
        y = _la._inv(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        yh = _mH(y)
        return -tl.matmul(tl.matmul(yh, g), yh)


class LinalgSolve(Function):
    @staticmethod
    def forward(ctx, a, b):
        x = _la._solve(a, b)
        ctx.save_for_backward(a, x)
        ctx.meta = (a.shape, b.shape, b.ndim == 1)
        return x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        a_shape, b_shape, vec = ctx.meta
        if vec:  # a right-hand vector: one column
            g = tl.expand_dims(g, axis=-1)
            x = tl.expand_dims(x, axis=-1)
        gb = _la.solve(_mH(a), g)
        ga = None
        if ctx.needs_input_grad[0]:
            ga = sum_to(-tl.matmul(gb, _mH(x)), a_shape)
        if vec:
            gb = tl.squeeze(gb, axis=-1)
        return ga, (sum_to(gb, b_shape) if ctx.needs_input_grad[1] else None)


class LinalgDet(Function):
    @staticmethod
    def forward(ctx, a):
        d = _la._det(a)
        ctx.save_for_backward(a, d)
        return d

    @staticmethod
    def backward(ctx, g):
        a, d = ctx.saved_tensors
        try:
            ainv = _la.inv(a)
        except np.linalg.LinAlgError:
            return _det_backward_singular(a, g)
        return _col(_col(g * conj(d))) * _mH(ainv)


def _det_backward_singular(a, g):
    """d det / dA is the adjugate, defined for singular A too: with A = U S Vh,
    adj(A)^H = conj(det U det Vh) U diag(prod_{j != i} s_j) Vh. (Not recorded for double
    backward: the SVD of a singular matrix has repeated zero singular values.)"""
    u, s, vh = _la._svd(a.detach(), False)
    n = s.shape[-1]
    eye = _eye_like(s, n)
    others = tl.prod(tl.where(tl.astype(eye, bool), tl.ones_like(eye), _row(s)), axis=-1)
    phase = conj(_la._det(u) * _la._det(vh))
    adj_h = tl.matmul(u * _row(others.astype(u.dtype)), vh)
    return _col(_col(g * phase)) * adj_h


class LinalgSlogdet(Function):
    @staticmethod
    def forward(ctx, a):
        sign, logabs = _la._slogdet(a)
        ctx.save_for_backward(a, sign)
        ctx.set_materialize_grads(False)
        return sign, logabs

    @staticmethod
    def backward(ctx, g_sign, g_logabs):
        a, sign = ctx.saved_tensors
        if a.dtype.kind == "c":
            c = tl.zeros(sign.shape, dtype=a.dtype, device=a.device)
            if g_logabs is not None:
                c = c + g_logabs
            if g_sign is not None:
                c = c + tl.imag(g_sign * conj(sign)) * 1j
        elif g_logabs is None:
            return None
        else:
            c = g_logabs
        return _col(_col(c)) * _mH(_la.inv(a))


# ---------------------------------------------------------------- cholesky
class LinalgCholesky(Function):
    @staticmethod
    def forward(ctx, a, upper):
        f = _la._cholesky(a, upper)
        ctx.save_for_backward(f)
        ctx.upper = upper
        return f

    @staticmethod
    def backward(ctx, g):
        (f,) = ctx.saved_tensors
        lo, gl = (_mH(f), _mH(g)) if ctx.upper else (f, g)
        m = tl.matmul(_mH(lo), gl)
        t = tl.tril(m, k=-1) + 0.5 * _diag_embed(_diag(m))
        phi = 0.5 * (t + _mH(t))
        if phi.dtype.kind == "c":  # Hermitian: a real diagonal
            phi = phi - _diag_embed(tl.imag(_diag(phi)) * 1j)
        linv = _la.inv(lo)
        return tl.matmul(tl.matmul(_mH(linv), phi), linv), None


# ---------------------------------------------------------------- eigh, eigvalsh
def _eigh_backward(w, v, gw, gv):
    n = w.shape[-1]
    inner = None
    if gv is not None:
        m = tl.matmul(_mH(v), gv)
        if v.dtype.kind == "c":
            _check_gauge("eigh", tl.imag(_diag(m)), m, "eigenvectors")
        eye = _eye_like(w, n)
        e = _row(w) - _col(w) + eye        # e_ij = l_j - l_i, 1 on the diagonal
        f = (1.0 - eye) / e
        inner = f * (0.5 * (m - _mH(m)))
    if gw is not None:
        d = _diag_embed(gw.astype(v.dtype) if gw.dtype is not v.dtype else gw)
        inner = d if inner is None else inner + d
    if inner is None:
        return None
    return tl.matmul(tl.matmul(v, inner), _mH(v))


class LinalgEigh(Function):
    @staticmethod
    def forward(ctx, a):
        w, v = _la._eigh(a)
        ctx.save_for_backward(w, v)
        ctx.set_materialize_grads(False)
        return w, v

    @staticmethod
    def backward(ctx, gw, gv):
        w, v = ctx.saved_tensors
        return _eigh_backward(w, v, gw, gv)


class LinalgEigvalsh(Function):
    @staticmethod
    def forward(ctx, a):
        w, v = _la._eigh(a)
        ctx.save_for_backward(v)
        return w

    @staticmethod
    def backward(ctx, gw):
        (v,) = ctx.saved_tensors
        g = gw.astype(v.dtype) if gw.dtype is not v.dtype else gw
        return tl.matmul(v * _row(g), _mH(v))


# ---------------------------------------------------------------- svd, svdvals
def _svd_backward(u, s, vh, gu, gs, gvh):
    """u (.., m, k), s (.., k), vh (.., k, n): the reduced factors."""
    m, k, n = u.shape[-2], s.shape[-1], vh.shape[-1]
    if gu is None and gvh is None:
        if gs is None:
            return None
        return tl.matmul(u * _row(gs.astype(u.dtype)), vh)
    cplx = u.dtype.kind == "c"
    v = _mH(vh)
    sc = s.astype(u.dtype) if cplx else s
    eye = _eye_like(s, k)
    s2 = s * s
    e = _row(s2) - _col(s2) + eye           # e_ij = s_j^2 - s_i^2, 1 on the diagonal
    finv = (1.0 - eye) / e
    inner = None
    mu = mv = None
    if gu is not None:
        mu = tl.matmul(_mH(u), gu)
        inner = (mu - _mH(mu)) * _row(sc)
    if gvh is not None:
        mv = tl.matmul(vh, _mH(gvh))        # V^H gV
        t = _col(sc) * (mv - _mH(mv))
        inner = t if inner is None else inner + t
    if cplx:
        im = None
        for mm in (mu, mv):
            if mm is not None:
                im = tl.imag(_diag(mm)) if im is None else im + tl.imag(_diag(mm))
        _check_gauge("svd", im, mu if mu is not None else mv, "singular vectors")
    inner = inner * finv
    if gs is not None:
        inner = inner + _diag_embed(gs.astype(u.dtype) if cplx else gs)
    if cplx and mu is not None:
        inner = inner + _diag_embed(tl.imag(_diag(mu)) / s * 1j)
    ga = tl.matmul(tl.matmul(u, inner), vh)
    if m > k and gu is not None:
        # the part of gU outside span(U): (I - U U^H) gU S^-1 V^H
        gus = gu / _row(sc)
        ga = ga + tl.matmul(gus - tl.matmul(u, tl.matmul(_mH(u), gus)), vh)
    if n > k and gvh is not None:
        # likewise for gV: U S^-1 gV^H (I - V V^H)
        gvs = gvh / _col(sc)
        ga = ga + tl.matmul(u, gvs - tl.matmul(tl.matmul(gvs, v), vh))
    return ga


class LinalgSvd(Function):
    @staticmethod
    def forward(ctx, a, full_matrices):
        u, s, vh = _la._svd(a, full_matrices)
        ctx.save_for_backward(u, s, vh)
        ctx.set_materialize_grads(False)
        return u, s, vh

    @staticmethod
    def backward(ctx, gu, gs, gvh):
        u, s, vh = ctx.saved_tensors
        k = s.shape[-1]
        # full_matrices: the columns past k are an arbitrary basis of the complement; their
        # gradients are ignored, as PyTorch documents
        if u.shape[-1] != k:
            u = tl.narrow(u, -1, 0, k)
            gu = None if gu is None else tl.narrow(gu, -1, 0, k)
        if vh.shape[-2] != k:
            vh = tl.narrow(vh, -2, 0, k)
            gvh = None if gvh is None else tl.narrow(gvh, -2, 0, k)
        return _svd_backward(u, s, vh, gu, gs, gvh), None


class LinalgSvdvals(Function):
    @staticmethod
    def forward(ctx, a):
        u, s, vh = _la._svd(a, False)
        ctx.save_for_backward(u, vh)
        return s

    @staticmethod
    def backward(ctx, gs):
        u, vh = ctx.saved_tensors
        return tl.matmul(u * _row(gs.astype(u.dtype)), vh)


# ---------------------------------------------------------------- qr
def _qr_square_backward(q, r, gq, gr):
    """m >= n (Q m x n, R n x n)."""
    m_ = tl.matmul(gr, _mH(r)) - tl.matmul(_mH(q), gq)
    up = tl.triu(m_, k=1)
    dg = _diag(m_)
    if dg.dtype.kind == "c":
        dg = tl.real(dg).astype(m_.dtype)
    nmat = up + _mH(up) + _diag_embed(dg)
    y = gq + tl.matmul(q, nmat)
    # y R^-H = (R^-1 y^H)^H
    return _mH(_la.solve(r, _mH(y)))


class LinalgQr(Function):
    @staticmethod
    def forward(ctx, a, mode):
        q, r = _la._qr(a, mode)
        ctx.save_for_backward(a, q, r)
        ctx.mode = mode
        return q, r

    @staticmethod
    def backward(ctx, gq, gr):
        a, q, r = ctx.saved_tensors
        m, n = a.shape[-2], a.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError(
                f"linalg.qr(): mode='complete' with more rows than columns (shape {a.shape}) is "
                f"not differentiable: the last {m - n} columns of Q are an arbitrary basis; use "
                f"mode='reduced'")
        if m >= n:
            return _qr_square_backward(q, r, gq, gr), None
        # wide: A = [X | Y] with X = Q R1 square and Y = Q R2
        gr1, gr2 = tl.narrow(gr, -1, 0, m), tl.narrow(gr, -1, m, n - m)
        y = tl.narrow(a, -1, m, n - m)
        gx = _qr_square_backward(q, tl.narrow(r, -1, 0, m),
                                 gq + tl.matmul(y, _mH(gr2)), gr1)
        return tl.concat([gx, tl.matmul(q, gr2)], axis=-1), None


# ---------------------------------------------------------------- pinv
class LinalgPinv(Function):
    @staticmethod
    def forward(ctx, a, rtol):
        p = _la._pinv(a, rtol)
        ctx.save_for_backward(a, p)
        return p

    @staticmethod
    def backward(ctx, g):
        a, p = ctx.saved_tensors
        ph, gh = _mH(p), _mH(g)
        # dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P, transposed into gA
        ga = -tl.matmul(tl.matmul(ph, g), ph)
        t = tl.matmul(gh, tl.matmul(p, ph))                       # m x m-side: G^H P P^H
        ga = ga + t - tl.matmul(a, tl.matmul(p, t))               # (I - A P) G^H P P^H
        t2 = tl.matmul(tl.matmul(ph, p), gh)                      # P^H P G^H
        ga = ga + t2 - tl.matmul(tl.matmul(t2, p), a)             # ... (I - P A)
        return ga, None


_la._GRAD.update(
    inv=LinalgInv.apply, solve=LinalgSolve.apply, det=LinalgDet.apply,
    slogdet=LinalgSlogdet.apply, cholesky=LinalgCholesky.apply, eigh=LinalgEigh.apply,
    eigvalsh=LinalgEigvalsh.apply, svd=LinalgSvd.apply, svdvals=LinalgSvdvals.apply,
    qr=LinalgQr.apply, pinv=LinalgPinv.apply)

"""tl.nn.functional: values against NumPy references, gradients against finite differences
(gradcheck, float64), dropout statistics and reproducibility, bad input."""
import math

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck

F = tl.nn.functional


def _t(a, requires_grad=True):
    return tl.asarray(np.asarray(a, dtype=np.float64)).requires_grad_(requires_grad)


def _np(t):
    return np.asarray(t.detach().numpy())


def _erf(x):
    return np.vectorize(math.erf)(x)


def _away_from(rng, shape, points=(0.0,), margin=0.05):
    """Normal samples at least ``margin`` from each kink (finite differences straddle none)."""
    x = rng.standard_normal(shape)
    for p in points:
        near = np.abs(x - p) < margin
        x[near] = p + np.where(x[near] >= p, margin, -margin) * 2
    return x


# ---------------------------------------------------------------- activations
def test_relu_values_grad_and_nan():
    rng = np.random.default_rng(0)
    x = _away_from(rng, (3, 4))
    np.testing.assert_array_equal(_np(F.relu(_t(x))), np.maximum(x, 0))
    assert gradcheck(F.relu, [_t(x)])
    assert gradgradcheck(F.relu, [_t(x[:2])])
    # the gradient at exactly 0 is 0 (PyTorch's choice), and nan propagates
    z = _t([0.0, -1.0, 2.0])
    F.relu(z).sum().backward()
    np.testing.assert_array_equal(_np(z.grad), [0.0, 0.0, 1.0])
    assert np.isnan(_np(F.relu(_t([np.nan], False)))[0])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5)) * 2
    if approximate == "none":
        want = 0.5 * x * (1 + _erf(x / np.sqrt(2)))
    else:
        want = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(_np(F.gelu(_t(x), approximate=approximate)), want, rtol=1e-12,
                               atol=1e-14)
    assert gradcheck(lambda a: F.gelu(a, approximate=approximate), [_t(x)])
    assert gradgradcheck(lambda a: F.gelu(a, approximate=approximate), [_t(x[:1, :3])])


def test_gelu_float32_matches_float64():
    x = np.linspace(-6, 6, 101)
    got = _np(F.gelu(tl.asarray(x.astype(np.float32))))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 0.5 * x * (1 + _erf(x / np.sqrt(2))), atol=2e-6)


def test_silu():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 3)) * 3
    np.testing.assert_allclose(_np(F.silu(_t(x))), x / (1 + np.exp(-x)), rtol=1e-12)
    assert gradcheck(F.silu, [_t(x)])
    assert gradgradcheck(F.silu, [_t(x[:2])])


# ---------------------------------------------------------------- linear
def test_linear_values_and_gradcheck():
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), \
        rng.standard_normal(5)
    np.testing.assert_allclose(_np(F.linear(_t(x), _t(w), _t(b))), x @ w.T + b, rtol=1e-12)
    np.testing.assert_allclose(_np(F.linear(_t(x), _t(w))), x @ w.T, rtol=1e-12)
    assert gradcheck(F.linear, [_t(x), _t(w), _t(b)])
    assert gradcheck(lambda a, c: F.linear(a, c), [_t(x[0]), _t(w)])
    assert gradcheck(F.linear, [_t(x[0, 0]), _t(w), _t(b)])  # a 1-D input
    assert gradgradcheck(F.linear, [_t(x[0, :2]), _t(w[:3]), _t(b[:3])])
    # only some inputs requiring grad
    assert gradcheck(F.linear, [_t(x, False), _t(w), _t(b, False)])
    assert gradcheck(F.linear, [_t(x), _t(w, False), _t(b)])
    # the weight's gradient comes back in the weight's own (C) layout, ready for optimizers
    xt, wt = _t(x), _t(w)
    F.linear(xt, wt).sum().backward()
    assert wt.grad.is_contiguous()
    np.testing.assert_allclose(_np(wt.grad), np.ones((2, 3, 5)).reshape(-1, 5).T
                               @ x.reshape(-1, 4), rtol=1e-12)
    # mixed dtypes take the composed path (matmul's promotion)
    y = F.linear(tl.asarray(x.astype(np.float32)), _t(w))
    assert y.dtype == tl.float64
    # a 1-D weight drops the feature dim; its bias is 0-d
    w1, b1 = rng.standard_normal(4), rng.standard_normal(())
    np.testing.assert_allclose(_np(F.linear(_t(x), _t(w1), _t(b1))), x @ w1 + b1, rtol=1e-12)
    assert gradcheck(F.linear, [_t(x[0]), _t(w1), _t(b1)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_2d_bias_added_into_the_product(dtype):
    """2-D CPU linear adds its bias into the fresh product in one call: the bits of the
    composed matmul + add, for a contiguous, a strided bias and a transposed (strided) weight;
    gradients against finite differences."""
    rng = np.random.default_rng(11)
    x = tl.asarray(rng.standard_normal((7, 5)).astype(dtype))
    w = tl.asarray(rng.standard_normal((6, 5)).astype(dtype))
    wt = tl.matrix_transpose(tl.asarray(rng.standard_normal((5, 6)).astype(dtype)))
    b = tl.asarray(rng.standard_normal(6).astype(dtype))
    b_strided = tl.asarray(rng.standard_normal(12).astype(dtype))[::2]
    for weight in (w, wt):
        for bias in (b, b_strided, None):
            got = F.linear(x, weight, bias)
            composed = tl.matmul(x, tl.matrix_transpose(weight))
            if bias is not None:
                composed = composed + bias
            assert got.dtype == x.dtype and got.shape == (7, 6) and got.is_contiguous()
            np.testing.assert_array_equal(_np(got), _np(composed))
            want = _np(x).astype(np.float64) @ _np(weight).astype(np.float64).T
            if bias is not None:
                want = want + _np(bias)
            np.testing.assert_allclose(_np(got), want, rtol=1e-5 if dtype == np.float32
                                       else 1e-12, atol=1e-5 if dtype == np.float32 else 0)
    assert gradcheck(F.linear, [_t(_np(x)), _t(_np(w)), _t(_np(b))])
    assert gradcheck(F.linear, [_t(_np(x)), _t(_np(wt)), _t(_np(b_strided))])


def test_linear_2d_backward_direct_and_recorded_agree():
    """A 2-D backward that is not recorded calls the matmul kernel directly (grad^T as a view);
    under create_graph it runs the ops: both give the same bits, and the values of the
    float64 NumPy products."""
    rng = np.random.default_rng(13)
    xn = rng.standard_normal((9, 5)).astype(np.float32)
    wn = rng.standard_normal((4, 5)).astype(np.float32)
    bn = rng.standard_normal(4).astype(np.float32)
    gn = rng.standard_normal((9, 4)).astype(np.float32)
    grads = []
    for create_graph in (False, True):
        x, w, b = (tl.asarray(a).requires_grad_() for a in (xn, wn, bn))
        got = tl.autograd.grad(F.linear(x, w, b), (x, w, b), tl.asarray(gn),
                               create_graph=create_graph)
        grads.append([_np(t) for t in got])
    for direct, recorded in zip(*grads):
        np.testing.assert_array_equal(direct, recorded)
    g64 = gn.astype(np.float64)
    for got, want in zip(grads[0], (g64 @ wn, g64.T @ xn, g64.sum(axis=0))):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_linear_traced_and_profiled_record_ops():
    """The 2-D route adds the bias outside the dispatcher: under tl.jit.trace and the profiler
    linear runs the ops (matmul, add), so the trace replays it and the profiler counts them."""
    rng = np.random.default_rng(12)
    x = tl.asarray(rng.standard_normal((3, 4)).astype(np.float32))
    w = tl.asarray(rng.standard_normal((2, 4)).astype(np.float32))
    b = tl.asarray(rng.standard_normal(2).astype(np.float32))
    traced = tl.jit.trace(lambda a: F.linear(a, w, b), (x,))
    assert "matmul" in str(traced.graph) and "add" in str(traced.graph)
    x2 = x * 2 + 1
    np.testing.assert_array_equal(_np(traced(x2)), _np(F.linear(x2, w, b)))
    with tl.profiler.profile() as prof:
        F.linear(x, w, b)
    rows = {r.key: r.count for r in prof.key_averages()}
    assert rows.get("matmul") == 1 and rows.get("add") == 1


def test_linear_bad_input():
    x, w = _t(np.ones((2, 4)), False), _t(np.ones((3, 4)), False)
    with pytest.raises(ValueError, match=r"linear\(\).*in_features"):
        F.linear(x, _t(np.ones((3, 5)), False))
    with pytest.raises(ValueError, match=r"linear\(\).*'weight'.*1-D or 2-D"):
        F.linear(x, _t(np.ones((1, 3, 4)), False))
    with pytest.raises(ValueError, match=r"linear\(\).*'bias'.*\(3,\)"):
        F.linear(x, w, _t(np.ones(4), False))
    with pytest.raises(TypeError, match=r"linear\(\).*'weight'.*Tensor"):
        F.linear(x, np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"linear\(\).*0-d"):
        F.linear(_t(1.0, False), w)


# ---------------------------------------------------------------- dropout
def test_dropout_statistics():
    n, p = 200_000, 0.3
    x = tl.ones((n,), dtype=tl.float32)
    y = _np(F.dropout(x, p, generator=tl.Generator().manual_seed(7)))
    kept = y != 0
    # the zeroed fraction is Binomial(n, p) / n: within 5 standard deviations of p
    assert abs((~kept).mean() - p) < 5 * math.sqrt(p * (1 - p) / n)
    np.testing.assert_allclose(y[kept], np.float32(1 / (1 - p)), rtol=1e-6)
    assert abs(y.mean() - 1.0) < 5 * math.sqrt(p / (1 - p) / n)  # unbiased in expectation


def test_dropout_generator_reproducible_and_gradient():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 7))
    a = F.dropout(_t(x, False), 0.5, generator=tl.Generator().manual_seed(3))
    b = F.dropout(_t(x, False), 0.5, generator=tl.Generator().manual_seed(3))
    c = F.dropout(_t(x, False), 0.5, generator=tl.Generator().manual_seed(4))
    np.testing.assert_array_equal(_np(a), _np(b))
    assert not np.array_equal(_np(a), _np(c))
    # the generator advances: two calls on one generator differ
    g = tl.Generator().manual_seed(3)
    assert not np.array_equal(_np(F.dropout(_t(x, False), 0.5, generator=g)),
                              _np(F.dropout(_t(x, False), 0.5, generator=g)))
    # the mask is a constant: gradcheck with a freshly seeded generator per evaluation
    assert gradcheck(lambda t: F.dropout(t, 0.4, generator=tl.Generator().manual_seed(9)),
                     [_t(x)])
    # the gradient is the mask scaled by 1 / (1 - p)
    xt = _t(x)
    y = F.dropout(xt, 0.4, generator=tl.Generator().manual_seed(9))
    y.sum().backward()
    np.testing.assert_allclose(_np(xt.grad), (_np(y) != 0) / 0.6, rtol=1e-12)


def test_dropout_identity_cases():
    x = _t(np.arange(6.0))
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    z = F.dropout(x, 1.0)
    np.testing.assert_array_equal(_np(z), np.zeros(6))
    z.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.zeros(6))


def test_dropout_inplace():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 8))
    want = _np(F.dropout(_t(x, False), 0.4, generator=tl.Generator().manual_seed(9)))
    t = _t(x, False)
    got = F.dropout(t, 0.4, inplace=True, generator=tl.Generator().manual_seed(9))
    assert got is t and t._version > 0
    np.testing.assert_array_equal(_np(t), want)  # the same mask, written into the input
    # through autograd: the gradient of the in-place product is the scaled mask
    leaf = _t(x)
    y = leaf * 1.0
    F.dropout(y, 0.4, inplace=True, generator=tl.Generator().manual_seed(9)).sum().backward()
    np.testing.assert_array_equal(_np(leaf.grad), (want != 0) / 0.6)
    with pytest.raises(RuntimeError, match="leaf"):
        F.dropout(_t(x), 0.4, inplace=True)
    z = _t(x, False)
    assert F.dropout(z, 1.0, inplace=True) is z and not _np(z).any()
    with pytest.raises(TypeError, match=r"dropout\(\).*'inplace'"):
        F.dropout(z, 0.5, inplace="yes")


def test_dropout_bad_input():
    x = _t(np.ones(3), False)
    for p in (-0.1, 1.5, "a", None, True):
        with pytest.raises(ValueError, match=r"dropout\(\).*'p'"):
            F.dropout(x, p)
    with pytest.raises(TypeError, match=r"dropout\(\).*floating"):
        F.dropout(tl.asarray(np.arange(3)), 0.5)
    with pytest.raises(TypeError, match="generator"):
        F.dropout(x, 0.5, generator=123)


# ---------------------------------------------------------------- mse_loss
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    sq = (a - b) ** 2
    want = {"mean": sq.mean(), "sum": sq.sum(), "none": sq}[reduction]
    np.testing.assert_allclose(_np(F.mse_loss(_t(a), _t(b), reduction=reduction)), want,
                               rtol=1e-12)
    assert gradcheck(lambda x, y: F.mse_loss(x, y, reduction=reduction), [_t(a), _t(b)])


def test_mse_loss_bad_input():
    with pytest.raises(ValueError, match=r"mse_loss\(\).*'target'.*shape"):
        F.mse_loss(_t(np.ones(3)), _t(np.ones(4)))
    with pytest.raises(ValueError, match=r"mse_loss\(\).*'reduction'"):
        F.mse_loss(_t(np.ones(3)), _t(np.ones(3)), reduction="avg")


# ---------------------------------------------------------------- cross_entropy
def _ce_ref(x, t, w=None, ignore_index=-100, reduction="mean", ls=0.0):
    """NumPy reference: classes along axis 1 (axis 0 for a 1-D input)."""
    axis = 0 if x.ndim == 1 else 1
    m = x.max(axis=axis, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))
    c = x.shape[axis]
    w = np.ones(c) if w is None else w
    valid = t != ignore_index
    ts = np.where(valid, t, 0)
    picked = np.take_along_axis(logp, np.expand_dims(ts, axis), axis=axis).squeeze(axis)
    wt = w[ts] * valid
    nll = -picked * wt
    wshape = (c,) + (1,) * (x.ndim - axis - 1)
    smooth = -(logp * w.reshape(wshape)).sum(axis=axis) * valid
    if reduction == "mean":
        return (1 - ls) * nll.sum() / wt.sum() + ls / c * smooth.sum() / wt.sum()
    if reduction == "sum":
        return (1 - ls) * nll.sum() + ls / c * smooth.sum()
    return (1 - ls) * nll + ls / c * smooth


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_values_and_grad(reduction):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 4))
    t = np.array([0, 3, 1, 1, 2])
    got = F.cross_entropy(_t(x), tl.asarray(t), reduction=reduction)
    np.testing.assert_allclose(_np(got), _ce_ref(x, t, reduction=reduction), rtol=1e-12)
    assert gradcheck(lambda a: F.cross_entropy(a, tl.asarray(t), reduction=reduction), [_t(x)])
    assert gradgradcheck(lambda a: F.cross_entropy(a, tl.asarray(t[:3]), reduction=reduction),
                         [_t(x[:3])])
    # a 1-D input (one sample) and its 0-d target
    assert gradcheck(lambda a: F.cross_entropy(a, tl.asarray(np.int64(2)), reduction=reduction),
                     [_t(x[0])])
    # float32 gradients stay float32 and equal softmax - one-hot (scaled by the reduction)
    x32 = tl.asarray(x.astype(np.float32)).requires_grad_()
    out = F.cross_entropy(x32, tl.asarray(t), reduction=reduction)
    (out.sum() if reduction == "none" else out).backward()
    assert x32.grad.dtype == tl.float32
    e = np.exp(x - x.max(1, keepdims=True))
    want = e / e.sum(1, keepdims=True) - np.eye(4)[t]
    np.testing.assert_allclose(_np(x32.grad), want / (5 if reduction == "mean" else 1),
                               rtol=1e-5, atol=1e-6)


def test_cross_entropy_weight_ignore_smoothing_and_spatial():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 2))           # (N, C, d1)
    t = np.array([[0, 3], [-100, 1], [2, 2]])
    w = rng.uniform(0.5, 2.0, 4)
    for red in ("mean", "sum", "none"):
        for ls in (0.0, 0.2):
            got = F.cross_entropy(_t(x), tl.asarray(t), weight=_t(w, False), reduction=red,
                                  label_smoothing=ls)
            np.testing.assert_allclose(_np(got), _ce_ref(x, t, w, reduction=red, ls=ls),
                                       rtol=1e-12, atol=1e-14)
    assert gradcheck(lambda a, ww: F.cross_entropy(a, tl.asarray(t), weight=ww,
                                                   label_smoothing=0.1), [_t(x), _t(w)])
    # a custom ignore_index; a 1-D input with a 0-d target
    t2 = np.array([[0, 7], [7, 1], [2, 2]])
    np.testing.assert_allclose(
        _np(F.cross_entropy(_t(x), tl.asarray(t2), ignore_index=7)),
        _ce_ref(x, t2, ignore_index=7), rtol=1e-12)
    x1 = rng.standard_normal(5)
    np.testing.assert_allclose(_np(F.cross_entropy(_t(x1), tl.asarray(np.int64(3)))),
                               _ce_ref(x1, np.int64(3)), rtol=1e-12)


def test_cross_entropy_float32_large_logits():
    x = np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]], np.float32)
    got = _np(F.cross_entropy(tl.asarray(x), tl.asarray(np.array([2, 1])), reduction="none"))
    np.testing.assert_allclose(got, [2000.0, np.log(3.0)], rtol=1e-6)


def test_cross_entropy_bad_input():
    x = _t(np.ones((2, 3)), False)
    with pytest.raises(TypeError, match=r"cross_entropy\(\).*'target'.*integer"):
        F.cross_entropy(x, _t(np.ones(2), False))
    with pytest.raises(ValueError, match=r"cross_entropy\(\).*'target'.*shape"):
        F.cross_entropy(x, tl.asarray(np.array([0, 1, 2])))
    with pytest.raises(IndexError, match=r"cross_entropy\(\).*target 3.*3 classes"):
        F.cross_entropy(x, tl.asarray(np.array([0, 3])))
    with pytest.raises(IndexError, match=r"cross_entropy\(\).*target -1"):
        F.cross_entropy(x, tl.asarray(np.array([-1, 0])))
    with pytest.raises(ValueError, match=r"cross_entropy\(\).*'weight'.*\(3,\)"):
        F.cross_entropy(x, tl.asarray(np.array([0, 1])), weight=_t(np.ones(2), False))
    with pytest.raises(ValueError, match=r"cross_entropy\(\).*'label_smoothing'"):
        F.cross_entropy(x, tl.asarray(np.array([0, 1])), label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"cross_entropy\(\).*'reduction'"):
        F.cross_entropy(x, tl.asarray(np.array([0, 1])), reduction="max")
    with pytest.raises(ValueError, match=r"cross_entropy\(\).*0-d"):
        F.cross_entropy(_t(1.0, False), tl.asarray(np.int64(0)))


# ---------------------------------------------------------------- cross_entropy: the fused pair
# The plain case (no weight, no ignored target, no smoothing, (C,) or (N, C)) runs one forward
# and one backward kernel (ops/cross_entropy.py); NumPy in float64 is the oracle.
_CE_TOL = {tl.float64: 1e-12, tl.float32: 2e-5, tl.float16: 2e-3, tl.bfloat16: 1.6e-2}


def _ce_grad_ref(x, t, scale):
    """softmax(x) - one_hot(t), times the per-row ``scale`` (float64, classes along the last
    axis, one row for a 1-D input)."""
    x2 = np.atleast_2d(x)
    e = np.exp(x2 - x2.max(axis=1, keepdims=True))
    g = e / e.sum(axis=1, keepdims=True)
    g[np.arange(len(g)), np.atleast_1d(t)] -= 1
    return (g * np.reshape(scale, (-1, 1))).reshape(x.shape)


def _ce_plain_ref(x, t, reduction):
    """The plain case's loss in float64: logsumexp(row) - row[t] (nan propagates; a -inf
    logit outside the target adds nothing)."""
    x2 = np.atleast_2d(x)
    m = x2.max(axis=1, keepdims=True)
    nll = (m[:, 0] + np.log(np.exp(x2 - m).sum(axis=1))) - x2[np.arange(len(x2)),
                                                               np.atleast_1d(t)]
    if reduction == "mean":
        return nll.mean()
    if reduction == "sum":
        return nll.sum()
    return nll if x.ndim == 2 else nll[0]


def _rounded(x, dtype):
    """x as ``dtype`` holds it, back in float64 (the values the kernel actually sees)."""
    return tl.asarray(x).astype(dtype).astype(tl.float64).numpy()


def _check_ce(x_tl, t_np, reduction, dtype, device, w_np=None):
    """Loss and input gradient of F.cross_entropy(x_tl, t) against the NumPy reference;
    'none' is backpropagated with weights ``w_np`` (one per row)."""
    tol = _CE_TOL[dtype]
    xr = x_tl.detach().astype(tl.float64).cpu().numpy()
    x_tl = x_tl.detach().requires_grad_()
    loss = F.cross_entropy(x_tl, tl.asarray(t_np, device=device), reduction=reduction)
    assert loss.dtype == dtype and loss.device == x_tl.device
    want = _ce_plain_ref(xr, t_np, reduction)
    assert loss.shape == np.shape(want)
    got = loss.detach().astype(tl.float64).cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    n = 1 if xr.ndim == 1 else xr.shape[0]
    if reduction == "none":
        w = np.ones(n) if w_np is None else w_np
        wt = tl.asarray(np.reshape(w, np.shape(want)), device=device).astype(dtype)
        (loss * wt).sum().backward()
        scale = _rounded(w, dtype)
    else:
        loss.backward()
        scale = np.full(n, 1.0 / n if reduction == "mean" else 1.0)
    g = x_tl.grad
    assert g.dtype == dtype and g.shape == x_tl.shape
    np.testing.assert_allclose(g.astype(tl.float64).cpu().numpy(), _ce_grad_ref(xr, t_np, scale),
                               rtol=tol, atol=tol * np.abs(scale).max())


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.float16, tl.bfloat16],
                         ids=lambda d: d.name)
def test_cross_entropy_fused_values_and_grads(device, dtype):
    rng = np.random.default_rng(11)
    for n in (1, 3, 257):
        for c in (1, 2, 10, 1000):
            if device == "cuda" and n * c > 3000 or device == "cuda" and n == 257:
                continue  # the Triton interpreter runs each row (program) in Python
            x = tl.asarray(rng.standard_normal((n, c)) * 3, device=device).astype(dtype)
            t = rng.integers(0, c, n)
            for reduction in ("mean", "sum", "none"):
                _check_ce(x, t, reduction, dtype, device, w_np=rng.uniform(-2, 2, n))
    # a 1-D input (one sample) with its 0-d target
    x1 = tl.asarray(rng.standard_normal(7), device=device).astype(dtype)
    for reduction in ("mean", "sum", "none"):
        _check_ce(x1, np.int64(4), reduction, dtype, device, w_np=np.array(1.5))


def test_cross_entropy_fused_big_rows_cpu_parallel(whole_team):
    """Rows past the kernels' parallel grain (the chunked prange variants) in every dtype."""
    from tensorlib.kernels.cpu import cross_entropy as kce
    rng = np.random.default_rng(12)
    n, c = 300, 1000
    assert n * c >= kce.PAR_GRAIN
    for dtype in (tl.float32, tl.float64, tl.float16, tl.bfloat16):
        x = tl.asarray(rng.standard_normal((n, c)) * 3).astype(dtype)
        t = rng.integers(0, c, n)
        for reduction in ("mean", "none"):
            _check_ce(x, t, reduction, dtype, "cpu", w_np=rng.uniform(-2, 2, n))
    from tensorlib.runtime.cpu import cores
    if cores.threads() > 1:  # the parallel twins served these calls
        fwd, bwd = kce._module(tl.float32, tl.float32)
        assert fwd.parallel.signatures and bwd.parallel.signatures


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64], ids=lambda d: d.name)
def test_cross_entropy_fused_special_values(device, dtype):
    x = np.array([[1e4, -1e4, 0.0, 3.0],         # huge logits: exact shifts, no overflow
                  [-np.inf, 1.0, 2.0, 0.5],      # -inf in a non-target class: weight 0
                  [0.5, np.nan, 1.0, 2.0],       # nan: the row's loss and gradient are nan
                  [1.0, 2.0, -np.inf, 0.0],      # -inf at the target: infinite loss
                  [-1e4, -1e4, -1e4, -1e4]])
    t = np.array([1, 2, 0, 2, 3])
    xt = tl.asarray(x, device=device).astype(dtype).requires_grad_()
    loss = F.cross_entropy(xt, tl.asarray(t, device=device), reduction="none")
    got = loss.detach().astype(tl.float64).cpu().numpy()
    want = [2e4 + np.log1p(np.exp(-1e4) + np.exp(-1e4 + 3)),
            np.log(np.exp(x[1, 1:]).sum()) - x[1, 2], np.nan, np.inf, np.log(4.0)]
    np.testing.assert_allclose(got, want, rtol=_CE_TOL[dtype])
    loss.backward(tl.ones((5,), dtype=dtype, device=device))
    g = xt.grad.astype(tl.float64).cpu().numpy()
    ok = [0, 1, 4]
    np.testing.assert_allclose(g[ok], _ce_grad_ref(x[ok], t[ok], np.ones(3)),
                               rtol=_CE_TOL[dtype], atol=_CE_TOL[dtype])
    assert g[1, 0] == 0.0
    assert np.isnan(g[2]).all()
    np.testing.assert_array_equal(g[3], [np.nan if np.isnan(v) else v for v in g[3]])
    assert g[3, 2] == -1.0 and np.isfinite(g[3]).all()
    # a nan anywhere makes the reduced loss nan
    assert np.isnan(F.cross_entropy(xt.detach(), tl.asarray(t, device=device)).item())


def test_cross_entropy_fused_noncontiguous(device):
    rng = np.random.default_rng(13)
    base = tl.asarray(rng.standard_normal((12, 9)), device=device)
    t_long = rng.integers(0, 4, 20)
    cases = [
        (base.T[:, :5], 12),                     # transposed: column stride 9, rows 1 apart
        (base[::2, ::3], 3),                     # steps in both dims
        (tl.flip(base, axis=1)[1:4], 9),         # negative column stride
        (tl.flip(base, axis=0)[:, 2], 12),       # 1-D, negative stride
    ]
    for x, c in cases:
        for dtype in (tl.float64, tl.float32):
            xd = x.astype(dtype)
            if x.ndim == 2:
                t = t_long[:x.shape[0] * 2:2] % c  # targets of a strided target tensor
                tt = tl.asarray(np.repeat(t, 2), device=device)[::2]
                assert tt._strides == (2,)
                for reduction in ("mean", "none"):
                    xr = xd.detach().astype(tl.float64).cpu().numpy()
                    xg = xd.detach().requires_grad_()
                    loss = F.cross_entropy(xg, tt, reduction=reduction)
                    np.testing.assert_allclose(loss.detach().astype(tl.float64).cpu().numpy(),
                                               _ce_ref(xr, t, reduction=reduction),
                                               rtol=_CE_TOL[dtype])
                    (loss.sum() if reduction == "none" else loss).backward()
                    scale = np.full(len(t), 1 / len(t) if reduction == "mean" else 1.0)
                    np.testing.assert_allclose(xg.grad.astype(tl.float64).cpu().numpy(),
                                               _ce_grad_ref(xr, t, scale), rtol=_CE_TOL[dtype],
                                               atol=_CE_TOL[dtype])
            else:
                _check_ce(xd, np.int64(5), "sum", dtype, device)


def test_cross_entropy_fused_gradcheck(device):
    rng = np.random.default_rng(14)
    x = rng.standard_normal((3, 4))
    tn = np.array([3, 0, 2])
    t = tl.asarray(tn, device=device)
    for reduction in ("mean", "sum", "none"):
        xt = tl.asarray(x, device=device).requires_grad_()
        assert gradcheck(lambda a: F.cross_entropy(a, t, reduction=reduction), [xt])
    # against central differences by hand (the fused backward, no create_graph)
    xt = tl.asarray(x, device=device).requires_grad_()
    F.cross_entropy(xt, t, reduction="sum").backward()
    eps, fd = 1e-6, np.empty_like(x)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        fd[idx] = (_ce_ref(hi, tn, reduction="sum") - _ce_ref(lo, tn, reduction="sum")) / (2 * eps)
    np.testing.assert_allclose(xt.grad.cpu().numpy(), fd, rtol=1e-6, atol=1e-8)
    # double backward goes through the composite backward (create_graph)
    assert gradgradcheck(lambda a: F.cross_entropy(a, t[:2], reduction="mean"),
                         [tl.asarray(x[:2], device=device).requires_grad_()])


def test_cross_entropy_fused_targets(device, monkeypatch):
    x = tl.asarray(np.random.default_rng(15).standard_normal((4, 3)), device=device)
    # any integer target dtype
    for tdt in (np.uint8, np.int16, np.int32, np.uint64):
        t = np.array([2, 0, 1, 1], tdt)
        np.testing.assert_allclose(F.cross_entropy(x, tl.asarray(t, device=device)).item(),
                                   _ce_ref(x.cpu().numpy(), t.astype(np.int64)), rtol=1e-12)
    # out-of-range targets name the function and the first bad value, on every path
    for bad, first in (([0, 3, -1, 0], 3), ([-7, 0, 0, 0], -7)):
        with pytest.raises(IndexError, match=rf"cross_entropy\(\): target {first} is out of"):
            F.cross_entropy(x, tl.asarray(np.array(bad), device=device))
        with pytest.raises(IndexError, match=rf"cross_entropy\(\): target {first} is out of"):
            F.cross_entropy(x.requires_grad_(), tl.asarray(np.array(bad), device=device))
        x = x.detach()
    with pytest.raises(IndexError, match=r"cross_entropy\(\): target 18446744073709551615"):
        F.cross_entropy(x, tl.asarray(np.array([0, 2**64 - 1, 0, 0], np.uint64), device=device))
    # an ignored target (the kernel reports it like a bad one) takes the general path
    t = np.array([0, -100, 2, 1])
    np.testing.assert_allclose(F.cross_entropy(x, tl.asarray(t, device=device)).item(),
                               _ce_ref(x.cpu().numpy(), t), rtol=1e-12)
    # an ignore_index inside [0, C) checked on the host first; none ignored -> the fused pair
    t = np.array([0, 2, 2, 0])
    np.testing.assert_allclose(
        F.cross_entropy(x, tl.asarray(t, device=device), ignore_index=1).item(),
        _ce_ref(x.cpu().numpy(), t), rtol=1e-12)
    # no rows: sum 0, mean nan (as the mean of nothing), 'none' empty
    x0 = tl.zeros((0, 3), dtype=tl.float64, device=device)
    t0 = tl.asarray(np.zeros(0, np.int64), device=device)
    assert F.cross_entropy(x0, t0, reduction="sum").item() == 0.0
    assert np.isnan(F.cross_entropy(x0, t0).item())
    assert F.cross_entropy(x0, t0, reduction="none").shape == (0,)
    if device == "cpu":
        # the plain path checks targets in the kernel: no host copy of the targets
        calls = []
        real = tl.Tensor._to_host_numpy
        monkeypatch.setattr(tl.Tensor, "_to_host_numpy",
                            lambda self, *a, **k: calls.append(self) or real(self, *a, **k))
        F.cross_entropy(x, tl.asarray(np.array([0, 1, 2, 1])))
        assert calls == []


def test_cross_entropy_traced_records_ops():
    """The fused pair is not a dispatcher op: under tl.jit.trace the composed ops run, so the
    trace replays the loss for new inputs instead of freezing the traced value."""
    t = tl.asarray(np.array([0, 2, 1]))
    x = tl.asarray(np.random.default_rng(17).standard_normal((3, 4)))
    traced = tl.jit.trace(lambda a: F.cross_entropy(a, t, reduction="sum"), (x,))
    assert "log_softmax" in str(traced.graph)
    x2 = x * 2 + 1
    np.testing.assert_allclose(traced(x2).item(), _ce_plain_ref(x2.numpy(), t.numpy(), "sum"),
                               rtol=1e-12)


def test_cross_entropy_fused_cuda_looped_rows(cuda_interpret, monkeypatch):
    """Rows longer than one block (tiny limits): the looped online max / sum."""
    from tensorlib.kernels.cuda import normalization as CN
    monkeypatch.setattr(CN, "INTERPRET_MAX_BLOCK", 4)
    monkeypatch.setattr(CN, "INTERPRET_LOOP_BLOCK", 8)
    rng = np.random.default_rng(16)
    x = rng.standard_normal((3, 21)) * 4
    x[1, 5] = -np.inf
    x[2, 20] = 50.0
    for dtype in (tl.float32, tl.float64, tl.bfloat16):
        xd = tl.asarray(x, device="cuda").astype(dtype)
        for reduction in ("sum", "none"):
            _check_ce(xd, np.array([20, 0, 20]), reduction, dtype, "cuda",
                      w_np=np.array([1.0, -0.5, 2.0]))


# ---------------------------------------------------------------- binary_cross_entropy_with_logits
def _bce_ref(x, t, w=None, pw=None):
    # log sigmoid in a stable form, evaluated with NumPy in float64
    log_sig = -np.logaddexp(0, -x)
    log_one_minus = -np.logaddexp(0, x)
    pw = 1.0 if pw is None else pw
    loss = -(pw * t * log_sig + (1 - t) * log_one_minus)
    return loss if w is None else loss * w


def test_bce_with_logits_values_grad_stability():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 3)) * 3
    t = rng.uniform(0, 1, (4, 3))
    w = rng.uniform(0.5, 1.5, (1, 3))
    pw = rng.uniform(0.5, 3.0, 3)
    for red, f in (("mean", np.mean), ("sum", np.sum), ("none", lambda a: a)):
        got = F.binary_cross_entropy_with_logits(_t(x), _t(t), weight=_t(w, False),
                                                 pos_weight=_t(pw, False), reduction=red)
        np.testing.assert_allclose(_np(got), f(_bce_ref(x, t, w, pw)), rtol=1e-12)
    assert gradcheck(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, pos_weight=c),
                     [_t(x), _t(t), _t(pw)])
    assert gradcheck(lambda a: F.binary_cross_entropy_with_logits(a, _t(t, False)), [_t(x)])
    # huge logits: finite and exact (a naive log(sigmoid) gives inf / nan here)
    big = np.array([-1000.0, -60.0, 60.0, 1000.0], np.float32)
    tt = np.array([1.0, 0.0, 1.0, 0.0], np.float32)
    got = _np(F.binary_cross_entropy_with_logits(tl.asarray(big), tl.asarray(tt),
                                                 reduction="none"))
    np.testing.assert_allclose(got, [1000.0, 0.0, 0.0, 1000.0], atol=1e-6)
    # the gradient is sigmoid(x) - t, also at x = 0
    x0 = _t([0.0, 2.0])
    F.binary_cross_entropy_with_logits(x0, _t([1.0, 0.0], False), reduction="sum").backward()
    np.testing.assert_allclose(_np(x0.grad), [-0.5, 1 / (1 + np.exp(-2.0))], rtol=1e-12)


def test_bce_with_logits_bad_input():
    x = _t(np.ones((2, 3)), False)
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits\(\).*'target'"):
        F.binary_cross_entropy_with_logits(x, _t(np.ones(3), False))
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits\(\).*'pos_weight'"):
        F.binary_cross_entropy_with_logits(x, x, pos_weight=_t(np.ones(2), False))
    with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits\(\).*'weight'"):
        F.binary_cross_entropy_with_logits(x, x, weight=_t(np.ones((4, 3)), False))
    with pytest.raises(TypeError, match=r"binary_cross_entropy_with_logits\(\).*'target'"):
        F.binary_cross_entropy_with_logits(x, tl.asarray(np.ones((2, 3), np.int64)))


def test_activation_bad_input():
    with pytest.raises(TypeError, match=r"relu\(\).*Tensor"):
        F.relu([1.0, 2.0])
    with pytest.raises(TypeError, match=r"gelu\(\).*floating"):
        F.gelu(tl.asarray(np.arange(3)))
    with pytest.raises(ValueError, match=r"gelu\(\).*'approximate'"):
        F.gelu(_t(np.ones(2), False), approximate="erf")
    with pytest.raises(TypeError, match=r"silu\(\).*floating"):
        F.silu(tl.asarray(np.arange(3)))


# ---------------------------------------------------------------- CUDA (interpret backend)
@pytest.mark.usefixtures("cuda_interpret")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    t = np.array([0, 5, 2, 2])
    xc = tl.asarray(x, device="cuda").requires_grad_()
    loss = F.cross_entropy(F.gelu(xc), tl.asarray(t, device="cuda"))
    loss.backward()
    xh = tl.asarray(x).requires_grad_()
    ref = F.cross_entropy(F.gelu(xh), tl.asarray(t))
    ref.backward()
    np.testing.assert_allclose(loss.cpu().numpy(), ref.numpy(), rtol=1e-5)
    np.testing.assert_allclose(xc.grad.cpu().numpy(), xh.grad.numpy(), rtol=1e-4, atol=1e-6)
    # the Philox stream is the same on every device: one seed, one dropout mask
    dc = F.dropout(tl.ones((64,), device="cuda"), 0.5,
                   generator=tl.Generator("cuda").manual_seed(1))
    dh = F.dropout(tl.ones((64,)), 0.5, generator=tl.Generator().manual_seed(1))
    np.testing.assert_array_equal(dc.cpu().numpy(), dh.numpy())


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.float16, tl.bfloat16])
def test_relu_bits_at_signed_zeros_nan_and_infinities(dtype):
    """relu gives +0.0 for every x <= 0 (-0.0 included), keeps nan and +inf: the bits of
    where(x <= 0, 0, x), and the same where its gradient flows (the backward reads the saved
    output as a condition: subnormals of each dtype included)."""
    vals = np.array([-0.0, 0.0, -1.5, 2.5, np.nan, np.inf, -np.inf, 1e-30, -1e-30, 1e-45,
                     -1e-45, 5e-324, -5e-324])
    x = tl.asarray(vals).astype(dtype).requires_grad_()
    y = F.relu(x)
    want = tl.where(x.detach() <= 0, 0, x.detach())
    assert y.dtype == dtype
    got_bits = y.detach().astype(tl.float64).numpy()
    want_bits = want.astype(tl.float64).numpy()
    np.testing.assert_array_equal(np.signbit(got_bits), np.signbit(want_bits))
    np.testing.assert_array_equal(got_bits, want_bits)
    y.sum().backward()
    g = x.grad.astype(tl.float64).numpy()
    rounded = x.detach().astype(tl.float64).numpy()  # 1e-30 is 0 in the half types
    np.testing.assert_array_equal(g, np.where(rounded <= 0, 0.0, 1.0))

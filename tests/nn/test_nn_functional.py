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
    where(x <= 0, 0, x), and the same where its gradient flows."""
    vals = np.array([-0.0, 0.0, -1.5, 2.5, np.nan, np.inf, -np.inf, 1e-30, -1e-30])
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

"""Tensor.__getitem__ / __setitem__ under autograd: basic indexing is a differentiable view,
advanced indexing a gather whose backward scatter-adds repeated indices, and ``x[key] = v``
into a tensor in the graph records the write (x's gradient zero where written, v's the gathered
gradient) and bumps the version counter. Checked against finite differences and NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck

_rng = np.random.default_rng(7)


def _leaf(*shape, transposed=False, complex_=False):
    a = _rng.uniform(-1, 1, shape[::-1] if transposed else shape)
    if complex_:
        a = a + 1j * _rng.uniform(-1, 1, a.shape)
    a = a.T if transposed else np.asarray(a)
    return tl.from_numpy(a).requires_grad_()


_IDX = tl.asarray(np.array([0, 2, 0, -1]))
# setitem with repeated indices keeps one of the writes (which one is unspecified, as in PyTorch),
# so the written-value gradients are checked with distinct indices
_UIDX = tl.asarray(np.array([2, -3]))
_BASIC_KEYS = [
    (slice(1, None), slice(None, None, 2)),
    (slice(None, None, -2),),
    (1,),
    (Ellipsis, -1),
    (None, slice(0, 2), None, 1),
    (slice(3, 1),),                        # empty selection
]
_ADVANCED_KEYS = [
    (_IDX,),                               # repeated indices add up
    (slice(None), [1, 1]),
    (_IDX, slice(1, 3)),
    ([[0, 1], [2, 2]], [0, 0]),
    (tl.asarray(np.array([True, False, True])),),
]


@pytest.mark.parametrize("key", _BASIC_KEYS, ids=repr)
@pytest.mark.parametrize("transposed", [False, True])
def test_basic_indexing_is_a_differentiable_view(key, transposed):
    x = _leaf(3, 4, transposed=transposed)
    y = x[key]
    assert y.grad_fn is not None and y.grad_fn.name() == "SliceBackward"
    assert y._storage is x._storage                       # a view, not a copy
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy()[key])
    assert gradcheck(lambda t: t[key], [x])


@pytest.mark.parametrize("key", _ADVANCED_KEYS, ids=lambda k: str(k)[:40])
def test_advanced_indexing_gathers_and_scatter_adds(key):
    x = _leaf(3, 4)
    assert gradcheck(lambda t: t[key], [x])
    y = x[key]
    assert y.grad_fn.name() == "IndexBackward"
    g = _rng.uniform(-1, 1, y.shape)
    y.backward(gradient=tl.asarray(g))
    np_key = tuple(k.numpy() if isinstance(k, tl.Tensor) else k for k in key)
    want = np.zeros((3, 4))
    np.add.at(want, np_key, g)                            # every pick gets its gradient
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_indexing_a_complex_tensor():
    x = _leaf(4, complex_=True)
    assert gradcheck(lambda t: t[_IDX] * t[1:2], [x])


def test_indexing_second_derivatives():
    x = _leaf(3, 2)
    assert gradgradcheck(lambda t: t[1:, ::-1] ** 2, [x])
    assert gradgradcheck(lambda t: t[tl.asarray(np.array([0, 0, 2]))] ** 3, [x])
    # formulas that slice internally (prod's exclusive products) are differentiable again
    assert gradgradcheck(lambda t: tl.prod(t, axis=1), [_leaf(2, 3)])


def test_indexing_records_nothing_without_grad_mode():
    x = _leaf(3, 2)
    with tl.no_grad():
        assert not x[1:].requires_grad and not x[[0, 0]].requires_grad
    assert not x.detach()[0].requires_grad


# ---------------------------------------------------------------- __setitem__
def _write(key, value_shape, scalar=False):
    def f(a, *v):
        y = a * 1
        y[key] = 0.75 if scalar else v[0]
        return y * y
    return f


@pytest.mark.parametrize("key,value_shape", [
    ((slice(1, None), 0), (2,)),
    ((slice(None), slice(None, None, 2)), (1, 1)),    # broadcast value
    ((1,), ()),
    ((_UIDX,), (2, 2)),
    ((_UIDX, 1), (1,)),
    (([0, 2], slice(0, 1)), (1, 2, 1)),               # extra leading 1 in the value
    ((tl.asarray(np.array([[True, False], [False, False], [True, True]])),), (3,)),
], ids=lambda k: str(k)[:30])
def test_setitem_records_the_write(key, value_shape):
    a, v = _leaf(3, 2), tl.asarray(np.array(_rng.uniform(-1, 1, value_shape))).requires_grad_()
    assert gradcheck(_write(key, value_shape), [a, v])


def test_setitem_gradients_zero_where_written():
    a = _leaf(3, 2)
    v = tl.asarray(np.array([5.0, 6.0])).requires_grad_()
    y = a * 1
    version = y._version
    y[[0, 2], 1] = v
    assert y._version > version and y.grad_fn.name() == "IndexPutBackward"
    g = np.arange(6.0).reshape(3, 2) + 1
    y.backward(gradient=tl.asarray(g))
    np.testing.assert_array_equal(a.grad.numpy(), np.where([[0, 1], [0, 0], [0, 1]], 0, g))
    np.testing.assert_array_equal(v.grad.numpy(), g[[0, 2], 1])
    assert gradcheck(_write((1, 0), (), scalar=True), [_leaf(3, 2)])


def test_setitem_second_derivatives():
    def f(a, w):
        y = a * 1
        y[tl.asarray(np.array([0, 2]))] = w * w
        y[1, 1:] = w[0, :1] * 3
        return y * y
    w = tl.asarray(_rng.uniform(-1, 1, (2, 2))).requires_grad_()
    assert gradgradcheck(f, [_leaf(3, 2), w])


def test_setitem_value_requires_grad_target_does_not():
    v = tl.asarray(np.array(2.0)).requires_grad_()
    y = tl.zeros((3,), dtype=tl.float64)
    y[1:] = v
    assert y.requires_grad and not y.is_leaf
    (y * tl.asarray(np.array([1.0, 2.0, 3.0]))).sum().backward()
    assert v.grad.item() == 5.0


def test_setitem_through_a_view_of_a_non_leaf():
    def f(a, v):
        y = a * 1
        row = y[1]
        row[tl.asarray(np.array([0]))] = v
        return y * 2
    assert gradcheck(f, [_leaf(3, 2), tl.asarray(np.array([0.5])).requires_grad_()])


def test_setitem_into_a_leaf_that_requires_grad_raises():
    a = _leaf(3)
    with pytest.raises(RuntimeError, match=r"__setitem__\(\).*leaf"):
        a[0] = 1.0
    with pytest.raises(RuntimeError, match=r"__setitem__\(\).*leaf.*base of the view"):
        a[1:][0] = 1.0
    with tl.no_grad():                                   # what optimizers do
        a[0] = 1.0
    assert a.detach().numpy()[0] == 1.0 and a.is_leaf


def test_setitem_invalidates_tensors_saved_for_backward():
    b = _leaf(3) * 1
    c = b * b                                            # saves b
    b[0] = 3.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


# ---------------------------------------------------------------- CUDA (interpreter)
def test_cuda_indexing_and_setitem(cuda_interpret):
    x = tl.asarray(_rng.uniform(-1, 1, (3, 2)), device="cuda").requires_grad_()
    idx = tl.asarray(np.array([0, 0, 2]), device="cuda")
    assert gradcheck(lambda t: t[1:, ::-1] * t[idx][:2], [x])
    v = tl.asarray(np.array([0.5, -0.5]), device="cuda").requires_grad_()

    def f(a, w):
        y = a * 1
        y[idx[1:]] = w
        return y * y
    assert gradcheck(f, [x, v])

"""NumPy's protocols on tensors (issue 17 item 2): __array_ufunc__ (call, out=, where=, dtype=,
reduce, accumulate), __array_function__ (every entry of the table), NotImplemented for the rest,
and NumPy arrays as operands of tensorlib ops. NumPy is the oracle."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import numpy_interop as ni

RNG = np.random.default_rng(17)


def t(a):
    return tl.asarray(np.asarray(a))


def check(got, want, dtype=True):
    assert isinstance(got, tl.Tensor), type(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    if dtype:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-12, equal_nan=True)


# ------------------------------------------------------------------------------ ufunc calls
_POS = np.array([0.5, 1.25, 2.0, 3.5])
_UNIT = np.array([-0.75, -0.1, 0.3, 0.9])
_ANY = np.array([-2.5, -0.5, 0.0, 1.5])
_INTS = np.array([-6, 3, 0, 7], dtype=np.int64)
_SHIFTS = np.array([0, 1, 2, 3], dtype=np.int64)
_DOMAIN = {"log": _POS, "log2": _POS, "log10": _POS, "log1p": _POS, "sqrt": _POS,
           "arcsin": _UNIT, "arccos": _UNIT, "arctanh": _UNIT, "arccosh": _POS + 1,
           "reciprocal": _POS}
_INT_UFUNCS = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
               "right_shift"}


def _inputs(uf):
    name = uf.__name__
    if name in ("matmul", "vecdot"):
        return RNG.standard_normal((3, 4)), RNG.standard_normal((4, 4) if name == "matmul"
                                                                 else (3, 4))
    if name in _INT_UFUNCS:
        return (_INTS, _SHIFTS)[:uf.nin]
    base = _DOMAIN.get(name, _ANY)
    if uf.nin == 1:
        return (base,)
    other = _POS if name in ("divide", "floor_divide", "remainder", "power") else _ANY[::-1]
    return base if name != "power" else _POS, other


@pytest.mark.parametrize("uf", list(ni.UFUNCS), ids=lambda u: u.__name__)
def test_ufunc_call_matches_numpy(uf):
    args = _inputs(uf)
    got = uf(*[t(a) for a in args])
    check(got, uf(*args))


def test_ufunc_mixed_operands_and_scalars():
    a = np.arange(4.0)
    x = t(a)
    check(np.add(x, 1), a + 1)
    check(np.multiply(2, x), 2 * a)
    check(np.add(a, x), a + a)          # NumPy array first: still a tensor
    check(a + x, a + a)                 # ndarray.__add__ defers to the tensor's protocol
    check(np.exp(x), np.exp(a))
    assert isinstance(np.float64(2.0) * x, tl.Tensor)


def test_ufunc_out_and_where():
    a = np.array([1.0, -2.0, 3.0, -4.0])
    x = t(a)
    out = tl.zeros(4, dtype=tl.float64)
    r = np.add(x, 1, out=out)
    assert r is out
    check(out, a + 1)
    out2 = tl.full((4,), 7.0, dtype=tl.float64)
    np.multiply(x, 10, out=(out2,), where=t(a > 0))
    want = np.full(4, 7.0)
    np.multiply(a, 10, out=want, where=a > 0)
    check(out2, want)
    # a NumPy array as out= is written through a zero-copy view
    host = np.zeros(4)
    assert np.negative(x, out=host) is host
    np.testing.assert_array_equal(host, -a)


def test_ufunc_out_bad_inputs():
    x = t(np.arange(4.0))
    with pytest.raises(TypeError, match="argument 'out'.*list"):
        np.add(x, 1, out=[0, 0, 0, 0])
    with pytest.raises(TypeError, match="casting='same_kind'"):
        np.add(x, 1, out=tl.zeros(4, dtype=tl.int64))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(4)
        ro.flags.writeable = False
        np.add(x, 1, out=ro)
    with pytest.raises(TypeError, match="argument 'signature'"):
        np.add(x, 1, signature="dd->d")
    # casting='unsafe' writes into any dtype
    out = tl.zeros(4, dtype=tl.int64)
    np.add(x, 0.75, out=out, casting="unsafe")
    assert out.tolist() == [0, 1, 2, 3]


def test_ufunc_dtype():
    x = t(np.arange(3, dtype=np.int32))
    check(np.add(x, x, dtype=np.float64), np.add(np.arange(3, dtype=np.int32),
                                                   np.arange(3, dtype=np.int32),
                                                   dtype=np.float64))
    with pytest.raises(TypeError, match="dtype"):
        np.less(x, 1, dtype=np.float32)


@pytest.mark.parametrize("uf", list(ni.REDUCE), ids=lambda u: u.__name__)
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_ufunc_reduce(uf, axis, keepdims):
    a = RNG.integers(0, 3, (3, 4)).astype(np.float64)
    if uf in (np.logical_and, np.logical_or):
        a = a > 0
    check(uf.reduce(t(a), axis=axis, keepdims=keepdims), uf.reduce(a, axis=axis,
                                                                  keepdims=keepdims))


def test_ufunc_reduce_keywords():
    a = np.arange(12.0).reshape(3, 4)
    x = t(a)
    check(np.add.reduce(x, axis=1, initial=5.0), np.add.reduce(a, axis=1, initial=5.0))
    check(np.maximum.reduce(x, axis=0, initial=6.0), np.maximum.reduce(a, axis=0, initial=6.0))
    m = a % 3 == 0
    check(np.add.reduce(x, axis=1, where=t(m)), np.add.reduce(a, axis=1, where=m))
    check(np.minimum.reduce(x, axis=1, where=t(m), initial=100.0),
          np.minimum.reduce(a, axis=1, where=m, initial=100.0))
    empty = np.zeros((0, 3))
    check(np.maximum.reduce(t(empty), axis=0, initial=-1.0),
          np.maximum.reduce(empty, axis=0, initial=-1.0))
    check(np.add.reduce(t(np.arange(4, dtype=np.int32)), dtype=np.int64),
          np.add.reduce(np.arange(4, dtype=np.int32), dtype=np.int64))
    out = tl.zeros(4, dtype=tl.float64)
    assert np.add.reduce(x, axis=0, out=out) is out
    check(out, a.sum(0))
    with pytest.raises(ValueError, match="initial"):
        np.maximum.reduce(x, axis=1, where=t(m))


@pytest.mark.parametrize("uf", list(ni.ACCUMULATE), ids=lambda u: u.__name__)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_ufunc_accumulate(uf, axis):
    a = RNG.integers(-3, 4, (5, 6)).astype(np.float64)
    if uf in (np.logical_and, np.logical_or):
        a = a > 0
    check(uf.accumulate(t(a), axis=axis), uf.accumulate(a, axis=axis))


def test_ufunc_accumulate_out_dtype():
    a = np.arange(1, 6, dtype=np.int32)
    check(np.add.accumulate(t(a), dtype=np.int64), np.add.accumulate(a, dtype=np.int64))
    out = tl.zeros(5, dtype=tl.int32)
    assert np.multiply.accumulate(t(a), out=out) is out
    check(out, np.multiply.accumulate(a).astype(np.int32))


def test_ufunc_not_implemented():
    x = t(np.arange(4.0))
    with pytest.raises(TypeError, match="fmod"):
        np.fmod(x, 2.0)                 # a ufunc tensorlib does not have
    with pytest.raises(TypeError, match="outer"):
        np.add.outer(x, x)              # a method it does not have
    with pytest.raises(TypeError, match="logaddexp"):
        np.logaddexp.reduce(x)          # reduce of a ufunc outside the table
    assert x.__array_ufunc__(np.fmod, "__call__", x, 2.0) is NotImplemented
    assert x.__array_ufunc__(np.add, "reduceat", x, [0, 2]) is NotImplemented
    # another library's operand: NotImplemented, so its own protocol can run
    assert x.__array_ufunc__(np.add, "__call__", x, object()) is NotImplemented


# ------------------------------------------------------------------------------ functions
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 5))
I = np.array([[3, 1, 2, 1], [0, 2, 2, 5]])
F_NAN = np.array([2.0, np.nan, 1.0, np.nan, 2.0])

# each entry: NumPy function -> list of (args, kwargs) with NumPy arrays; the tensor call gets
# the same arguments with arrays turned into tensors
FUNCTION_CASES = {
    np.sum: [((A,), {}), ((A,), {"axis": 1, "keepdims": True}),
             ((I,), {"dtype": np.float64}), ((A,), {"axis": 0, "initial": 1.0}),
             ((A,), {"axis": 1, "where": A > 0})],
    np.prod: [((A,), {"axis": 0}), ((I,), {"dtype": np.int32, "axis": 1})],
    np.mean: [((A,), {}), ((A,), {"axis": 1, "dtype": np.float32}), ((I,), {"axis": 0}),
              ((A,), {"axis": 1, "where": A > 0})],
    np.std: [((A,), {"ddof": 1}), ((A,), {"axis": 0, "correction": 1}), ((I,), {})],
    np.var: [((A,), {"axis": 1, "keepdims": True}), ((A,), {"dtype": np.float32})],
    np.max: [((A,), {"axis": 1}), ((A,), {"initial": 5.0})],
    np.amax: [((A,), {"axis": 0})],
    np.min: [((A,), {"axis": (0, 1), "keepdims": True})],
    np.amin: [((A,), {})],
    np.argmax: [((A,), {}), ((A,), {"axis": 1, "keepdims": True})],
    np.argmin: [((A,), {"axis": 0})],
    np.any: [((A > 1,), {"axis": 1})],
    np.all: [((A > -5,), {})],
    np.cumsum: [((A,), {"axis": 1}), ((I,), {})],
    np.cumprod: [((A,), {"axis": 0})],
    np.count_nonzero: [((I,), {}), ((I,), {"axis": 1})],
    np.concatenate: [(([A, A],), {}), (([A, B.T],), {"axis": 0}),
                     (([A, A],), {"axis": None}), (([I, A],), {"dtype": np.float32})],
    np.stack: [(([A, A],), {"axis": 1})],
    np.where: [((A > 0, A, 0.0), {}), ((I,), {})],
    np.clip: [((A, -0.5, 0.5), {}), ((A,), {"a_min": None, "a_max": 0.0}),
              ((A,), {"min": -1.0})],
    np.sort: [((A,), {}), ((A,), {"axis": 0}), ((A,), {"axis": None, "kind": "stable"})],
    np.argsort: [((A,), {"axis": 1})],
    np.searchsorted: [((np.arange(5.0), np.array([0.5, 3.0])), {"side": "right"})],
    np.reshape: [((A, (4, 3)), {}), ((A,), {"shape": -1})],
    np.ravel: [((A,), {})],
    np.transpose: [((A,), {}), ((A[None],), {"axes": (2, 0, 1)})],
    np.permute_dims: [((A,), {"axes": (1, 0)})],
    np.swapaxes: [((A, 0, 1), {})],
    np.moveaxis: [((A[None], 0, -1), {})],
    np.squeeze: [((A[None],), {})],
    np.expand_dims: [((A, 1), {}), ((A, (0, 3)), {})],
    np.broadcast_to: [((A[0], (2, 4)), {})],
    np.flip: [((A,), {"axis": 1})],
    np.roll: [((A, 2), {"axis": 1})],
    np.repeat: [((A, 2), {"axis": 0}), ((A, np.array([1, 0, 2, 1])), {"axis": 1})],
    np.tile: [((A, 2), {}), ((A, (2, 1)), {})],
    np.tril: [((A,), {"k": 1})],
    np.triu: [((A,), {})],
    np.take: [((A, np.array([0, 2])), {"axis": 1}), ((A, np.array([[1, 5]])), {}),
              ((A, 5), {}), ((A, 2), {"axis": 1})],
    np.take_along_axis: [((A, np.argsort(A, axis=1)), {"axis": 1})],
    np.unravel_index: [((np.array([0, 5, 11]), (3, 4)), {}), ((np.array(7), (2, 2, 2)), {})],
    np.ravel_multi_index: [(([np.array([0, 2, 1]), np.array([3, 1, 0])], (3, 4)), {})],
    np.diff: [((A,), {}), ((A,), {"n": 2, "axis": 1})],
    np.diagonal: [((A,), {"offset": 1})],
    np.unique: [((F_NAN,), {}), ((I,), {"return_counts": True, "return_inverse": True,
                                       "return_index": True})],
    np.isin: [((I, np.array([2, 5])), {}), ((I, np.array([2, 5])), {"invert": True})],
    np.dot: [((A, B), {}), ((A[0], A[1]), {}), ((A, 2.0), {}),
             ((RNG.standard_normal((2, 3, 4)), RNG.standard_normal((5, 4, 2))), {})],
    np.tensordot: [((A, B), {"axes": 1})],
    np.copy: [((A,), {})],
    np.round: [((A * 10,), {})],
    np.around: [((np.array([0.5, 1.5, 2.5]),), {})],
    np.real: [((A,), {})],
    np.imag: [((A,), {})],
    np.zeros_like: [((A,), {}), ((A,), {"dtype": np.int32})],
    np.ones_like: [((I,), {"dtype": np.float32})],
    np.full_like: [((A, 3.0), {})],
    np.meshgrid: [((A[0], B[0]), {}), ((A[0], B[0]), {"indexing": "ij"})],
}
# functions whose result is not a tensor (or not comparable by value)
OTHER_CASES = {np.broadcast_arrays, np.nonzero, np.result_type, np.shape, np.ndim, np.size,
               np.array_equal, np.empty_like, np.zeros, np.ones, np.empty, np.full, np.arange,
               np.asarray, np.asanyarray, np.ascontiguousarray, np.array}
for _f in ("cumulative_sum", "cumulative_prod", "astype"):
    if hasattr(np, _f):
        OTHER_CASES.add(getattr(np, _f))


def _to_tensors(v):
    if isinstance(v, np.ndarray):
        return t(v)
    if isinstance(v, list):
        return [_to_tensors(x) for x in v]
    return v


def _compare(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w)
    else:
        check(got, want)


def test_every_table_entry_has_a_test():
    assert set(ni.HANDLED_FUNCTIONS) == set(FUNCTION_CASES) | OTHER_CASES


@pytest.mark.parametrize("func", list(FUNCTION_CASES), ids=lambda f: f.__name__)
def test_array_function_matches_numpy(func):
    for args, kwargs in FUNCTION_CASES[func]:
        targs = [_to_tensors(a) for a in args]
        tkw = {k: _to_tensors(v) for k, v in kwargs.items()}
        _compare(func(*targs, **tkw), func(*args, **kwargs))


def test_array_function_other_entries():
    x = t(A)
    got = np.broadcast_arrays(x, t(A[0]))
    assert all(isinstance(g, tl.Tensor) and g.shape == (3, 4) for g in got)
    nz = np.nonzero(t(I))
    assert isinstance(nz, tuple) and all(isinstance(n, tl.Tensor) for n in nz)
    assert [n.tolist() for n in nz] == [n.tolist() for n in np.nonzero(I)]
    assert np.result_type(x, t(I)) == np.float64
    assert np.shape(x) == (3, 4) and np.ndim(x) == 2 and np.size(x) == 12
    assert np.size(x, 1) == 4
    assert np.array_equal(x, t(A)) and not np.array_equal(x, t(A + 1))
    assert np.array_equal(t(F_NAN), t(F_NAN), equal_nan=True)
    assert not np.array_equal(x, t(A[0]))
    e = np.empty_like(x, dtype=np.int16)
    assert isinstance(e, tl.Tensor) and e.shape == (3, 4) and e.dtype == np.int16
    if hasattr(np, "cumulative_sum"):
        check(np.cumulative_sum(t(I[0]), include_initial=True),
              np.cumulative_sum(I[0], include_initial=True))
        check(np.cumulative_prod(t(A[0])), np.cumulative_prod(A[0]))
    if hasattr(np, "astype"):
        check(np.astype(x, np.float32), np.astype(A, np.float32))


def test_like_creation():
    like = t(A)
    for got, want in [(np.zeros((2, 3), like=like), np.zeros((2, 3))),
                      (np.ones(4, dtype=np.int32, like=like), np.ones(4, dtype=np.int32)),
                      (np.full(3, 2.5, like=like), np.full(3, 2.5)),
                      (np.arange(5, like=like), np.arange(5)),
                      (np.arange(1.0, 2.0, 0.25, like=like), np.arange(1.0, 2.0, 0.25)),
                      (np.arange(2, 10, 3, like=like), np.arange(2, 10, 3)),
                      (np.arange(start=1, stop=4, like=like), np.arange(start=1, stop=4)),
                      (np.asarray([1.5, 2.0], like=like), np.asarray([1.5, 2.0])),
                      (np.asanyarray([[1, 2]], like=like), np.asanyarray([[1, 2]])),
                      (np.ascontiguousarray(A, like=like), A),
                      (np.array([1, 2], like=like), np.array([1, 2]))]:
        check(got, want)
    assert np.empty((2, 2), like=like).shape == (2, 2)


def test_array_function_keyword_errors():
    x = t(A)
    with pytest.raises(TypeError, match=r"numpy.sort\(\): argument 'order'"):
        np.sort(x, order="f")
    with pytest.raises(TypeError, match=r"numpy.reshape\(\): argument 'order'"):
        np.reshape(x, (4, 3), order="F")
    with pytest.raises(TypeError, match=r"numpy.round\(\): argument 'decimals'"):
        np.round(x, 2)
    with pytest.raises(TypeError, match=r"numpy.std\(\): argument 'where'"):
        np.std(x, where=t(A > 0))
    with pytest.raises(TypeError, match=r"numpy.take\(\): argument 'mode'"):
        np.take(x, t(np.array([0])), mode="wrap")
    with pytest.raises(TypeError, match="argument 'out'"):
        np.sum(x, out=[0.0])
    with pytest.raises(TypeError, match="does not have|tensorlib dtype"):
        np.concatenate([x, np.array(["a"] * 4).reshape(1, 4)])


def test_array_function_not_implemented():
    x = t(A)
    with pytest.raises(TypeError, match="no implementation found for 'numpy.linalg.det'"):
        np.linalg.det(t(A[:3, :3]))
    with pytest.raises(TypeError, match="no implementation found"):
        np.einsum("ij->i", x)
    assert x.__array_function__(np.einsum, (tl.Tensor,), ("ij->i", x), {}) is NotImplemented

    class Other:
        pass
    assert x.__array_function__(np.concatenate, (tl.Tensor, Other), ([x],), {}) is \
        NotImplemented


def test_results_stay_tensors_not_ndarrays():
    # the issue's complaint: np.concatenate / where / sort / clip used to return ndarrays
    x = t(A)
    for r in (np.concatenate([x, x]), np.where(x > 0, x, 0.0), np.sort(x), np.clip(x, 0, 1),
              np.mean(x, dtype=np.float64), np.std(x), np.var(x)):
        assert type(r) is tl.Tensor


# ------------------------------------------------------------------------------ operands
def test_numpy_arrays_as_operands_zero_copy():
    a = np.arange(6.0).reshape(2, 3)
    x = t(np.ones((2, 3)))
    check(x + a, a + 1)
    check(tl.add(a, x), a + 1)
    check(tl.matmul(x, a.T), np.ones((2, 3)) @ a.T)
    check(tl.concat([a, x]), np.concatenate([a, np.ones((2, 3))]))
    check(tl.where(a > 2, a, x), np.where(a > 2, a, 1.0))
    out = tl.zeros((2, 3), dtype=tl.float64)
    tl.add(a, 1, out=out)
    check(out, a + 1)
    # zero-copy: an in-place op through the wrapped view writes the NumPy array itself
    x.add_(a)
    b = np.zeros(3)
    tl.asarray([1.0, 2.0, 3.0], dtype=tl.float64).add(b, out=tl.asarray(b))
    np.testing.assert_array_equal(b, [1.0, 2.0, 3.0])


def test_numpy_operand_bad_dtype():
    x = t(np.ones(2))
    with pytest.raises(TypeError, match=r"add\(\): argument 'other' is a NumPy array of dtype"):
        tl.add(x, np.array(["a", "b"]))


def test_numpy_operand_next_to_cuda_tensor(cuda_interpret):
    c = tl.ones(3).cuda()
    a = np.ones(3, dtype=np.float32)
    with pytest.raises(RuntimeError, match="'cuda:0' and 'cpu'"):
        c + a
    with pytest.raises(TypeError, match=r"numpy.add\(\): .*NumPy array.*'cuda:0'"):
        np.add(a, c)
    with pytest.raises(TypeError, match=r"numpy.concatenate\(\): .*'cuda:0'"):
        np.concatenate([c, a])
    r = np.exp(c)  # tensors on CUDA stay there
    assert isinstance(r, tl.Tensor) and r.device.type == "cuda"


def test_protocols_and_names_record_autograd():
    # implementations are built from tensorlib ops, so gradients flow through NumPy's calls
    a = tl.ones((2, 3), dtype=tl.float64).requires_grad_()
    b = tl.full((3,), 2.0, dtype=tl.float64).requires_grad_()
    loss = np.sum(np.exp(a)) + np.mean(tl.dot(a, b), dtype=np.float64)
    loss.backward()
    np.testing.assert_allclose(a.grad.numpy(), np.e + 2.0 / 2)
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0, 1.0])

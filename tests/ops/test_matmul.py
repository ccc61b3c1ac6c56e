"""matmul / mm / bmm / vecdot / tensordot / matrix_transpose on the CPU path, NumPy as oracle.

BLAS dtypes (float32/64, complex64/128) go through NumPy's matmul on zero-copy views; the others
(bool, integers, float16, bfloat16) through generated Numba kernels, whose blocking (32 rows x
256 columns x 128 k per block) and parallel variant the larger shapes below reach.
"""
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl
from helpers import NUMPY_DTYPES, as_tensor, assert_close, check_op, layouts, to_numpy

RNG = np.random.default_rng(1234)


def rand(shape, dtype, lo=None, hi=None):
    """Random values over most of an integer dtype's range (so products wrap, as in NumPy) or
    small-integer-valued floats (exact in every float dtype, incl. the half types' sums)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return RNG.random(shape) < 0.3
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = info.min if lo is None else max(lo, info.min)
        hi = info.max if hi is None else hi
        return RNG.integers(lo, hi, size=shape, dtype=dt, endpoint=True)
    lo = -4 if lo is None else lo
    hi = 4 if hi is None else hi
    x = RNG.integers(lo, hi, size=shape, endpoint=True).astype(dt)
    if dt.kind == "c":
        x = x + 1j * RNG.integers(lo, hi, size=shape, endpoint=True)
    return x.astype(dt)


def bf16(x: np.ndarray):
    return tl.asarray(np.asarray(x, np.float32)).astype(tl.bfloat16)


def check_matmul(a, b, fn=tl.matmul, np_fn=np.matmul, **kw):
    return check_op(fn, np_fn, a, b, **kw)


# ---------------------------------------------------------------- shapes
SHAPES = [
    ((3,), (3,)),                 # dot -> 0-d
    ((2, 3), (3,)),               # matrix-vector
    ((3,), (3, 4)),               # vector-matrix
    ((2, 3), (3, 4)),
    ((1, 1), (1, 1)),
    ((5, 2, 3), (3, 4)),          # batch @ matrix (folded into one product)
    ((3, 4), (5, 4, 2)),          # matrix @ batch
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((2, 1, 2, 3), (4, 3, 2)),    # broadcast batch dims
    ((1, 2, 3), (5, 3, 4)),
    ((6, 1, 3), (6, 3, 1)),
    ((0, 3), (3, 4)),             # empty M
    ((2, 3), (3, 0)),             # empty N
    ((0, 2, 3), (3, 4)),          # empty batch
    ((2, 0), (0, 4)),             # k = 0: zeros
    ((0,), (0,)),                 # empty dot: 0
    ((4, 2, 0), (0, 3)),
]


@pytest.mark.parametrize("dtype", ["float64", "int32", "float16"])
@pytest.mark.parametrize("s1,s2", SHAPES)
def test_shapes(s1, s2, dtype):
    check_matmul(rand(s1, dtype), rand(s2, dtype))


@pytest.mark.parametrize("s1,s2", [((2, 0), (0, 4)), ((3, 0), (0,)), ((5, 1, 0), (0, 2))])
@pytest.mark.parametrize("dtype", ["float32", "int8", "bool", "complex64", "float16"])
def test_k_zero_gives_zeros(s1, s2, dtype):
    r = tl.matmul(tl.ones(s1, dtype=dtype), tl.ones(s2, dtype=dtype))
    expected = np.matmul(np.ones(s1), np.ones(s2))
    assert r.dtype.name == dtype and r.shape == expected.shape
    np.testing.assert_array_equal(to_numpy(r), expected)


# ---------------------------------------------------------------- dtypes
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_every_dtype(dtype):
    check_matmul(rand((3, 4, 5), dtype), rand((5, 6), dtype))
    check_matmul(rand((2, 5), dtype), rand((3, 5, 2), dtype))
    check_matmul(rand((7,), dtype), rand((7,), dtype))


def test_bfloat16():
    a = rand((3, 4, 33), "float32")
    b = rand((33, 6), "float32")
    r = tl.matmul(bf16(a), bf16(b))
    assert r.dtype is tl.bfloat16 and r.shape == (3, 4, 6)
    assert_close(to_numpy(r), a @ b, "bfloat16")
    # Non-integral values: bf16 rounding of the inputs, float32 math, one rounding at the end.
    a = RNG.standard_normal((9, 40)).astype(np.float32)
    b = RNG.standard_normal((40, 7)).astype(np.float32)
    ta, tb = bf16(a), bf16(b)
    exact = to_numpy(ta) @ to_numpy(tb)
    assert_close(to_numpy(ta @ tb), exact, "bfloat16", rtol=1e-2, atol=2e-2)
    # Mixed with float16: both promote to float32.
    r = tl.matmul(ta, tl.asarray(b.astype(np.float16)))
    assert r.dtype is tl.float32


def test_float16_non_integral_accumulates_in_float32():
    a = RNG.standard_normal((6, 300)).astype(np.float16)
    b = RNG.standard_normal((300, 5)).astype(np.float16)
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    got = to_numpy(tl.matmul(as_tensor(a), as_tensor(b)))
    np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=2e-3,
                               atol=2e-3)
    check_matmul(a, b, rtol=2e-3, atol=5e-2)
    # A long sum of ones is exact in a float32 accumulator (it would stall at 2048 in float16).
    ones = np.ones((1, 4096), np.float16)
    assert to_numpy(tl.matmul(as_tensor(ones), as_tensor(ones.T)))[0, 0] == 4096


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_float16_nan_inf():
    a = np.array([[np.inf, 1.0], [0.0, 2.0]], np.float16)
    b = np.array([[0.0, 1.0], [3.0, np.nan]], np.float16)
    check_matmul(a, b)


@pytest.mark.parametrize("d1,d2", [("int32", "float32"), ("int8", "uint8"), ("bool", "int16"),
                                   ("float32", "complex128"), ("uint64", "int64"),
                                   ("float16", "float64"), ("int64", "float16"),
                                   ("bool", "float16"), ("uint32", "int32")])
def test_mixed_dtypes_promote(d1, d2):
    a, b = rand((3, 4), d1, 0, 5), rand((4, 2), d2, 0, 5)
    rt = tl.result_type(getattr(tl, d1), getattr(tl, d2))
    np_rt = np.float32 if rt is tl.bfloat16 else rt.name

    def ref(x, y):
        return np.matmul(x.astype(np_rt), y.astype(np_rt))

    check_matmul(a, b, np_fn=ref, expected_dtype=rt)


def test_bool_is_or_of_ands():
    a = np.array([[True, False, True], [False, False, False]])
    b = np.array([[False, True], [True, True], [False, True]])
    r = check_matmul(a, b)
    assert r.dtype is tl.bool
    assert to_numpy(r).tolist() == [[False, True], [False, False]]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                   "uint64"])
def test_integer_overflow_wraps(dtype):
    info = np.iinfo(dtype)
    a = np.full((2, 70), info.max, dtype)
    b = np.full((70, 3), info.max - 3, dtype)
    a[1] = info.min
    check_matmul(a, b)


# ---------------------------------------------------------------- blocking and threads
@pytest.mark.parametrize("dtype", ["int32", "uint8", "float16", "bool", "float32"])
def test_large_blocked_parallel(dtype):
    # Partial row / column / k blocks, several of each; > PARALLEL_WORK multiply-adds.
    a = rand((70, 300), dtype, -3, 3)
    b = rand((300, 261), dtype, -3, 3)
    check_matmul(a, b)
    # Batched, with transposed and reversed operands.
    a = rand((3, 261, 40), dtype, -3, 3).transpose(0, 2, 1)
    b = rand((3, 261, 50), dtype, -3, 3)[::-1]
    check_matmul(a, b)


# ---------------------------------------------------------------- layouts
@st.composite
def matmul_pair(draw, dtype):
    """Compatible operands (1-D to 4-D, broadcast batch dims, sizes 0..5) in random layouts."""
    nd1, nd2 = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    m, k, n = (draw(st.integers(0, 5)) for _ in range(3))
    batch = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0,
                                                   max_dims=2, max_side=3))
    b1, b2 = batch.input_shapes
    s1 = (k,) if nd1 == 1 else b1[len(b1) - min(len(b1), nd1 - 2):] + (m, k)
    s2 = (k,) if nd2 == 1 else b2[len(b2) - min(len(b2), nd2 - 2):] + (k, n)
    if np.dtype(dtype).kind == "b":
        elems = st.booleans()
    else:
        elems = st.integers(-6, 6) if np.dtype(dtype).kind in "if" else st.integers(0, 6)
    a = draw(layouts(hnp.arrays(np.dtype(dtype), s1, elements=elems)))
    b = draw(layouts(hnp.arrays(np.dtype(dtype), s2, elements=elems)))
    return a, b


@pytest.mark.parametrize("dtype", ["float32", "complex128", "int16", "uint32", "float16", "bool"])
@given(data=st.data())
def test_layouts(dtype, data):
    a, b = data.draw(matmul_pair(dtype))
    check_matmul(a, b)


def test_transposed_and_negative_strides_blas():
    a = rand((40, 30), "float64")
    b = rand((50, 40), "float64")
    check_matmul(a.T, b.T)            # both Fortran-ordered: BLAS transpose flags
    check_matmul(a[::-1, ::2], b[::2, ::-1][:15])  # not BLAS-able: copied first
    check_matmul(a[:, 3], b.T[::-1])  # strided vector


# ---------------------------------------------------------------- out=
@pytest.mark.parametrize("dtype", ["float32", "int16", "float16"])
def test_out(dtype):
    a, b = rand((4, 3, 5), dtype), rand((5, 2), dtype)
    out = tl.empty((4, 3, 2), dtype=dtype)
    r = tl.matmul(as_tensor(a), as_tensor(b), out=out)
    assert r is out
    assert_close(to_numpy(out), np.matmul(a, b), dtype)


def test_out_1d_cases_and_dot():
    a, b = rand((3, 5), "float64"), rand((5,), "float64")
    out = tl.empty((3,), dtype="float64")
    tl.matmul(as_tensor(a), as_tensor(b), out=out)
    np.testing.assert_allclose(to_numpy(out), a @ b)
    out0 = tl.empty((), dtype="int32")
    x = rand((6,), "int32", -5, 5)
    tl.matmul(as_tensor(x), as_tensor(x), out=out0)
    assert out0.item() == int(x @ x)


def test_out_other_dtype_and_layout():
    a, b = rand((3, 4), "int32", -9, 9), rand((4, 5), "int32", -9, 9)
    out = tl.empty((3, 5), dtype="float64")
    tl.matmul(as_tensor(a), as_tensor(b), out=out)
    np.testing.assert_array_equal(to_numpy(out), (a @ b).astype(np.float64))
    # A transposed (non-contiguous) out.
    out_t = tl.empty((5, 3), dtype="int32").mT
    tl.matmul(as_tensor(a), as_tensor(b), out=out_t)
    np.testing.assert_array_equal(to_numpy(out_t), a @ b)
    outf = tl.empty((5, 3), dtype="float32").mT
    tl.matmul(as_tensor(a.astype(np.float32)), as_tensor(b.astype(np.float32)), out=outf)
    np.testing.assert_array_equal(to_numpy(outf), a @ b)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_out_aliases_input(dtype):
    a = rand((4, 4), dtype, -5, 5)
    b = rand((4, 4), dtype, -5, 5)
    ta, tb = tl.tensor(a), tl.tensor(b)
    tl.matmul(ta, tb, out=ta)
    np.testing.assert_array_equal(to_numpy(ta), a @ b)
    tl.matmul(ta, tb, out=tb)
    np.testing.assert_array_equal(to_numpy(tb), (a @ b) @ b)


def test_out_errors():
    a, b = tl.ones((3, 4)), tl.ones((4, 5))
    with pytest.raises(ValueError, match=r"matmul\(\).*'out'.*\(5, 3\).*\(3, 5\)"):
        tl.matmul(a, b, out=tl.empty((5, 3)))
    with pytest.raises(TypeError, match=r"matmul\(\).*float32.*int32"):
        tl.matmul(a, b, out=tl.empty((3, 5), dtype="int32"))
    with pytest.raises(RuntimeError, match=r"matmul\(\).*'out'"):
        tl.matmul(a, b, out=tl.empty((1, 5)).expand((3, 5)))
    with pytest.raises(TypeError, match=r"matmul\(\).*'out'"):
        tl.matmul(a, b, out=np.empty((3, 5), np.float32))


# ---------------------------------------------------------------- operators
def test_operators():
    a, b = rand((2, 3, 4), "float32"), rand((4, 5), "float32")
    ta, tb = as_tensor(a), as_tensor(b)
    assert_close(to_numpy(ta @ tb), a @ b, "float32")
    assert_close(to_numpy(tb.__rmatmul__(ta)), a @ b, "float32")
    assert_close(to_numpy(ta.matmul(tb)), a @ b, "float32")
    v = rand((4,), "int64", -9, 9)
    assert (as_tensor(v) @ as_tensor(v)).item() == int(v @ v)


@pytest.mark.parametrize("dtype", ["float64", "int16", "float16"])
def test_imatmul_square(dtype):
    a, b = rand((3, 4, 4), dtype), rand((4, 4), dtype)
    t = tl.tensor(a)
    keep = t
    t @= tl.tensor(b)
    assert t is keep
    assert_close(to_numpy(t), np.matmul(a, b), dtype)


def test_imatmul_errors():
    t = tl.ones((3, 4))
    with pytest.raises(ValueError, match=r"matmul\(\).*\(3, 4\).*\(3, 5\)"):
        t @= tl.ones((4, 5))  # the shape would change: no in-place op
    ti = tl.ones((2, 2), dtype="int32")
    with pytest.raises(TypeError, match=r"matmul\(\).*float32.*int32"):
        ti @= tl.ones((2, 2))
    np.testing.assert_array_equal(to_numpy(ti), np.ones((2, 2)))


def test_rmatmul_non_tensor_is_type_error():
    with pytest.raises(TypeError, match="matmul"):
        tl.ones((2, 2)) @ [[1, 0], [0, 1]]


# ---------------------------------------------------------------- errors
def test_errors():
    with pytest.raises(ValueError, match=r"matmul\(\).*0-d.*\(\).*\(3,\)"):
        tl.matmul(tl.ones(()), tl.ones(3))
    with pytest.raises(ValueError, match=r"matmul\(\).*0-d.*\(3,\).*\(\)"):
        tl.ones(3) @ tl.ones(())
    with pytest.raises(ValueError, match=r"matmul\(\).*\(2, 3\).*\(4, 5\)"):
        tl.matmul(tl.ones((2, 3)), tl.ones((4, 5)))
    with pytest.raises(ValueError, match=r"matmul\(\).*\(3,\).*\(4,\)"):
        tl.matmul(tl.ones(3), tl.ones(4))
    with pytest.raises(ValueError, match=r"matmul\(\).*\(2, 2, 3\).*\(3, 3, 4\)"):
        tl.matmul(tl.ones((2, 2, 3)), tl.ones((3, 3, 4)))
    with pytest.raises(TypeError, match=r"matmul\(\).*'other'"):
        tl.matmul(tl.ones(3), 2.0)


# ---------------------------------------------------------------- mm / bmm
def test_mm():
    check_matmul(rand((3, 4), "float32"), rand((4, 2), "float32"), fn=tl.mm)
    check_matmul(rand((3, 4), "uint16"), rand((4, 2), "uint16"), fn=tl.mm)
    out = tl.empty((3, 2), dtype="float64")
    a, b = rand((3, 4), "float64"), rand((4, 2), "float64")
    assert tl.mm(as_tensor(a), as_tensor(b), out=out) is out
    np.testing.assert_allclose(to_numpy(out), a @ b)
    with pytest.raises(ValueError, match=r"mm\(\).*'self'.*\(3,\)"):
        tl.mm(tl.ones(3), tl.ones((3, 2)))
    with pytest.raises(ValueError, match=r"mm\(\).*'mat2'.*\(2, 3, 2\)"):
        tl.mm(tl.ones((2, 3)), tl.ones((2, 3, 2)))
    with pytest.raises(ValueError, match=r"mm\(\).*\(2, 3\).*\(2, 2\)"):
        tl.mm(tl.ones((2, 3)), tl.ones((2, 2)))


def test_bmm():
    check_matmul(rand((5, 3, 4), "complex64"), rand((5, 4, 2), "complex64"), fn=tl.bmm)
    check_matmul(rand((5, 3, 4), "int8"), rand((5, 4, 2), "int8"), fn=tl.bmm)
    with pytest.raises(ValueError, match=r"bmm\(\).*\(5, 3, 4\).*\(4, 4, 2\)"):
        tl.bmm(tl.ones((5, 3, 4)), tl.ones((4, 4, 2)))  # no batch broadcasting
    with pytest.raises(ValueError, match=r"bmm\(\).*'self'.*\(3, 4\)"):
        tl.bmm(tl.ones((3, 4)), tl.ones((1, 4, 2)))


# ---------------------------------------------------------------- matrix_transpose
def test_matrix_transpose_is_a_view():
    a = rand((2, 3, 4), "float32")
    t = tl.tensor(a)
    mt = tl.matrix_transpose(t)
    assert mt.shape == (2, 4, 3)
    np.testing.assert_array_equal(to_numpy(mt), np.matrix_transpose(a))
    mt[0, 1, 2] = 100.0
    assert t[0, 2, 1].item() == 100.0
    assert mt.untyped_storage() is t.untyped_storage()
    assert tl.matrix_transpose(tl.ones((3, 5))).shape == (5, 3)
    for shape in [(), (3,)]:
        with pytest.raises(ValueError, match=r"matrix_transpose\(\).*" + re.escape(str(shape))):
            tl.matrix_transpose(tl.ones(shape))


# ---------------------------------------------------------------- vecdot
@pytest.mark.parametrize("dtype", ["float32", "complex64", "complex128", "int32", "float16",
                                   "bool"])
def test_vecdot(dtype):
    check_op(tl.vecdot, np.vecdot, rand((4, 5), dtype), rand((4, 5), dtype))
    check_op(tl.vecdot, np.vecdot, rand((3, 1, 6), dtype), rand((2, 6), dtype))
    check_op(tl.vecdot, np.vecdot, rand((6,), dtype), rand((2, 3, 6), dtype))
    check_op(lambda x, y: tl.vecdot(x, y, axis=0), lambda x, y: np.vecdot(x, y, axis=0),
             rand((5, 3), dtype), rand((5, 3), dtype))
    check_op(lambda x, y: tl.vecdot(x, y, axis=-2), lambda x, y: np.vecdot(x, y, axis=-2),
             rand((2, 5, 3), dtype), rand((5, 3), dtype))


def test_vecdot_conjugates_first_argument():
    x = np.array([1 + 2j, 3 - 1j], np.complex128)
    y = np.array([2 - 1j, 1j], np.complex128)
    r = tl.vecdot(as_tensor(x), as_tensor(y))
    assert r.item() == np.vdot(x, y) == np.vecdot(x, y)
    assert (tl.vecdot(as_tensor(y), as_tensor(x))).item() == np.vdot(y, x)


def test_vecdot_out_and_errors():
    a, b = rand((3, 4), "float64"), rand((3, 4), "float64")
    out = tl.empty((3,), dtype="float64")
    assert tl.vecdot(as_tensor(a), as_tensor(b), out=out) is out
    np.testing.assert_allclose(to_numpy(out), np.vecdot(a, b))
    with pytest.raises(ValueError, match=r"vecdot\(\).*\(3, 4\).*\(3, 5\)"):
        tl.vecdot(tl.ones((3, 4)), tl.ones((3, 5)))
    with pytest.raises(ValueError, match=r"vecdot\(\).*\(2, 4\).*\(3, 4\)"):
        tl.vecdot(tl.ones((2, 4)), tl.ones((3, 4)))
    with pytest.raises(IndexError, match=r"vecdot\(\).*'axis' = -3"):
        tl.vecdot(tl.ones((2, 4)), tl.ones((3, 2, 4)), axis=-3)
    with pytest.raises(ValueError, match=r"vecdot\(\).*0-d"):
        tl.vecdot(tl.ones(()), tl.ones(()))


# ---------------------------------------------------------------- tensordot
@pytest.mark.parametrize("dtype", ["float64", "int16", "float16", "complex64"])
@pytest.mark.parametrize("s1,s2,axes", [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (3, 4), 1),
    ((2, 3), (4, 5), 0),           # outer product
    ((3, 4), (3, 4), 2),           # full contraction -> 0-d
    ((2, 3, 4), (4, 3, 5), ((1, 2), (1, 0))),
    ((2, 3, 4), (5, 2), ((0,), (1,))),
    ((2, 3), (3, 2), (1, 0)),       # a pair of single axes
    ((2, 0, 3), (0, 3, 4), 2),     # empty contraction
    ((4, 3), (3, 2), ((-1,), (-2,))),
])
def test_tensordot(s1, s2, axes, dtype):
    a, b = rand(s1, dtype), rand(s2, dtype)
    expected = np.tensordot(a, b, axes=axes)
    got = tl.tensordot(as_tensor(a), as_tensor(b), axes=axes)  # pairs of sequences too
    assert got.dtype.name == dtype and got.shape == expected.shape
    assert_close(to_numpy(got), expected, dtype)


def test_tensordot_default_axes():
    a, b = rand((2, 3, 4), "int32", -9, 9), rand((3, 4, 5), "int32", -9, 9)
    np.testing.assert_array_equal(to_numpy(tl.tensordot(as_tensor(a), as_tensor(b))),
                                  np.tensordot(a, b))


def test_tensordot_errors():
    with pytest.raises(ValueError, match=r"tensordot\(\).*\(2, 3\).*\(4, 3\)"):
        tl.tensordot(tl.ones((2, 3)), tl.ones((4, 3)), axes=1)
    with pytest.raises(ValueError, match=r"tensordot\(\).*'axes' = 3"):
        tl.tensordot(tl.ones((2, 3)), tl.ones((2, 3)), axes=3)
    with pytest.raises(ValueError, match=r"tensordot\(\).*'axes' = -1"):
        tl.tensordot(tl.ones((2, 3)), tl.ones((2, 3)), axes=-1)
    with pytest.raises(ValueError, match=r"tensordot\(\).*'axes'"):
        tl.tensordot(tl.ones((2, 3)), tl.ones((2, 3)), axes=(0, 1, 2))
    with pytest.raises(IndexError, match=r"tensordot\(\).*'axes'"):
        tl.tensordot(tl.ones((2, 3)), tl.ones((2, 3)), axes=(5, 0))


@pytest.mark.parametrize("dtype", [tl.float32, tl.float64, tl.complex64, tl.complex128])
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt", "offset"])
def test_direct_2d_route_matches_the_general_path(dtype, layout, monkeypatch):
    """2-D @ 2-D of one BLAS dtype skips the general set-up (ops/matmul._run) and gives its
    bits, for transposed operands and views at storage offsets."""
    from tensorlib.ops import matmul as om
    rng = np.random.default_rng(3)
    def mat(r, c):
        v = rng.standard_normal((r, c)) + (1j * rng.standard_normal((r, c))
                                           if dtype.kind == "c" else 0)
        return tl.asarray(v.astype(dtype.np_dtype))
    a = mat(7, 5) if layout[0] in "no" else tl.matrix_transpose(mat(5, 7))
    b = mat(5, 3) if layout[-1] in "no" else tl.matrix_transpose(mat(3, 5))
    if layout == "offset":
        a, b = mat(9, 5)[2:], mat(6, 3)[1:]
    ref = tl.empty((7, 3), dtype=dtype)
    tl.matmul(a, b, out=ref)  # out= always takes the general path

    def general(*args, **kwargs):
        raise AssertionError("general path")
    monkeypatch.setattr(om, "_run", general)
    got = tl.matmul(a, b)
    monkeypatch.undo()
    assert got.shape == (7, 3) and got.dtype == dtype and got.is_contiguous()
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    np.testing.assert_allclose(got.numpy(), a.numpy() @ b.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint16", "uint64", "bool"])
def test_cold_integer_matmul_is_numpys_bit_for_bit(dtype, monkeypatch):
    """A first integer / bool product without a compiled kernel runs NumPy's matmul
    (kernels/cpu/matmul.py _numpy_matmul): the kernel's bits, wrap-around included, on
    strided, batched and broadcast operands."""
    from tensorlib.kernels.cpu import matmul as cpu_matmul
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype) if dtype != "bool" else None

    def draw(shape):
        if info is None:
            return rng.random(shape) < 0.3
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)

    a, b = draw((3, 17, 24)), draw((24, 11))
    views = [(lambda t: t, lambda t: t), (lambda t: t[:, ::2, ::-1], lambda t: t[::-1, 1:])]
    for va, vb in views:
        want = [None, None]
        for i, cold in enumerate((False, "always")):
            monkeypatch.setattr(cpu_matmul, "COLD", cold)
            want[i] = (va(tl.asarray(a)) @ vb(tl.asarray(b))).numpy()
        with np.errstate(all="ignore"):
            ref = np.matmul(va(a), vb(b))
        np.testing.assert_array_equal(want[0], ref)
        np.testing.assert_array_equal(want[1], ref)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool", "float16",
                                   "complex64"])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "offset"])
@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_vector_dot(dtype, layout, n, monkeypatch):
    """1-D @ 1-D: every layout of every dtype but the half types takes the kernel's direct dot
    (NumPy's, the general set-up never runs), an empty or half one the general path; each
    gives NumPy's 0-d result."""
    from tensorlib.ops import matmul as mm
    a, b = rand((2 * n + 1,), dtype), rand((2 * n + 1,), dtype)
    pick = {"contiguous": slice(0, n), "strided": slice(0, 2 * n, 2),
            "reversed": slice(2 * n, 0, -2) if n else slice(0, 0), "offset": slice(1, n + 1)}
    ta, tb = as_tensor(a)[pick[layout]], as_tensor(b)[pick[layout]]
    want = np.dot(a[pick[layout]], b[pick[layout]])
    direct = dtype != "float16" and n
    if direct:
        monkeypatch.setattr(mm, "_run", lambda *a, **k: pytest.fail("took the general path"))
    got = ta @ tb
    assert got.shape == () and got.dtype.name == dtype
    assert_close(to_numpy(got), np.asarray(want), dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_vector_dot_wraps_as_numpy(dtype):
    """Integer dots wrap modulo 2**bits (NumPy's answer, the general loop's too); vecdot and
    dot of real vectors give the same 0-d result as matmul."""
    info = np.iinfo(dtype)
    a = np.full(257, info.max, dtype)
    b = np.arange(257).astype(dtype)
    with np.errstate(all="ignore"):
        want = np.dot(a, b)
    ta, tb = tl.asarray(a), tl.asarray(b)
    for got in (ta @ tb, tl.dot(ta, tb), tl.vecdot(ta, tb), tl.vecdot(ta, tb, axis=0)):
        assert got.shape == () and got.dtype.name == dtype
        assert got.item() == want.item()
    from tensorlib.ops import matmul as mm
    general = mm._run("matmul", ta, tb, ta._view((1, 257), (0, 1), 0),
                      tb._view((257, 1), (1, 0), 0), (), (), None)
    assert general.item() == want.item()


def test_vector_dot_errors_and_mixed_dtypes():
    a = tl.asarray(np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"matmul\(\): contraction dimensions differ"):
        a @ tl.asarray(np.ones(4, np.float32))
    r = a @ tl.asarray(np.arange(3.0))  # float32 . float64 promotes
    assert r.dtype is tl.float64 and float(r) == 3.0

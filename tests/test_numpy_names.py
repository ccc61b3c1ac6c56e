"""NumPy names a user types on day one (issue 17 item 3): concatenate, dot, unique, x.copy(),
x.sort() in place, tl.__version__, tl.random.default_rng, isin, broadcast_shapes."""
import os
import tomllib

import numpy as np
import pytest

import tensorlib as tl

R = np.random.default_rng(3)


def t(a):
    return tl.asarray(np.asarray(a))


def same(got, want):
    assert isinstance(got, tl.Tensor)
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, equal_nan=True)


def test_version_matches_pyproject():
    with open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"), "rb") as f:
        assert tl.__version__ == tomllib.load(f)["project"]["version"]


def test_concatenate():
    a, b = R.standard_normal((2, 3)), R.standard_normal((1, 3))
    same(tl.concatenate([t(a), t(b)]), np.concatenate([a, b]))
    same(tl.concatenate((t(a), t(a)), axis=1), np.concatenate([a, a], axis=1))
    same(tl.concatenate([t(a), t(b)], axis=None), np.concatenate([a, b], axis=None))
    with pytest.raises(ValueError, match="concatenate"):
        tl.concatenate([])


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3, 4)), ((2, 3), (3,)),
                                   ((3,), (3, 2)), ((2, 2, 3), (3,)), ((2, 3, 4), (5, 4, 2)),
                                   ((2, 3), (4, 3, 5)), ((), (3,))])
def test_dot_matches_numpy(sa, sb):
    a, b = R.standard_normal(sa), R.standard_normal(sb)
    same(tl.dot(t(a), t(b)), np.dot(a, b))


def test_dot_scalars_and_errors():
    a = R.standard_normal((2, 3))
    same(tl.dot(t(a), 2.0), np.dot(a, 2.0))
    same(tl.dot(3, t(a)), np.dot(3, a))
    with pytest.raises(TypeError, match="dot"):
        tl.dot(1, 2)
    with pytest.raises(ValueError):
        tl.dot(t(a), t(a))  # (2, 3) . (2, 3): inner sizes differ


@pytest.mark.parametrize("data", [[3, 1, 2, 3, 1, 1], [[2.0, np.nan], [np.nan, 2.0]],
                                  [1.5, -0.0, 0.0, np.nan, 1.5], [], [[7]]])
def test_unique_matches_numpy(data):
    a = np.asarray(data, dtype=np.float64 if not data or isinstance(
        np.asarray(data).flat[0], float) else np.int64)
    same(tl.unique(t(a)), np.unique(a))
    got = tl.unique(t(a), return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    assert len(got) == 4
    for g, w in zip(got, want):
        same(g, w)
    v, c = tl.unique(t(a), return_counts=True)
    same(c, np.unique(a, return_counts=True)[1])


def test_unique_equal_nan_false_keeps_nans_apart():
    a = np.array([np.nan, 1.0, np.nan])
    same(tl.unique(t(a), equal_nan=False), np.unique(a, equal_nan=False))


def test_copy_is_independent():
    x = t(np.arange(4.0))
    y = x.copy()
    y[0] = 10.0
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0] and y.tolist() == [10.0, 1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="order"):
        x.copy(order="F")


def test_sort_method_is_in_place():
    a = R.standard_normal((3, 5))
    x = t(a)
    assert x.sort() is None
    same(x, np.sort(a, axis=-1))
    y = t(a)
    y.sort(axis=0)
    same(y, np.sort(a, axis=0))
    z = t(a)
    z.sort(descending=True)
    same(z, -np.sort(-a, axis=-1))
    v = t(a)[:, ::2]  # a strided view sorts its own elements only
    base = t(a)
    view = base[:, ::2]
    view.sort()
    expect = a.copy()
    expect[:, ::2] = np.sort(a[:, ::2], axis=-1)
    same(base, expect)
    assert v.shape == (3, 3)
    ro = np.arange(3.0)[::-1]
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        tl.asarray(ro).sort()
    with pytest.raises(TypeError, match="order"):
        t(a).sort(order="x")
    with pytest.raises(TypeError, match="axis"):
        t(a).sort(axis=None)


@pytest.mark.parametrize("x1,x2", [([1, 2, 3, 4], [2, 4, 6]), ([[1.5, np.nan], [2.0, 0.0]],
                                   [np.nan, 2.0, -0.0]), ([1, 2], []), ([5, 6], [6.0, 7.5]),
                                   ([], [1, 2])])
def test_isin_matches_numpy(x1, x2):
    a, b = np.asarray(x1, dtype=float if x1 == [] else None), np.asarray(x2, dtype=float
                                                                          if x2 == [] else None)
    same(tl.isin(t(a), t(b)), np.isin(a, b))
    same(tl.isin(t(a), t(b), invert=True), np.isin(a, b, invert=True))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64"])
def test_isin_integer_table_matches_numpy(dtype):
    """Integers from 4096 elements whose test values span a small range take the table route:
    values below, inside and above the range, the dtype's extremes in either argument (no
    sentinel past them), a range too wide for a table (the sort route), 2-D and strided x1,
    invert."""
    from tensorlib import numpy_names
    info = np.iinfo(dtype)
    n = numpy_names._ISIN_TABLE_MIN
    rng = np.random.default_rng(7)
    lo, hi = max(int(info.min), -300), min(int(info.max), 300)
    a = rng.integers(lo, hi + 1, n).astype(dtype)
    a[:4] = [info.min, info.max, info.min + 1, info.max - 1]
    cases = [rng.integers(max(lo, -40), min(hi, 40) + 1, 30).astype(dtype),
             np.array([info.min, info.min + 2, 5], dtype),          # the low extreme
             np.array([info.max, info.max - 3, 1], dtype),          # the high extreme
             np.array([info.min, info.max], dtype),                 # too wide: sorted
             np.array([a[10]], dtype)]
    for b in cases:
        for x in (a, a.reshape(64, -1), a[::-1]):
            same(tl.isin(t(x), t(b)), np.isin(x, b))
            same(tl.isin(t(x), t(b), invert=True), np.isin(x, b, invert=True))


def test_isin_of_bools():
    """bool x1 and x2: each of the two values is in x2 or not (no sort): every combination,
    2-D, 0-d and empty x1, invert, and a fresh result (not x1 itself)."""
    a = np.array([[True, False, True], [False, False, True]])
    for b in ([True], [False, False], [True, False, True], []):
        b = np.array(b, bool)
        for x in (a, a[0, 1], a[:0]):
            same(tl.isin(t(x), t(b)), np.isin(x, b))
            same(tl.isin(t(x), t(b), invert=True), np.isin(x, b, invert=True))
    x = t(a)
    got = tl.isin(x, t(np.array([True])))
    got[0, 0] = False
    assert x.numpy()[0, 0]


def test_isin_complex_scalars_and_errors():
    a = np.array([1 + 1j, 2 - 1j, 0j])
    b = np.array([2 - 1j, 5j])
    same(tl.isin(t(a), t(b)), np.isin(a, b))
    same(tl.isin(t(np.arange(4)), 2), np.isin(np.arange(4), 2))
    same(tl.isin(3, t(np.arange(5))), np.isin(3, np.arange(5)))
    with pytest.raises(TypeError, match="isin"):
        tl.isin(1, 2)
    with pytest.raises(TypeError, match="invert"):
        tl.isin(t(a), t(b), invert=1)


@pytest.mark.parametrize("shapes", [((2, 1), (3,)), ((), (4, 1, 2)), ((0, 1), (1, 5)),
                                    ((3,), 3), ()])
def test_broadcast_shapes(shapes):
    assert tl.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_broadcast_shapes_errors():
    with pytest.raises(ValueError, match=r"broadcast_shapes\(\): shapes \(2,\) and \(3,\)"):
        tl.broadcast_shapes((2,), (3,))
    with pytest.raises(TypeError, match=r"shapes\[1\]"):
        tl.broadcast_shapes((2,), "ab")
    with pytest.raises(ValueError, match="negative"):
        tl.broadcast_shapes((-1,))


# ------------------------------------------------------------------------------ default_rng
def test_default_rng_reproducible_and_numpy_dtypes():
    r1, r2 = tl.random.default_rng(42), tl.random.default_rng(42)
    a, b = r1.random((4, 5)), r2.random((4, 5))
    assert a.dtype == tl.float64 and a.shape == (4, 5)
    assert a.tolist() == b.tolist()
    assert r1.random(5).tolist() != a.reshape(-1)[:5].tolist()  # the stream moves on
    assert tl.random.default_rng(43).random(3).tolist() != tl.random.default_rng(42).random(
        3).tolist()
    s = r1.standard_normal()
    assert s.shape == () and s.dtype == tl.float64
    assert r1.random(3, dtype="float32").dtype == tl.float32
    assert r1.integers(5, size=3).dtype == tl.int64


def test_default_rng_ranges():
    r = tl.random.default_rng(7)
    u = r.random(4000).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.03
    v = r.uniform(-2.0, 3.0, size=4000).numpy()
    assert v.min() >= -2 and v.max() < 3
    n = r.normal(10.0, 2.0, size=20000).numpy()
    assert abs(n.mean() - 10) < 0.1 and abs(n.std() - 2) < 0.1
    z = r.standard_normal((100, 100)).numpy()
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    i = r.integers(-3, 4, size=5000).numpy()
    assert set(np.unique(i)) == set(range(-3, 4))
    j = r.integers(1, 6, size=5000, endpoint=True, dtype=np.int32)
    assert j.dtype == tl.int32 and set(np.unique(j.numpy())) == set(range(1, 7))


def test_default_rng_choice_and_permutation():
    r = tl.random.default_rng(11)
    p = r.permutation(10)
    assert sorted(p.tolist()) == list(range(10))
    x = t(np.arange(12).reshape(4, 3))
    px = r.permutation(x)
    assert sorted(px[:, 0].tolist()) == [0, 3, 6, 9] and (px[:, 1] - px[:, 0]).tolist() == [1] * 4
    c = r.choice(10, size=7, replace=False)
    assert len(set(c.tolist())) == 7 and c.shape == (7,)
    c2 = r.choice(3, size=(2, 50))
    assert c2.shape == (2, 50) and set(np.unique(c2.numpy())) <= {0, 1, 2}
    c3 = r.choice(t(np.array([10.0, 20.0, 30.0])), size=40, p=[0.0, 1.0, 0.0])
    assert c3.tolist() == [20.0] * 40
    c4 = r.choice(x, size=2, replace=False, axis=1)
    assert c4.shape == (4, 2)
    assert r.choice(5).shape == ()


def test_default_rng_errors():
    r = tl.random.default_rng(0)
    with pytest.raises(TypeError, match=r"random\(\): argument 'size'"):
        r.random("3")
    with pytest.raises(ValueError, match=r"integers\(\): low must be < high"):
        r.integers(5, 5)
    with pytest.raises(TypeError, match=r"integers\(\): argument 'dtype'"):
        r.integers(0, 5, size=2, dtype="float32")
    with pytest.raises(TypeError, match=r"random\(\): argument 'dtype'"):
        r.random(2, dtype="int32")
    with pytest.raises(ValueError, match=r"choice\(\): can't take 6 samples"):
        r.choice(5, size=6, replace=False)
    with pytest.raises(ValueError, match=r"choice\(\): argument 'p'"):
        r.choice(5, p=[0.5, 0.5])
    with pytest.raises(TypeError, match=r"uniform\(\): argument 'low'"):
        r.uniform(t(np.zeros(2)), 1.0)
    with pytest.raises(TypeError, match=r"default_rng\(\): seed must be an int"):
        tl.random.default_rng(1.5)


def test_default_rng_generator_objects():
    g = tl.Generator().manual_seed(5)
    r = tl.random.default_rng(g)
    assert r.generator is g and tl.random.default_rng(r) is r
    a = r.random(3)
    assert a.tolist() == tl.random.default_rng(5).random(3).tolist()


def test_default_rng_cuda_matches_cpu(cuda_interpret):
    a = tl.random.default_rng(9, device="cuda").random(8, dtype="float32")
    assert a.device.type == "cuda"
    assert a.cpu().tolist() == tl.random.default_rng(9).random(8, dtype="float32").tolist()

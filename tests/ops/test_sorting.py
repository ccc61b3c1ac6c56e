"""Sorting and searching against NumPy: sort / argsort (stable, descending, nan and signed-zero
order, every layout, long rows sorted by all threads), searchsorted, count_nonzero and the
unique_* family (nan distinct); plus the Array API inspection namespace."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from tensorlib.array_api_info import __array_namespace_info__
from helpers import arrays, host, on_device, to_numpy

# one key layout per dtype compiles a module: keep the set small
SORT_DTYPES = ["float32", "int64", "uint8", "float16"]

SPECIAL = np.array([3.0, np.nan, -0.0, 0.0, -1.0, 2.0, np.inf, -np.inf, 2.0, -np.nan, 0.0])


def np_argsort_desc(x, axis):
    """Stable descending argsort (equal elements in input order, nan first)."""
    n = x.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)


def small_values(dtype):
    if dtype.startswith("float"):
        return st.sampled_from([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 7.0])
    return None


@pytest.fixture
def long_rows_at_test_sizes(monkeypatch):
    """Rows from 2**17 elements take the all-threads long-row path here (the machine's threshold
    is higher), so the test-sized long rows below keep exercising it."""
    from tensorlib.kernels.cpu import sorting
    monkeypatch.setattr(sorting, "ROW_PAR", 1 << 17)


@pytest.fixture
def radix_argsort(monkeypatch):
    """argsort takes the radix route (rows longer than sorting.COMPOSITE_MAX_ROW: positions
    that would not fit in a word beside the key) from 2 elements on."""
    from tensorlib.kernels.cpu import sorting
    monkeypatch.setattr(sorting, "COMPOSITE_MAX_ROW", {1: 1, 2: 1, 4: 1, 8: 1})


@pytest.mark.parametrize("dtype", SORT_DTYPES)
@given(data=st.data())
def test_sort_argsort_match_numpy(dtype, data):
    x = data.draw(arrays(dtype, min_dims=1, max_dims=3, max_side=6,
                         elements=small_values(dtype)))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    t = tl.from_numpy(x)
    got = to_numpy(tl.sort(t, axis=axis))
    want = np.sort(x, axis=axis, kind="stable")
    np.testing.assert_array_equal(got, want)
    assert tl.sort(t, axis=axis).dtype == t.dtype
    np.testing.assert_array_equal(to_numpy(tl.argsort(t, axis=axis)),
                                  np.argsort(x, axis=axis, kind="stable"))
    np.testing.assert_array_equal(to_numpy(tl.argsort(t, axis=axis, descending=True)),
                                  np_argsort_desc(x, axis))
    desc = to_numpy(tl.sort(t, axis=axis, descending=True))
    np.testing.assert_array_equal(desc, np.take_along_axis(x, np_argsort_desc(x, axis), axis))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nan_and_signed_zero_order_and_bits(dtype, device):
    # one body on every device (the CUDA sort: kernels/cuda/sorting.py)
    x = on_device(SPECIAL.astype(dtype), device)
    s = host(tl.sort(x), device)
    assert np.isnan(s[-2:]).all() and s[0] == -np.inf and s[-3] == np.inf
    # -0.0 and 0.0 are equal: a stable sort keeps input order (indices 2, 3, 10)
    assert host(tl.argsort(x), device).tolist()[2:5] == [2, 3, 10]
    d = host(tl.argsort(x, descending=True), device).tolist()
    assert d[:2] == [1, 9] and d[-1] == 7  # nan first, -inf last
    assert d == [1, 9, 6, 0, 5, 8, 2, 3, 10, 4, 7]
    # the values keep their bits (signed zeros, a nan payload)
    a = np.array([1.5, np.nan, -0.0, -np.inf, 0.0, -np.nan, np.inf, -2.0, 0.0, -0.0, np.nan],
                 dtype)
    ubits = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}[dtype]
    a.view(ubits)[1] |= 1
    x = on_device(a, device)
    for desc in (False, True):
        want = np_argsort_desc(a, 0) if desc else np.argsort(a, kind="stable")
        np.testing.assert_array_equal(host(tl.argsort(x, descending=desc), device), want)
        got = host(tl.sort(x, descending=desc), device)
        np.testing.assert_array_equal(got.view(ubits), a[want].view(ubits))
    assert np.isnan(host(tl.sort(x, descending=True), device)[:3]).all()  # nan first descending


@pytest.mark.usefixtures("long_rows_at_test_sizes", "radix_argsort")
def test_sort_long_rows_use_all_threads_and_stay_stable():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 50, 300_000).astype(np.float32)  # many ties
    x[::1000] = np.nan
    t = tl.asarray(x)
    np.testing.assert_array_equal(to_numpy(tl.argsort(t)), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(to_numpy(tl.sort(t)), np.sort(x))
    m = rng.random((64, 2000), dtype=np.float32)  # many rows in parallel
    np.testing.assert_array_equal(to_numpy(tl.sort(tl.asarray(m), axis=0)), np.sort(m, axis=0))


@pytest.mark.usefixtures("radix_argsort")
@pytest.mark.parametrize("dtype", SORT_DTYPES)
def test_radix_argsort_of_rows_too_long_for_words(dtype):
    """The radix argsort (rows whose positions do not fit in a composite word) stays right:
    short and long rows (insertion, LSD passes), many rows, ties, specials, both orders."""
    rng = np.random.default_rng(9)
    for shape in ((5,), (40,), (3000,), (50, 70)):
        x = rng.standard_normal(shape) * 50
        x = x.astype(dtype) if dtype.startswith("float") else x.astype(np.int64).astype(dtype)
        if dtype.startswith("float"):
            x.flat[::7] = np.nan
            x.flat[1::9] = -0.0
            x.flat[2::9] = 0.0
        for y in (x, np.sort(x, -1), np.sort(x, -1)[..., ::-1].copy()):
            t = tl.asarray(y)
            np.testing.assert_array_equal(to_numpy(tl.argsort(t)),
                                          np.argsort(y, -1, kind="stable"))
            np.testing.assert_array_equal(to_numpy(tl.argsort(t, descending=True)),
                                          np_argsort_desc(y, -1))


def test_sort_edge_cases_and_errors():
    assert to_numpy(tl.sort(tl.asarray(np.float32(3)))).tolist() == 3.0
    assert tl.argsort(tl.asarray(np.float32(3))).dtype is tl.int64
    assert tl.sort(tl.zeros((0, 3))).shape == (0, 3)
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(to_numpy(tl.sort(tl.asarray(b))), np.sort(b))
    with pytest.raises(TypeError, match="sort.*'x'.*list"):
        tl.sort([3.0, 1.0])
    with pytest.raises(IndexError, match="axis"):
        tl.argsort(tl.zeros((2, 2)), axis=2)


# ---------------------------------------------------------------- searchsorted
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_sides_specials_and_promotion(side, device):
    # one body on every device (the CUDA kernel: kernels/cuda/sorting.py)
    x1 = np.sort(np.array([1.0, 2.0, 2.0, 3.0, np.nan, -np.inf, 0.0], np.float32))
    x2 = np.array([[2.0, np.nan, -0.0], [-5.0, np.inf, 3.0]], np.float32)
    got = tl.searchsorted(on_device(x1, device), on_device(x2, device), side=side)
    assert got.dtype is tl.int64 and got.shape == (2, 3)
    np.testing.assert_array_equal(host(got, device), np.searchsorted(x1, x2, side=side))
    x1 = np.array([-np.inf, -1.0, -0.0, 0.0, 0.0, 2.5, 2.5, np.inf, np.nan, np.nan], np.float32)
    x2 = np.array([[0.0, -0.0, 2.5, np.nan], [-5.0, np.inf, 3.0, -np.inf]], np.float32)
    got = tl.searchsorted(on_device(x1, device), on_device(x2, device), side=side)
    assert got.dtype is tl.int64 and got.shape == x2.shape
    np.testing.assert_array_equal(host(got, device), np.searchsorted(x1, x2, side=side))
    u = np.array([0, 5, 2**63, 2**64 - 1], np.uint64)
    v = np.array([2**64 - 1, 2**63 - 1, 2**63, 6], np.uint64)
    np.testing.assert_array_equal(
        host(tl.searchsorted(on_device(u, device), on_device(v, device), side=side), device),
        np.searchsorted(u, v, side=side))
    # promotion: int64 x1, int32 x2 search in int64; int32 x1, float64 x2 compare as float64
    for p, q in ((np.array([1, 3, 5, 7]), np.array([-2, 3, 7, 9], np.int32)),
                 (np.array([-3, 0, 0, 7], np.int32), np.array([0.5, -3.0, 7.0, 0.0]))):
        np.testing.assert_array_equal(
            host(tl.searchsorted(on_device(p, device), on_device(q, device), side=side),
                 device),
            np.searchsorted(p, q, side=side))


def test_searchsorted_with_sorter_edges_and_errors(device):
    # one body on every device
    x1 = np.array([5.0, 1.0, 3.0, 2.0], np.float32)
    sorter = np.argsort(x1)
    x2 = np.array([0.0, 2.0, 4.0, 9.0], np.float32)
    t1, t2 = on_device(x1, device), on_device(x2, device)
    got = tl.searchsorted(t1, t2, sorter=on_device(sorter, device))
    np.testing.assert_array_equal(host(got, device), np.searchsorted(x1, x2, sorter=sorter))
    i1 = np.array([3, 9, -1, 3, 7, 0], np.int16)
    perm = np.argsort(i1, kind="stable")
    i2 = np.array([3, -5, 10, 7, 0], np.int16)
    for side in ("left", "right"):
        got = tl.searchsorted(on_device(i1, device), on_device(i2, device), side=side,
                              sorter=on_device(perm, device))
        np.testing.assert_array_equal(host(got, device),
                                      np.searchsorted(i1, i2, side=side, sorter=perm))
    got = tl.searchsorted(on_device(np.zeros(0, np.int16), device), on_device(i2, device))
    np.testing.assert_array_equal(host(got, device), np.zeros(5, np.int64))
    assert tl.searchsorted(tl.zeros(0, device=device),
                           tl.ones(3, device=device)).cpu().numpy().tolist() == [0, 0, 0]
    assert tl.searchsorted(on_device(i1, device),
                           on_device(np.zeros(0, np.int16), device)).shape == (0,)
    with pytest.raises(ValueError, match="sorter"):
        tl.searchsorted(t1, t2, sorter=on_device(sorter.reshape(2, 2), device))
    with pytest.raises(IndexError, match="sorter"):
        tl.searchsorted(t1, t2, sorter=on_device(np.array([0, 1, 2, 4]), device))
    with pytest.raises(IndexError, match="sorter.*index 6"):
        tl.searchsorted(on_device(i1, device), on_device(i2, device),
                        sorter=on_device(np.array([0, 1, 2, 3, 4, 6]), device))
    with pytest.raises(ValueError, match="1-D"):
        tl.searchsorted(tl.zeros((2, 2), device=device), tl.zeros(2, device=device))
    with pytest.raises(ValueError, match="side"):
        tl.searchsorted(tl.zeros(2, device=device), tl.zeros(2, device=device), side="middle")


@pytest.mark.parametrize("m", [1, 2, 7, 64, 65, 300, 5000])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "float16"])
def test_searchsorted_few_and_many_keys(m, dtype):
    """The CPU kernel counts up to 64 keys in one pass per query and binary-searches more
    (5000 keys: the parallel variant, 3000 queries x 12 halvings): both give NumPy's
    insertion points for each side, with and without a sorter, with repeated keys, values
    outside the keys and (floats) nan, -0.0 and inf."""
    rng = np.random.default_rng(m)
    x1 = rng.integers(0, 40, m).astype(dtype)
    x2 = rng.integers(-3, 44, 3000).astype(dtype)
    if dtype.startswith("float"):
        x1[: m // 3] = [np.nan, -0.0, np.inf][: m // 3] if m < 9 else x1[: m // 3]
        x2[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan]
    perm = np.argsort(x1, kind="stable")
    ordered = x1[perm]
    for side in ("left", "right"):
        want = np.searchsorted(ordered, x2, side=side)
        got = tl.searchsorted(tl.asarray(ordered), tl.asarray(x2), side=side)
        np.testing.assert_array_equal(to_numpy(got), want)
        got = tl.searchsorted(tl.asarray(x1), tl.asarray(x2), side=side,
                              sorter=tl.asarray(perm))
        np.testing.assert_array_equal(to_numpy(got), want)


# ---------------------------------------------------------------- count_nonzero
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), ((0, 2), False)])
def test_count_nonzero(axis, keepdims):
    x = np.array([[[0, 1.5], [np.nan, 0]], [[-0.0, 2], [3, 0]]], np.float32)
    got = tl.count_nonzero(tl.asarray(x), axis=axis, keepdims=keepdims)
    want = np.count_nonzero(x, axis=axis, keepdims=keepdims)
    assert got.dtype is tl.int64
    np.testing.assert_array_equal(to_numpy(got), want)


# ---------------------------------------------------------------- unique
@pytest.mark.parametrize("x", [SPECIAL.astype(np.float32), np.array([[3, 1, 3], [2, 1, 1]], np.int64),
                               np.array([True, False, True]), np.zeros((0, 2), np.float32)],
                         ids=["float-special", "int-2d", "bool", "empty"])
def test_unique_family_matches_numpy(x):
    t = tl.asarray(x)
    want = np.unique_all(x)
    got = tl.unique_all(t)
    assert type(got).__name__ == "UniqueAllResult"
    np.testing.assert_array_equal(to_numpy(got.values), want.values)
    np.testing.assert_array_equal(to_numpy(got.indices), want.indices)
    np.testing.assert_array_equal(to_numpy(got.inverse_indices), want.inverse_indices)
    np.testing.assert_array_equal(to_numpy(got.counts), want.counts)
    assert got.inverse_indices.shape == x.shape
    # (NumPy >= 2.3's unique_values may come back unsorted; ours are sorted)
    np.testing.assert_array_equal(to_numpy(tl.unique_values(t)), np.unique(x, equal_nan=False))
    v, c = tl.unique_counts(t)
    np.testing.assert_array_equal(to_numpy(c), np.unique_counts(x).counts)
    v, inv = tl.unique_inverse(t)
    np.testing.assert_array_equal(to_numpy(inv), np.unique_inverse(x).inverse_indices)
    # round trip: values[inverse] == x (nan compares unequal, so compare bit patterns)
    if x.size:
        np.testing.assert_array_equal(to_numpy(v)[to_numpy(inv)], x)


UNIQUE_DTYPES = ["bool", "int8", "uint8", "int16", "uint32", "int64", "uint64", "float16",
                 "bfloat16", "float32", "float64", "complex64"]


@pytest.mark.parametrize("dtype", UNIQUE_DTYPES)
def test_unique_values_distinct_route_is_the_general_path(dtype, monkeypatch):
    """unique_values takes the CPU sort kernel's ``distinct`` step (NumPy's compare and
    compaction of the sorted elements) where NumPy compares as tensorlib does: the general
    path's tensor bit for bit, with nan payloads (each its own value), -0.0 and 0.0 (one value,
    the first in sorted order kept), ties, 1 and 2 elements, 2-D and strided inputs."""
    from tensorlib.kernels.cpu import sorting as cpu_sorting
    rng = np.random.default_rng(len(dtype))
    dt = getattr(tl, dtype)
    nan_bits = np.array([0x7FC00001, 0xFFC00000, 0x7F800001, 0x7FC00000], np.uint32)
    cases = [rng.integers(-3, 4, 1000), rng.integers(-3, 4, (20, 30)), rng.standard_normal(7),
             np.array([2.0]), np.array([1.0, 1.0])]
    if dtype.startswith("float"):
        f = rng.integers(-3, 4, 500).astype(np.float32)
        f[rng.choice(500, 8, replace=False)] = nan_bits[rng.integers(0, 4, 8)].view(np.float32)
        f[rng.choice(500, 6, replace=False)] = [-0.0, 0.0, -0.0, np.inf, -np.inf, -0.0]
        cases += [f, np.array([-0.0, 1.0, 0.0, -2.0]), np.array([0.0, -0.0, 3.0, -0.0])]
    served = []
    real = cpu_sorting.distinct_sorted

    def counted(s):
        out = real(s)
        if s.numel() > 1:  # (one element: nothing to compare, the general path serves)
            served.append(out is not None)
        return out
    for a in cases:
        t = tl.asarray(a).astype(dt)
        for x in (t, tl.asarray(np.repeat(to_numpy(t), 2)).astype(dt)[::2] if t.ndim == 1 else t.T):
            monkeypatch.setattr(cpu_sorting.sort_kernel, "distinct", counted)
            got = tl.unique_values(x)
            monkeypatch.setattr(cpu_sorting.sort_kernel, "distinct", lambda s: None)
            want = tl.unique_values(x)
            assert got.dtype is want.dtype and got.shape == want.shape
            assert to_numpy(got).tobytes() == to_numpy(want).tobytes()
    taken = dtype not in ("bfloat16", "complex64")
    assert served and (all(served) if taken else not any(served))


# ---------------------------------------------------------------- inspection namespace
def test_array_namespace_info():
    info = __array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    assert "max dimensions" in caps
    assert info.default_device() == tl.Device("cpu")
    assert info.default_dtypes() == {"real floating": tl.float32, "complex floating":
                                     tl.complex64, "integral": tl.int64, "indexing": tl.int64}
    assert info.default_dtypes(device="cpu")["indexing"] is tl.int64
    all_dt = info.dtypes()
    assert len(all_dt) == 13 and all_dt["bool"] is tl.bool and "float16" not in all_dt
    assert list(info.dtypes(kind="real floating")) == ["float32", "float64"]
    assert set(info.dtypes(kind=("bool", "unsigned integer"))) == \
        {"bool", "uint8", "uint16", "uint32", "uint64"}
    assert list(info.dtypes(kind="integral")) == ["int8", "int16", "int32", "int64", "uint8",
                                                   "uint16", "uint32", "uint64"]
    assert info.dtypes(kind=tl.int8) == {"int8": tl.int8}
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="floating")
    devs = info.devices()
    assert devs[0] == tl.Device("cpu")


# ---------------------------------------------------------------- value sort fast paths
def np_sort_desc(x):
    """Stable descending value sort, bit for bit (nan first, equal elements in input order)."""
    return np.take_along_axis(x, np_argsort_desc(x, -1), -1)


def assert_bits_equal(got, want):
    # bit patterns: nan payloads and the sign of zero count
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                  np.ascontiguousarray(want).view(np.uint8))


def _value_cases(rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    nanpay = np.array([0x7FC00001, 0xFFC00000, 0x7F800001, 0x7FFFFFFF], np.uint32).view(np.float32)
    special = x.copy()
    special[::7] = -0.0
    special[3::11] = 0.0
    special[5::13] = nanpay[rng.integers(0, 4, special[5::13].size)]
    special[::17] = np.inf
    return {
        "uniform": rng.random(n, dtype=np.float32),
        "normal": x,
        "nan-payloads,-0.0,inf": special,
        "denormals": (x * 1e-40).astype(np.float32),
        "narrow": (1 + rng.random(n) * 1e-5).astype(np.float32),
        "few-values": rng.integers(-3, 3, n).astype(np.float32),
        "all-equal": np.full(n, 2.5, np.float32),
        "sorted": np.sort(x),
        "reverse-sorted": np.sort(x)[::-1].copy(),
        "int64-wide": rng.integers(-2 ** 62, 2 ** 62, n),
        "int64-narrow": rng.integers(-1000, 1000, n),
        # (long 1-byte rows: the bool case below; each key width compiles its own kernels)
        "uint8": rng.integers(0, 256, min(n, 1000)).astype(np.uint8),
        "float16": np.where(rng.random(n) < .1, np.float16(-0.0),
                            rng.standard_normal(n).astype(np.float16)),
    }


@pytest.mark.usefixtures("long_rows_at_test_sizes")
@pytest.mark.parametrize("n", [300_000, 1000, 20])
def test_value_sort_bitwise_matches_numpy_stable(n):
    """Long and short rows of every value-sort route (NumPy's sort + the nan / zero fix-up,
    the half types' key sort, 1-byte radix), both orders: bit for bit np.sort(kind='stable')
    incl. nan payloads and -0.0 / 0.0 order."""
    rng = np.random.default_rng(n)
    for name, x in _value_cases(rng, n).items():
        t = tl.asarray(x)
        assert_bits_equal(to_numpy(tl.sort(t)), np.sort(x, kind="stable"))
        assert_bits_equal(to_numpy(tl.sort(t, descending=True, stable=False)), np_sort_desc(x))


@pytest.mark.usefixtures("long_rows_at_test_sizes")
def test_value_sort_rows_with_specials_and_layouts():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((40, 257)).astype(np.float32)
    m[::3, ::5] = np.nan
    m[1::4, 2::7] = -0.0
    m[2::5] = np.sort(m[2::5], axis=-1)  # some rows already sorted
    t = tl.asarray(m)
    assert_bits_equal(to_numpy(tl.sort(t)), np.sort(m, axis=-1, kind="stable"))
    assert_bits_equal(to_numpy(tl.sort(t, descending=True)), np_sort_desc(m))
    assert_bits_equal(to_numpy(tl.sort(t, axis=0)), np.sort(m, axis=0, kind="stable"))
    # two long rows, one after the other with all threads
    big = rng.random((2, 140_000), dtype=np.float32)
    big[1, ::9] = np.nan
    assert_bits_equal(to_numpy(tl.sort(tl.asarray(big))), np.sort(big, axis=-1, kind="stable"))


@pytest.mark.usefixtures("long_rows_at_test_sizes")
@pytest.mark.parametrize("dtype", ["int8", "uint8", "bool"])
def test_long_rows_of_1_byte_values(dtype):
    """Long rows of 1-byte keys (vlong: a counting sort, histograms on all threads): random,
    sorted, reversed, all equal, two rows; both orders."""
    rng = np.random.default_rng(12)
    n = 140_000
    x = rng.integers(-128, 128, n).astype(dtype) if dtype != "bool" else rng.random(n) < 0.4
    for y in (x, np.sort(x), np.sort(x)[::-1].copy(), np.full(n, x[0]), np.stack([x, x[::-1]])):
        t = tl.asarray(y)
        assert_bits_equal(to_numpy(tl.sort(t)), np.sort(y, axis=-1, kind="stable"))
        assert_bits_equal(to_numpy(tl.sort(t, descending=True)), np_sort_desc(y))


@pytest.mark.usefixtures("long_rows_at_test_sizes")
def test_value_sort_bfloat16_and_bool():
    vals = np.array([1.0, -2.0, 0.0, -0.0, np.inf, -np.inf, 3.0], np.float32)
    x = tl.asarray(vals).astype(tl.bfloat16)
    got = to_numpy(tl.sort(x).astype(tl.float32))
    assert_bits_equal(got, np.sort(vals, kind="stable"))
    b = np.random.default_rng(0).random(200_000) < 0.3
    assert_bits_equal(to_numpy(tl.sort(tl.asarray(b))), np.sort(b))
    assert_bits_equal(to_numpy(tl.sort(tl.asarray(b), descending=True)), np.sort(b)[::-1])


# ---------------------------------------------------------------- complex
# NumPy's complex order: lexicographic within the classes [R + Rj, R + nanj, nan + Rj, nan + nanj]
PART = [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 7.0]
complex_parts = st.builds(complex, st.sampled_from(PART), st.sampled_from(PART))


def np_complex(re, im, dtype=np.complex64):
    """Built part by part: ``re + 1j * im`` would turn an inf/nan imaginary part into nan + ..."""
    re, im = np.broadcast_arrays(np.asarray(re, np.float64), np.asarray(im, np.float64))
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


def assert_complex_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                  np.ascontiguousarray(want).view(np.uint8))


@given(data=st.data())
def test_complex_sort_argsort_match_numpy(data):
    x = data.draw(arrays("complex64", min_dims=1, max_dims=3, max_side=6,
                         elements=complex_parts))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    t = tl.from_numpy(x)
    want = np.argsort(x, axis=axis, kind="stable")
    np.testing.assert_array_equal(to_numpy(tl.argsort(t, axis=axis)), want)
    assert_complex_bits(to_numpy(tl.sort(t, axis=axis)), np.take_along_axis(x, want, axis))
    want_d = np_argsort_desc(x, axis)
    np.testing.assert_array_equal(to_numpy(tl.argsort(t, axis=axis, descending=True)), want_d)
    assert_complex_bits(to_numpy(tl.sort(t, axis=axis, descending=True, stable=False)),
                        np.take_along_axis(x, want_d, axis))


def test_complex_nan_classes_and_signed_zeros():
    # 2 + nanj sorts after 3 + 1j although 2 < 3: a plain (real, imag) lexicographic sort fails
    re = [2.0, 3.0, np.nan, np.nan, 1.0, -0.0, 0.0, np.nan, np.inf, -np.nan, 0.0, 2.0]
    im = [np.nan, 1.0, 5.0, np.nan, np.nan, 0.0, -0.0, -1.0, np.nan, np.nan, 0.0, np.inf]
    for dtype in (np.complex64, np.complex128):
        x = np_complex(re, im, dtype)
        t = tl.asarray(x)
        got = to_numpy(tl.argsort(t)).tolist()
        assert got == np.argsort(x, kind="stable").tolist()
        assert got == [5, 6, 10, 11, 1, 4, 0, 8, 7, 2, 3, 9]   # -0.0 == 0.0: input order
        assert to_numpy(tl.argsort(t, descending=True)).tolist() == [3, 9, 2, 7, 8, 0, 4, 1,
                                                                      11, 5, 6, 10]
        assert_complex_bits(to_numpy(tl.sort(t)), np.sort(x, kind="stable"))
        assert tl.sort(t).dtype == t.dtype
    # the class pass is skipped without a nan imaginary part: nan real parts still last
    x = np_complex([np.nan, 1.0, -np.inf, np.nan, 1.0], [0.0, 2.0, 3.0, -1.0, -2.0])
    np.testing.assert_array_equal(to_numpy(tl.argsort(tl.asarray(x))),
                                  np.argsort(x, kind="stable"))


def test_complex_sort_rows_long_and_edge_shapes():
    rng = np.random.default_rng(5)
    n = 20_000
    x = np_complex(rng.integers(-3, 3, n), rng.integers(-3, 3, n))  # many ties
    x.imag[::97] = np.nan
    x.real[::89] = np.nan
    np.testing.assert_array_equal(to_numpy(tl.argsort(tl.asarray(x))),
                                  np.argsort(x, kind="stable"))
    m = np_complex(rng.standard_normal((7, 40)), rng.integers(0, 2, (7, 40)), np.complex128)
    t = tl.asarray(m)
    for axis in (0, 1):
        assert_complex_bits(to_numpy(tl.sort(t, axis=axis)), np.sort(m, axis=axis,
                                                                       kind="stable"))
        np.testing.assert_array_equal(to_numpy(tl.argsort(t, axis=axis, descending=True)),
                                      np_argsort_desc(m, axis))
    for shape in ((0,), (3, 0), (0, 4)):
        assert tl.sort(tl.zeros(shape, dtype=tl.complex64)).shape == shape
        r = tl.argsort(tl.zeros(shape, dtype=tl.complex64), axis=0)
        assert r.shape == shape and r.dtype is tl.int64
    z = tl.asarray(np.complex64(1 - 2j))
    assert to_numpy(tl.sort(z)) == np.complex64(1 - 2j) and to_numpy(tl.argsort(z)) == 0


@pytest.mark.parametrize("side", ["left", "right"])
@given(data=st.data())
def test_complex_searchsorted_matches_numpy(side, data):
    x1 = data.draw(arrays("complex64", shape=st.tuples(st.integers(0, 8)),
                          elements=complex_parts))
    x2 = data.draw(arrays("complex64", min_dims=0, max_dims=2, max_side=4,
                          elements=complex_parts))
    s1 = np.sort(x1, kind="stable")
    got = tl.searchsorted(tl.from_numpy(s1), tl.from_numpy(x2), side=side)
    assert got.dtype is tl.int64 and got.shape == x2.shape
    np.testing.assert_array_equal(to_numpy(got), np.searchsorted(s1, x2, side=side))
    # sorter= over the unsorted x1
    perm = np.argsort(x1, kind="stable")
    got = tl.searchsorted(tl.from_numpy(x1), tl.from_numpy(x2), side=side,
                          sorter=tl.asarray(perm))
    np.testing.assert_array_equal(to_numpy(got), np.searchsorted(x1, x2, side=side,
                                                                  sorter=perm))


def test_complex_searchsorted_promotion_and_errors():
    x1 = np_complex([-1.0, 0.0, 0.0, 2.0, np.nan], [0.0, -1.0, 0.0, 5.0, 0.0], np.complex128)
    x2 = np.array([0.0, -0.0, 2.0, np.nan, -5.0], np.float32)   # real values, complex x1
    for side in ("left", "right"):
        np.testing.assert_array_equal(
            to_numpy(tl.searchsorted(tl.asarray(x1), tl.asarray(x2), side=side)),
            np.searchsorted(x1, x2, side=side))
    # real x1, complex values
    r1 = np.array([-1.0, 0.0, 2.0], np.float32)
    c2 = np_complex([0.0, 0.0, 2.0], [-1.0, 1.0, np.nan])
    np.testing.assert_array_equal(to_numpy(tl.searchsorted(tl.asarray(r1), tl.asarray(c2))),
                                  np.searchsorted(r1, c2))
    with pytest.raises(IndexError, match="sorter.*index 7"):
        tl.searchsorted(tl.asarray(x1), tl.asarray(x2), sorter=tl.asarray([0, 1, 2, 3, 7]))
    with pytest.raises(ValueError, match="x1.*1-D"):
        tl.searchsorted(tl.asarray(x1.reshape(5, 1)), tl.asarray(x2))
    assert to_numpy(tl.searchsorted(tl.asarray(x1[:0]), tl.asarray(x2))).tolist() == [0] * 5


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_unique_family_matches_numpy(dtype):
    rng = np.random.default_rng(1)
    parts = np.array([0.0, -0.0, 1.0, np.nan, np.inf, -2.0])
    x = np_complex(rng.choice(parts, (4, 6)), rng.choice(parts, (4, 6)), dtype)
    t = tl.asarray(x)
    want = np.unique_all(x)   # a value with a nan part is distinct, like a real nan
    got = tl.unique_all(t)
    assert_complex_bits(to_numpy(got.values), want.values)   # first occurrences: -0.0 kept
    np.testing.assert_array_equal(to_numpy(got.indices), want.indices)
    np.testing.assert_array_equal(to_numpy(got.inverse_indices), want.inverse_indices)
    np.testing.assert_array_equal(to_numpy(got.counts), want.counts)
    assert_complex_bits(to_numpy(tl.unique_values(t)), want.values)
    np.testing.assert_array_equal(to_numpy(tl.unique_counts(t).counts), want.counts)
    v, inv = tl.unique_inverse(t)
    back = to_numpy(v)[to_numpy(inv)]   # (zero signs may differ from x: -0.0 == 0.0)
    np.testing.assert_array_equal(back.real, x.real)
    np.testing.assert_array_equal(back.imag, x.imag)
    assert tl.unique_values(tl.zeros((0, 2), dtype=tl.complex64)).shape == (0,)
    assert to_numpy(tl.count_nonzero(t, axis=1)).tolist() == np.count_nonzero(x, axis=1).tolist()


@pytest.mark.usefixtures("long_rows_at_test_sizes", "radix_argsort")
def test_parallel_sort_kernels_launch_through_the_core_scheduler(team_launches):
    """The sorts' parallel kernels (long-row MSD passes, rows spread over threads) go through
    cores.call, which sets the calling thread's team size and times stalls. (Wider values are
    NumPy's one-thread sort of values or keys: 1-byte values take the parallel kernels.)"""
    rng = np.random.default_rng(8)
    long_row = rng.standard_normal(3 << 16).astype(np.float32)
    rows = rng.standard_normal((64, 4096)).astype(np.float32)
    long_bytes = rng.integers(0, 256, 3 << 16).astype(np.uint8)
    byte_rows = rng.integers(0, 256, (64, 2048)).astype(np.uint8)
    np.testing.assert_array_equal(tl.sort(tl.asarray(long_bytes)).numpy(), np.sort(long_bytes))
    np.testing.assert_array_equal(tl.argsort(tl.asarray(long_row)).numpy(),
                                  np.argsort(long_row, kind="stable"))
    np.testing.assert_array_equal(tl.sort(tl.asarray(byte_rows)).numpy(), np.sort(byte_rows))
    np.testing.assert_array_equal(tl.argsort(tl.asarray(rows)).numpy(),
                                  np.argsort(rows, kind="stable"))
    assert {"vlong", "prepare_parallel", "chunk_scatter", "vnet_parallel",
            "rows_parallel"} <= set(team_launches), team_launches


@pytest.mark.parametrize("n", [100_000, 70_000])
def test_first_sort_of_a_thread_with_big_and_small_scratch(n):
    """A single-row sort whose two row-sized scratch buffers come from the allocator and whose
    small count table is this thread's first reused buffer (a fresh thread: no reused buffers
    yet) sorts correctly (it raised IndexError once)."""
    import threading
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("v", tl.sort(tl.asarray(x)).numpy()))
    t.start()
    t.join()
    np.testing.assert_array_equal(got["v"], np.sort(x))

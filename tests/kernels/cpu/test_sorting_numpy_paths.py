"""The CPU sorts that run NumPy's unstable sort (kernels/cpu/sorting.py): value sorts of the
NP_VALUES dtypes (``_np_values``, nan / zero runs fixed up by ``_np_fix``), of the half types
(``_key_values``: their 16-bit keys), and argsort (``_composite_argsort``: distinct
key << (64 - bits) | position words for keys up to 32 bits; ``_count_argsort``: a counting
sort of 1-byte keys in rows of 256+; ``_two_stage_argsort``: 64-bit keys) against NumPy's
stable sort, bit for bit: nan payloads and -0.0 / 0.0 in input order, ties, both orders,
sorted and reversed input, 0 / 1 / 2 elements, strided input, one row and many rows (fixed up
one by one and by the fix_rows kernel)."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cpu import sorting
from helpers import assert_bits, np_argsort_desc, sort_test_integers, to_numpy

# the kernel's routes, also where small sorts take NumPy's along an axis (sort_small.py)
pytestmark = pytest.mark.usefixtures("kernel_sort_routes")

VALUE_DTYPES = sorted(sorting.NP_VALUES)
# every key width / kind module up to 32 bits (bool shares uint8's; bfloat16 below)
ARG_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "float16", "float32", "int32",
              "uint32"]

_NAN_BITS = {2: [0x7E00, 0xFE00, 0x7C01, 0x7FFF],
             4: [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFC00123, 0x7FFFFFFF],
             8: [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001]}


def want(x, desc):
    idx = np_argsort_desc(x) if desc else np.argsort(x, axis=-1, kind="stable")
    return np.take_along_axis(x, idx, -1), idx


def specials(dtype):
    d = np.dtype(dtype)
    nans = np.array(_NAN_BITS[d.itemsize], f"u{d.itemsize}").view(d)
    return np.concatenate([nans, np.array([0.0, -0.0, np.inf, -np.inf, 1.5, -1.5, 2.0], d)])


def values(rng, dtype, shape, kind):
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.random(shape) < (0.5 if kind != "ties" else 0.9)
    if d.kind == "f":
        if kind == "special":
            pool = specials(d)
            return np.where(rng.random(shape) < 0.5, pool[rng.integers(0, pool.size, shape)],
                            rng.standard_normal(shape).astype(d))
        if kind == "zeros":  # only zeros of both signs, and nans
            pool = np.concatenate([np.array([0.0, -0.0], d), specials(d)[:2]])
            return pool[rng.integers(0, pool.size, shape)]
        if kind == "ties":
            return rng.integers(-3, 4, shape).astype(d)
        return rng.standard_normal(shape).astype(d)
    return sort_test_integers(rng, d, shape, kind)


def data(rng, dtype, shape):
    out = {k: values(rng, dtype, shape, k) for k in ("random", "ties")}
    if np.dtype(dtype).kind == "f":
        out["special"] = values(rng, dtype, shape, "special")
        out["zeros"] = values(rng, dtype, shape, "zeros")
    r = np.sort(out["random"], axis=-1)
    out["sorted"] = r
    out["reversed"] = np.ascontiguousarray(r[..., ::-1])
    return out


@pytest.fixture
def routes(monkeypatch):
    """Counts the calls of the NumPy-sorted routes (a test that meant to reach them does), on
    a machine whose NumPy sort counts as vectorized (where it is not, long rows take the radix
    routes: test_radix_routes_where_numpy_sort_is_scalar)."""
    monkeypatch.setattr(sorting, "_np_sort_fast", True)
    monkeypatch.setattr(sorting, "_np_words_fast", True)
    seen = {"values": 0, "argsort": 0, "count": 0, "two_stage": 0, "keys": 0}

    def counting(name, key):
        fn = getattr(sorting, name)

        def wrapped(*a):
            seen[key] += 1
            return fn(*a)
        monkeypatch.setattr(sorting, name, wrapped)
    counting("_np_values", "values")
    counting("_composite_argsort", "argsort")
    counting("_count_argsort", "count")
    counting("_two_stage_argsort", "two_stage")
    counting("_key_values", "keys")
    return seen


def check(x, values_too=True):
    t = tl.asarray(x)
    for desc in (False, True):
        w, idx = want(x, desc)
        if values_too:
            assert_bits(to_numpy(tl.sort(t, descending=desc)), w)
        np.testing.assert_array_equal(to_numpy(tl.argsort(t, descending=desc)), idx)


@pytest.mark.parametrize("dtype", VALUE_DTYPES)
@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 1000, 5000])
def test_numpy_value_sort_one_row(dtype, n, routes):
    rng = np.random.default_rng(n)
    for x in data(rng, dtype, (n,)).values():
        check(x)
    assert routes["values"] > 0


@pytest.mark.parametrize("dtype", VALUE_DTYPES)
def test_numpy_value_sort_rows_fixed_one_by_one_and_by_kernel(dtype, routes):
    """Few rows needing the fix-up (NumPy, row by row) and more than FIX_ROWS_PY (fix_rows);
    short rows below the network's row count; many short rows (64-bit: NumPy's too); rows of
    one special kind each."""
    rng = np.random.default_rng(1)
    for shape in ((5, 300), (sorting.FIX_ROWS_PY + 8, 40), (3, 5), (2, 16), (50, 9)):
        for x in data(rng, dtype, shape).values():
            check(x)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal((6, 50)).astype(dtype)
        x[0, 7] = specials(dtype)[1]          # one negative nan
        x[1, [3, 9, 20]] = [0.0, -0.0, 0.0]   # zeros of both signs
        x[2, 5] = -0.0                       # one -0.0 alone
        x[3, :] = 0.0                        # +0.0 only: nothing to fix
        x[4, :] = specials(dtype)[0]         # all nan
        check(x)
    assert routes["values"] > 0


@pytest.mark.parametrize("dtype", VALUE_DTYPES)
def test_numpy_value_sort_strided_and_empty(dtype, routes):
    rng = np.random.default_rng(2)
    x = values(rng, dtype, (60, 40), "special" if np.dtype(dtype).kind == "f" else "ties")
    t = tl.asarray(x)
    for desc in (False, True):
        w, _ = want(x[:, ::3], desc)
        assert_bits(to_numpy(tl.sort(t[:, ::3], descending=desc)), w)   # strided rows
        w, _ = want(np.ascontiguousarray(x.T), desc)
        assert_bits(to_numpy(tl.sort(t, axis=0, descending=desc)), w.T)  # along axis 0
    assert tl.sort(tl.asarray(x[:0])).shape == (0, 40)
    assert tl.sort(tl.asarray(x[:, :0])).shape == (60, 0)
    assert routes["values"] > 0


@pytest.mark.parametrize("dtype", ARG_DTYPES)
@pytest.mark.parametrize("shape", [(1,), (2,), (17,), (3000,), (7, 300),
                                   (sorting.FIX_ROWS_PY + 8, 9)])
def test_composite_argsort(dtype, shape, routes):
    """Stable (ties in input order) both orders, every key width up to 32 bits; the value sort
    of the same data too (whichever route serves it)."""
    rng = np.random.default_rng(len(shape) * 1000 + shape[-1])
    for x in data(rng, dtype, shape).values():
        check(x)
    counted = np.dtype(dtype).itemsize == 1 and shape[-1] >= 256
    assert routes["count" if counted else "argsort"] > 0


def test_composite_argsort_strided_bfloat16_and_cold(monkeypatch, routes):
    rng = np.random.default_rng(4)
    x = values(rng, "float32", (50, 64), "special")
    t = tl.asarray(x)
    for desc in (False, True):
        _, idx = want(x[:, 1::2], desc)
        np.testing.assert_array_equal(to_numpy(tl.argsort(t[:, 1::2], descending=desc)), idx)
        _, idx = want(np.ascontiguousarray(x.T), desc)
        np.testing.assert_array_equal(to_numpy(tl.argsort(t, axis=0, descending=desc)), idx.T)
    # bfloat16 keys: the order of its float32 values (exact), nan payloads aside
    b = tl.asarray(x).astype(tl.bfloat16)
    xf = to_numpy(b.astype(tl.float32))
    for desc in (False, True):
        np.testing.assert_array_equal(to_numpy(tl.argsort(b, descending=desc)),
                                      want(xf, desc)[1])
    # cold: the keys composed by NumPy steps instead of the compose kernel
    monkeypatch.setattr(sorting, "_full_ready", lambda *a: False)
    for mod in list(sorting._mods.values()):
        monkeypatch.setattr(mod, "warm_paths", set())
    for dtype in ("float32", "int16", "uint8"):
        check(values(rng, dtype, (9, 200), "special" if dtype == "float32" else "ties"),
              values_too=False)
    for dtype in ("int8", "bool"):  # counting-sort rows: NumPy's stable argsort while cold
        for kind in ("random", "ties"):
            check(values(rng, dtype, (3, 700), kind), values_too=False)
    assert routes["argsort"] > 0 and routes["count"] > 0


def wide_keys(rng, shape):
    """int64 keys varying in all 63 bits, with runs of equal high parts (the 32 bits below the
    top) that only the low bits and then the position order: short runs, one long run, ties."""
    n = shape[-1]
    x = rng.integers(-2 ** 62, 2 ** 62, shape)
    s = x[..., 1::3].shape
    x[..., 1::3] = (rng.integers(0, 50, s) << 31) + rng.integers(0, 4, s)
    x[..., 2::5] = (7 << 40) + rng.integers(0, 1000, x[..., 2::5].shape)  # one long run
    x[..., : n // 4] = x[..., n // 4: 2 * (n // 4)]                         # equal keys
    return x


@pytest.mark.parametrize("long_run", [sorting.LONG_RUN, 32])
@pytest.mark.parametrize("dtype", ["int64", "uint64", "float64"])
@pytest.mark.parametrize("shape", [(1,), (2,), (17,), (3000,), (7, 300), (40, 9)])
def test_two_stage_argsort_of_64_bit_keys(dtype, shape, long_run, routes, monkeypatch):
    """Keys varying in up to 32 bits (one stage) and in more (runs resolved by the low bits:
    short runs, longer ones sorted in the kernel or, from long_run on, by NumPy, ties),
    specials, sorted / reversed, both orders."""
    monkeypatch.setattr(sorting, "LONG_RUN", long_run)
    rng = np.random.default_rng(shape[-1] + len(shape))
    cases = data(rng, dtype, shape)
    w = wide_keys(rng, shape)
    cases["wide"] = w.astype(dtype) if dtype != "float64" else (w >> 8).astype(np.float64)
    if dtype == "float64":
        cases["wide-bits"] = (np.abs(w) | (1 << 62)).view(np.float64)  # long runs of floats
    for x in cases.values():
        check(x, values_too=False)
    assert routes["two_stage"] > 0
    x = cases["random"]
    if len(shape) == 2:  # strided rows, along axis 0
        t = tl.asarray(x)
        np.testing.assert_array_equal(to_numpy(tl.argsort(t[:, ::2])), want(x[:, ::2], False)[1])
        np.testing.assert_array_equal(to_numpy(tl.argsort(t, axis=0, descending=True)),
                                      want(np.ascontiguousarray(x.T), True)[1].T)


def _bf16_bits(x32):
    """bfloat16 bit patterns of float32 values (their top 16 bits) and those values exactly."""
    bits = (np.ascontiguousarray(x32).view(np.uint32) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("shape", [(1,), (2,), (15,), (16,), (17,), (3000,), (5, 300),
                                   (sorting.FIX_ROWS_PY + 8, 40), (3, 5)])
def test_half_value_sort_by_key_sort(shape, routes, monkeypatch):
    """float16 and bfloat16 values (16-bit keys sorted by NumPy, turned back into values, nan
    / -0.0 runs fixed): bit for bit, specials, ties, sorted / reversed, both orders."""
    import ml_dtypes
    seen = []
    real = sorting._key_values
    monkeypatch.setattr(sorting, "_key_values", lambda *a: seen.append(1) or real(*a))
    rng = np.random.default_rng(shape[-1] * 7 + len(shape))
    for x in data(rng, "float16", shape).values():
        check(x)
    for x32 in data(rng, "float32", shape).values():
        bits, exact = _bf16_bits(x32)
        t = tl.asarray(bits.view(ml_dtypes.bfloat16))
        for desc in (False, True):
            w, idx = want(exact, desc)
            got = sorting.raw_view(tl.sort(t, descending=desc)).reshape(shape)
            np.testing.assert_array_equal(got, _bf16_bits(w)[0])
            np.testing.assert_array_equal(to_numpy(tl.argsort(t, descending=desc)), idx)
    assert seen


@pytest.mark.parametrize("dtype", VALUE_DTYPES + ["int8", "float16"])
@pytest.mark.parametrize("shape", [(sorting.RADIX_ARGSORT_MIN,), (sorting.RADIX_VALUES_MIN,),
                                   (3, 5000), (70000,)])
def test_radix_routes_where_numpy_sort_is_scalar(dtype, shape, routes, monkeypatch):
    """Where NumPy's sort is the scalar introsort (numpy_sort_fast() False), rows from
    RADIX_VALUES_MIN (value sorts, 16-bit keys included) and RADIX_ARGSORT_MIN (argsort of
    keys wider than a byte) take the radix routes instead of the NumPy ones: NumPy's stable
    results, bit for bit."""
    monkeypatch.setattr(sorting, "_np_sort_fast", False)
    monkeypatch.setattr(sorting, "_np_words_fast", False)
    rng = np.random.default_rng(shape[-1])
    for x in data(rng, dtype, shape).values():
        check(x)
    assert routes["argsort"] == 0 and routes["two_stage"] == 0
    long_row = shape[-1] >= sorting.RADIX_VALUES_MIN
    if dtype == "int8":
        assert routes["count"] > 0  # 1-byte keys keep their counting sort
    elif dtype == "float16":
        assert (routes["keys"] == 0) == long_row
    else:
        assert (routes["values"] == 0) == long_row and routes["keys"] == 0


def test_numpy_sort_fast_probe_is_cached(monkeypatch):
    """One probe per process and kind of row (value sorts, argsort's composite words), each
    kept apart from the other."""
    monkeypatch.setattr(sorting, "_np_sort_fast", None)
    monkeypatch.setattr(sorting, "_np_words_fast", None)
    first = sorting.numpy_sort_fast()
    assert isinstance(first, bool) and sorting._np_sort_fast is first
    assert sorting._np_words_fast is None
    assert sorting.numpy_sort_fast() is first
    words = sorting.numpy_sort_fast(words=True)
    assert isinstance(words, bool) and sorting._np_words_fast is words
    assert sorting._np_sort_fast is first and sorting.numpy_sort_fast(words=True) is words

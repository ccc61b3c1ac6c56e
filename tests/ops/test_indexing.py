"""__getitem__ / __setitem__: basic indexing (views) and NumPy advanced indexing (copies), with
NumPy as the oracle; plus nonzero and every error case."""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl
from helpers import ALL_DTYPES, arrays, host, on_device, to_numpy
from tensorlib.ops.indexing import nonzero
from tensorlib.iterator import has_internal_overlap

GATHER_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint64", "float16", "bfloat16",
                 "float32", "float64", "complex64", "complex128"]
SET_DTYPES = ["bool", "int8", "int64", "uint8", "float16", "bfloat16", "float32", "float64",
              "complex128"]


# ---- helpers ------------------------------------------------------------------------------------
def np_values(dtype, shape, seed=0):
    """Deterministic values of a tensorlib dtype name (bfloat16: float32 values it holds)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, size=shape)
    if dtype == "bool":
        return x > 0
    if dtype == "bfloat16":
        return (x / 4).astype(np.float32)
    if dtype.startswith("complex"):
        return (x / 4 + 1j * rng.integers(-9, 9, size=shape) / 2).astype(dtype)
    if dtype.startswith("float"):
        return (x / 4).astype(dtype)
    if dtype.startswith("uint"):
        return np.abs(x).astype(dtype)
    return x.astype(dtype)


def make(arr, dtype):
    """A tensor of dtype holding arr's values; shares arr's memory (and layout) if it can."""
    if dtype == "bfloat16":
        return tl.asarray(arr).astype(tl.bfloat16)
    return tl.from_numpy(arr)


def same(got, expected):
    assert isinstance(got, tl.Tensor)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    np.testing.assert_array_equal(host(got), expected)


def tl_key(key, how):
    """The NumPy key with its arrays as tensors / lists / NumPy arrays (how: 0, 1, 2)."""
    def conv(k):
        if isinstance(k, np.ndarray) and k.ndim:
            # (tolist() loses the shape of empty arrays)
            return [tl.asarray(k), k.tolist() if k.size else k, k][how]
        return k
    return tuple(conv(k) for k in key) if isinstance(key, tuple) else conv(key)


# ---- key strategies -----------------------------------------------------------------------------
@st.composite
def slices(draw, size):
    bound = st.none() | st.integers(-size - 2, size + 2)
    step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2, -3]))
    return slice(draw(bound), draw(bound), step)


@st.composite
def basic_keys(draw, shape):
    """Random basic key: ints, slices (any step), None, at most one Ellipsis."""
    ndim = len(shape)
    n_pre = draw(st.integers(0, ndim))
    ell = draw(st.booleans())
    n_suf = draw(st.integers(0, ndim - n_pre)) if ell else 0
    dims = list(range(n_pre)) + (["..."] if ell else []) + list(range(ndim - n_suf, ndim))
    key = []
    for d in dims:
        if draw(st.integers(0, 4)) == 0:
            key.append(None)
        if d == "...":
            key.append(Ellipsis)
        elif shape[d] and draw(st.booleans()):
            key.append(draw(st.integers(-shape[d], shape[d] - 1)))
        else:
            key.append(draw(slices(shape[d])))
    return tuple(key) if len(key) != 1 or draw(st.booleans()) else key[0]


@st.composite
def advanced_keys(draw, shape):
    """Random key mixing slices, ints, int arrays, masks, None, Ellipsis and 0-d bools.

    Int arrays take shapes that broadcast to one drawn block shape; with a mask present, the
    arrays are kept to shape (1,) so keys are mostly valid (NumPy decides either way)."""
    ndim = len(shape)
    n_pre = max(draw(st.integers(0, ndim)), draw(st.integers(0, ndim)))
    ell = draw(st.booleans())
    n_suf = draw(st.integers(0, ndim - n_pre)) if ell else 0
    slots = []  # (key position, dim) of the slices, one of which may become an array
    block = draw(st.sampled_from([(), (2,), (3,), (2, 1), (1, 3), (2, 3)]))
    use_mask = draw(st.booleans())
    key = []

    def array_for(size):
        shp = list(block)
        if use_mask:
            shp = [1]
        else:
            shp = [1 if draw(st.booleans()) else n for n in shp]
            shp = shp[draw(st.integers(0, len(shp))):]
        if size == 0:
            shp = shp + [0] if not shp or use_mask else [0] + shp[1:]
            return np.zeros(shp, np.int64)
        return draw(hnp.arrays(np.int64, tuple(shp), elements=st.integers(-size, size - 1)))

    def segment(lo, hi):
        d = lo
        while d < hi:
            if draw(st.integers(0, 5)) == 0:
                key.append(draw(st.sampled_from([None, True, False, np.True_])))
            kind = draw(st.sampled_from(["slice", "int", "array", "array", "mask", "mask"]))
            if kind == "mask" and use_mask:
                k = draw(st.integers(1, min(2, hi - d)))
                key.append(draw(hnp.arrays(np.bool_, shape[d:d + k])))
                d += k
                continue
            if kind == "int" and shape[d]:
                key.append(draw(st.integers(-shape[d], shape[d] - 1)))
            elif kind in ("array", "mask"):
                key.append(array_for(shape[d]))
            else:
                slots.append((len(key), d))
                key.append(draw(slices(shape[d])))
            d += 1

    segment(0, n_pre)
    if ell:
        key.append(Ellipsis)
        segment(ndim - n_suf, ndim)
    advanced = any(isinstance(k, (np.ndarray, bool, np.bool_)) for k in key)
    if not advanced and slots:  # keep most keys advanced
        pos, d = slots[draw(st.integers(0, len(slots) - 1))]
        key[pos] = array_for(shape[d])
    if draw(st.integers(0, 5)) == 0:
        key.append(None)
    return tuple(key) if len(key) != 1 or draw(st.booleans()) else key[0]


@st.composite
def indexed_arrays(draw, dtypes, key_strategy, max_dims=4, min_dims=0):
    dtype = draw(st.sampled_from(dtypes))
    np_dtype = "float32" if dtype == "bfloat16" else dtype
    elements = st.integers(-40, 40).map(lambda v: v / 4) if np_dtype.startswith(("f", "c")) \
        else None
    a = draw(arrays(np_dtype, min_dims=min_dims, max_dims=max_dims, max_side=4,
                    elements=elements))
    key = draw(key_strategy(a.shape))
    return dtype, a, key, draw(st.integers(0, 2))


def np_getitem(a, key):
    try:
        return a[key], None
    except IndexError as e:
        return None, e


# ---- basic indexing -----------------------------------------------------------------------------
@given(indexed_arrays(ALL_DTYPES, basic_keys))
def test_basic_getitem_matches_numpy_and_is_a_view(case):
    dtype, a, key, _ = case
    t = make(a, dtype)
    expected = a[key]
    got = t[key]
    same(got, np.asarray(expected))
    assert got.dtype.name == dtype
    if dtype != "bfloat16" and got.size:
        assert got.untyped_storage() is t.untyped_storage()


@given(indexed_arrays(["int32", "float64"], basic_keys))
def test_basic_setitem_writes_through_views(case):
    dtype, a, key, _ = case
    a = np.array(a, copy=True)  # writable, own memory
    t = tl.from_numpy(np.array(a, copy=True))
    view = t[key]
    # Broadcast (zero-stride) targets are refused by design; everything else must be writable.
    assume(not has_internal_overlap(view))
    n = view.size
    value = np.arange(n, dtype=dtype).reshape(view.shape)
    a[key] = value
    view[...] = tl.asarray(value)  # through the view
    same(t, a)
    a[key] = 7
    t[key] = 7
    same(t, a)


def test_basic_examples():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = tl.asarray(a)
    for key in [0, -1, (1, 2), (slice(None, None, -1),), (..., slice(None, None, -2)),
                (None, 1, None, slice(3, None, -1)), (1, ..., 2), (), ..., (slice(5, 0, -2), 0),
                (slice(0, 0),), (-2, -3, -4)]:
        same(t[key], a[key])
    z = tl.asarray(np.float32(3))
    for key in [(), ..., None, (None, ...)]:
        same(z[key], np.float32(3)[key] if key != () else np.asarray(np.float32(3)))


def test_interleaved_view_setitem():
    a = np.zeros((4, 2), np.int32, order="F")
    t = tl.from_numpy(a)
    t[::3] = 5  # strides (3, 4): four distinct elements
    a2 = np.zeros((4, 2), np.int32)
    a2[::3] = 5
    same(t, a2)


def test_advanced_setitem_on_interleaved_view():
    a = np.zeros((4, 2), np.int32, order="F")
    t = tl.from_numpy(a)
    t[::3][[0, 1], [1, 0]] = 7  # the index_put path checks only for definite overlap
    a2 = np.zeros((4, 2), np.int32)
    a2[::3][[0, 1], [1, 0]] = 7
    same(t, a2)


def test_basic_view_writes_reach_base():
    t = tl.asarray(np.zeros((3, 4), np.int64))
    v = t[1:, ::-2]
    v[...] = 5
    t[0][1] = 3
    t[0, ::-1][0] = 9
    expected = np.zeros((3, 4), np.int64)
    expected[1:, ::-2] = 5
    expected[0, 1] = 3
    expected[0, -1] = 9
    same(t, expected)


@pytest.mark.parametrize("key, exc, words", [
    ((0, 0, 0, 0), IndexError, ["too many indices", "3-dimensional", "4"]),
    ((..., 0, ...), IndexError, ["single ellipsis"]),
    (3, IndexError, ["index 3", "dimension 0", "size 2"]),
    ((0, -4), IndexError, ["index -4", "dimension 1", "size 3"]),
    ((0, 1.5), IndexError, ["float"]),
    ("a", IndexError, ["str"]),
    (slice(None, None, 0), ValueError, ["zero"]),
])
def test_basic_errors(key, exc, words):
    t = tl.asarray(np.zeros((2, 3, 4), np.float32))
    with pytest.raises(exc) as info:
        t[key]
    for w in words:
        assert w in str(info.value)
    with pytest.raises(exc):
        t[key] = 1.0
    with pytest.raises(exc):
        np.zeros((2, 3, 4))[key]


def test_zero_dim_errors():
    z = tl.asarray(np.float32(1))
    with pytest.raises(IndexError, match="too many indices"):
        z[0]
    with pytest.raises(IndexError, match="too many indices"):
        z[[0]]


# ---- advanced getitem ---------------------------------------------------------------------------
@given(indexed_arrays(GATHER_DTYPES, advanced_keys, min_dims=1))
def test_advanced_getitem_matches_numpy(case):
    dtype, a, key, how = case
    t = make(a, dtype)
    expected, err = np_getitem(a, key)
    if err is not None:
        with pytest.raises(IndexError):
            t[tl_key(key, how)]
        return
    got = t[tl_key(key, how)]
    assert got.dtype.name == dtype
    same(got, np.asarray(expected))


def test_advanced_getitem_is_a_copy():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    t = tl.asarray(a.copy())
    r = t[[0, 2]]
    r[...] = -1
    same(t, a)
    m = t[t.numpy() > 5]
    m[...] = -1
    same(t, a)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "bool", "uint8"])
def test_advanced_getitem_keeps_dtype(dtype):
    a = np_values(dtype, (4, 5))
    t = make(a, dtype)
    for key in [([3, 0, -1],), (slice(None), [[1], [4]]), (a.real > 0 if dtype != "bool" else a,)]:
        got = t[key]
        assert got.dtype.name == dtype
        same(got, a[key])


def test_placement_rule():
    a = np.arange(3 * 4 * 5 * 6).reshape(3, 4, 5, 6)
    t = tl.asarray(a)
    keys = [
        (slice(None), [0, 1], [2, 3]),              # adjacent: in place
        ([0, 1], slice(None), [2, 3]),              # separated by a slice: first
        (slice(None), 1, slice(None), [0, 2]),      # int counts as advanced: first
        (slice(None), [0, 1], None, [1, 2]),        # None separates: first
        (slice(None), [0, 1], ..., [1, 2]),         # empty Ellipsis still separates
        (Ellipsis, [0, 1], [1, 2]),
        (0, [0, 1]),                                # int + array adjacent
        (None, 0, None, [1, 2]),
        (np.array(1), slice(None), [1, 2]),         # 0-d integer array acts as an int
        (1, slice(None), np.ones((5, 6), bool)),
        ([[0], [2]], slice(None, None, -1), [[0, 1, 2]]),
    ]
    for key in keys:
        for how in range(3):
            same(t[tl_key(key, how)], a[key])


def test_bool_scalars_and_masks():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    t = tl.asarray(a)
    keys = [True, False, (True,), (False, 0), (0, True), ([0, 1], True), (True, [1, 2]),
            np.True_, (np.False_, ...), (..., True), (a > 4,), (a[:, 0] > 3,),
            (slice(None), a[0] > 1), (a[:, 1] > 1, ...), (None, a > 100), ([True, False, True],),
            (slice(None), [True, False, True, True]), (0, True, [1, 2])]
    for key in keys:
        same(t[key], a[key])
    same(t[tl.asarray(a > 4)], a[a > 4])
    same(t[tl.asarray(np.True_)], a[np.True_])
    z0 = np.asarray(2.5)
    z = tl.asarray(z0)
    for key, np_key in [(True, True), (False, False), ((None, True), (None, True)),
                        (tl.asarray(True), True), ((tl.asarray(False), None), (False, None))]:
        same(z[key], z0[np_key])


def test_strided_index_tensors_and_masks():
    a = np.arange(60.0).reshape(6, 10)
    t = tl.asarray(a)
    idx = np.array([[5, 0, -1], [2, 2, 3]])
    ti = tl.asarray(idx)
    same(t[ti.T], a[idx.T])                             # transposed index tensor
    same(t[ti[:, ::-1]], a[idx[:, ::-1]])               # negative strides
    same(t[:, ti[0, ::-1]], a[:, idx[0, ::-1]])
    same(t[ti[:, :1], ti[:, 1:] + 4], a[idx[:, :1], idx[:, 1:] + 4])
    m = a % 3 == 0
    tm = tl.asarray(np.ascontiguousarray(m.T)).T        # column-major mask
    same(t[tm], a[m])
    same(t[:, ::2][tm[::-1, ::2]], a[:, ::2][m[::-1, ::2]])  # reversed, strided mask
    same(t[2:, tm[0]], a[2:, m[0]])
    same(t[tm[:, 0], 1::2], a[m[:, 0], 1::2])


@pytest.mark.parametrize("idx_dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32",
                                       "uint64"])
def test_index_dtypes(idx_dtype, device):
    # one body on every device (the CUDA gather: kernels/cuda/indexing.py)
    a = np.arange(20, dtype=np.float32)
    t = on_device(a, device)
    idx = np.array([3, 0, 19, 7], dtype=idx_dtype)
    same(t[idx], a[idx])
    same(t[on_device(idx, device)], a[idx])
    if np.dtype(idx_dtype).kind == "i":
        neg = np.array([-1, -20], dtype=idx_dtype)
        same(t[on_device(neg, device)], a[neg])
    b = np_values("float32", (6, 4))
    i = np.array([5, 0, 3, 3], dtype=idx_dtype)
    if np.dtype(idx_dtype).kind == "i":
        i[1] = -6                            # negative: counted from the end
    same(on_device(b, device)[on_device(i, device)], b[i])


def test_empty_and_zero_size(device):
    # one body on every device (the CUDA gather: kernels/cuda/indexing.py)
    a = np.arange(12).reshape(3, 4)
    t = on_device(a, device)
    for key in [[], ([], []), (slice(None), []), (slice(0, 0), [1, 2]), np.zeros(3, bool),
                (np.zeros((3, 4), bool),), (slice(None), np.array([], np.int64))]:
        same(t[key], a[key])
    same(t[on_device(np.zeros(0, np.int64), device)], a[np.zeros(0, np.int64)])
    same(t[[1, 2], 0:0], a[[1, 2], 0:0])
    with pytest.raises(IndexError, match=r"index 7 is out of bounds for dimension 1 with "
                                         r"size 4"):
        t[0:0, [1, 7]]                        # nothing to copy, still checked
    e = on_device(np.zeros((0, 3)), device)
    same(e[:, [2, 0]], np.zeros((0, 3))[:, [2, 0]])
    with pytest.raises(IndexError, match="index 5"):
        e[:, [5]]  # checked even though the result is empty (as NumPy)
    with pytest.raises(IndexError, match="size 0"):
        e[[0]]


def test_gather_out_of_range_names_the_first_bad_index(device):
    # one body on every device: ops.indexing.IndexPlan.raise_out_of_bounds' message names the
    # first index tensor holding a bad entry, at its first bad position
    x = on_device(np_values("float32", (4, 5)), device)
    for key, msg in (([0, 5, -9], "index 5 is out of bounds for dimension 0 with size 4"),
                     ((on_device(np.array([1, 9]), device), on_device(np.array([0, -6]), device)),
                      "index 9 is out of bounds for dimension 0 with size 4"),
                     ((slice(None), on_device(np.array([[0, 1], [-6, 7]]), device)),
                      "index -6 is out of bounds for dimension 1 with size 5"),
                     (on_device(np.array([1, 2**63 + 3], np.uint64), device),
                      f"index {2**63 + 3} is out of bounds for dimension 0 with size 4")):
        with pytest.raises(IndexError, match="^__getitem__\\(\\): " + msg + "$"):
            x[key]


def test_large_parallel_paths():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((300, 400)).astype(np.float32)
    t = tl.asarray(a)
    i = rng.integers(-300, 300, 50_000)
    j = rng.integers(0, 400, 50_000)
    same(t[i], a[i])                       # direct gather, post block
    same(t[i, j], a[i, j])                 # two index arrays: offsets + gather
    same(t[:, j[:200]], a[:, j[:200]])     # pre block
    same(t[a > 0], a[a > 0])               # lone mask: nonzero offsets
    same(t[a[:, 0] > 0, 5:], a[a[:, 0] > 0, 5:])
    flat = rng.standard_normal(200_000).astype(np.float64)
    k = rng.integers(0, 200_000, 100_000)
    same(tl.asarray(flat)[k], flat[k])
    same(tl.asarray(flat)[tl.asarray(k.astype(np.int32))], flat[k])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_large_dense_mask_moves_the_kept_elements_bit_for_bit(dtype, threads, monkeypatch):
    """x[mask] with x and mask dense and of one shape, above the indexing grain: the
    compaction kernel (kernels/cpu/indexing.compact; threads=1: the serial loop, 2: chunks in
    parallel) gives NumPy's elements, bits included (nan payloads, -0.0), for masks kept at
    random, none, all, and only the last element."""
    from tensorlib.kernels.cpu.indexing import GRAIN
    from tensorlib.runtime.cpu import cores
    monkeypatch.setattr(cores, "threads", lambda own=False: threads)
    rng = np.random.default_rng(5)
    shape = (3, GRAIN // 2 + 7)
    n = shape[0] * shape[1]
    if dtype == "bfloat16":  # (no NumPy dtype: its float32 values, rounded, stand in)
        t = tl.asarray(rng.standard_normal(shape).astype(np.float32)).astype(tl.bfloat16)
        a = host(t.astype(tl.float32))
    else:
        raw = rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype=np.uint8)
        a = (raw.view(dtype) if dtype != "bool" else (raw[:n] & 1).astype(bool)).reshape(shape)
        t = tl.asarray(a)
    last = np.zeros(shape, bool)
    last[-1, -1] = True
    for m in (rng.random(shape) < 0.5, np.zeros(shape, bool), np.ones(shape, bool), last):
        got = t[tl.asarray(m)]
        want = a[m]
        assert got.shape == want.shape and got.dtype == t.dtype
        if dtype == "bfloat16":
            got = got.astype(tl.float32)
        assert np.array_equal(host(got).view(np.uint8), want.view(np.uint8))


def test_parallel_indexing_kernels_launch_through_the_core_scheduler(team_launches,
                                                                     monkeypatch):
    """Gathers, scatters, offsets and nonzero on the team go through cores.call, which sets the
    calling thread's team size (a one-thread cool-down must not leave later launches on one
    thread) and times stalls. (Row writes by index take the scatter kernel here, not NumPy's
    assignment.)"""
    from tensorlib.kernels.cpu import indexing as cpu_indexing
    monkeypatch.setattr(cpu_indexing, "ROWS_NUMPY_MIN", 1 << 40)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((300, 400)).astype(np.float32)
    t = tl.asarray(a)
    i = rng.integers(-300, 300, 50_000)
    j = rng.integers(0, 400, 50_000)
    same(t[tl.asarray(i)], a[i])
    same(t[tl.asarray(i), tl.asarray(j)], a[i, j])
    same(t[a > 0], a[a > 0])
    big = np.zeros((16, 1 << 14), np.float32)
    ub = tl.asarray(big.copy())
    vals = np.arange(4 << 14, dtype=np.float32).reshape(4, 1 << 14)
    ub[tl.asarray(np.array([5, 9, 5, 5]))] = tl.asarray(vals)  # scatter over the post block
    big[[5, 9, 5, 5]] = vals
    same(ub, big)
    assert {"gather_direct", "index_offsets", "nonzero_pass", "gather_parallel",
            "scatter_parallel"} <= set(team_launches), team_launches


# ---- advanced setitem ---------------------------------------------------------------------------
@st.composite
def set_cases(draw):
    dtype, a, key, how = draw(indexed_arrays(SET_DTYPES, advanced_keys, max_dims=3,
                                              min_dims=1))
    if not a.flags.writeable:
        a = a.copy()
    expected, err = np_getitem(a, key)
    shape = np.shape(expected) if err is None else ()
    kind = draw(st.sampled_from(["scalar", "full", "broadcast"]))
    if kind == "scalar":
        value = draw(st.sampled_from([0, 1, 3, True]))
    else:
        shp = list(shape)
        if kind == "broadcast":
            shp = [1 if draw(st.booleans()) else n for n in shp][draw(st.integers(0, len(shp))):]
        value = np_values(dtype, tuple(shp), seed=draw(st.integers(0, 9)))
    return dtype, a, key, how, value, err


@given(set_cases())
def test_advanced_setitem_matches_numpy(case):
    dtype, a, key, how, value, err = case
    t = make(np.array(a, copy=True), dtype)
    v = value if not isinstance(value, np.ndarray) else [tl.asarray(value), value,
                                                         value.tolist() if value.size
                                                         else value][how]
    if isinstance(v, tl.Tensor) and dtype == "bfloat16":
        v = v.astype(tl.bfloat16)
    if err is not None:
        with pytest.raises(IndexError):
            t[tl_key(key, how)] = v
        return
    expected = np.array(a, copy=True)
    expected[key] = value
    t[tl_key(key, how)] = v
    same(t, expected)


def test_setitem_repeated_indices_last_wins(device):
    # one body on every device: NumPy, the CPU and the CUDA kernels: the last write in index
    # order wins
    a = np.zeros(5)
    t = on_device(a, device)
    idx = [1, 3, 1, 1, 3]
    vals = np.arange(5.0) + 10
    a[idx] = vals
    t[idx] = vals
    same(t, a)
    b = np.zeros((3, 4))
    u = on_device(b, device)
    key = (slice(None), [[0, 0], [2, 0]])
    vals = np.arange(12.0).reshape(3, 2, 2)
    b[key] = vals
    u[key] = vals
    same(u, b)
    c = np.zeros((5, 3), np.float32)
    i = np.array([1, 4, 1, 0, 4, 1])
    v = np.arange(18, dtype=np.float32).reshape(6, 3)
    x = on_device(c, device)
    x[on_device(i, device)] = on_device(v, device)
    c[i] = v
    same(x, c)
    big = np.zeros((4, 3000), np.int16)      # CUDA: offsets span 9000 > 4 * 5 + 4096: sort path
    z = on_device(big, device)
    r, col = np.array([3, 0, 3, 0, 3]), np.array([2999, 0, 2999, 0, 2999])
    z[on_device(r, device), on_device(col, device)] = on_device(np.arange(5, dtype=np.int16),
                                                                device)
    big[r, col] = np.arange(5)
    same(z, big)
    # two index arrays, repeats across both, a pre dim in front
    d = np.zeros((2, 4, 4), np.int64)
    y = on_device(d, device)
    r, col = np.array([3, 1, 3, 3]), np.array([0, 2, 0, 1])
    w = np.arange(8).reshape(2, 4)
    y[:, on_device(r, device), on_device(col, device)] = on_device(w, device)
    d[:, r, col] = w
    same(y, d)
    if device != "cpu":
        return  # the CPU kernel's parallel paths (too big for the Triton interpreter)
    big = np.zeros((64, 1024), np.float32)
    ub = tl.asarray(big.copy())
    rows = [5, 9, 5, 5]
    vals = np.arange(4 * 1024, dtype=np.float32).reshape(4, 1024)
    big[rows] = vals
    ub[rows] = vals                       # scatter in parallel over the post block
    same(ub, big)
    big2 = np.zeros((1024, 64), np.float32)
    ub2 = tl.asarray(big2.copy())
    vals2 = np.arange(1024 * 4, dtype=np.float32).reshape(1024, 4)
    big2[:, [7, 3, 7, 7]] = vals2
    ub2[:, [7, 3, 7, 7]] = vals2          # ... and over the pre block
    same(ub2, big2)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint32", "int64",
                                   "uint64", "float16", "bfloat16", "float32", "float64",
                                   "complex64"])
def test_small_setitem_by_index_tensor(dtype):
    """x[idx] = value for 1-D x and a 1-D int32 / int64 index tensor (setitem's small-call
    path: NumPy's assignment on views; half types and other layouts take the general path):
    contiguous, stepped and reversed targets, negative and repeated indices (the last write
    wins), Python scalars converted by setitem's rules, tensor values of the index's length or
    one element, values of another dtype; an out-of-range index raises IndexError and writes
    nothing; a bad scalar raises as the general path does; the write counts in the version."""
    rng = np.random.default_rng(5)
    base = np_values(dtype, (40,), seed=1)
    scalar = {"b": True, "i": -3, "u": 7, "f": 2.5, "c": 1.5 - 2j}[np.dtype(base.dtype).kind
                                                                    if dtype != "bfloat16" else "f"]
    for idx_dtype in (np.int32, np.int64):
        idx = np.array([3, -1, 7, 3, 0, -20, 3], idx_dtype)  # 3 last written by the 7th value
        vals = np_values(dtype, (idx.size,), seed=2)
        for view in (lambda x: x, lambda x: x[::2], lambda x: x[::-1]):
            for value in (scalar, vals, vals[:1], vals[0]):
                t = make(base.copy(), dtype)
                want = view(base.copy())
                target = view(t)
                v = tl.asarray(value) if isinstance(value, np.ndarray) else value
                if isinstance(v, tl.Tensor) and dtype == "bfloat16":
                    v = v.astype(tl.bfloat16)
                version = t._storage.version
                target[tl.asarray(idx)] = v
                want[idx] = value
                same(target, want)
                assert t._storage.version > version
            t = make(base.copy(), dtype)
            before = host(t).copy()
            for bad in ([0, 5, 40], [-41, 2]):
                with pytest.raises(IndexError, match="out of bounds"):
                    t[tl.asarray(np.array(bad, idx_dtype))] = scalar
                np.testing.assert_array_equal(host(t), before)  # nothing written
    big = np_values(dtype, (70000,), seed=3)     # above the grain: NumPy's assignment too
    bidx = rng.integers(-70000, 70000, 40000)
    t = make(big.copy(), dtype)
    v = np_values(dtype, (bidx.size,), seed=4)
    tv = tl.asarray(v).astype(tl.bfloat16) if dtype == "bfloat16" else tl.asarray(v)
    t[tl.asarray(bidx)] = tv
    want = big.copy()
    want[bidx] = v
    same(t, want)
    t = make(base.copy(), dtype)
    other = tl.asarray(rng.integers(0, 2, 3).astype(np.float64))  # another dtype: cast
    t[tl.asarray(np.array([1, 2, 5]))] = other
    want = base.copy()
    want[[1, 2, 5]] = other.numpy().astype(want.dtype)
    same(t, want)
    if dtype in ("int8", "uint8"):
        with pytest.raises(OverflowError, match="out of bounds"):
            t[tl.asarray(np.array([1]))] = 1000


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint64", "bfloat16", "float32",
                                   "complex128"])
def test_small_setitem_masks_rows_lists_and_basic_keys(dtype):
    """setitem's small-call path beyond 1-D index tensors, against NumPy: masks of the
    target's shape (2-D, transposed, stepped) with a scalar or one-element value; an index
    tensor over the rows of a 2-D target with values broadcast to the rows; list keys (with
    negative and repeated indices); int and slice keys with scalars. Out-of-range keys raise
    tensorlib's IndexError and write nothing; a value of the wrong shape and a broadcast
    target raise as the general path does."""
    rng = np.random.default_rng(6)
    base = np_values(dtype, (6, 8), seed=3)
    one = np_values(dtype, (1,), seed=4)
    scalar = one.item() if dtype != "bfloat16" else 1.5
    row = np_values(dtype, (8,), seed=5)
    rows = np_values(dtype, (3, 8), seed=6)
    col = np_values(dtype, (3, 1), seed=7)

    def check(view, key, value, tl_key=None, tl_value=None):
        t = make(base.copy(), dtype)
        want = base.copy()
        view(want)[key] = value
        v = tl_value if tl_value is not None else (
            tl.asarray(value) if isinstance(value, np.ndarray) else value)
        if isinstance(v, tl.Tensor) and dtype == "bfloat16":
            v = v.astype(tl.bfloat16)
        view(t)[tl_key if tl_key is not None else key] = v
        same(t, want)

    views = (lambda x: x, lambda x: x.T, lambda x: x[::2, ::-3])
    for view in views:
        shape = view(base).shape
        mask = rng.random(shape) > 0.5
        for value in (scalar, one, one.reshape(())):
            check(view, mask, value, tl.asarray(mask))
    idx = np.array([4, -1, 0, 4])
    for value in (scalar, row, rows[:1], col[:1], np_values(dtype, (4, 8), seed=8)):
        check(lambda x: x, idx, value, tl.asarray(idx))
        check(lambda x: x, [4, -1, 0, 4], value)
    for key in (3, -6, slice(1, 5), slice(None, None, -2), slice(7, 2)):
        check(lambda x: x, key, scalar)
        check(lambda x: x.T, key, scalar)
    t = make(base.copy(), dtype)
    before = host(t).copy()
    for key in (6, -7, [0, 6], tl.asarray(np.array([1, -7]))):
        with pytest.raises(IndexError, match="out of bounds"):
            t[key] = scalar
    with pytest.raises((ValueError, RuntimeError)):
        t[tl.asarray(np.array([0, 1]))] = tl.asarray(rows).astype(t.dtype)  # 3 rows for 2
    np.testing.assert_array_equal(host(t), before)
    with pytest.raises(RuntimeError, match="share memory"):
        t[0].broadcast_to((2, 8))[[0, 1]] = scalar


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "uint64", "float16",
                                   "float32", "float64", "complex64"])
def test_large_masked_setitem_of_a_scalar(dtype):
    """x[mask] = scalar from _MASK_WHERE_MIN elements runs as an in-place where: every dtype
    (float16 keeps the general path), contiguous, stepped and transposed targets, values
    setitem converts (a float into ints truncates, nan and -0.0 kept, uint64's largest), the
    mask being x itself; NumPy's results, and the write counts in the version."""
    from tensorlib.ops import indexing
    n = indexing._MASK_WHERE_MIN
    rng = np.random.default_rng(8)
    base = np_values(dtype, (2 * n,), seed=9)
    kind = np.dtype(dtype).kind
    values = {"b": [True, 0], "u": [7, 3.9], "i": [-5, 2.7], "f": [1.5, -0.0, float("nan")],
              "c": [1 - 2j, 0.5]}[kind]
    if kind == "u":
        values.append(int(np.iinfo(dtype).max))
    for view in (lambda x: x, lambda x: x[::2], lambda x: x.reshape(64, -1).T):
        for value in values:
            t = make(base.copy(), dtype)
            want = base.copy()
            mask = rng.random(view(want).shape) > 0.5
            version = t._storage.version
            view(t)[tl.asarray(mask)] = value
            view(want)[mask] = value
            np.testing.assert_array_equal(host(t), want)
            assert t._storage.version > version
    if dtype == "bool":
        t = make(base.copy(), dtype)
        want = base.copy()
        t[t] = False       # the mask is the target
        want[want.copy()] = False
        same(t, want)


@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "int64", "complex128"])
def test_big_gathers_before_their_kernel_is_compiled(dtype, monkeypatch):
    """x[idx] of a 1-D source above the grain while the gather kernel is neither compiled
    nor on disk (forced here) is NumPy's take: contiguous, stepped and reversed sources,
    negative indices, an int32 index, a list key; an out-of-range index raises setitem's
    IndexError naming it."""
    from tensorlib.kernels.cpu import indexing as cpu_indexing
    monkeypatch.setattr(cpu_indexing, "ready_once", lambda *a: False)
    monkeypatch.setattr(cpu_indexing, "_ready", lambda *a: False)  # (no parallel twin yet)
    rng = np.random.default_rng(11)
    a = np_values(dtype, (90000,), seed=12)
    t = tl.asarray(a)
    idx = rng.integers(-30000, 30000, 50000)
    for tv, av in ((t, a), (t[::3], a[::3]), (t[::-1], a[::-1])):
        for key in (idx, idx.astype(np.int32)):
            same(tv[tl.asarray(key)], av[key])
    same(t[idx.tolist()], a[idx])
    bad = idx.copy()
    bad[777] = 90000
    with pytest.raises(IndexError, match="index 90000 is out of bounds for dimension 0"):
        t[tl.asarray(bad)]
    with pytest.raises(IndexError, match="index 90000 is out of bounds for dimension 0"):
        t[bad.tolist()]


@pytest.mark.parametrize("dtype", ["bool", "float32", "int64", "complex128"])
def test_row_gathers_before_their_kernel_is_compiled(dtype, monkeypatch):
    """x[idx] of an N-D source below the grain while the gather run is neither compiled nor on
    disk (forced here) is NumPy's take along dim 0: C-order, transposed, stepped and reversed
    sources, 3-D rows, negative and int32 indices; an out-of-range index raises IndexError."""
    from tensorlib.kernels.cpu import indexing as cpu_indexing
    monkeypatch.setattr(cpu_indexing, "ready_once", lambda *a: False)
    rng = np.random.default_rng(13)
    a = np_values(dtype, (60, 24), seed=14)
    t = tl.asarray(a)
    idx = rng.integers(-60, 60, 40)
    views = [(t, a), (t.T.contiguous().T, a), (t[::2, ::3], a[::2, ::3]),
             (t[::-1], a[::-1]), (t.reshape((60, 4, 6)), a.reshape(60, 4, 6))]
    for tv, av in views:
        for key in (idx % tv.shape[0] - tv.shape[0] // 2, (idx % tv.shape[0]).astype(np.int32)):
            same(tv[tl.asarray(key)], av[key])
    with pytest.raises(IndexError):
        t[tl.asarray(np.array([0, 60]))]


@pytest.mark.parametrize("dtype", ["float16", "float32", "complex64"])
def test_setitem_of_an_overflowing_python_float_is_quiet(dtype):
    """A Python float beyond a narrow float type's range stores inf as fill_ does, by every
    setitem path (index tensor, int key, slice, small and big mask), without NumPy's overflow
    RuntimeWarning from its cast."""
    import warnings
    values = [1e300, -1e300, 65520.0, float("inf")]
    if dtype == "complex64":
        values += [complex(1, 1e39)]
    for v in values:
        want = tl.zeros((1,), dtype=getattr(tl, dtype)).fill_(v).numpy()[0]
        for n, key in ((10, tl.asarray(np.array([1, 2]))), (10, 3), (10, slice(2, 5)),
                       (10, tl.asarray(np.arange(10) % 2 == 0)),
                       (20000, tl.asarray(np.arange(20000) % 2 == 0))):
            t = tl.zeros((n,), dtype=getattr(tl, dtype))
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                t[key] = v
            got = t.numpy()[np.asarray(key.numpy() if isinstance(key, tl.Tensor) else
                                       np.arange(n)[key])]
            assert np.all(got == want) if np.ndim(got) else got == want, (v, key)


def test_setitem_under_the_tracer_and_profiler_takes_the_general_path():
    """While a dispatch key is set (the JIT tracer, the profiler), setitem's direct path
    stands aside: a traced function writing into a traced tensor meets the tracer's own error,
    as before the direct path, instead of a write the trace would not hold; the profiler sees
    the general path's ops."""
    x = tl.zeros((100,))
    with tl.profiler.profile() as prof:
        x[tl.asarray(np.array([1, 2]))] = 1.0
        x[3] = 2.0
    assert [e.name for e in prof.events()].count("fill_") >= 2
    assert host(x)[[1, 2, 3]].tolist() == [1.0, 1.0, 2.0]
    def f(x):
        y = x * 2.0
        y[3] = 7.0
        y[tl.asarray(np.array([1, 2]))] = 5.0
        return y + 1.0
    x = tl.asarray(np.arange(8.0, dtype=np.float32))
    with pytest.raises(RuntimeError, match="trace"):
        tl.jit.trace(f, (x,))
    same(f(x), np.array([1, 6, 6, 8, 9, 11, 13, 15], np.float32))


def test_setitem_value_aliases_target():
    a = np.arange(10.0)
    t = tl.asarray(a.copy())
    idx = np.arange(10)
    t[idx] = t[::-1]
    same(t, a[::-1])
    b = np.arange(12).reshape(3, 4)
    u = tl.asarray(b.copy())
    u[[2, 0]] = u[0]                      # value is a view of a row that gets written
    b[[2, 0]] = b[0].copy()
    same(u, b)
    c = np.arange(8.0)
    w = tl.asarray(c.copy())
    w[c > 3] = w[:4]
    c[c > 3] = c[:4].copy()
    same(w, c)
    d = np.arange(6)
    x = tl.asarray(d.copy())
    x[x.numpy() % 2 == 0] = x[x.numpy() % 2 == 1]  # value and mask both read x first
    d[d % 2 == 0] = d[d % 2 == 1].copy()
    same(x, d)


def test_setitem_index_tensor_aliases_target():
    a = np.array([2, 0, 1, 3])
    t = tl.asarray(a.copy())
    t[t] = tl.asarray(np.array([7, 8, 9, 6]))
    a[a.copy()] = [7, 8, 9, 6]
    same(t, a)


@pytest.mark.parametrize("dtype", SET_DTYPES)
def test_setitem_large_mask_and_offsets(dtype):
    rng = np.random.default_rng(2)
    a = np_values(dtype, (200, 300), seed=3)
    t = make(a.copy(), dtype)
    m = rng.random((200, 300)) > 0.5
    v = np_values(dtype, (int(m.sum()),), seed=4)
    a[m] = v
    t[m] = make(v, dtype)
    same(t, a)
    i = rng.integers(0, 200, 40_000)
    j = rng.integers(0, 300, 40_000)
    a[i, j] = a[0, 0]
    t[i, j] = t[0, 0]
    same(t, a)


def test_setitem_casting():
    a = np.zeros(4, np.int64)
    t = tl.asarray(a.copy())
    for key, value in [([0], 1.7), ([1, 2], np.array([2.9, -3.9])), (slice(3, 4), -1.5),
                       ([3], np.array([5], np.uint8)), (2, True)]:
        a[key] = value
        t[key] = value
        same(t, a)
    b = np.zeros(3, bool)
    u = tl.asarray(b.copy())
    for key, value in [([0], 5), ([1], 0.5), (2, 3)]:
        b[key] = value
        u[key] = value
        same(u, b)
    h = tl.asarray(np.zeros(3, np.float16))
    h[[0, 2]] = tl.asarray(np.array([1.5, 2.25]))  # float64 -> float16
    same(h, np.array([1.5, 0, 2.25], np.float16))
    bf = tl.asarray(np.zeros(3, np.float32)).astype(tl.bfloat16)
    bf[[1]] = 0.1
    bf[[2]] = tl.asarray(np.array([3], np.int32))
    same(bf, np.array([0, np.float32(0.10009765625), 3], np.float32))
    f64 = tl.asarray(np.zeros(2))
    f64[[0]] = 0.1                        # Python floats keep float64 precision
    f64[[1]] = [0.2]
    same(f64, np.array([0.1, 0.2]))
    c = tl.asarray(np.zeros(2, np.complex64))
    c[[0]] = 1 + 2j
    c[1] = 3
    same(c, np.array([1 + 2j, 3], np.complex64))
    i8 = np.zeros(2, np.int8)
    ti8 = tl.asarray(i8.copy())
    i8[[0]] = np.int64(300)               # NumPy arrays / scalars cast unsafely (wrap)
    ti8[[0]] = np.array(300)
    same(ti8, i8)


@pytest.mark.parametrize("value, exc, words", [
    (1j, TypeError, ["complex", "float32"]),
    (np.array([1j, 2]), TypeError, ["complex128", "float32"]),
    ([1 + 1j, 0], TypeError, ["complex128", "float32"]),
    (np.ones(3), ValueError, ["(3,)", "(2,)"]),
    (np.ones((2, 2)), ValueError, ["(2, 2)", "(2,)"]),
    ("ab", TypeError, ["str"]),
])
def test_setitem_value_errors(value, exc, words):
    for key in ([0, 1], slice(0, 2)):
        t = tl.asarray(np.zeros(4, np.float32))
        with pytest.raises(exc) as info:
            t[key] = value
        for w in words:
            assert w in str(info.value)
        same(t, np.zeros(4, np.float32))
    t = tl.asarray(np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="complex64.*float32"):
        t[[0]] = tl.asarray(np.ones(1, np.complex64))


def test_setitem_scalar_range_errors():
    t = tl.asarray(np.zeros(3, np.int8))
    with pytest.raises(OverflowError, match="300.*int8"):
        t[[0]] = 300
    with pytest.raises(OverflowError, match="300.*int8"):
        t[0] = 300
    with pytest.raises(OverflowError, match="-1.*uint8"):
        tl.asarray(np.zeros(2, np.uint8))[[1]] = -1
    with pytest.raises(OverflowError, match="300.*int8"):
        t[[0, 1]] = [1, 300]
    with pytest.raises(ValueError, match="nan"):
        t[[0]] = float("nan")
    with pytest.raises(OverflowError, match="inf"):
        t[[0]] = float("inf")
    same(t, np.zeros(3, np.int8))


def test_setitem_out_of_range_leaves_target_unchanged(device):
    # one body on every device
    t = on_device(np.zeros(4), device)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        t[[0, 1, 4]] = 1.0
    same(t, np.zeros(4))
    a = np_values("float32", (4, 3))
    x = on_device(a, device)
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 0 with "
                                         "size 4"):
        x[[0, -5]] = 1.0
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with "
                                         "size 3"):
        x[on_device(np.array([0, 1]), device), on_device(np.array([2, 3]), device)] = 1.0
    same(x, a)


def test_setitem_into_expanded_tensor_raises():
    t = tl.asarray(np.zeros(3)).broadcast_to((2, 3))
    with pytest.raises(RuntimeError, match="share memory"):
        t[[0, 1]] = 1.0


# ---- advanced errors ----------------------------------------------------------------------------
@pytest.mark.parametrize("key, words", [
    ([3], ["index 3", "dimension 0", "size 3"]),
    ([-4], ["index -4", "dimension 0", "size 3"]),
    ((slice(None), [0, 4]), ["index 4", "dimension 1", "size 4"]),
    (([0], 5), ["index 5", "dimension 1", "size 4"]),
    (([0, 1], [0, 1, 2]), ["shape mismatch", "(2,)", "(3,)"]),
    (([0, 1], False), ["shape mismatch", "(2,)", "(0,)"]),
    (np.ones((3, 5), bool), ["(3, 5)", "(3, 4)"]),
    ((slice(None), np.ones(3, bool)), ["(3,)", "(4,)"]),
    ([True, False], ["(2,)", "(3,)"]),
    (np.ones((3, 4, 1), bool), ["too many indices", "3"]),
    (([0], 0, 0), ["too many indices"]),
    (np.array([1.0]), ["float64"]),
    ([1.0, 2.0], ["float64"]),
    (np.array([1j]), ["complex"]),
    ([[0, 1], [2]], ["ragged"]),
    (([0], ..., ...), ["single ellipsis"]),
    (np.array([2 ** 64 - 1], np.uint64), ["18446744073709551615", "dimension 0"]),
    (([0], "a"), ["str"]),
    (([0], 1.5), ["float"]),
])
def test_advanced_errors(key, words):
    t = tl.asarray(np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError) as info:
        t[key]
    for w in words:
        assert w in str(info.value), str(info.value)
    with pytest.raises(IndexError):
        t[key] = 1.0
    # NumPy agrees, except that it wraps huge uint64 indices and calls ragged lists ValueError.
    with pytest.raises(ValueError if "ragged" in words else IndexError):
        if not isinstance(key, np.ndarray) or key.dtype != np.uint64:
            np.zeros((3, 4))[key]
        else:
            raise IndexError


def test_index_tensor_dtype_errors():
    t = tl.asarray(np.zeros(5))
    for bad in (tl.asarray(np.array([1.0, 2.0])), tl.asarray(np.array([1j]))):
        with pytest.raises(IndexError, match="dtype"):
            t[bad]
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        t[tl.asarray(np.array([[0, 9]], np.int32))]


# ---- nonzero ------------------------------------------------------------------------------------
@given(st.sampled_from(ALL_DTYPES).flatmap(
    lambda d: st.tuples(st.just(d), arrays("float32" if d == "bfloat16" else d, min_dims=1,
                                           max_dims=4, max_side=5,
                                           elements=st.sampled_from([0, 1, 2])
                                           if d not in ("bool",) else None))))
def test_nonzero_matches_numpy(case):
    dtype, a = case
    t = make(a, dtype)
    got = nonzero(t)
    expected = np.nonzero(a)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype is tl.int64
        same(g, e)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float16", "bfloat16", "float32",
                                   "float64", "complex64"])
def test_nonzero_dtypes_negative_zero_and_nan(dtype, device):
    # one body on every device (the CUDA kernel: kernels/cuda/indexing.py)
    a = np_values(dtype, (3, 7), seed=2)
    if dtype in ("float16", "float32", "float64", "bfloat16"):
        a[0, :3] = [-0.0, np.nan, -np.inf]   # -0.0 is zero; nan and inf are not
    if dtype == "complex64":
        a[1, :3] = [0j, complex(0, -1), complex(-0.0, 0.0)]
    got = tl.nonzero(on_device(a, device, dtype))
    want = np.nonzero(a)
    assert len(got) == 2
    for g, w in zip(got, want):
        assert g.dtype is tl.int64
        same(g, w)
    if dtype in ("float16", "bfloat16", "float32", "complex64"):
        b = np.array([0.0, -0.0, np.nan, 1.0, -2.0, 0.0], np.float32 if dtype == "bfloat16"
                     else dtype)
        same(nonzero(on_device(b, device, dtype))[0], np.array([2, 3, 4]))


def test_nonzero_large_and_errors():
    rng = np.random.default_rng(3)
    a = rng.random((130, 70, 9)) > 0.7
    for x in (a, a.transpose(2, 0, 1), a[::-1, ::2]):
        got = nonzero(tl.from_numpy(x))
        for g, e in zip(got, np.nonzero(x)):
            same(g, e)
    with pytest.raises(ValueError, match="0-d"):
        nonzero(tl.asarray(np.float32(1)))
    with pytest.raises(TypeError, match="Tensor"):
        nonzero(np.ones(3))


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "complex128"])
def test_row_gathers_of_every_post_layout_match_numpy(dtype):
    """x[idx] along the first dim: rows that are one run in the source (C order: copied as
    runs), rows that are not (a column-major, stepped or reversed source), rows of (8, 5),
    rows of one element, negative indices, the parallel kernel (above the grain), and a bad
    index's error."""
    rng = np.random.default_rng(7)
    base = (rng.standard_normal((300, 40)) * 50).astype(dtype)
    idx = rng.integers(-300, 300, 50)
    views = [  # (NumPy's view, the same view in tensorlib)
        (lambda a: a, lambda t: t),
        (lambda a: np.ascontiguousarray(a.T).T, lambda t: t.T.contiguous().T),
        (lambda a: a[:, ::2], lambda t: t[:, ::2]),
        (lambda a: a.reshape(300, 20, 2)[:, :, ::-1],
         lambda t: t.reshape((300, 20, 2))[:, :, ::-1]),
        (lambda a: a.reshape(300, 8, 5), lambda t: t.reshape((300, 8, 5))),
        (lambda a: a[:, 3:4], lambda t: t[:, 3:4]),
    ]
    for np_view, tl_view in views:
        x, t = np_view(base), tl_view(tl.asarray(base))
        np.testing.assert_array_equal(t[tl.asarray(idx)].numpy(), x[idx])
    big = rng.integers(0, 300, 5000)  # 5000 x 40 elements: above the grain
    np.testing.assert_array_equal(tl.asarray(base)[tl.asarray(big)].numpy(), base[big])
    with pytest.raises(IndexError):
        tl.asarray(base)[tl.asarray(np.array([1, 300]))]


@pytest.mark.parametrize("route", ["numpy rows", "scatter kernels"])
def test_big_row_scatters_match_numpy_and_respect_aliasing(route, monkeypatch):
    """x[idx] = value above the grain, by NumPy's assignment (rows of ROWS_NUMPY_MIN+
    elements) and by the general path's scatter kernels (ROWS_NUMPY_MIN raised): there a
    contiguous value of x's dtype is read in place; a value of another dtype, a broadcast row,
    and a value sharing bytes with x (a view of x, or another tensor over the same NumPy
    buffer) are copied first, so the result is NumPy's (which reads the value before writing).
    Targets of every post layout (rows that are runs, column-major, stepped) and scalar /
    column writes."""
    from tensorlib.kernels.cpu import indexing as cpu_indexing
    if route == "scatter kernels":
        monkeypatch.setattr(cpu_indexing, "ROWS_NUMPY_MIN", 1 << 40)
    rng = np.random.default_rng(11)
    base = np.arange(400_000, dtype=np.float32).reshape(100_000, 4)
    idx = np.arange(1, 90_000)
    # a second storage over base's buffer, and a view of the target itself
    for make_value in (lambda t, a: tl.asarray(a[0:89_999]), lambda t, a: t[0:89_999]):
        a = base.copy()
        want = a.copy()
        want[idx] = a[0:89_999].copy()
        t = tl.asarray(a)
        t[tl.asarray(idx)] = make_value(t, a)
        np.testing.assert_array_equal(t.numpy(), want)
    ridx = rng.integers(-500, 500, 300)  # repeated indices: the last write wins
    values = [rng.standard_normal((300, 600)).astype(np.float32),
              rng.standard_normal((300, 600)),  # float64 into float32: cast copy
              rng.standard_normal(600).astype(np.float32),  # one row, broadcast
              np.float32(2.5)]
    targets = [  # (NumPy's view, the same view in tensorlib)
        (lambda a: a, lambda t: t),
        (lambda a: a[:, ::-1], lambda t: t[:, ::-1]),
        (lambda a: np.asfortranarray(a), lambda t: t.T.contiguous().T),
    ]
    for np_view, tl_view in targets:
        for v in values:
            b = rng.standard_normal((500, 600)).astype(np.float32)
            a, t = np_view(b.copy()), tl_view(tl.asarray(b))
            want = a.copy()
            want[ridx] = v
            t[tl.asarray(ridx)] = v if isinstance(v, np.floating) else tl.asarray(v)
            np.testing.assert_array_equal(t.numpy(), want)
            want[:, ridx[:100]] = 7.0
            t[:, tl.asarray(ridx[:100])] = 7.0
            np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128", "float16"])
def test_integer_array_keys_match_numpy(dtype):
    """x[i, j] / x[i, j, :] / x[i[:, None], j] (integer index tensors alone, broadcast, of
    int64 or int32; NumPy's indexing of the raw words below the grain, the general path above
    it): NumPy's values and shapes, negative indices, strided sources, empty indices; an
    out-of-range index raises IndexError and writes nothing."""
    rng = np.random.default_rng(5)
    base = (rng.standard_normal((30, 40, 6)) * 9).astype(dtype)
    i = rng.integers(-30, 30, 50)
    j = rng.integers(-40, 40, 50)
    k = rng.integers(-6, 6, 50)
    sources = [(base, tl.asarray(base)), (base[::-2, 1:], tl.asarray(base)[::-2, 1:])]
    for a, t in sources:
        i2 = i % a.shape[0]
        keys = [(i2, j[:50] % a.shape[1]), (i2, j % a.shape[1], k),
                (i2[:, None], j[None, :10] % a.shape[1]),
                (i2.astype(np.int32), (j % a.shape[1]).astype(np.int32), slice(None)),
                (i2[:0], j[:0]), (i2[:7], j[:7] % a.shape[1], slice(None)),
                (np.array(3), j % a.shape[1])]
        for key in keys:
            tkey = tuple(tl.asarray(v) if isinstance(v, np.ndarray) else v for v in key)
            got = t[tkey]
            want = a[key]
            assert got.shape == want.shape
            np.testing.assert_array_equal(got.numpy(), want)
    t = tl.asarray(base)
    big = rng.integers(0, 30, 20000)  # 20000 x 6 elements: the general path
    np.testing.assert_array_equal(t[tl.asarray(big), tl.asarray(big % 40)].numpy(),
                                  base[big, big % 40])
    for bad in ((np.array([0, 30]), np.array([0, 1])), (np.array([0, 1]), np.array([0, -41]))):
        with pytest.raises(IndexError):
            t[tuple(tl.asarray(v) for v in bad)]


def test_integer_array_keys_below_the_grain_plan_nothing(monkeypatch):
    from tensorlib.ops import indexing as ops_indexing

    def no_plan(*args):
        raise AssertionError("the general path planned the key")
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    t = tl.asarray(a)
    monkeypatch.setattr(ops_indexing, "_plan", no_plan)
    i, j = np.array([0, -1, 3]), np.array([9, 0, -10])
    np.testing.assert_array_equal(t[tl.asarray(i), tl.asarray(j)].numpy(), a[i, j])
    np.testing.assert_array_equal(t[tl.asarray(i), :].numpy(), a[i, :])


@st.composite
def _array_keys(draw):
    """A source of 2-3 dims (C order, transposed or stepped) and a key of 2+ integer index
    arrays over its leading dims (shapes broadcasting to one block, negative indices, int32 or
    int64), maybe with trailing ':'."""
    ndim = draw(st.integers(2, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)))
    layout = draw(st.sampled_from(["c", "transposed", "stepped"]))
    nidx = draw(st.integers(2, ndim))
    block = draw(st.sampled_from([(), (3,), (2, 1), (1, 4), (2, 3), (0,)]))
    itype = draw(st.sampled_from([np.int64, np.int32]))
    key = []
    for d in range(nidx):
        shp = [1 if draw(st.booleans()) else n for n in block]
        shp = shp[draw(st.integers(0, len(shp))):]
        key.append(draw(hnp.arrays(itype, tuple(shp),
                                   elements=st.integers(-shape[d], shape[d] - 1))))
    key += [slice(None)] * draw(st.integers(0, ndim - nidx))
    return shape, layout, tuple(key)


@given(case=_array_keys())
def test_integer_array_keys_property(case):
    shape, layout, key = case
    base = np.arange(int(np.prod(shape)) * 2, dtype=np.float32).reshape(shape[:-1] + (-1,))
    t = tl.asarray(base)
    a = base
    if layout == "transposed":
        a, t = np.ascontiguousarray(base.T).T, t.T.contiguous().T
    a, t = a[..., ::2], t[..., ::2]  # (shape back to `shape`: the last dim was doubled)
    if layout == "c":
        a, t = np.ascontiguousarray(a), t.contiguous()
    tkey = tuple(tl.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
    got = t[tkey]
    want = a[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)

"""Row sorts (many rows of up to a few thousand elements: the sorting network of
kernels/cpu/sort_network.py) against NumPy, bit for bit: np.sort(kind="stable") incl. nan
payloads and signs, -0.0 / 0.0 in input order, inf, descending; plus argsort on the same rows.
Dtypes are those test_sorting.py compiles already (one sort module per key layout)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib as tl
from tensorlib.kernels.cpu import sort_network, sorting
from helpers import assert_bits, np_argsort_desc, sort_test_integers, to_numpy

# the kernel's routes, also where small sorts take NumPy's along an axis (sort_small.py)
pytestmark = pytest.mark.usefixtures("kernel_sort_routes")

# lanes (rows sorted together): float32 8, int64 4, uint8 32, float16 16
ROW_DTYPES = ["float32", "int64", "uint8", "float16"]

_NANS = np.array([0x7FC00000, 0xFFC00000, 0x7FC00123, 0xFF800001, 0x7F800001],
                 np.uint32).view(np.float32)


def np_sort_desc(x):
    """Stable descending sort, bit for bit: nan first, equal elements in input order."""
    return np.take_along_axis(x, np_argsort_desc(x), -1)


def check_rows(x):
    """sort (both orders) bit for bit, and argsort, along the last axis."""
    t = tl.asarray(x)
    assert_bits(to_numpy(tl.sort(t, axis=-1)), np.sort(x, axis=-1, kind="stable"))
    assert_bits(to_numpy(tl.sort(t, axis=-1, descending=True)), np_sort_desc(x))
    np.testing.assert_array_equal(to_numpy(tl.argsort(t, axis=-1)),
                                  np.argsort(x, axis=-1, kind="stable"))


def special_floats(dtype):
    vals = np.concatenate([_NANS, np.array([0.0, -0.0, np.inf, -np.inf, 1.5, -1.5, 2.0, -3.0,
                                            1e-30, -1e-30, 65504.0, 1e-45], np.float32)])
    return vals.astype(dtype) if dtype != "float32" else vals


def row_values(rng, dtype, shape, kind):
    if dtype in ("float32", "float16"):
        if kind == "special":
            pool = special_floats(dtype)
            return pool[rng.integers(0, pool.size, shape)]
        if kind == "ties":
            return rng.integers(-3, 4, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)
    return sort_test_integers(rng, dtype, shape, kind)


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(ROW_DTYPES), extra_rows=st.integers(0, 40),
       n=st.integers(2, 70), kind=st.sampled_from(["random", "special", "ties"]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_rows_match_numpy_bitwise(dtype, extra_rows, n, kind, seed):
    """Row counts around the lane count (full and partial row groups), lengths around the
    16-row blocks and their powers of two."""
    rng = np.random.default_rng(seed)
    rows = sort_network.lanes(np.dtype(dtype).itemsize) + extra_rows
    check_rows(row_values(rng, dtype, (rows, n), kind))


@pytest.mark.parametrize("n", [16, 17, 31, 33, 127, 256, 1000])
def test_row_lengths_at_block_boundaries(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((19, n)).astype(np.float32)  # 2 full row groups + 3 rows
    x[1, ::3] = -0.0
    x[2, 1::5] = 0.0
    x[3, ::4] = _NANS[rng.integers(0, _NANS.size, x[3, ::4].size)]
    x[4, ::7] = -np.inf
    x[5] = np.nan        # all nan
    x[6] = -0.0          # all -0.0
    x[7] = np.sort(x[7])[::-1]
    check_rows(x)


def test_rows_one_special_kind_per_row():
    """Each kind alone (negative nan, positive nan, -0.0 among +0.0, -0.0 alone, inf) in one
    row of an otherwise plain group: found in the sorted lanes, the group sorted again."""
    base = np.random.default_rng(1).standard_normal((8, 40)).astype(np.float32)
    for col, v in [(5, _NANS[1]), (0, _NANS[0]), (39, _NANS[3]), (7, np.float32(-0.0)),
                   (9, np.float32(np.inf)), (3, np.float32(-np.inf))]:
        for row in (0, 7):
            x = base.copy()
            x[row, col] = v
            if v == 0:
                x[row, col + 1] = 0.0
            check_rows(x)


def test_rows_threads_and_layouts():
    """Enough elements for the parallel kernel; a transposed input and axis=0."""
    rng = np.random.default_rng(5)
    x = rng.random((200, 300), dtype=np.float32)
    x[::17, ::13] = np.nan
    x[3::19, 1::11] = -0.0
    assert x.size >= sorting.PAR_GRAIN
    check_rows(x)
    y = np.ascontiguousarray(x.T)[:, :150]
    check_rows(y.T)  # strided rows
    assert_bits(to_numpy(tl.sort(tl.asarray(x), axis=0)), np.sort(x, axis=0, kind="stable"))
    z = rng.integers(-2 ** 62, 2 ** 62, (64, 1200))
    check_rows(z)


def test_rows_longest_network_length_and_beyond():
    rng = np.random.default_rng(7)
    for n in (sorting.NET_MAX[4], sorting.NET_MAX[4] + 1):
        x = rng.standard_normal((8, n)).astype(np.float32)
        x[2, ::101] = -0.0
        x[5, ::97] = np.nan
        check_rows(x)


def test_network_kernel_sorts_lanes_directly():
    """The kernel alone (serial and parallel entry points), pad rows included."""
    mod = sorting._module(np.dtype(np.float32))
    rng = np.random.default_rng(11)
    rows, n, npad = 21, 40, 64
    x = rng.standard_normal((rows, n)).astype(np.float32)
    raw = x.reshape(-1).view(np.uint32)
    for desc in (False, True):
        want = np_sort_desc(x) if desc else np.sort(x, axis=-1, kind="stable")
        out = np.empty_like(raw)
        scratch = np.full(npad * sort_network.lanes(4), 7, np.uint32)
        mod.net_groups(raw, out, scratch, 0, 3, rows, n, npad, desc)
        assert_bits(out.view(np.float32).reshape(rows, n), want)
        out[:] = 0
        mod.vnet_parallel(raw, out, rows, n, npad, desc, 2)
        assert_bits(out.view(np.float32).reshape(rows, n), want)


def test_network_comparator_lists_sort_every_01_input():
    """0-1 principle: the 16-input block network sorts, the half-cleaners sort bitonic input."""
    w = sort_network.W
    sort16 = sort_network._oddeven_merge_sort(w)
    clean = sort_network._half_cleaners(w)

    def run(net, bits):
        v = list(bits)
        for a, b in net:
            if v[a] > v[b]:
                v[a], v[b] = v[b], v[a]
        return v

    for m in range(1 << w):
        bits = [(m >> i) & 1 for i in range(w)]
        assert run(sort16, bits) == sorted(bits)
    for ones_lo in range(w // 2 + 1):  # bitonic 0-1 inputs: up then down, and rotations
        for ones_hi in range(w // 2 + 1):
            up = [0] * (w // 2 - ones_lo) + [1] * ones_lo
            down = [1] * ones_hi + [0] * (w // 2 - ones_hi)
            for r in range(w):
                v = (up + down)[r:] + (up + down)[:r]
                if v == sorted(v) or sum(1 for i in range(w - 1) if v[i] != v[i + 1]) <= 2:
                    assert run(clean, v) == sorted(v)

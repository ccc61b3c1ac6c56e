"""Long 1-D value sorts on two threads (kernels/cpu/sort_split.py): split at a sampled pivot,
the parts sorted by NumPy on two threads. Bit for bit NumPy's stable sort (nan payloads and
-0.0 / 0.0 in input order, ties, both orders), also where the split falls back (lopsided
splits, mostly nan); at a test size (MIN_N lowered), with two threads and the kernel compiled
at once."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cpu import sort_split
from tensorlib.runtime.cpu import cores
from helpers import assert_bits, np_argsort_desc
from test_sorting_numpy_paths import values

# the kernel's routes, also where small sorts take NumPy's along an axis (sort_small.py)
pytestmark = pytest.mark.usefixtures("kernel_sort_routes")

N = 3001  # odd: halves of different lengths


@pytest.fixture
def split_sorts(monkeypatch):
    monkeypatch.setattr(sort_split, "MIN_N", 1024)
    monkeypatch.setattr(sort_split, "SAMPLE", 256)
    monkeypatch.setattr(cores, "DEFER_PARALLEL_COMPILE", False)
    monkeypatch.setattr(cores, "threads", lambda own=False: 2)
    used = []
    real = sort_split.sort_into

    def spy(a, out):
        done = real(a, out)
        used.append(done)
        return done

    monkeypatch.setattr("tensorlib.kernels.cpu.sorting.sort_into", spy)
    return used


def _want(x, desc):
    idx = np_argsort_desc(x) if desc else np.argsort(x, kind="stable")
    return x[idx]


_CASES = [(d, k) for d in ("float32", "float64", "int32", "int64", "int16", "uint64")
          for k in ("random", "ties") + (("special",) if d.startswith("float") else ())]


@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("dtype,kind", _CASES)
def test_split_sort_matches_numpy_stable_bit_for_bit(split_sorts, dtype, kind, desc):
    x = values(np.random.default_rng(7), dtype, N, kind)
    got = tl.sort(tl.asarray(x), descending=desc).numpy()
    assert_bits(got, _want(x, desc))
    assert split_sorts == [True]  # the split served it (fails if it declined)


@pytest.mark.parametrize("x", [np.full(N, 2.5, np.float32),  # one value: lopsided
                               np.r_[np.full(N - 40, np.nan, np.float32),
                                     np.arange(40, dtype=np.float32)]])  # mostly nan
def test_lopsided_and_mostly_nan_rows_fall_back(split_sorts, x):
    got = tl.sort(tl.asarray(x)).numpy()
    assert_bits(got, _want(x, False))
    assert split_sorts == [False]


def test_one_free_thread_sorts_with_numpy(split_sorts, monkeypatch):
    monkeypatch.setattr(cores, "threads", lambda own=False: 1)
    x = np.random.default_rng(3).standard_normal(N).astype(np.float32)
    assert_bits(tl.sort(tl.asarray(x)).numpy(), np.sort(x, kind="stable"))
    assert split_sorts == [False]


@pytest.fixture
def split_rows(monkeypatch):
    monkeypatch.setattr(sort_split, "ROWS_MIN", 64)
    monkeypatch.setattr(cores, "threads", lambda own=False: 2)
    used = []
    real = sort_split.sort_rows

    def spy(o):
        done = real(o)
        used.append(done)
        return done

    monkeypatch.setattr("tensorlib.kernels.cpu.sorting.sort_rows", spy)
    return used


@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("dtype,kind", _CASES)
def test_rows_on_two_threads_match_numpy_stable_bit_for_bit(split_rows, dtype, kind, desc):
    x = values(np.random.default_rng(11), dtype, (7, 301), kind)  # odd: halves of 3 and 4
    got = tl.sort(tl.asarray(x), axis=-1, descending=desc).numpy()
    want = np.stack([_want(r, desc) for r in x])
    assert_bits(got, want)
    assert split_rows == [True]


def test_an_error_on_the_other_thread_is_raised_here():
    def fail_on_first(x):
        if x == 1:
            raise ValueError("from the other thread")
        return x

    with pytest.raises(ValueError, match="from the other thread"):
        sort_split._both(fail_on_first, (1,), (2,))
    assert sort_split._both(fail_on_first, (3,), (2,)) == (3, 2)

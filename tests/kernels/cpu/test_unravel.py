"""kernels/cpu/unravel.py: the index-unravel loop the CPU kernel templates share, run as
Python over every flat index of a few layouts and checked against NumPy's unravel_index."""
import numpy as np
import pytest

from tensorlib.kernels.cpu.unravel import unravel_source


def _offsets_fn(index, dims, sizes, offsets, prelude=""):
    body = unravel_source(index, dims, sizes, offsets, 4)
    src = f"def f(meta, j):\n    po = 0\n    pi = 7\n{prelude}{body}\n    return po, pi\n"
    ns = {}
    exec(src, ns)
    return ns["f"]


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (4, 1, 3, 2)])
def test_first_dim_fastest_matches_numpy(shape):
    nd = len(shape)
    rng = np.random.default_rng(nd)
    so = rng.integers(-9, 10, nd)
    si = rng.integers(-9, 10, nd)
    meta = [*shape, *so, *si]  # sizes at 0, strides of po at nd, of pi at 2 * nd
    f = _offsets_fn("j", f"range({nd})", "0", [("po", f"{nd}"), ("pi", f"2 * {nd}")])
    for j in range(int(np.prod(shape))):
        idx = np.array(np.unravel_index(j, shape, order="F"))
        assert f(meta, j) == (int(idx @ so), 7 + int(idx @ si))


def test_dims_subrange_and_note():
    # range(1, nd): dim 0 is left out (the tile loops walk it themselves)
    shape = (6, 3, 2)
    meta = [*shape, 0, 5, 100, 0, 0, 0]
    f = _offsets_fn("j + 0", "range(1, 3)", "0", [("po", "3")])
    for j in range(6):
        i1, i2 = np.unravel_index(j, shape[1:], order="F")
        assert f(meta, j) == (5 * i1 + 100 * i2, 7)
    text = unravel_source("j + 0", "range(nk)", "kb", [("po", "kb + nk")], 8, note="why")
    assert text.split("\n")[0] == "        rem = j + 0  # why"


def test_reverse_dims_without_rem_line():
    # matmul's batch loop: the caller sets rem; last dim fastest (C order)
    shape = (2, 3)
    so = [10, 1]
    meta = [*shape, *so]
    f = _offsets_fn(None, "range(1, -1, -1)", "0", [("po", "2")], prelude="    rem = j\n")
    assert "rem = " not in unravel_source(None, "range(2)", "0", [("po", "2")], 4)
    for j in range(6):
        idx = np.array(np.unravel_index(j, shape))
        assert f(meta, j) == (int(idx @ so), 7)

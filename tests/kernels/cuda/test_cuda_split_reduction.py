"""CUDA split reductions (kernels/cuda/reduction.py ``_split``): when few outputs have many
reduced elements each, the reduced range is cut into chunks whose partial accumulators a second
launch combines. Run on the interpret backend, where the split starts at small sizes, against
NumPy; integer sums are compared exactly, so a chunk counted twice or lost fails."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.kernels.cuda import reduction as R

pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py

_RNG = np.random.default_rng(7)


@pytest.fixture
def partial_launches(monkeypatch):
    """Grids of stage-1 (partial) launches, so each test knows the split path ran."""
    from tensorlib.kernels.cuda import launch as L
    seen = []
    real = L.launch

    def spy(kernel, grid, args, device, **kwargs):
        if kwargs.get("PARTIAL"):
            seen.append(grid)
        return real(kernel, grid, args, device, **kwargs)
    monkeypatch.setattr(L, "launch", spy)
    return seen


def _dev(a):
    return tl.asarray(a, device="cuda")


@pytest.mark.parametrize("shape,axis", [((20011,), None), ((3, 9001), 1), ((9001, 3), 0),
                                        ((5, 3, 3001), (0, 2))])
def test_integer_sums_exact(partial_launches, shape, axis):
    a = _RNG.integers(-1000, 1000, shape, dtype=np.int64)
    got = tl.sum(_dev(a.astype(np.int32)), axis=axis).cpu().numpy()
    np.testing.assert_array_equal(got, a.sum(axis=axis))
    assert partial_launches and all(g[1] > 1 for g in partial_launches)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "var", "std"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_reductions(partial_launches, op, dtype):
    a = _RNG.standard_normal((3, 12000)).astype(dtype)
    a[1, 7777] = 9.0  # one extreme inside a middle chunk
    got = getattr(tl, op)(_dev(a), axis=1).cpu().numpy()
    want = getattr(np, op)(a.astype(np.float64), axis=1)
    rtol = 2e-3 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=1e-4)
    assert partial_launches


def test_nan_in_one_chunk_propagates(partial_launches):
    a = np.ones(30000, np.float32)
    a[25001] = np.nan
    assert np.isnan(tl.max(_dev(a)).cpu().numpy())
    assert np.isnan(tl.sum(_dev(a)).cpu().numpy())
    assert partial_launches


def test_complex_and_logical(partial_launches):
    a = (_RNG.standard_normal(20000) + 1j * _RNG.standard_normal(20000)).astype(np.complex64)
    np.testing.assert_allclose(tl.sum(_dev(a)).cpu().numpy(), a.astype(np.complex128).sum(),
                               rtol=1e-4)
    np.testing.assert_allclose(tl.var(_dev(a)).cpu().numpy(), a.astype(np.complex128).var(),
                               rtol=1e-4)
    b = np.zeros(20000, bool)
    assert not tl.any(_dev(b)).cpu().numpy()
    b[19999] = True  # only the last chunk holds it
    assert tl.any(_dev(b)).cpu().numpy()
    assert not tl.all(_dev(b)).cpu().numpy()
    assert int(tl.sum(_dev(b)).cpu().numpy()) == 1
    assert partial_launches


def test_keepdims_and_out(partial_launches):
    a = _RNG.integers(0, 9, (2, 15000)).astype(np.float32)
    out = tl.empty((2, 1), dtype=tl.float64, device="cuda")
    tl.sum(_dev(a), axis=1, keepdims=True, out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), a.sum(axis=1, keepdims=True))
    assert partial_launches


def test_small_reductions_do_not_split(partial_launches):
    a = np.arange(1000, dtype=np.float32)
    assert float(tl.sum(_dev(a)).cpu().numpy()) == a.sum()
    assert not partial_launches


def test_split_policy_on_a_gpu(monkeypatch):
    monkeypatch.setitem(R._SMS, 0, 132)
    full = R.GPU_TILES["full"]
    # one output of 64M elements: about 4 programs per SM, chunks a multiple of BLOCK_R
    n_split, chunk = R._split("compiled", 0, 1, 1 << 26, full[0], full[1])
    assert 2 * 132 <= n_split <= 4 * 132 and chunk % full[1] == 0
    assert n_split * chunk >= 1 << 26
    assert (n_split - 1) * chunk < 1 << 26          # no chunk starts past the end
    # enough outputs to fill the GPU: no split
    inner = R.GPU_TILES["inner"]
    assert R._split("compiled", 0, 4 * 132 * inner[0], 1 << 20, inner[0], inner[1]) == (1, 1 << 20)
    # too little work per output to be worth a second launch
    assert R._split("compiled", 0, 1, 1000, full[0], full[1]) == (1, 1000)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint8", "bool"])
@pytest.mark.parametrize("shape,axis", [((20011,), None), ((3, 9001), 1), ((9001, 3), 0)])
def test_arg_reductions_first_index_across_chunks(partial_launches, op, dtype, shape, axis):
    # few distinct values: the extreme repeats in several chunks and the first one must win
    a = _RNG.integers(-3, 4, shape)
    x = a > 0 if dtype == "bool" else a.astype(dtype)
    got = getattr(tl, op)(_dev(x), axis=axis).cpu().numpy()
    np.testing.assert_array_equal(got, getattr(np, op)(x, axis=axis))
    assert partial_launches


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reduction_nan_wins_in_a_late_chunk(partial_launches, op):
    a = _RNG.standard_normal(30000).astype(np.float32)
    a[26000] = np.nan
    a[29000] = np.nan
    assert int(getattr(tl, op)(_dev(a)).cpu().numpy()) == 26000
    assert partial_launches

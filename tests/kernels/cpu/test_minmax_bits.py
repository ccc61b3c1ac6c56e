"""float max/min over contiguous blocks run as integer max/min of order-preserving bit keys
(kernels/cpu/reduction.py): NumPy is the oracle for values and nan propagation."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl

FLOATS = [np.float32, np.float64]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("n", [1, 7, 1023, 1024, 1025, 5000, 70_000])
def test_values_and_nan_anywhere(dt, n):
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n) * 1e3).astype(dt)
    t = tl.asarray(a)
    assert tl.max(t).item() == a.max() and tl.min(t).item() == a.min()
    for pos in {0, n // 2, n - 1}:
        b = a.copy()
        b[pos] = np.nan
        assert np.isnan(tl.max(tl.asarray(b)).item()) and np.isnan(tl.min(tl.asarray(b)).item())
        b[pos] = -np.nan  # sign bit set: still a nan
        assert np.isnan(tl.max(tl.asarray(b)).item()) and np.isnan(tl.min(tl.asarray(b)).item())


@pytest.mark.parametrize("dt", FLOATS)
def test_special_values(dt):
    tiny = np.finfo(dt).smallest_subnormal
    big = np.finfo(dt).max
    cases = [[-np.inf] * 3, [np.inf] * 3, [-np.inf, np.inf], [tiny, -tiny, 0.0],
             [-big, big, -np.inf], [-1.0, -2.0, -0.5], [-tiny, -0.0]]
    for c in cases:
        a = np.array(c * 700, dt)
        assert tl.max(tl.asarray(a)).item() == a.max(), c
        assert tl.min(tl.asarray(a)).item() == a.min(), c


@pytest.mark.parametrize("dt", FLOATS)
def test_signed_zeros_follow_ieee_maximum(dt):
    a = np.array([-0.0, 0.0] * 600, dt)
    assert np.signbit(tl.max(tl.asarray(a)).item()) == False  # noqa: E712
    assert np.signbit(tl.min(tl.asarray(a)).item()) == True  # noqa: E712
    z = np.full(2000, -0.0, dt)
    assert np.signbit(tl.max(tl.asarray(z)).item()) and np.signbit(tl.min(tl.asarray(z)).item())


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1,
                max_size=300),
       st.sampled_from(FLOATS), st.integers(1, 3))
def test_property_against_numpy(vals, dt, step):
    a = np.array(vals, dt)[::step]
    t = tl.asarray(np.array(vals, dt))[::step]
    for f, g in ((tl.max, np.max), (tl.min, np.min)):
        got, want = f(t).item(), g(a)
        assert (np.isnan(got) and np.isnan(want)) or got == want


@pytest.mark.parametrize("dt", FLOATS)
def test_axis_reductions(dt):
    a = np.random.default_rng(3).standard_normal((37, 2100)).astype(dt)
    a[5, 1000] = np.nan
    t = tl.asarray(a)
    for axis in (0, 1):
        np.testing.assert_array_equal(tl.max(t, axis=axis).numpy(), a.max(axis=axis))
        np.testing.assert_array_equal(tl.min(t, axis=axis).numpy(), a.min(axis=axis))


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("n", [1, 5, 1024, 1025, 3000, 70_000])
def test_argmax_argmin_first_extreme_and_first_nan(dt, n):
    rng = np.random.default_rng(n + 7)
    a = rng.integers(-5, 5, n).astype(dt)  # many ties: the first extreme must win
    t = tl.asarray(a)
    assert tl.argmax(t).item() == a.argmax() and tl.argmin(t).item() == a.argmin()
    for pos in sorted({n - 1, n // 2, 0}):
        b = a.copy()
        b[pos] = np.nan
        if pos + 1 < n:
            b[-1] = np.nan  # a later nan never wins
        assert tl.argmax(tl.asarray(b)).item() == b.argmax() == pos
        assert tl.argmin(tl.asarray(b)).item() == b.argmin() == pos


@pytest.mark.parametrize("dt", FLOATS)
def test_argmax_signed_zeros_tie(dt):
    for c in ([-0.0, 0.0], [0.0, -0.0], [-1.0, -0.0, 0.0], [1.0, 0.0, -0.0]):
        a = np.array(c * 700, dt)
        assert tl.argmax(tl.asarray(a)).item() == a.argmax(), c
        assert tl.argmin(tl.asarray(a)).item() == a.argmin(), c


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1,
                max_size=300), st.sampled_from(FLOATS))
def test_argmax_property_against_numpy(vals, dt):
    a = np.array(vals, dt)
    t = tl.asarray(a)
    assert tl.argmax(t).item() == a.argmax() and tl.argmin(t).item() == a.argmin()


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("case", ["late_block", "tie_across_blocks", "nan_late", "nan_first_of_two",
                                  "signed_zeros", "infs", "partial_last_block"])
def test_arg_over_many_blocks_matches_numpy(np_dtype, op, case):
    """argmax/argmin of a contiguous row scanned in 1024-element blocks (arg_of_bits): the
    extreme's block found, then the first index in it; a nan anywhere wins at its first index."""
    rng = np.random.default_rng(3)
    n = 5000 if case != "partial_last_block" else 4097
    x = rng.uniform(-1, 1, n).astype(np_dtype)
    big = np_dtype(7.0) if op == "argmax" else np_dtype(-7.0)
    if case == "late_block":
        x[4500] = big
    elif case == "tie_across_blocks":
        x[2100] = big
        x[4090] = big
        x[2050] = big  # the first of three equal extremes, two blocks apart
    elif case == "nan_late":
        x[4999] = np.nan
        x[10] = big
    elif case == "nan_first_of_two":
        x[3000] = np.nan
        x[1500] = np.nan
    elif case == "signed_zeros":
        x = -np.abs(x) if op == "argmax" else np.abs(x)
        x[2222] = -0.0
        x[1111] = 0.0  # -0.0 and +0.0 tie: the first of them
    elif case == "infs":
        x[3333] = np.inf
        x[1234] = -np.inf
    else:
        x[4096] = big  # the only element of the last, partial block
    got = getattr(tl, op)(tl.asarray(x)).item()
    assert got == getattr(np, op)(x)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("n", [5, 1000, 1025, 3000])
def test_raw_bit_scans_in_the_kernels(dt, n, monkeypatch):
    """The compiled row scans themselves (not the cold route): signed max / min and unsigned max
    of the raw bit patterns, on all-negative, all-positive, signed-zero and random-bit rows."""
    from tensorlib.kernels.cpu import reduction as R
    monkeypatch.setattr(R, "COLD", False)
    rng = np.random.default_rng(n)
    ib = np.int32 if dt == np.float32 else np.int64
    info = np.iinfo(ib)
    base = rng.standard_normal(n).astype(dt)
    zeros = rng.choice(np.array([0.0, -0.0], dt), n)
    rows = [base, -np.abs(base), np.abs(base), zeros, np.full(n, -0.0, dt),
            np.where(rng.random(n) < 0.1, dt(-1.0), zeros),
            np.where(rng.random(n) < 0.1, dt(1.0), zeros),
            rng.integers(info.min, info.max, n, dtype=ib).view(dt)]
    for a in rows:
        t = tl.asarray(a)
        assert tl.argmax(t).item() == np.argmax(a) and tl.argmin(t).item() == np.argmin(a)
        for f, g, is_max in ((tl.max, np.max, True), (tl.min, np.min, False)):
            got, want = np.asarray(f(t).numpy()), g(a)
            assert (np.isnan(got) and np.isnan(want)) or got == want, (f, a)
            if want == 0 and n <= 1024:  # one block: IEEE maximum / minimum of the zeros
                z = np.signbit(a[a == 0])
                sign = z.all() if is_max else z.any()
                assert np.signbit(got) == sign, (f, a)

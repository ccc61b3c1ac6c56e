"""Random numbers: the Philox4x32-10 stream against its known answer and a NumPy reference,
the element -> counter mapping (bit for bit, incl. Box-Muller normals), generator state, and
the distributions / shapes / errors of rand, randn, randint, uniform_, normal_, random_,
bernoulli, randperm and multinomial."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from tensorlib import random as tlr
from tensorlib.kernels.cpu import random as kr
from helpers import host, to_numpy


def gen(seed=1234):
    return tlr.Generator("cpu").manual_seed(seed)


def lanes32(seed, first_block, n):
    """The 32-bit stream: element i <- block first + i // 4, lane i % 4."""
    nb = -(-n // 4)
    return tlr.philox4x32_10(seed, first_block + np.arange(nb, dtype=np.uint64)).reshape(-1)[:n]


def words64(seed, first_block, n):
    nb = -(-n // 2)
    r = tlr.philox4x32_10(seed, first_block + np.arange(nb, dtype=np.uint64)).astype(np.uint64)
    w = r[:, 0::2] | (r[:, 1::2] << np.uint64(32))
    return w.reshape(-1)[:n]


def ref_normal_f32(seed, first_block, n):
    """NumPy float32 transcription of the Box-Muller definition in tensorlib/random.py."""
    r = lanes32(seed, first_block, -(-n // 4) * 4).astype(np.uint64).reshape(-1, 2)
    a, b = r[:, 0], r[:, 1]
    f32 = np.float32
    u1 = a.astype(f32) * f32(2.0 ** -32) + f32(2.0 ** -33)
    t = u1.view(np.uint32).astype(np.int64) - 0x3F3504F3
    e = t >> 23
    m = ((t & 0x7FFFFF) + 0x3F3504F3).astype(np.uint32).view(f32)
    f = m - f32(1)
    p = f32(kr.LOG1P_COEFFS[-1])
    for c in reversed(kr.LOG1P_COEFFS[:-1]):
        p = p * f + f32(c)
    log = e.astype(f32) * f32(0.6931471805599453) + (f + f * f * p)
    rad = np.sqrt(f32(-2) * log)
    v = (b + np.uint64(1 << 29)) & np.uint64(0xFFFFFFFF)
    q = v >> np.uint64(30)
    rr = ((v & np.uint64(0x3FFFFFFF)).astype(np.int64) - (1 << 29)).astype(f32) * f32(2.0 ** -30)
    r2 = rr * rr
    ps = f32(kr.SIN_COEFFS[-1])
    for c in reversed(kr.SIN_COEFFS[:-1]):
        ps = ps * r2 + f32(c)
    pc = f32(kr.COS_COEFFS[-1])
    for c in reversed(kr.COS_COEFFS[:-1]):
        pc = pc * r2 + f32(c)
    s, c = rr * ps, f32(1) + r2 * pc
    odd = (q & np.uint64(1)) != 0
    x, y = np.where(odd, s, c), np.where(odd, c, s)
    x = np.where(((q + np.uint64(1)) & np.uint64(2)) != 0, -x, x)
    y = np.where((q & np.uint64(2)) != 0, -y, y)
    return np.stack([rad * x, rad * y], axis=1).reshape(-1)[:n]


# ---------------------------------------------------------------- the stream
def test_philox_known_answer():
    # Random123's philox4x32_10 known-answer vector for counter 0, key 0
    assert [int(v) for v in tlr.philox4x32_10(0, [0])[0]] == \
        [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_rand_float32_is_the_documented_stream(n, device):
    # one body on every device: the NumPy Philox reference of tensorlib/random.py, independent
    # of either device's kernels
    g = tlr.Generator(device).manual_seed(2 ** 40 + 17)  # both key words nonzero
    g.set_offset(2 ** 32 - 1)  # the counter crosses into its second word
    got = host(tl.rand((n,), device=device, generator=g), device)
    want = (lanes32(2 ** 40 + 17, 2 ** 32 - 1, n) >> 8).astype(np.float32) * np.float32(2 ** -24)
    np.testing.assert_array_equal(got, want)
    assert g.offset == 2 ** 32 - 1 + -(-n // 4)


def test_rand_float64_uses_the_64_bit_stream():
    g = gen(5)
    got = to_numpy(tl.rand((5,), dtype=tl.float64, generator=g))
    want = (words64(5, 0, 5) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    np.testing.assert_array_equal(got, want)
    assert g.offset == 3


def test_consecutive_calls_continue_the_stream_and_threads_do_not_matter():
    n = 100_000  # above the parallel grain, a multiple of 4
    a = to_numpy(tl.rand((n,), generator=gen(9)))
    g = gen(9)
    parts = [to_numpy(tl.rand((n // 2,), generator=g)) for _ in range(2)]
    np.testing.assert_array_equal(a, np.concatenate(parts))
    np.testing.assert_array_equal(a[-5:], (lanes32(9, 0, n)[-5:] >> 8) * np.float32(2 ** -24))


@pytest.mark.parametrize("n", [3, 4099])
def test_randn_float32_matches_the_definition_bit_for_bit(n):
    got = to_numpy(tl.randn((n,), generator=gen(77)))
    np.testing.assert_array_equal(got.view(np.uint32), ref_normal_f32(77, 0, n).view(np.uint32))


def test_randn_parallel_matches_reference_and_statistics():
    n = 200_003
    x = to_numpy(tl.randn((n,), generator=gen(3)))
    np.testing.assert_array_equal(x[-11:], ref_normal_f32(3, 0, n)[-11:])
    assert abs(x.mean()) < 0.01 and abs(x.std() - 1) < 0.01
    # tails: P(|z| > 3) = 0.0027
    assert abs(np.mean(np.abs(x) > 3) - 0.0027) < 0.0007
    # the float32 log/sin/cos polynomials are within a few ulp of float64 math
    ref = ref_normal_f32(3, 0, 4000).astype(np.float64)
    r = lanes32(3, 0, 4000).astype(np.float64).reshape(-1, 2)
    u1 = np.float32(r[:, 0] * 2.0 ** -32 + 2.0 ** -33).astype(np.float64)
    ang = 2 * np.pi * r[:, 1] / 2 ** 32
    exact = np.stack([np.sqrt(-2 * np.log(u1)) * np.cos(ang),
                      np.sqrt(-2 * np.log(u1)) * np.sin(ang)], 1).reshape(-1)
    assert np.max(np.abs(ref - exact)) < 2e-6


def test_randn_float64_and_half_types():
    x = to_numpy(tl.randn((20_000,), dtype=tl.float64, generator=gen(1)))
    assert x.dtype == np.float64 and abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03
    h = tl.randn((1001,), dtype=tl.float16, generator=gen(77))
    np.testing.assert_array_equal(to_numpy(h), ref_normal_f32(77, 0, 1001).astype(np.float16))


def test_rand_half_types_stay_below_one():
    h = to_numpy(tl.rand((4096,), dtype=tl.float16, generator=gen(0)))
    want = (lanes32(0, 0, 4096) >> 21).astype(np.float16) * np.float16(2 ** -11)
    np.testing.assert_array_equal(h, want)
    assert h.max() < 1 and h.min() >= 0


def test_complex_rand_and_randn():
    z = to_numpy(tl.randn((4000,), dtype=tl.complex64, generator=gen(2)))
    assert z.dtype == np.complex64
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.08
    w = to_numpy(tl.rand((3,), dtype=tl.complex64, generator=gen(2)))
    assert np.all((w.real >= 0) & (w.real < 1) & (w.imag >= 0) & (w.imag < 1))


# ---------------------------------------------------------------- generators
def test_generator_state_round_trip_and_manual_seed():
    g = gen(11)
    tl.rand((10,), generator=g)
    state = g.get_state()
    assert state.dtype is tl.uint8 and state.shape == (16,)
    a = to_numpy(tl.rand((6,), generator=g))
    g.set_state(state)
    np.testing.assert_array_equal(to_numpy(tl.rand((6,), generator=g)), a)
    assert g.initial_seed() == 11
    g.manual_seed(11)
    assert g.offset == 0
    assert g.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    with pytest.raises(ValueError, match="16 bytes"):
        g.set_state(tl.zeros(3, dtype=tl.uint8))
    with pytest.raises(TypeError, match="seed must be an int"):
        g.manual_seed(1.5)


def test_default_generator_and_global_seed():
    tlr.manual_seed(42)
    a = to_numpy(tl.rand((5,)))
    tlr.manual_seed(42)
    np.testing.assert_array_equal(to_numpy(tl.rand((5,))), a)
    np.testing.assert_array_equal(a, to_numpy(tl.rand((5,), generator=gen(42))))
    assert tlr.initial_seed() == 42
    s = tlr.get_rng_state()
    b = to_numpy(tl.rand((5,)))
    tlr.set_rng_state(s)
    np.testing.assert_array_equal(to_numpy(tl.rand((5,))), b)


def test_generator_argument_errors():
    with pytest.raises(TypeError, match="generator"):
        tl.rand((2,), generator=object())
    with pytest.raises(TypeError, match="floating-point"):
        tl.rand((2,), dtype=tl.int32)
    with pytest.raises(ValueError, match="low <= high"):
        tl.zeros(3).uniform_(2.0, 1.0)
    with pytest.raises(ValueError, match="std"):
        tl.zeros(3).normal_(0.0, -1.0)


# ---------------------------------------------------------------- in-place fills
def test_uniform_and_normal_in_place_on_views(device):
    # one body on every device: the view's elements in C order take the documented stream
    base = tl.zeros((6, 8), device=device)
    view = base[:, ::2]
    view.uniform_(-2.0, 3.0, generator=tlr.Generator(device).manual_seed(4))
    b = host(base, device)
    assert np.all(b[:, 1::2] == 0)
    v = b[:, ::2]
    assert np.all((v >= -2) & (v < 3))
    # element i of the view in C order uses stream element i
    want = (lanes32(4, 0, 24) >> 8).astype(np.float32) * np.float32(2 ** -24) * np.float32(5) \
        + np.float32(-2)
    np.testing.assert_array_equal(v.reshape(-1), want)
    t = tl.zeros(50_000, device=device).normal_(10.0, 2.0,
                                                generator=tlr.Generator(device).manual_seed(1))
    x = host(t, device)
    assert abs(x.mean() - 10) < 0.05 and abs(x.std() - 2) < 0.05


# ---------------------------------------------------------------- integers
def test_randint_range_and_mapping():
    x = to_numpy(tl.randint(-3, 7, (2000,), generator=gen(8)))
    assert x.dtype == np.int64 and x.min() == -3 and x.max() == 6
    r = lanes32(8, 0, 2000).astype(np.uint64)
    np.testing.assert_array_equal(x, ((r * np.uint64(10)) >> np.uint64(32)).astype(np.int64) - 3)
    counts = np.bincount(x + 3, minlength=10)
    assert counts.min() > 150


def test_randint_wide_span_uses_64_bit_words():
    lo, hi = -(2 ** 62), 2 ** 62
    x = to_numpy(tl.randint(lo, hi, (9,), generator=gen(8)))
    w = words64(8, 0, 9)
    want = (np.uint64(lo & (2 ** 64 - 1)) + w % np.uint64(hi - lo)).view(np.int64)
    np.testing.assert_array_equal(x, want)
    full = to_numpy(tl.randint(0, 2 ** 64, (5,), dtype=tl.uint64, generator=gen(8)))
    np.testing.assert_array_equal(full, words64(8, 0, 5))


def test_randint_dtype_bounds_and_errors():
    x = to_numpy(tl.randint(0, 256, (500,), dtype=tl.uint8, generator=gen(1)))
    assert x.dtype == np.uint8 and x.max() > 200
    with pytest.raises(ValueError, match="out of the range"):
        tl.randint(0, 257, (3,), dtype=tl.uint8)
    with pytest.raises(ValueError, match="low < high"):
        tl.randint(5, 5, (3,))


def test_random_in_place_defaults():
    t = tl.zeros(1000, dtype=tl.uint8).random_(generator=gen(3))
    x = to_numpy(t)
    assert x.max() > 240
    f = to_numpy(tl.zeros(100).random_(0, 10, generator=gen(3)))
    assert np.all(f == np.floor(f)) and f.min() >= 0 and f.max() <= 9
    b = to_numpy(tl.zeros(100, dtype=tl.bool).random_(generator=gen(3)))
    assert b.dtype == np.bool_ and 20 < b.sum() < 80


# ---------------------------------------------------------------- bernoulli
def test_bernoulli_tensor_and_scalar_probability():
    p = tl.asarray(np.array([[0.0, 1.0, 0.5, 0.25]] * 2000, np.float32))
    x = to_numpy(tl.bernoulli(p, generator=gen(6)))
    assert x.dtype == np.float32
    assert np.all(x[:, 0] == 0) and np.all(x[:, 1] == 1)
    assert abs(x[:, 2].mean() - 0.5) < 0.05 and abs(x[:, 3].mean() - 0.25) < 0.05
    r = lanes32(6, 0, 8000).reshape(2000, 4)
    np.testing.assert_array_equal(x, (r * 2.0 ** -32 < np.array([0, 1, 0.5, 0.25]))
                                  .astype(np.float32))
    y = to_numpy(tl.bernoulli(tl.zeros(4000), 0.3, generator=gen(6)))
    assert abs(y.mean() - 0.3) < 0.03
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        tl.bernoulli(tl.zeros(3), 1.5)


# ---------------------------------------------------------------- randperm
def test_randperm_is_the_argsort_of_64_bit_keys():
    p = to_numpy(tl.randperm(1000, generator=gen(5)))
    assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(1000))
    np.testing.assert_array_equal(p, np.argsort(words64(5, 0, 1000), kind="stable"))
    assert tl.randperm(0).shape == (0,)
    assert to_numpy(tl.randperm(5, dtype=tl.int32, generator=gen(5))).dtype == np.int32


# ---------------------------------------------------------------- multinomial
def test_multinomial_with_replacement():
    w = tl.asarray(np.array([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0]], np.float32))
    s = to_numpy(tl.multinomial(w, 4000, replacement=True, generator=gen(2)))
    assert s.shape == (2, 4000) and s.dtype == np.int64
    assert not np.any(s == 1) and np.all(s[1] == 2)
    assert abs(np.mean(s[0] == 2) - 0.75) < 0.03


def test_multinomial_without_replacement():
    w = tl.asarray(np.array([1.0, 2.0, 0.0, 4.0, 8.0], np.float64))
    s = to_numpy(tl.multinomial(w, 4, generator=gen(3)))
    assert sorted(s.tolist()) == [0, 1, 3, 4]
    firsts = [int(to_numpy(tl.multinomial(w, 1, generator=gen(k)))[0]) for k in range(300)]
    assert np.mean(np.array(firsts) == 4) > 0.4  # weight 8 of 15
    with pytest.raises(ValueError, match="nonzero"):
        tl.multinomial(w, 5)
    with pytest.raises(ValueError, match="negative"):
        tl.multinomial(tl.asarray(np.array([1.0, -1.0])), 1)
    with pytest.raises(ValueError, match="without replacement"):
        tl.multinomial(w, 6)

"""The CUDA (Triton) random kernels on the interpret backend: for the same generator seed and
offset, every random op on device="cuda" gives exactly the bits of the CPU kernels, for every
dtype, with both key words and both counter words in play (offsets crossing 2**32 and wrapping
at 2**64), sizes that are not a multiple of a counter block, empty results, consecutive calls,
in-place fills of views, the CUDA default generators, and the same errors as on the CPU.
A GPU-marked test repeats the bit-equality check with compiled kernels on a real device."""
from __future__ import annotations

import numpy as np
import pytest

import tensorlib as tl
from helpers import ptxas_available
from tensorlib import random as tlr
from tensorlib.runtime.cuda import context


pytestmark = pytest.mark.usefixtures("cuda_interpret")  # conftest.py


def host(t) -> np.ndarray:
    """A tensor's values as NumPy (bfloat16 widened to float32, exactly)."""
    return np.array(t.cpu()._to_host_numpy(), copy=True)


def same_bits(a: np.ndarray, b: np.ndarray):
    assert a.dtype == b.dtype and a.shape == b.shape
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


# (seed, first offset): small; both key words nonzero with the counter crossing into its
# second word; the counter wrapping from 2**64 - 1 to 0
STATES = [(7, 0), (2 ** 40 + 17, 2 ** 32 - 3), ((1 << 64) - 5, (1 << 64) - 2)]


def on_both(fn, seed, offset, shape=(3, 5)):
    """fn(device, generator, shape) on CPU and CUDA from the same generator state; returns both
    results (as NumPy) and checks the generators advanced alike."""
    res, offs = [], []
    for device in ("cpu", "cuda"):
        g = tl.Generator(device).manual_seed(seed)
        g.set_offset(offset)
        t = fn(device, g, shape)
        assert t.device.type == device
        res.append(host(t))
        offs.append(g.offset)
    assert offs[0] == offs[1]
    return res


FLOATS = ["float32", "float16", "bfloat16", "float64"]
INTS = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "bfloat16", "float32", "float64"]


def dt(name):
    return getattr(tl, name)


CASES = (
    [(f"rand-{d}", lambda dev, g, s, d=d: tl.rand(s, dtype=dt(d), device=dev, generator=g))
     for d in FLOATS]
    + [(f"randn-{d}", lambda dev, g, s, d=d: tl.randn(s, dtype=dt(d), device=dev, generator=g))
       for d in FLOATS]
    + [("uniform_-float32", lambda dev, g, s: tl.empty(s, device=dev).uniform_(
        -2.5, 7.0, generator=g)),
       ("normal_-float64", lambda dev, g, s: tl.empty(s, dtype=tl.float64, device=dev).normal_(
           3.0, 0.25, generator=g)),
       ("normal_-bfloat16", lambda dev, g, s: tl.empty(s, dtype=tl.bfloat16, device=dev)
        .normal_(-1.0, 2.0, generator=g))]
    # random_ draws the dtype's whole range: span 2**64 (uint64), 2**63 (int64), <= 2**32
    + [(f"random_-{d}", lambda dev, g, s, d=d: tl.empty(s, dtype=dt(d), device=dev).random_(
        generator=g)) for d in INTS]
    + [("randint-int8", lambda dev, g, s: tl.randint(-100, 27, s, dtype=tl.int8, device=dev,
                                                     generator=g)),
       ("randint-int64-wide", lambda dev, g, s: tl.randint(-2 ** 62, 2 ** 62 + 12345, s,
                                                           device=dev, generator=g)),
       ("randint-int32-2**32", lambda dev, g, s: tl.randint(-2 ** 31, 2 ** 31, s,
                                                            dtype=tl.int32, device=dev,
                                                            generator=g))]
    + [(f"bernoulli-probs-{d}", lambda dev, g, s, d=d: tl.bernoulli(
        tl.linspace(0.0, 1.0, int(np.prod(s)), device=dev).reshape(s).astype(dt(d)),
        generator=g)) for d in FLOATS]
    + [(f"bernoulli-p-{d}", lambda dev, g, s, d=d: tl.bernoulli(
        tl.empty(s, dtype=dt(d), device=dev), 0.375, generator=g))
       for d in ("bool", "int32", "float32")]
)


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_bits_equal_cpu(name, fn):
    for seed, offset in STATES:
        a, b = on_both(fn, seed, offset)
        same_bits(a, b)
    a, b = on_both(fn, 11, 5, shape=(4,))        # exactly one counter block (32-bit stream)
    same_bits(a, b)
    a, b = on_both(fn, 11, 5, shape=(0, 3))      # empty: nothing drawn, offset unchanged
    assert a.shape == b.shape == (0, 3)


def test_larger_sizes_span_several_programs():
    # > one interpreter program (16 K counter blocks) and an odd tail (the CPU takes its
    # parallel path here; float32 only, whose parallel kernels test_random compiles anyway)
    n = 4 * (1 << 14) + 4 * 3 + 3
    for fn in (lambda dev, g, s: tl.randn(s, device=dev, generator=g),
               lambda dev, g, s: tl.rand(s, device=dev, generator=g)):
        a, b = on_both(fn, 99, 2 ** 32 - 7, shape=(n,))
        same_bits(a, b)


# the documented stream (the NumPy Philox reference, not the CPU kernels): one body on every
# device in test_random.py (test_rand_float32_is_the_documented_stream)


def test_complex_and_in_place_views():
    for fn in (lambda dev, g, s: tl.randn(s, dtype=tl.complex64, device=dev, generator=g),
               lambda dev, g, s: tl.rand(s, dtype=tl.complex128, device=dev, generator=g),
               # a transposed view: drawn into a contiguous buffer, then copied in
               lambda dev, g, s: tl.zeros(s, device=dev).T.uniform_(generator=g),
               lambda dev, g, s: tl.zeros((6, 4), dtype=tl.int16, device=dev)[:, 1:3].random_(
                   -3, 40, generator=g)):
        a, b = on_both(fn, 3, 9)
        same_bits(a, b)


def test_multinomial_bits_equal_cpu():
    w = np.array([[1.0, 0.0, 3.0, 0.0, 2.5, 0.0], [0.0, 0.0, 2.0, 0.0, 0.0, 0.0],
                  [0.5, 0.5, 0.0, 1e-300, 7.0, 1.0]])
    for seed, offset in STATES[:2]:
        for probs, k, repl in ((w, 9, True), (w[[0, 2]], 3, False), (w[2], 5, False),
                               (w[0].astype(np.float32), 7, True)):
            a, b = on_both(lambda dev, g, s: tl.multinomial(tl.asarray(probs, device=dev), k,
                                                            replacement=repl, generator=g),
                           seed, offset)
            same_bits(a, b)
    # weights in (0, 1e-300) overflow -log(u) / p to inf: ties broken by index on both
    tiny = np.array([5e-324, 5e-324, 1.0, 5e-324])
    a, b = on_both(lambda dev, g, s: tl.multinomial(tl.asarray(tiny, device=dev), 4,
                                                    generator=g), 1, 0)
    same_bits(a, b)


def test_multinomial_sort_path_bits_equal_cpu(monkeypatch):
    """Without replacement above RANK_MAX_CATEGORIES the keys are argsorted instead of ranked:
    the same samples (ties, including inf keys of zero weights, by index)."""
    from tensorlib.kernels.cuda import random as cuda_random
    monkeypatch.setattr(cuda_random, "RANK_MAX_CATEGORIES", 4)
    w = np.array([[1.0, 0.0, 3.0, 0.0, 2.5, 0.0, 4.0, 1.0, 1.0],
                  [0.5, 0.5, 0.0, 1e-300, 7.0, 1.0, 5e-324, 5e-324, 2.0]])
    for seed, offset in STATES[:2]:
        for probs, k in ((w, 4), (w[1], 7), (w[1], 1)):
            a, b = on_both(lambda dev, g, s: tl.multinomial(tl.asarray(probs, device=dev), k,
                                                            generator=g), seed, offset)
            same_bits(a, b)


def test_randperm_same_permutation():
    # the 64-bit keys (integers kernel, span 2**64) are equal, so is their stable argsort
    for seed, offset in STATES:
        a, b = on_both(lambda dev, g, s: tl.randperm(37, device=dev, generator=g), seed, offset)
        same_bits(a, b)


def test_consecutive_calls_and_default_generators():
    tl.manual_seed(1234)  # seeds the CPU and CUDA default generators
    seq = [lambda dev: tl.rand(5, device=dev), lambda dev: tl.randn((3, 3), device=dev),
           lambda dev: tl.randint(0, 10, (6,), device=dev),
           lambda dev: tl.rand(3, dtype=tl.float64, device=dev),
           lambda dev: tl.bernoulli(tl.full((7,), 0.5, device=dev)),
           lambda dev: tl.randn(2, dtype=tl.float16, device=dev)]
    cpu = [host(f("cpu")) for f in seq]
    cuda = [host(f("cuda")) for f in seq]
    for a, b in zip(cpu, cuda):
        same_bits(a, b)
    gc, gg = tlr.default_generator_for("cpu"), tlr.default_generator_for("cuda")
    assert gg.device.type == "cuda" and gc.offset == gg.offset == 2 + 3 + 2 + 2 + 2 + 1
    # the CUDA default generator's state round-trips like the CPU one's
    state = gg.get_state()
    x = host(tl.randn(5, device="cuda"))
    gg.set_state(state)
    same_bits(host(tl.randn(5, device="cuda")), x)
    assert tl.Generator("cuda").initial_seed() == tlr.DEFAULT_SEED


def errors(fn):
    """(type, message) of what fn raises, on CPU and on CUDA."""
    out = []
    for device in ("cpu", "cuda"):
        with pytest.raises(Exception) as e:
            fn(device)
        out.append((type(e.value), str(e.value)))
    return out


@pytest.mark.parametrize("fn", [
    lambda d: tl.rand(3, dtype=tl.int32, device=d),
    lambda d: tl.randn(3, dtype=tl.bool, device=d),
    lambda d: tl.randint(5, 5, (2,), device=d),
    lambda d: tl.randint(0, 300, (2,), dtype=tl.uint8, device=d),
    lambda d: tl.empty(3, device=d).uniform_(2.0, 1.0),
    lambda d: tl.empty(3, device=d).normal_(0.0, -1.0),
    lambda d: tl.empty(3, dtype=tl.int8, device=d).random_(0, 1000),
    lambda d: tl.bernoulli(tl.zeros(3, device=d), 1.5),
    lambda d: tl.bernoulli(tl.zeros(3, dtype=tl.int32, device=d)),
    lambda d: tl.multinomial(tl.asarray(np.array([1.0, -1.0]), device=d), 1),
    lambda d: tl.multinomial(tl.asarray(np.array([[1.0, 1.0], [0.0, 0.0]]), device=d), 1,
                             replacement=True),
    lambda d: tl.multinomial(tl.asarray(np.array([1.0, 0.0, 2.0]), device=d), 3),
    lambda d: tl.multinomial(tl.asarray(np.array([1.0, 0.0]), device=d), 3),
    lambda d: tl.rand(3, device=d, generator=tl.Generator("cpu" if d == "cuda" else "cuda")),
])
def test_errors_match_cpu(fn):
    (tc, mc), (tg, mg) = errors(fn)
    assert tc is tg and issubclass(tc, (TypeError, ValueError))
    assert mc.replace("cuda:0", "DEV").replace("'cpu'", "'DEV'") == \
        mg.replace("cuda:0", "DEV").replace("'cpu'", "'DEV'")


@pytest.mark.skipif(not ptxas_available(), reason="Triton's ptxas is not available")
def test_float32_normal_ptx_has_no_fma():
    # Bit equality with the CPU on a GPU needs every float32 mul / add rounded separately:
    # with the kernels' launch options the PTX has explicit .rn operations (which ptxas never
    # contracts) and no fma, while Triton's default would fuse them.
    import re
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from tensorlib.kernels.cuda import random as R
    job = next(j for j in R.aot_jobs(quick=True) if j.kernel == "random_normal")
    fn, sig, const, attrs, opts = job.build()
    assert opts["enable_fp_fusion"] is False
    ptx = triton.compile(ASTSource(fn, sig, const, attrs), target=GPUTarget("cuda", 90, 32),
                         options=opts).asm["ptx"]
    assert not re.search(r"\bfma\.", ptx)
    assert len(re.findall(r"\bmul\.rn\.f32", ptx)) >= 40
    assert len(re.findall(r"\badd\.rn\.f32", ptx)) >= 40


@pytest.mark.gpu
def test_compiled_kernels_on_a_real_gpu(monkeypatch):
    """Compiled Triton kernels on a real device: float32 / half / integer / Bernoulli values
    bit for bit; float64 normals within a few ulp (libdevice vs libm log / sin / cos)."""
    monkeypatch.setenv("TENSORLIB_CUDA_BACKEND", "real")
    context.reset()
    try:
        for name, fn in CASES:
            a, b = on_both(fn, 2 ** 40 + 17, 2 ** 32 - 3, shape=(1000, 7))
            if name in ("randn-float64", "normal_-float64"):
                np.testing.assert_array_max_ulp(a, b, maxulp=4)
            else:
                same_bits(a, b)
    finally:
        context.reset()

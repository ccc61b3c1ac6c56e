"""Random number generators: ``tl.Generator`` (counter-based Philox4x32-10), one default
generator per device, ``tl.manual_seed`` & co.

A generator's whole state is ``(seed, offset)``: the seed is the Philox key, the offset counts
128-bit counter blocks already used. Every random op reserves the blocks it needs (advancing the
offset) and its kernel computes element values from ``(seed, first block)`` alone, so results do
not depend on threads, tiling or the device, and any element can be recomputed independently.

The stream definition below is the contract for every backend's kernels (the CUDA/Triton ones
must reproduce it bit for bit). All integer arithmetic is modulo 2**32 unless said otherwise.

Philox4x32-10 (Salmon et al., SC'11; Random123's ``philox4x32_10``)
    key:      k0 = seed & 0xFFFFFFFF, k1 = seed >> 32                (seed: uint64)
    counter:  block b (uint64, wraps mod 2**64) -> c = (b & 0xFFFFFFFF, b >> 32, 0, 0)
    10 rounds of
        hi0:lo0 = 0xD2511F53 * c0        (full 64-bit product of two uint32)
        hi1:lo1 = 0xCD9E8D57 * c2
        c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)
        k0 += 0x9E3779B9; k1 += 0xBB67AE85
    output:   lanes r[0..3] = c
    This is exactly ``triton.language.philox(seed, c0, c1, c2, c3, n_rounds=10)`` (Triton keys
    with (seed lo, seed hi) too) given the counter words above.

Element -> counter mapping (element i = i-th element of the result in C order; ``offset`` =
the first block reserved by the call, see :meth:`Generator._reserve`):
    32-bit stream:  element i uses block offset + i // 4, lane i % 4:      x_i = r[i % 4]
    64-bit stream:  element i uses block offset + i // 2, lanes j = 2*(i % 2) and j + 1:
                    x_i = r[j] | r[j + 1] << 32
    A call producing n elements reserves ceil(n / 4) blocks (32-bit) or ceil(n / 2) (64-bit).

Values (float32 arithmetic is IEEE round-to-nearest with no FMA contraction: in Triton use
``enable_fp_fusion=False`` or libdevice ``mul_rn`` / ``add_rn``; int -> float conversions round
to nearest; sqrt is correctly rounded):
    uniform (rand, uniform_): bits per dtype B = 24 (float32), 11 (float16), 8 (bfloat16) from
        the 32-bit stream: u = (x >> (32 - B)) * 2**-B in [0, 1) (exact in the dtype), then
        value = u * float32(high - low) + float32(low) in float32, rounded once to a half type.
        float64 uses the 64-bit stream: u = (x >> 11) * 2**-53, value = u * (high - low) + low
        in float64.
    normal (randn, normal_), float32 / float16 / bfloat16: 32-bit stream, Box-Muller per lane
        pair. Element i uses block offset + i // 4; its pair is p = (i % 4) // 2, a = r[2p],
        b = r[2p + 1]:
            u1 = float32(a) * 2**-32 + 2**-33                    (in (0, 1])
            R  = sqrt(-2 * log(u1))
            v  = (b + 2**29) mod 2**32; q = v >> 30; t = float32(int(v & 0x3FFFFFFF) - 2**29)
            r  = t * 2**-30 in [-1/2, 1/2); angle = (q + r) * pi/2 (= 2 pi b / 2**32)
            z  = R * cos(angle) for even i, R * sin(angle) for odd i
            value = z * float32(std) + float32(mean)
        with these float32 formulas (Horner(C, x): p = C[-1]; then p = p * x + C[k] for k
        from len(C) - 2 down to 0; the float32 coefficient tuples LOG1P_COEFFS, SIN_COEFFS,
        COS_COEFFS are in kernels/cpu/random.py), reproducible bit for bit where a libm or
        libdevice logf / sinf would differ by an ulp or two:
            log(u1): t = bits(u1) - 0x3F3504F3 (as int), e = t >> 23 (arithmetic),
                     m = float32 with bits (t & 0x7FFFFF) + 0x3F3504F3, f = m - 1,
                     log = float32(e) * float32(ln 2) + (f + f * f * Horner(LOG1P_COEFFS, f))
            r2 = r * r, s = r * Horner(SIN_COEFFS, r2), c = 1 + r2 * Horner(COS_COEFFS, r2)
            (cos, sin)(angle) = (c, s), (-s, c), (-c, -s), (s, -c) for q = 0, 1, 2, 3
    normal float64: element i uses block offset + i // 2 and both 64-bit words of it:
        u1 = ((w0 >> 11) + 1) * 2**-53, angle = 2 pi (w1 >> 11) * 2**-53 (w0 = r0 | r1 << 32,
        w1 = r2 | r3 << 32), z = sqrt(-2 log u1) * (cos, sin)(angle) for (even, odd) i, in
        float64 libm math (equal across devices up to libm's last-bit differences).
    integers in [low, high) (randint, random_): span = high - low. span <= 2**32: 32-bit stream,
        value = low + ((x * span) >> 32) (64-bit product); otherwise the 64-bit stream,
        value = low + x mod span (computed mod 2**64, then converted to the dtype).
    bernoulli: 32-bit stream, value = 1 if x * 2**-32 < p (in float64) else 0.
    randperm(n): 64-bit stream keys x_0..x_{n-1}; the permutation is the stable ascending
        argsort of the keys (ties keep index order).
    multinomial (probability rows of ncat categories, float64 math): 64-bit stream,
        u = (x >> 11) * 2**-53. With replacement, sample k of row r uses element
        r * num_samples + k and picks the first category whose running sum exceeds
        u * row_sum. Without replacement, category j of row r uses element r * ncat + j for
        the key -log(((x >> 11) + 1) * 2**-53) / p_j; the samples are the categories with the
        smallest keys, in ascending key order (ties by index).
"""
from __future__ import annotations

import operator
import os
import threading

import numpy as np

from .device import CPU, Device

__all__ = ["Generator", "default_generator", "default_generator_for", "manual_seed", "seed",
           "initial_seed", "get_rng_state", "set_rng_state", "philox4x32_10", "DEFAULT_SEED"]

DEFAULT_SEED = 67280421310721  # PyTorch's default seed, so fresh generators start alike
_U64 = (1 << 64) - 1
_STATE_BYTES = 16  # seed (uint64 LE) then offset (uint64 LE)

PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85


def _check_seed(value, op) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}(): seed must be an int, got {type(value).__name__} ({value!r})")
    value = int(value)
    # PyTorch's accepted range: negative seeds are taken modulo 2**64.
    if not -(1 << 63) <= value <= _U64:
        raise ValueError(f"{op}(): seed must be in [-2**63, 2**64 - 1], got {value}")
    return value & _U64


def _resolve_device(device, op) -> Device:
    from .allocation import resolve_device as resolve
    return resolve(device, op)


class Generator:
    """A counter-based Philox4x32-10 generator for one device (state: seed and offset).

    ``Generator(device='cpu')``; ``manual_seed(s)`` sets the seed and resets the offset to 0;
    ``get_state()`` / ``set_state()`` save and restore (seed, offset) as a 16-byte uint8 CPU
    tensor. Safe to share between threads: each op reserves its counter blocks atomically.
    """

    __slots__ = ("_device", "_seed", "_offset", "_lock", "__weakref__")

    def __init__(self, device=None):
        self._device = _resolve_device(device, "Generator")
        self._seed = DEFAULT_SEED
        self._offset = 0
        self._lock = threading.Lock()

    @property
    def device(self) -> Device:
        return self._device

    def manual_seed(self, seed) -> "Generator":
        s = _check_seed(seed, "manual_seed")
        with self._lock:
            self._seed = s
            self._offset = 0
        return self

    def seed(self) -> int:
        """Seeds from the OS's entropy source; returns the seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    @property
    def offset(self) -> int:
        """Counter blocks (128 bits each) used since the last seeding."""
        return self._offset

    def get_offset(self) -> int:
        return self._offset

    def set_offset(self, offset) -> "Generator":
        off = operator.index(offset)
        if not 0 <= off <= _U64:
            raise ValueError(f"set_offset(): offset must be in [0, 2**64 - 1], got {off}")
        with self._lock:
            self._offset = off
        return self

    def __reduce__(self):
        # State is (device, seed, offset); the lock is per process and is made anew.
        with self._lock:
            return _rebuild_generator, (str(self._device), self._seed, self._offset)

    def get_state(self):
        """(seed, offset) as a uint8 CPU tensor of 16 bytes (little-endian uint64 each)."""
        from .ops.creation import from_numpy
        with self._lock:
            raw = np.array([self._seed, self._offset], dtype="<u8").view(np.uint8)
        return from_numpy(raw.copy())

    def set_state(self, state) -> "Generator":
        raw = _state_bytes(state)
        seed, offset = (int(v) for v in raw.view("<u8"))
        with self._lock:
            self._seed, self._offset = seed, offset
        return self

    def _reserve(self, nblocks: int) -> tuple:
        """Atomically takes ``nblocks`` counter blocks; returns (seed, first block)."""
        with self._lock:
            first = self._offset
            self._offset = (first + nblocks) & _U64
            return self._seed, first

    def __repr__(self):
        return f"<tensorlib.Generator device='{self._device}' seed={self._seed} " \
               f"offset={self._offset}>"


def _state_bytes(state) -> np.ndarray:
    from .tensor import Tensor
    if isinstance(state, Tensor):
        if state.dtype.name != "uint8":
            raise TypeError(f"set_state(): the state must be a uint8 tensor, got {state.dtype}")
        raw = np.ascontiguousarray(state._to_host_numpy()).reshape(-1)
    elif isinstance(state, (bytes, bytearray)):
        raw = np.frombuffer(bytes(state), dtype=np.uint8)
    else:
        raise TypeError(f"set_state(): expected a uint8 Tensor or bytes, got "
                        f"{type(state).__name__}")
    if raw.size != _STATE_BYTES:
        raise ValueError(f"set_state(): the state must have {_STATE_BYTES} bytes (seed and "
                         f"offset), got {raw.size}")
    return raw


# ---------------------------------------------------------------- default generators
_defaults: dict = {}
_defaults_lock = threading.Lock()


def _rebuild_generator(device, seed, offset) -> Generator:
    """Unpickles a Generator: same device, seed and offset, so it continues the same stream."""
    g = Generator(device)
    g._seed = _check_seed(seed, "_rebuild_generator")
    return g.set_offset(offset)
_base_seed = DEFAULT_SEED  # what default generators created later start from


def default_generator_for(device=None) -> Generator:
    """The default generator of ``device`` (created on first use)."""
    dev = device if type(device) is Device and (device.index is not None or device.type == "cpu") \
        else _resolve_device(device, "default_generator")
    gen = _defaults.get(dev)
    if gen is None:
        with _defaults_lock:
            gen = _defaults.get(dev)
            if gen is None:
                gen = Generator(dev)
                gen.manual_seed(_base_seed)
                _defaults[dev] = gen
    return gen


default_generator = default_generator_for(CPU)


def manual_seed(seed) -> Generator:
    """Seeds the default generators of every device (those created later too); returns the
    CPU one."""
    global _base_seed
    s = _check_seed(seed, "manual_seed")
    with _defaults_lock:
        _base_seed = s
        gens = list(_defaults.values())
    for g in gens:
        g.manual_seed(s)
    return default_generator


def seed() -> int:
    """Seeds every default generator from the OS's entropy source; returns the seed."""
    s = int.from_bytes(os.urandom(8), "little")
    manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)


def generator_for(generator, device, op) -> Generator:
    """The generator an op uses: ``generator`` (checked to be on ``device``) or the device's
    default one."""
    if generator is None:
        return default_generator_for(device)
    if not isinstance(generator, Generator):
        raise TypeError(f"{op}(): argument 'generator' must be a tensorlib.Generator, got "
                        f"{type(generator).__name__}")
    if generator.device.type != device.type or (
            device.index is not None and generator.device.index != device.index):
        raise ValueError(f"{op}(): the generator is on '{generator.device}' but the result is "
                         f"on '{device}'")
    return generator


# ---------------------------------------------------------------- reference implementation
def philox4x32_10(seed: int, blocks) -> np.ndarray:
    """NumPy reference of the stream: the 4 uint32 lanes of each counter block, shape
    (len(blocks), 4). Slow; for tests and for checking other backends' kernels."""
    mask = np.uint64(0xFFFFFFFF)
    b = np.asarray(blocks, dtype=np.uint64).reshape(-1)
    c0, c1 = b & mask, b >> np.uint64(32)
    c2 = np.zeros_like(b)
    c3 = np.zeros_like(b)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    m0, m1 = np.uint64(PHILOX_M0), np.uint64(PHILOX_M1)
    for _ in range(10):
        p0 = m0 * c0
        p1 = m1 * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & mask,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & mask)
        k0 = (k0 + np.uint64(PHILOX_W0)) & mask
        k1 = (k1 + np.uint64(PHILOX_W1)) & mask
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


def blocks_needed(n: int, per_block: int) -> int:
    """Counter blocks a call producing ``n`` elements reserves (4 per block on the 32-bit
    stream, 2 on the 64-bit one)."""
    return -(-n // per_block)

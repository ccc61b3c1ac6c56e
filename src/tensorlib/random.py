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
           "initial_seed", "get_rng_state", "set_rng_state", "philox4x32_10", "DEFAULT_SEED",
           "RNG", "default_rng"]

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


# ---------------------------------------------------------------- NumPy's Generator names
def _size(size, op):
    """NumPy's ``size``: None (one value, returned as a 0-d tensor), an int or a tuple."""
    if size is None:
        return ()
    if isinstance(size, (tuple, list)):
        try:
            return tuple(operator.index(n) for n in size)
        except TypeError:
            pass
    else:
        try:
            return (operator.index(size),)
        except TypeError:
            pass
    raise TypeError(f"{op}(): argument 'size' must be None, an int or a tuple of ints, got "
                    f"{size!r:.60}")


def _real_scalar(v, op, arg) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}(): argument '{arg}' must be a real number (tensor-valued "
                        f"parameters are not supported), got {type(v).__name__} ({v!r:.60})")
    return float(v)


class RNG:
    """``tl.random.default_rng(seed)``: NumPy's ``Generator`` method names on tensorlib's
    Philox4x32-10 streams. Results are tensors on the generator's device (``size=None``
    gives a 0-d tensor); float methods default to float64 and ``integers`` to int64, as in
    NumPy. The values are tensorlib's streams (see the module docstring), not NumPy's: the
    same seed gives the same tensors on every device, not NumPy's numbers."""

    __slots__ = ("generator",)

    def __init__(self, generator: Generator):
        self.generator = generator

    @property
    def device(self) -> Device:
        return self.generator.device

    def __repr__(self):
        return f"RNG(Philox4x32-10, device='{self.device}', seed={self.generator.initial_seed()})"

    def _empty(self, size, dtype, op):
        from .allocation import empty
        from .dtypes import to_dtype
        return empty(_size(size, op), dtype=to_dtype(dtype, op=op), device=self.device)

    def _float(self, size, dtype, op):
        t = self._empty(size, dtype, op)
        if t.dtype.kind != "f":
            raise TypeError(f"{op}(): argument 'dtype' must be a real floating dtype, got "
                            f"{t.dtype}")
        return t

    def _out(self, out, size, op):
        """NumPy's ``out=``: a floating tensor to fill (``size``, if given, must be its shape)."""
        from .tensor import Tensor
        if not isinstance(out, Tensor) or out.dtype.kind != "f":
            raise TypeError(f"{op}(): argument 'out' must be a real floating tensor, got "
                            f"{getattr(out, 'dtype', type(out).__name__)}")
        if size is not None and _size(size, op) != tuple(out.shape):
            raise ValueError(f"{op}(): argument 'size' {size} does not match the shape of "
                             f"'out' {tuple(out.shape)}")
        return out

    def random(self, size=None, dtype="float64", out=None):
        """Uniform floats in [0, 1) (written into ``out`` when given, as NumPy's)."""
        t = self._float(size, dtype, "random") if out is None else self._out(out, size, "random")
        return t.uniform_(0.0, 1.0, generator=self.generator)

    def uniform(self, low=0.0, high=1.0, size=None, dtype="float64"):
        """Uniform floats in [low, high)."""
        lo, hi = _real_scalar(low, "uniform", "low"), _real_scalar(high, "uniform", "high")
        return self._float(size, dtype, "uniform").uniform_(lo, hi, generator=self.generator)

    def standard_normal(self, size=None, dtype="float64", out=None):
        t = self._float(size, dtype, "standard_normal") if out is None else \
            self._out(out, size, "standard_normal")
        return t.normal_(0.0, 1.0, generator=self.generator)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype="float64"):
        mean = _real_scalar(loc, "normal", "loc")
        std = _real_scalar(scale, "normal", "scale")
        return self._float(size, dtype, "normal").normal_(mean, std, generator=self.generator)

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False):
        """Integers in [low, high) ([low, high] with ``endpoint``); one bound means [0, low)."""
        op = "integers"
        try:
            lo, hi = operator.index(low), None if high is None else operator.index(high)
        except TypeError:
            raise TypeError(f"{op}(): arguments 'low' and 'high' must be ints (tensor-valued "
                            f"bounds are not supported), got {low!r:.40} and {high!r:.40}") \
                from None
        if hi is None:
            lo, hi = 0, lo
        if endpoint:
            hi += 1
        if not lo < hi:
            raise ValueError(f"{op}(): low must be < high{' + 1' if endpoint else ''}, got "
                             f"low={low}, high={high}")
        t = self._empty(size, dtype, op)
        if t.dtype.kind not in "iu":
            raise TypeError(f"{op}(): argument 'dtype' must be an integer dtype, got {t.dtype}")
        return t.random_(lo, hi, generator=self.generator)

    def permutation(self, x, axis=0):
        """A permuted range (``x`` an int) or a permuted copy of a tensor along ``axis``."""
        from .ops.random_ops import randperm
        from .tensor import Tensor
        if isinstance(x, Tensor):
            if x.ndim == 0:
                raise ValueError("permutation(): argument 'x' must be an int or a tensor of at "
                                 "least 1 dimension, got a 0-d tensor")
            ax = axis + x.ndim if -x.ndim <= axis < 0 else axis
            if not 0 <= ax < x.ndim:
                raise ValueError(f"permutation(): axis {axis} is out of range for a "
                                 f"{x.ndim}-d tensor")
            perm = randperm(x.shape[ax], device=x.device, generator=self._on(x.device))
            return x.take(perm, axis=ax)
        try:
            n = operator.index(x)
        except TypeError:
            raise TypeError(f"permutation(): argument 'x' must be an int or a Tensor, got "
                            f"{type(x).__name__}") from None
        return randperm(n, device=self.device, generator=self.generator)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """Samples of ``a`` (an int n means range(n); a tensor: along ``axis``), uniformly or
        with probabilities ``p``; without ``replace`` they are distinct."""
        from .ops.creation import arange
        from .ops.random_ops import multinomial, randperm
        from .tensor import Tensor
        op = "choice"
        if isinstance(a, Tensor):
            if a.ndim == 0:
                raise ValueError(f"{op}(): argument 'a' must be an int or a tensor of at least "
                                 f"1 dimension, got a 0-d tensor")
            n = a.shape[axis]
        else:
            try:
                n = operator.index(a)
            except TypeError:
                raise TypeError(f"{op}(): argument 'a' must be an int or a Tensor, got "
                                f"{type(a).__name__}") from None
            if n < 0:
                raise ValueError(f"{op}(): argument 'a' must be non-negative, got {n}")
        shape = _size(size, op)
        k = 1
        for d in shape:
            k *= d
        if n == 0 and k:
            raise ValueError(f"{op}(): can't take samples from an empty population")
        if not replace and k > n:
            raise ValueError(f"{op}(): can't take {k} samples without replacement from "
                             f"{n} values")
        if p is not None:
            if not isinstance(p, Tensor):
                from .ops.creation import asarray
                p = asarray(np.asarray(p, dtype=np.float64), device=self.device)
            if p.shape != (n,):
                raise ValueError(f"{op}(): argument 'p' must have shape ({n},), got {p.shape}")
            idx = multinomial(p, k, bool(replace), generator=self.generator) if k else \
                arange(0, dtype=_int64(), device=self.device)
        elif replace:
            idx = self.integers(0, max(n, 1), size=(k,)) if k else \
                arange(0, dtype=_int64(), device=self.device)
        else:
            idx = randperm(n, device=self.device, generator=self.generator)[:k]
        if not isinstance(a, Tensor):
            return idx.reshape(shape)
        taken = a.take(idx, axis=axis)
        ax = axis % a.ndim
        return taken.reshape(a.shape[:ax] + shape + a.shape[ax + 1:])

    def _on(self, device):
        if device != self.device:
            raise ValueError(f"permutation(): the generator is on '{self.device}' but the "
                             f"tensor is on '{device}'")
        return self.generator


def _int64():
    from .dtypes import int64
    return int64


def default_rng(seed=None, *, device=None) -> RNG:
    """A new generator with NumPy's method names (``random``, ``standard_normal``,
    ``integers``, ``uniform``, ``normal``, ``choice``, ``permutation``) on a fresh Philox
    stream: seeded with ``seed`` (an int), from the OS's entropy when None; an ``RNG`` or a
    ``tl.Generator`` is used as it is."""
    if isinstance(seed, RNG):
        return seed
    if isinstance(seed, Generator):
        return RNG(seed)
    g = Generator(device)
    if seed is None:
        g.seed()
    else:
        g.manual_seed(_check_seed(seed, "default_rng"))
    return RNG(g)


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

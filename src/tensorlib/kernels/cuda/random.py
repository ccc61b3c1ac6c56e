"""Triton CUDA kernels for random numbers: the Philox4x32-10 streams of tensorlib/random.py,
bit for bit the values of the CPU kernels (kernels/cpu/random.py) for the same (seed, offset).

Stub kernels (same signatures as the CPU ones; ``out`` contiguous on a CUDA device):
    uniform_kernel(out, seed, block, low, high)
    normal_kernel(out, seed, block, mean, std)
    integers_kernel(out, seed, block, low, span)       # values in [low, low + span)
    bernoulli_kernel(out, probs_or_None, p, seed, block)
    multinomial_kernel(out, probs, num_samples, replacement, seed, block)

Fill kernels: one lane per 128-bit counter block, which gives 4 values (32-bit stream) or 2
(64-bit stream) stored at element ``lane * PER + k``, so no lane computes Philox twice. Philox
itself is uint32 arithmetic: ``tl.umulhi`` for the high word of the 32x32 product, wrapping
``*`` / ``+`` for the low word and the key schedule. The 64-bit counter is ``first block + lane``
in uint64, split into its two words. Scalar arguments travel as int32 bit words (as with
launch.pack_scalar) so Triton never retypes a Python float or a big int.

Exactness. Every float32 formula of the contract (uniform, the Box-Muller normals with their
fixed polynomials) is a sequence of individually rounded IEEE mul / add / sqrt_rn, which
Numba (no fastmath) evaluates without FMA contraction. Kernels launch with
``enable_fp_fusion=False``: Triton then tells LLVM not to fuse and passes ``--fmad=false`` to
ptxas, so a*b+c stays two rounded operations on the GPU too (the PTX has explicit mul.rn /
add.rn and no fma, checked by tests/kernels/cuda/test_cuda_random.py; only libdevice's float64
log / sin / cos below use fma internally, as designed). int -> float conversions are
round-to-nearest on both sides. The interpreter evaluates the same operations in NumPy
float32 / float64, equally unfused.

float64 normals (and multinomial's float64 log keys) use log / sin / cos. The CPU calls libm
(glibc); in interpret mode these kernels call Python's ``math`` functions, the same libm, so
results are equal bit for bit. On a real GPU they are libdevice's, which are within 1-2 ulp
but not guaranteed equal to glibc's: float64 normals can then differ from the CPU in the last
bit or two (not verified on a GPU yet), and a multinomial draw without replacement could differ
where two keys are within an ulp. Everything else is exact on a GPU as well.

Multinomial: one program per row walks the categories in order (the running sums must be
added in the CPU's order to be bit-equal), writing the cumulative sums, the last nonzero
category at or before each index and a status code; samples with replacement then binary
search the sums; without replacement the keys -log(u)/p go to a scratch buffer and each
category's stable rank among them (ties by index) places it in the result when it is below
num_samples. Bad rows raise the CPU's ValueError after a synchronize. Costs on a GPU: the
per-row walk is serial (ncat dependent loads); ranking is O(ncat**2) per row, so above
``RANK_MAX_CATEGORIES`` the rows of keys are argsorted instead (the stable sort of sorting.py
gives the same ties-by-index order) and the first num_samples indices copied out.
"""
from __future__ import annotations

import math

import numpy as np

from ... import dtypes as _dt
from . import launch as _launch
from .pointwise_source import cast_code, load_code, store_code

__all__ = ["uniform_kernel", "normal_kernel", "integers_kernel", "bernoulli_kernel",
           "multinomial_kernel", "kernel_source", "aot_jobs", "INTERP_LIBM"]

# Counter blocks per program and warps on a GPU: 2 blocks (8 float32 values) per thread keeps
# the 10 Philox rounds and the Box-Muller polynomials in registers.
GPU_BLOCK, GPU_WARPS = 256, 4
# No FMA contraction (see the module docstring); aot.py's jobs and the tests use the same.
LAUNCH_OPTIONS = {"enable_fp_fusion": False}
INTERPRET_MAX_BLOCK = 1 << 14   # interpreter: few, wide programs
_I32_MAX = 2 ** 31 - 1
_UNIFORM_BITS = {"float32": 24, "float16": 11, "bfloat16": 8}


def _f32(x) -> str:
    """A float32 constant as a Python literal that is exactly that float32 (Triton then
    materialises it without a rounding of its own)."""
    return repr(float(np.float32(x)))


def _coeffs():
    from ..cpu.random import COS_COEFFS, LOG1P_COEFFS, SIN_COEFFS  # the contract's constants
    return LOG1P_COEFFS, SIN_COEFFS, COS_COEFFS


def _horner(name, coeffs, var):
    lines = [f"    {name} = tl.full({var}.shape, {_f32(coeffs[-1])}, tl.float32)"]
    for c in reversed(coeffs[:-1]):
        lines.append(f"    {name} = {name} * {var} + {_f32(c)}")
    return "\n".join(lines)


# ---- generated sources -------------------------------------------------------------------------
_COMMON = """\
@jit
def philox10(k0, k1, c0, c1):
    # Philox4x32-10 on counter (c0, c1, 0, 0), key (k0, k1); uint32 words, products wrap
    c2 = tl.full(c0.shape, 0, tl.uint32)
    c3 = c2
    for _ in tl.static_range(10):
        hi0 = tl.umulhi(c0, 0xD2511F53)
        lo0 = c0 * 0xD2511F53
        hi1 = tl.umulhi(c2, 0xCD9E8D57)
        lo1 = c2 * 0xCD9E8D57
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0 = k0 + 0x9E3779B9
        k1 = k1 + 0xBB67AE85
    return c0, c1, c2, c3


@jit
def stream(k0w, k1w, b_lo, b_hi, j):
    # the 4 lanes of counter block (first block + j), j >= 0
    blk = join64(b_lo, b_hi).to(tl.uint64, bitcast=True) + j.to(tl.uint64)
    return philox10(k0w.to(tl.uint32, bitcast=True), k1w.to(tl.uint32, bitcast=True),
                    blk.to(tl.uint32), (blk >> 32).to(tl.uint32))


@jit
def word64(lo, hi):
    return lo.to(tl.uint64) | (hi.to(tl.uint64) << 32)


@jit
def logf_poly(x):
    # float32 log of a positive normal x (tensorlib/random.py): x = 2**e * m, m in
    # [sqrt(1/2), sqrt(2)), log = e ln2 + log1p(m - 1) by the fixed polynomial
    t = x.to(tl.int32, bitcast=True) - 0x3F3504F3
    e = t >> 23
    m = ((t & 0x7FFFFF) + 0x3F3504F3).to(tl.float32, bitcast=True)
    f = m - 1.0
@LOGPOLY
    return e.to(tl.float32) * @LN2 + (f + f * f * p)


@jit
def boxmuller(a, b):
    # (R cos, R sin) of the lane pair (a, b), float32, as the CPU kernel computes it
    u1 = a.to(tl.float32) * 2.3283064365386963e-10 + 1.1641532182693481e-10
    rad = tl.sqrt_rn(-2.0 * logf_poly(u1))
    v = b + 0x20000000
    q = v >> 30
    r = ((v & 0x3FFFFFFF).to(tl.int32) - 0x20000000).to(tl.float32) * 9.313225746154785e-10
    r2 = r * r
@SINPOLY
@COSPOLY
    s = r * ps
    c = 1.0 + r2 * pc
    odd = (q & 1) != 0
    x = tl.where(odd, s, c)
    y = tl.where(odd, c, s)
    cneg = ((q + 1) & 2) != 0
    sneg = (q & 2) != 0
    return rad * tl.where(cneg, -x, x), rad * tl.where(sneg, -y, y)

"""



def _common_source():
    """The helpers with the contract's float32 constants filled in."""
    log_c, sin_c, cos_c = _coeffs()
    return (_COMMON.replace("@LOGPOLY", _horner("p", log_c, "f"))
            .replace("@SINPOLY", _horner("ps", sin_c, "r2"))
            .replace("@COSPOLY", _horner("pc", cos_c, "r2"))
            .replace("@LN2", _f32(math.log(2.0))))


_FILL = """

@jit(do_not_specialize=["k0w", "k1w", "b_lo", "b_hi", "a_lo", "a_hi", "c_lo", "c_hi"])
def kernel(p_out, @PROBS n, k0w, k1w, b_lo, b_hi, a_lo, a_hi, c_lo, c_hi, BLOCK: tl.constexpr,
           IDX64: tl.constexpr):
    pid = tl.program_id(0)
    if IDX64:
        j = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    else:
        j = pid * BLOCK + tl.arange(0, BLOCK)
    r0, r1, r2, r3 = stream(k0w, k1w, b_lo, b_hi, j)
    i = j * @PER
@BODY
"""


def _four_lanes(per_value, per_lane_setup=""):
    """Kernel body storing ``per_value(r, k)`` (the value expression of lane word ``r`` = rk)
    at element i + k, k = 0..3, after ``per_lane_setup``."""
    lines = [per_lane_setup] if per_lane_setup else []
    for k in range(4):
        lines.append(f"    tl.store(p_out + i + {k}, {per_value(f'r{k}', k)}, mask=i + {k} < n)")
    return "\n".join(lines)


def kernel_source(kind: str, dtype, extra=None) -> str:
    """(source, values per counter block) of one fill kernel: ``kind`` in uniform / normal /
    integers (``extra``: 'narrow' (32-bit stream), 'wide' (64-bit, value mod span) or 'full'
    (span 2**64)) / bernoulli (``extra``: the probabilities' dtype, or None for a scalar p)."""
    probs = ""
    f64 = dtype is _dt.float64
    if kind == "uniform" and f64:
        per = 2
        body = ("    a = join64(a_lo, a_hi).to(tl.float64, bitcast=True)\n"
                "    b = join64(c_lo, c_hi).to(tl.float64, bitcast=True)\n"
                "    u0 = (word64(r0, r1) >> 11).to(tl.float64) * 1.1102230246251565e-16\n"
                "    u1 = (word64(r2, r3) >> 11).to(tl.float64) * 1.1102230246251565e-16\n"
                "    tl.store(p_out + i, u0 * a + b, mask=i < n)\n"
                "    tl.store(p_out + i + 1, u1 * a + b, mask=i + 1 < n)")
    elif kind == "uniform":
        per = 4
        bits = _UNIFORM_BITS[dtype.name]
        setup = ("    a = a_lo.to(tl.float32, bitcast=True)\n"
                 "    b = c_lo.to(tl.float32, bitcast=True)")
        body = _four_lanes(lambda r, k: store_code(
            dtype, f"({r} >> {32 - bits}).to(tl.float32) * {_f32(2.0 ** -bits)} * a + b"), setup)
    elif kind == "normal" and f64:
        per = 2
        body = ("    a = join64(a_lo, a_hi).to(tl.float64, bitcast=True)\n"
                "    b = join64(c_lo, c_hi).to(tl.float64, bitcast=True)\n"
                "    u1 = ((word64(r0, r1) >> 11) + 1).to(tl.float64) * 1.1102230246251565e-16\n"
                "    ang = 6.283185307179586 * ((word64(r2, r3) >> 11).to(tl.float64)"
                " * 1.1102230246251565e-16)\n"
                "    rad = tl.sqrt(-2.0 * libm.log(u1))\n"
                "    tl.store(p_out + i, rad * libm.cos(ang) * a + b, mask=i < n)\n"
                "    tl.store(p_out + i + 1, rad * libm.sin(ang) * a + b, mask=i + 1 < n)")
    elif kind == "normal":
        per = 4
        setup = ("    a = a_lo.to(tl.float32, bitcast=True)\n"
                 "    b = c_lo.to(tl.float32, bitcast=True)\n"
                 "    z0, z1 = boxmuller(r0, r1)\n"
                 "    z2, z3 = boxmuller(r2, r3)")
        body = _four_lanes(lambda r, k: store_code(dtype, f"z{k} * a + b"), setup)
    elif kind == "integers":
        # value = low + offset computed mod 2**64, read as int64 (uint64 outputs: as is)
        def conv(v):
            if dtype is _dt.uint64:
                return v
            return store_code(dtype, cast_code(_dt.int64, dtype,
                                               f"({v}).to(tl.int64, bitcast=True)"))
        setup = ("    lo = join64(a_lo, a_hi).to(tl.uint64, bitcast=True)\n"
                 "    span = join64(c_lo, c_hi).to(tl.uint64, bitcast=True)")
        if extra == "narrow":
            per = 4
            body = _four_lanes(lambda r, k: conv(f"lo + (({r}.to(tl.uint64) * span) >> 32)"),
                              setup)
        else:
            per = 2
            mod = "w{k}" if extra == "full" else "w{k} % span"
            lines = [setup, "    w0 = word64(r0, r1)", "    w1 = word64(r2, r3)"]
            for k in range(2):
                lines.append(f"    tl.store(p_out + i + {k}, "
                             f"{conv('lo + ' + mod.format(k=k))}, mask=i + {k} < n)")
            body = "\n".join(lines)
    elif kind == "bernoulli":
        per = 4
        if extra is None:
            setup = "    p = join64(a_lo, a_hi).to(tl.float64, bitcast=True)"
            prob = lambda k: "p"  # noqa: E731
        else:
            probs = "p_probs, "
            setup = ""
            prob = lambda k: cast_code(extra, _dt.float64, load_code(  # noqa: E731
                extra, f"tl.load(p_probs + i + {k}, mask=i + {k} < n)"))
        body = _four_lanes(lambda r, k: store_code(dtype, cast_code(
            _dt.bool_, dtype, f"({r}.to(tl.float64) * 2.3283064365386963e-10 < {prob(k)})")),
            setup)
    else:
        raise ValueError(f"random kernel_source(): unknown kind {kind!r}")
    what = f"{kind} {dtype.name}" + (f" {extra if isinstance(extra, str) else extra.name}"
                                     if extra is not None else "")
    return (f"# Generated by tensorlib.kernels.cuda.random: {what}\n"
            + _common_source() + _FILL.replace("@PROBS ", probs).replace("@PER", str(per))
            .replace("@BODY", body)), per


_LIBM = {"compiled": "from triton.language.extra.cuda import libdevice as libm\n",
         "interpret": "from tensorlib.kernels.cuda.random import INTERP_LIBM as libm\n"}


class _InterpLibm:
    """float64 log / sin / cos for interpreted kernels: Python's math module, i.e. the libm
    the Numba CPU kernels call (NumPy's own SIMD log / sin / cos differ in the last bit)."""

    def __init__(self):
        from ._interp_libdevice import _wrap
        for name in ("log", "sin", "cos"):
            fn = np.vectorize(getattr(math, name), otypes=[np.float64])
            setattr(self, name, _wrap(fn))


INTERP_LIBM = _InterpLibm()

def _kernel(kind, dtype, extra, mode):
    """(JITFunction, values per counter block) for one fill kernel, memoised."""
    def source():
        src, per = kernel_source(kind, dtype, extra)
        return f"{_LIBM[mode]}{src}\nVALUES_PER_BLOCK = {per}\n"

    mod = _launch.cached_module((dtype, extra), f"rand_{kind}", source, mode)
    return mod.kernel, mod.VALUES_PER_BLOCK


# ---- launching ---------------------------------------------------------------------------------
def _words(value: int):
    """A 64-bit pattern as two signed int32 words (lo, hi)."""
    value &= (1 << 64) - 1
    lo, hi = value & 0xFFFFFFFF, value >> 32
    return ((lo ^ 0x80000000) - 0x80000000), ((hi ^ 0x80000000) - 0x80000000)


def _f64_words(x):
    return _words(int(np.float64(x).view(np.uint64)))


def _f32_word(x):
    return _words(int(np.float32(x).view(np.uint32)))[0]


def _check_out(out, op):
    assert out.is_contiguous() and out.device.type == "cuda", f"{op}: contiguous CUDA output"


def _arg(t, dtype=None):
    return _launch.arg_for(t._storage.data_ptr(), dtype or t._dtype, t._offset)


def _fill(kind, extra, out, seed, block, a_words, c_words, probs=None):
    n = out._numel
    mode = _launch.current_mode()
    kernel, per = _kernel(kind, out._dtype, extra, mode)
    lanes = -(-n // per)
    if mode == "interpret":
        bsize, warps = min(_launch.next_pow2(lanes), INTERPRET_MAX_BLOCK), 4
    else:
        bsize, warps = GPU_BLOCK, GPU_WARPS
    # last program's lanes index up to (lanes rounded up to bsize) * per
    idx64 = (_launch.cdiv(lanes, bsize) * bsize + 1) * per > _I32_MAX
    args = [_arg(out)] + ([_arg(probs)] if probs is not None else [])
    # the key words (k0, k1) are the seed's (lo, hi) words
    args += [n, *_words(seed), *_words(block), *a_words, *c_words]
    _launch.launch(kernel, (_launch.cdiv(lanes, bsize),), args, out.device.index, BLOCK=bsize,
                   IDX64=idx64, num_warps=warps, **LAUNCH_OPTIONS)


def uniform_kernel(out, seed, block, low, high):
    """out (contiguous, real floating) <- low + (high - low) * U[0, 1)."""
    _check_out(out, "uniform")
    if out._numel == 0:
        return
    if out._dtype is _dt.float64:
        a, c = _f64_words(float(high) - float(low)), _f64_words(float(low))
    else:
        a, c = (_f32_word(float(high) - float(low)), 0), (_f32_word(low), 0)
    _fill("uniform", None, out, seed, block, a, c)


def normal_kernel(out, seed, block, mean, std):
    """out (contiguous, real floating) <- mean + std * N(0, 1) (Box-Muller)."""
    _check_out(out, "normal")
    if out._numel == 0:
        return
    if out._dtype is _dt.float64:
        a, c = _f64_words(float(std)), _f64_words(float(mean))
    else:
        a, c = (_f32_word(std), 0), (_f32_word(mean), 0)
    _fill("normal", None, out, seed, block, a, c)


def integers_kernel(out, seed, block, low, span):
    """out (contiguous, real or bool) <- integers uniform in [low, low + span), 1 <= span <=
    2**64; the 32-bit stream when span <= 2**32, else the 64-bit one."""
    _check_out(out, "integers")
    if out._numel == 0:
        return
    extra = "narrow" if span <= (1 << 32) else ("full" if span == 1 << 64 else "wide")
    _fill("integers", extra, out, seed, block, _words(low), _words(span))


def bernoulli_kernel(out, probs, p, seed, block):
    """out (contiguous) <- 1 where U < probability (``probs``, contiguous and of out's shape,
    or the Python float ``p`` when probs is None), else 0."""
    _check_out(out, "bernoulli")
    if out._numel == 0:
        return
    if probs is None:
        _fill("bernoulli", None, out, seed, block, _f64_words(float(p)), (0, 0))
    else:
        assert probs.is_contiguous() and probs._numel == out._numel
        _fill("bernoulli", probs._dtype, out, seed, block, (0, 0), (0, 0), probs)


# ---- multinomial -------------------------------------------------------------------------------
_MULTINOMIAL = """

@jit
def inf64(like):
    return tl.full(like.shape, 0x7FF0000000000000, tl.int64).to(tl.float64, bitcast=True)


@jit
def prep(p_probs, p_cdf, p_fix, p_status, ncat, k, REPL: tl.constexpr):
    # one row, its categories in order (the CPU's summation order): status, and with
    # replacement the running sums and the last nonzero category at or before each index
    row = tl.program_id(0).to(tl.int64)
    base = row * ncat
    total = tl.full((), 0.0, tl.float64)
    nnz = tl.full((), 0, tl.int64)
    bad = tl.full((), 0, tl.int32)
    last = tl.full((), 0, tl.int64)
    for j in range(ncat):
        pj = tl.load(p_probs + base + j)
        bad = bad | ((pj >= 0.0) == 0).to(tl.int32) | (pj == inf64(pj)).to(tl.int32)
        total = total + pj
        nnz = nnz + (pj > 0.0).to(tl.int64)
        if REPL:
            last = tl.where(pj != 0.0, j, last)
            tl.store(p_cdf + base + j, total)
            tl.store(p_fix + base + j, last)
    status = tl.where(bad != 0, 1, tl.where((total > 0.0) == 0, 2, 0))
    if not REPL:
        status = tl.where((status == 0) & (nnz < k), 3, status)
    tl.store(p_status + row, status.to(tl.int64))


@jit(do_not_specialize=["k0w", "k1w", "b_lo", "b_hi"])
def sample(p_out, p_cdf, p_fix, ncat, k, nsteps, k0w, k1w, b_lo, b_hi, BLOCK: tl.constexpr):
    # with replacement: sample s of row r is element r * k + s of the 64-bit stream; the
    # first category whose running sum exceeds u * total (binary search), never a zero one
    row = tl.program_id(0).to(tl.int64)
    s = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = s < k
    base = row * ncat
    e = row * k + s
    r0, r1, r2, r3 = stream(k0w, k1w, b_lo, b_hi, e // 2)
    w = tl.where(e % 2 == 0, word64(r0, r1), word64(r2, r3))
    acc = tl.load(p_cdf + base + ncat - 1)
    target = (w >> 11).to(tl.float64) * 1.1102230246251565e-16 * acc
    lo = tl.full((BLOCK,), 0, tl.int64)
    hi = tl.full((BLOCK,), 0, tl.int64) + (ncat - 1)
    for _ in range(nsteps):
        active = lo < hi
        mid = (lo + hi) // 2
        c = tl.load(p_cdf + base + mid, mask=mask & active, other=0.0)
        right = c > target
        hi = tl.where(active & right, mid, hi)
        lo = tl.where(active & (right == 0), mid + 1, lo)
    tl.store(p_out + e, tl.load(p_fix + base + lo, mask=mask, other=0), mask=mask)


@jit(do_not_specialize=["k0w", "k1w", "b_lo", "b_hi"])
def keys(p_keys, p_probs, ncat, k0w, k1w, b_lo, b_hi, BLOCK: tl.constexpr):
    # without replacement: category j of row r uses element r * ncat + j for -log(u) / p_j
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = j < ncat
    e = row * ncat + j
    r0, r1, r2, r3 = stream(k0w, k1w, b_lo, b_hi, e // 2)
    w = tl.where(e % 2 == 0, word64(r0, r1), word64(r2, r3))
    u = ((w >> 11) + 1).to(tl.float64) * 1.1102230246251565e-16
    pj = tl.load(p_probs + e, mask=mask, other=0.0)
    pos = pj > 0.0
    key = -libm.log(u) / tl.where(pos, pj, 1.0)
    tl.store(p_keys + e, tl.where(pos, key, inf64(key)), mask=mask)


@jit
def rank(p_out, p_keys, ncat, k, BLOCK: tl.constexpr):
    # category j's place in the stable ascending order of its row's keys (ties by index);
    # the first k places are the samples
    row = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = j < ncat
    base = row * ncat
    kj = tl.load(p_keys + base + j, mask=mask, other=0.0)
    cnt = tl.full((BLOCK,), 0, tl.int64)
    for i in range(ncat):
        ki = tl.load(p_keys + base + i)
        cnt = cnt + ((ki < kj) | ((ki == kj) & (i < j))).to(tl.int64)
    take = mask & (cnt < k)
    tl.store(p_out + row * k + tl.where(take, cnt, 0), j, mask=take)
"""

GPU_SAMPLE_BLOCK = 128
RANK_MAX_CATEGORIES = 2048  # above: argsort the keys (O(n log^2 n)) instead of ranking


def _multinomial_module(mode):
    return _launch.cached_module(
        None, "rand_multinomial",
        lambda: (_LIBM[mode] + "# Generated by tensorlib.kernels.cuda.random: multinomial\n"
                 + _common_source() + _MULTINOMIAL), mode)


def multinomial_kernel(out, probs, num_samples, replacement, seed, block):
    """out: contiguous int64 (rows, num_samples); probs: contiguous float64 (rows, ncat).
    Synchronizes (the row checks raise here, as on the CPU)."""
    from ...allocation import empty
    rows, ncat = probs.shape
    k = int(num_samples)
    mode = _launch.current_mode()
    mod = _multinomial_module(mode)
    dev = out.device
    status = empty((rows,), dtype=_dt.int64, device=dev)
    scratch = empty((rows, ncat), dtype=_dt.float64, device=dev)  # sums, or keys
    fix = empty((rows, ncat) if replacement else (1,), dtype=_dt.int64, device=dev)
    bsize = GPU_SAMPLE_BLOCK if mode == "compiled" else \
        min(_launch.next_pow2(k if replacement else ncat), INTERPRET_MAX_BLOCK)
    opts = dict(num_warps=4, **LAUNCH_OPTIONS)
    _launch.launch(mod.prep, (rows,), [_arg(probs), _arg(scratch), _arg(fix), _arg(status),
                                       ncat, k], dev.index, REPL=bool(replacement), **opts)
    words = [*_words(seed), *_words(block)]
    if replacement:
        _launch.launch(mod.sample, (rows, _launch.cdiv(k, bsize)),
                       [_arg(out), _arg(scratch), _arg(fix), ncat, k, ncat.bit_length(), *words],
                       dev.index, BLOCK=bsize, **opts)
    else:
        grid = (rows, _launch.cdiv(ncat, bsize))
        _launch.launch(mod.keys, grid, [_arg(scratch), _arg(probs), ncat, *words], dev.index,
                       BLOCK=bsize, **opts)
        if ncat <= RANK_MAX_CATEGORIES:
            _launch.launch(mod.rank, grid, [_arg(out), _arg(scratch), ncat, k], dev.index,
                           BLOCK=bsize, **opts)
        else:
            from .sorting import sort_kernel
            order = empty((rows, ncat), dtype=_dt.int64, device=dev)
            sort_kernel(scratch, None, order, False)
            out.copy_(order[:, :k])
    codes = np.asarray(status.cpu()._to_host_numpy())
    bad = np.nonzero(codes)[0]
    if bad.size:
        code = int(codes[bad[0]])
        why = {1: "has a negative, infinite or nan probability",
               2: "has probabilities summing to 0",
               3: f"has fewer than num_samples={num_samples} nonzero probabilities (sampling "
                  f"without replacement)"}[code]
        raise ValueError(f"multinomial(): row {int(bad[0])} of argument 'self' {why}")


# ---- ahead-of-time compile jobs (aot.py) -------------------------------------------------------
def _ptr(dtype):
    from .launch import triton_type as _triton_type
    from .launch import _ARG_DTYPE
    return "*" + _triton_type(_ARG_DTYPE.get(dtype, dtype.name))


def _fill_job(kind, dtype, extra, idx64=False):
    from .launch import Job

    def build():
        fn, _ = _kernel(kind, dtype, extra, "compiled")
        sig = {"p_out": _ptr(dtype)}
        if kind == "bernoulli" and extra is not None:
            sig["p_probs"] = _ptr(extra)
        for name in fn.arg_names:
            sig.setdefault(name, "constexpr" if name in ("BLOCK", "IDX64") else "i32")
        attrs = {(fn.arg_names.index(p),): [["tt.divisibility", 16]]
                 for p in ("p_out", "p_probs") if p in sig}
        return (fn, sig, {"BLOCK": GPU_BLOCK, "IDX64": idx64}, attrs,
                dict(LAUNCH_OPTIONS, num_warps=GPU_WARPS))
    label = dtype.name + (f" {extra if isinstance(extra, str) else extra.name}"
                          if extra is not None else "") + (" i64" if idx64 else "")
    return Job(f"random_{kind}", label, build)


def _multinomial_job(name, const):
    from .launch import Job
    ptrs = {"p_probs": "*fp64", "p_cdf": "*fp64", "p_keys": "*fp64", "p_fix": "*i64",
            "p_status": "*i64", "p_out": "*i64"}

    def build():
        fn = getattr(_multinomial_module("compiled"), name)
        sig = {p: ptrs.get(p, "constexpr" if p in const else "i32") for p in fn.arg_names}
        attrs = {(fn.arg_names.index(p),): [["tt.divisibility", 16]]
                 for p in fn.arg_names if p in ptrs}
        return fn, sig, dict(const), attrs, dict(LAUNCH_OPTIONS, num_warps=4)
    return Job("random_multinomial", f"{name} {' '.join(f'{k}={v}' for k, v in const.items())}",
               build)


def aot_jobs(quick=False):
    """aot.py's jobs: every fill kernel per value dtype, the multinomial kernels."""
    floats = [_dt.float32, _dt.float16, _dt.bfloat16, _dt.float64]
    jobs = [_fill_job(kind, dt, None) for kind in ("uniform", "normal") for dt in floats]
    jobs.append(_fill_job("normal", _dt.float32, None, idx64=True))
    ints = [d for d in _dt.ALL_DTYPES if d.kind != "c"]
    jobs += [_fill_job("integers", dt, "narrow") for dt in ints]
    jobs += [_fill_job("integers", dt, x) for dt in (_dt.int64, _dt.uint64, _dt.float64)
             for x in ("wide", "full")]
    jobs += [_fill_job("bernoulli", dt, None) for dt in (_dt.float32, _dt.bool_, _dt.int64)]
    jobs += [_fill_job("bernoulli", dt, dt) for dt in floats]
    jobs += [_multinomial_job("prep", {"REPL": True}), _multinomial_job("prep", {"REPL": False}),
             _multinomial_job("sample", {"BLOCK": GPU_SAMPLE_BLOCK}),
             _multinomial_job("keys", {"BLOCK": GPU_SAMPLE_BLOCK}),
             _multinomial_job("rank", {"BLOCK": GPU_SAMPLE_BLOCK})]
    if quick:
        keep = {("random_normal", "float32"), ("random_integers", "int64 narrow")}
        jobs = [j for j in jobs if (j.kernel, j.config) in keep]
    return jobs

"""CUDA matmul kernel (Triton): tiled, grouped tile order, a small config list per dtype class.

Stub contract (ops/matmul.py): a (..., M, K), b (..., K, N), out (..., M, N) with identical batch
dims (zero strides where broadcast), one dtype for all three, out dense and overlapping neither
input; every element of out is written.

* float16 / bfloat16: tensor-core ``tl.dot`` with float32 accumulation, one rounding at the end.
* float32: ``tl.dot`` in IEEE precision, or TF32 when ``backends.matmul.allow_tf32`` is set.
* float64: ``tl.dot`` (DMMA on sm_80+), IEEE.
* int8 / uint8: ``tl.dot`` on int8 with int32 accumulation; other integers and bool: a
  sum of outer products, one k at a time (no tensor cores), accumulating in int32 (<= 32-bit
  types) or int64. ``+`` and ``*`` wrap modulo 2**bits, so any accumulator at least as wide
  as the result gives NumPy's wrapped answer bit for bit, and unsigned types share the
  signed kernels.
* bool: or of ands, as 0/1 products summed in int32 and tested != 0.
* complex64 / complex128: the same ``tl.dot`` tiles on the components (float32 IEEE, whatever
  allow_tf32 says, / float64), two accumulators: re += ar·br - ai·bi, im += ar·bi + ai·br
  (four dots per K step; ai negated for vecdot's conjugated first operand). Operands are
  addressed through their real components (component strides, imaginary part at +1), so any
  layout works without copies. The CPU (BLAS cgemm / zgemm) also accumulates complex64 in
  float32.

Tiles walk the output in groups of GROUP_M tile rows so consecutive programs reuse the same
panels of a and b from L2 (Triton tutorial's "grouped ordering"). On a GPU the config is chosen
per call by ``TUNER`` (autotune.py: each config of the dtype class timed once per shape class
— M, N, K and batch rounded up to powers of two, plus the operands' layouts — the fastest
cached in memory and on disk); with ``TENSORLIB_AUTOTUNE=0`` by a size heuristic. Every
config is checked spill-free by aot.py, and every config computes the same products (only
the summation order of K differs).
Batches are grid axis 1 (at most 65535 per launch); batch dims that do not collapse into one
stride run as separate launches. In the interpreter, bfloat16 tiles are widened to float32
before the dot (its dot would multiply the raw bits) and tiles are as large as the problem
(up to 64), to keep programs few.
"""
from __future__ import annotations

import itertools
import math
from collections import namedtuple

from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from . import autotune as _autotune
from . import launch as _launch
from .flags import backends

__all__ = ["matmul_kernel", "mm_kernel", "Config", "CONFIGS", "dtype_class", "kernel_args",
           "shape_key", "smem_bytes", "TUNER"]

Config = namedtuple("Config", "BLOCK_M BLOCK_N BLOCK_K GROUP_M num_warps num_stages")

# Large to small (the heuristic without autotuning takes the first that fits the problem and
# still gives enough tiles). Each compiles without register spills for sm_80 and sm_90
# (python -m tensorlib.kernels.cuda.aot).
CONFIGS = {
    "half": [Config(128, 256, 32, 8, 8, 3), Config(128, 128, 64, 8, 8, 3),
             Config(64, 128, 32, 8, 4, 4), Config(64, 64, 32, 8, 4, 4),
             Config(32, 32, 32, 8, 2, 4)],
    "tf32": [Config(128, 128, 32, 8, 8, 3), Config(128, 64, 32, 8, 4, 3),
             Config(64, 64, 32, 8, 4, 3), Config(32, 32, 32, 8, 2, 3)],
    "fp32": [Config(64, 64, 16, 8, 4, 3), Config(32, 32, 16, 8, 2, 3)],
    "fp64": [Config(64, 64, 16, 8, 4, 3), Config(32, 32, 16, 8, 4, 2)],
    # complex: two accumulators and four operand tiles per step (components of a and b)
    "c64": [Config(64, 64, 16, 8, 8, 3), Config(32, 32, 16, 8, 4, 3)],
    "c128": [Config(64, 64, 16, 8, 8, 2), Config(32, 32, 16, 8, 4, 2)],
    "int8": [Config(128, 128, 64, 8, 8, 3), Config(64, 64, 64, 8, 4, 3),
             Config(32, 32, 64, 8, 2, 3)],
    # no tensor cores: outer products over k, BLOCK_K unused
    "generic": [Config(64, 64, 1, 8, 4, 1), Config(32, 32, 1, 8, 4, 1),
                Config(16, 16, 1, 8, 2, 1)],
}

_I32_MAX = 2 ** 31 - 1   # larger in-matrix offsets switch the kernel to int64 indexing

# in / out storage handling (constexprs of the kernel)
_NATIVE, _BF16_BITS, _BOOL_BYTES = 0, 1, 2

_SOURCE = """
@jit
def kernel(a_ptr, b_ptr, c_ptr, M, N, K,
           sa_b, sa_m, sa_k, sb_b, sb_k, sb_n, sc_b, sc_m, sc_n,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
           GROUP_M: tl.constexpr, USE_DOT: tl.constexpr, ACC: tl.constexpr,
           PRECISION: tl.constexpr, IN_KIND: tl.constexpr, OUT_KIND: tl.constexpr,
           OUT: tl.constexpr, EVEN_K: tl.constexpr, IDX64: tl.constexpr,
           CPLX: tl.constexpr, CONJ_A: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(1).to(tl.int64)
    # grouped ordering: GROUP_M tile rows are walked column by column (L2 reuse)
    num_pid_m = (M + BLOCK_M - 1) // BLOCK_M
    num_pid_n = (N + BLOCK_N - 1) // BLOCK_N
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # rows / columns past the edge read row M-1 / column N-1 again (wrapped) instead of
    # masking every load; their results are never stored
    offs_m = rm % M
    offs_n = rn % N
    offs_k = tl.arange(0, BLOCK_K)
    if IDX64:
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
        offs_k = offs_k.to(tl.int64)
    a_base = a_ptr + bid * sa_b
    b_base = b_ptr + bid * sb_b
    acc = tl.full((BLOCK_M, BLOCK_N), 0, ACC)
    if CPLX:
        acc_im = tl.full((BLOCK_M, BLOCK_N), 0, ACC)
    if USE_DOT:
        a_ptrs = a_base + (offs_m[:, None] * sa_m + offs_k[None, :] * sa_k)
        b_ptrs = b_base + (offs_k[:, None] * sb_k + offs_n[None, :] * sb_n)
        for k in range(0, (K + BLOCK_K - 1) // BLOCK_K):
            if EVEN_K:
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
            else:
                a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
                b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
            if IN_KIND == 1:
                a = bf16_bits_to_f32(a)
                b = bf16_bits_to_f32(b)
            if CPLX:
                # complex: pointers address the real components, imaginary parts are the
                # next element; (a + bi)(c + di) = (ac - bd) + (ad + bc)i in two accumulators
                if EVEN_K:
                    ai = tl.load(a_ptrs + 1)
                    bi = tl.load(b_ptrs + 1)
                else:
                    ai = tl.load(a_ptrs + 1, mask=offs_k[None, :] < K - k * BLOCK_K, other=0)
                    bi = tl.load(b_ptrs + 1, mask=offs_k[:, None] < K - k * BLOCK_K, other=0)
                if CONJ_A:
                    ai = -ai
                acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
                acc = tl.dot(-ai, bi, acc, input_precision=PRECISION, out_dtype=ACC)
                acc_im = tl.dot(a, bi, acc_im, input_precision=PRECISION, out_dtype=ACC)
                acc_im = tl.dot(ai, b, acc_im, input_precision=PRECISION, out_dtype=ACC)
            else:
                acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
            a_ptrs += BLOCK_K * sa_k
            b_ptrs += BLOCK_K * sb_k
    else:
        # integer / bool types: no tensor cores; a sum of outer products, one k at a time
        a_ptrs = a_base + offs_m * sa_m
        b_ptrs = b_base + offs_n * sb_n
        for k in range(0, K):
            a = tl.load(a_ptrs).to(ACC)
            b = tl.load(b_ptrs).to(ACC)
            acc += a[:, None] * b[None, :]
            a_ptrs += sa_k
            b_ptrs += sb_k
    if IDX64:
        rm = rm.to(tl.int64)
        rn = rn.to(tl.int64)
    c_ptrs = c_ptr + bid * sc_b + (rm[:, None] * sc_m + rn[None, :] * sc_n)
    cmask = (rm[:, None] < M) & (rn[None, :] < N)
    if CPLX:
        tl.store(c_ptrs, acc.to(OUT), mask=cmask)
        tl.store(c_ptrs + 1, acc_im.to(OUT), mask=cmask)
    elif OUT_KIND == 1:
        tl.store(c_ptrs, f32_to_bf16_bits(acc), mask=cmask)
    elif OUT_KIND == 2:
        tl.store(c_ptrs, (acc != 0).to(tl.uint8), mask=cmask)
    else:
        tl.store(c_ptrs, acc.to(OUT), mask=cmask)
"""


def mm_kernel(mode):
    """The matmul kernel built for ``mode`` ('compiled' or 'interpret')."""
    return _launch.cached_module(None, "matmul", lambda: _SOURCE, mode).kernel


# ---- dtype handling ---------------------------------------------------------------------------
_SIGNED = {_dt.uint8: _dt.int8, _dt.uint16: _dt.int16, _dt.uint32: _dt.int32,
           _dt.uint64: _dt.int64}
_TL = {_dt.int8: "int8", _dt.int16: "int16", _dt.int32: "int32", _dt.int64: "int64",
       _dt.float16: "float16", _dt.bfloat16: "bfloat16", _dt.float32: "float32",
       _dt.float64: "float64", _dt.bool_: "uint8"}


def dtype_class(dtype, allow_tf32=None) -> str:
    if allow_tf32 is None:
        allow_tf32 = backends.matmul.allow_tf32
    if dtype in (_dt.float16, _dt.bfloat16):
        return "half"
    if dtype is _dt.float32:
        return "tf32" if allow_tf32 else "fp32"
    if dtype is _dt.float64:
        return "fp64"
    if dtype in (_dt.int8, _dt.uint8):
        return "int8"
    if dtype.kind in "biu":
        return "generic"
    if dtype is _dt.complex64:
        return "c64"  # IEEE float32 products (allow_tf32 covers real float32 only)
    if dtype is _dt.complex128:
        return "c128"
    raise UnsupportedKernelError(f"matmul(): dtype {dtype} is not supported by the CUDA kernels "
                                 f"yet")


def kernel_args(dtype, cls, interpret=False):
    """(pointer dtype name, constexprs) for a dtype and its class."""
    import triton.language as tl
    kdt = _SIGNED.get(dtype, _dt.real_for(dtype))  # complex: the component type
    in_kind = out_kind = _NATIVE
    ptr = kdt.name
    if dtype is _dt.bool_:
        in_kind = out_kind = _BOOL_BYTES
        ptr = "uint8"
    elif dtype is _dt.bfloat16 and interpret:
        # the interpreter has no bf16 tiles: raw bits in, widened explicitly, rounded back out.
        # On a GPU the pointers are typed bfloat16, so tl.dot takes them as they are and
        # ``acc.to(bfloat16)`` rounds to nearest even (storing the bits through a bfloat16
        # pointer would convert the integer 16256 to the value 16256.0)
        in_kind = out_kind = _BF16_BITS
        ptr = "uint16"
    elif dtype is _dt.bfloat16:
        ptr = "bfloat16"
    if cls in ("half", "tf32", "fp32", "c64"):
        acc = tl.float32
    elif cls in ("fp64", "c128"):
        acc = tl.float64
    elif kdt.itemsize == 8:
        acc = tl.int64
    else:
        acc = tl.int32
    const = dict(USE_DOT=cls != "generic", ACC=acc,
                 PRECISION="tf32" if cls == "tf32" else "ieee", IN_KIND=in_kind,
                 OUT_KIND=out_kind, OUT=getattr(tl, _TL[kdt]), CPLX=dtype.kind == "c",
                 CONJ_A=False)
    return ptr, const


def _pick(cls, m, n, tiles_batch):
    configs = CONFIGS[cls]
    for cfg in configs:
        if m >= cfg.BLOCK_M // 2 and n >= cfg.BLOCK_N // 2 and \
                tiles_batch * math.ceil(m / cfg.BLOCK_M) * math.ceil(n / cfg.BLOCK_N) >= 64:
            return cfg
    return configs[-1]


# bytes per element of the tl.dot operands staged in shared memory
_DOT_ITEMSIZE = {"half": 2, "tf32": 4, "fp32": 4, "fp64": 8, "int8": 1, "c64": 8, "c128": 16}


def smem_bytes(cfg, cls) -> int:
    """Upper estimate of a config's shared memory: num_stages buffers of an A and a B tile
    (ptxas reports at most this for every config in CONFIGS); the outer-product path stages
    nothing."""
    size = _DOT_ITEMSIZE.get(cls, 0)
    return cfg.num_stages * (cfg.BLOCK_M * cfg.BLOCK_K + cfg.BLOCK_K * cfg.BLOCK_N) * size


TUNER = _autotune.Autotuner("matmul", CONFIGS, smem_bytes)


def shape_key(m, n, k, batch, a_rows, b_rows) -> str:
    """The shape class a choice is shared by: M, N, K and the batch count rounded up to powers
    of two, and whether a / b are row-major (``a_rows``: unit stride along K, ``b_rows``: unit
    stride along N); a transposed operand loads differently."""
    p2 = _launch.next_pow2
    return (f"{p2(m)}x{p2(n)}x{p2(k)}" + (f"b{p2(batch)}" if batch > 1 else "")
            + ("n" if a_rows else "t") + ("n" if b_rows else "t"))


def _interpret_config(m, n, k, cls):
    # few, big programs: each program costs Python overhead in the interpreter
    bm = min(max(_launch.next_pow2(m), 16), 64)
    bn = min(max(_launch.next_pow2(n), 16), 64)
    bk = min(max(_launch.next_pow2(k), 16), 64) if cls != "generic" else 1
    return Config(bm, bn, bk, 8, 4, 1)


# ---- batch dims --------------------------------------------------------------------------------
def _collapse_batch(shape, strides3):
    """Merges batch dims where all three operands are contiguous across them; returns
    (shape, [strides per operand]) with dim 0 outermost."""
    if not shape:
        return (1,), [(0,), (0,), (0,)]
    dims = [d for d in range(len(shape)) if shape[d] != 1] or [len(shape) - 1]
    cshape = [shape[dims[-1]]]
    cstr = [[s[dims[-1]]] for s in strides3]
    for d in reversed(dims[:-1]):
        n = shape[d]
        if all(s[d] == c[0] * cshape[0] for s, c in zip(strides3, cstr)):
            cshape[0] *= n
        else:
            cshape.insert(0, n)
            for s, c in zip(strides3, cstr):
                c.insert(0, s[d])
    return tuple(cshape), [tuple(c) for c in cstr]


def _span(m, n, sm, sn):
    return (m - 1) * abs(sm) + (n - 1) * abs(sn)


# tf32 products on sm_90 tensor cores (wgmma) need both operands K-major (k contiguous); an M-
# or N-major operand makes Triton fall back to the sm_80 instruction at about a third of the
# speed (H100, 4096^3: B N-major 90 TFLOP/s, K-major 280). A K-major copy is one pass over the
# operand, repaid once the product's other dimension reaches a few hundred.
_K_MAJOR_MIN = 256


def _k_major_copy(t, is_b):
    """A K-major copy of operand ``t`` (A: (..., m, k), B: (..., k, n)) as a tensor of the same
    shape: A row-major, B the transpose of a row-major (..., n, k) buffer."""
    from ...allocation import empty
    from ...tensor import Tensor
    from . import pointwise as P
    shape, strides = list(t._shape), list(t._strides)
    if is_b:  # copy t.mT into a row-major buffer
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    buf = empty(tuple(shape), dtype=t._dtype, device=t.device)
    P._launch_elementwise("copy", "self", P._operand(buf, buf._strides[::-1], 0),
                          [("self", P._operand(t, strides[::-1], t._offset), t._dtype)], [],
                          t._dtype, t._dtype, shape[::-1], t.device.index)
    if not is_b:
        return buf
    st = list(buf._strides)
    st[-2:] = st[:-3:-1]
    return Tensor._make(buf._storage, t._shape, tuple(st), 0, t._dtype)


def matmul_kernel(a, b, out, conj_a=False):
    """CUDA stub kernel (see the module docstring for the contract)."""
    if out._numel == 0:
        return
    dtype = out._dtype
    cls = dtype_class(dtype)
    mode = _launch.current_mode()
    interpret = mode == "interpret"
    if cls == "tf32" and not interpret:
        m, n, k = out._shape[-2], out._shape[-1], a._shape[-1]
        if a._strides[-1] != 1 and k > 1 and n >= _K_MAJOR_MIN:
            a = _k_major_copy(a, False)
        if b._strides[-2] != 1 and k > 1 and m >= _K_MAJOR_MIN:
            b = _k_major_copy(b, True)
    ptr_name, const = kernel_args(dtype, cls, interpret)
    # complex operands are addressed by their real components: offsets and strides in
    # component units (doubled), the imaginary part one element further
    scale = 2 if dtype.kind == "c" else 1
    const = dict(const, CONJ_A=bool(conj_a) and dtype.kind == "c")
    nbd = out.ndim - 2
    m, n = out._shape[nbd:]
    k = a._shape[-1]
    bshape, (sa, sb, sc) = _collapse_batch(
        out._shape[:nbd], [tuple(s * scale for s in x._strides[:nbd]) for x in (a, b, out)])
    sam, sak = (s * scale for s in a._strides[nbd:])
    sbk, sbn = (s * scale for s in b._strides[nbd:])
    scm, scn = (s * scale for s in out._strides[nbd:])
    idx64 = max(_span(m, k, sam, sak), _span(k, n, sbk, sbn), _span(m, n, scm, scn)) \
        + scale - 1 > _I32_MAX
    inner = bshape[-1]
    kdt = _SIGNED.get(dtype, _dt.real_for(dtype))
    device = out.device.index
    pa, pb, pc = (x._storage.data_ptr() for x in (a, b, out))
    kernel = mm_kernel(mode)

    def run(cfg):
        tiles = _launch.cdiv(m, cfg.BLOCK_M) * _launch.cdiv(n, cfg.BLOCK_N)
        consts = dict(const, BLOCK_M=cfg.BLOCK_M, BLOCK_N=cfg.BLOCK_N, BLOCK_K=cfg.BLOCK_K,
                      GROUP_M=cfg.GROUP_M, EVEN_K=k % cfg.BLOCK_K == 0, IDX64=idx64,
                      num_warps=cfg.num_warps, num_stages=cfg.num_stages,
                      enable_fp_fusion=True)  # FMA accumulation: fewer roundings, not more
        for outer in itertools.product(*[range(s) for s in bshape[:-1]]):
            oa = a._offset * scale + sum(i * s for i, s in zip(outer, sa))
            ob = b._offset * scale + sum(i * s for i, s in zip(outer, sb))
            oc = out._offset * scale + sum(i * s for i, s in zip(outer, sc))
            for start in range(0, inner, 65535):
                nb = min(65535, inner - start)
                args = [_launch.arg_for(pa, kdt, oa + start * sa[-1], ptr_name),
                        _launch.arg_for(pb, kdt, ob + start * sb[-1], ptr_name),
                        _launch.arg_for(pc, kdt, oc + start * sc[-1], ptr_name),
                        m, n, k, sa[-1], sam, sak, sb[-1], sbk, sbn, sc[-1], scm, scn]
                _launch.launch(kernel, (tiles, nb), args, device, **consts)

    batch = math.prod(bshape)
    if interpret:
        # timings mean nothing in the interpreter: a deterministic config
        cfg = _interpret_config(m, n, k, cls)
    elif _autotune.enabled():
        # every config writes all of out and reads only a and b (which out does not overlap),
        # so the candidates can be timed on the call's own operands
        cfg = TUNER.choose(cls, shape_key(m, n, k, batch, sak == scale, sbn == scale), run,
                           device)
    else:
        cfg = _pick(cls, m, n, batch)
    run(cfg)

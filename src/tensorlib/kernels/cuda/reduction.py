"""CUDA reduction kernels (Triton): sum, prod, mean, max, min, any, all, var, std, argmax,
argmin — the stub entry points. Each fills a ReductionSpec's arguments (reduce_source.py writes
the kernel) and runs it through reduce_plan.py's cached launch plans; argmax / argmin launch
here. Scans (cumsum, cumprod) are in scan.py.

Accumulators follow the CPU kernels: the iterator's compute dtype (int64 for integer sums,
float32 for half types), max/min propagate nan, mean and var divide in float64. Floating sums
are blocked (per-lane partial sums, then a tree), close to NumPy's pairwise summation.
argmax / argmin reduce (value, index) pairs over the single reduced dim the op layer leaves
(axis=None arrives flattened): the first index of the extreme wins and a nan counts as the
extreme (NumPy's rule).

Complex values are (re, im) pairs: sum / mean add per component; prod multiplies as
(ac - bd, ad + bc), as the CPU's Numba complex product; var / std accumulate |x - mean|^2 in
the component dtype; any / all test either part. A real result stored into a complex out= gets
imaginary part 0.
"""
from __future__ import annotations

import itertools
import math
import operator

from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from . import launch as _launch
from .reduce_plan import (GPU_TILES, _arg_kernel_for, _fits, _operands, _run, _split, _split_dims,
                          _tiles)
from .reduce_source import COMPLEX_COMB, ArgSpec, lit as _lit
# names of this module from before its split (public ones; tests pin the SM count via _SMS)
from .reduce_plan import _SMS  # noqa: F401
from .reduce_source import (ReductionSpec, arg_reduction_source, comp_tl,  # noqa: F401
                            load_parts, reduction_source, store_parts, tuple_code, value_names)

__all__ = ["sum_kernel", "prod_kernel", "mean_kernel", "max_kernel", "min_kernel", "any_kernel",
           "all_kernel", "var_kernel", "std_kernel", "argmax_kernel", "argmin_kernel",
           "ReductionSpec", "reduction_source", "ArgSpec", "arg_reduction_source", "GPU_TILES",
           "aot_jobs", "COMPLEX_COMB", "value_names", "comp_tl", "tuple_code", "load_parts",
           "store_parts"]


def _in(it):
    return it.operands[-1]._dtype


def _value_dt(dtype):
    return _dt.float32 if dtype in (_dt.float16, _dt.bfloat16) else dtype


def _identity(acc, value):
    """The literal(s) of ``value`` (0 or 1) in the accumulator dtype: (re, im) for complex."""
    if acc.kind == "c":
        return (_lit(_dt.real_for(acc), value), _lit(_dt.real_for(acc), 0))
    return _lit(acc, value)


def _sum_like(it, op):
    acc = it.compute_dtype
    comb = COMPLEX_COMB[op] if acc.kind == "c" else ("a + b" if op == "sum" else "a * b")
    _run(it, dict(op=op, in_dt=_in(it), acc=acc, out=it.operands[0]._dtype,
                  init=_identity(acc, 0 if op == "sum" else 1), comb=comb))


def sum_kernel(it):
    _sum_like(it, "sum")


def prod_kernel(it):
    _sum_like(it, "prod")


def mean_kernel(it):
    """Sum in the compute dtype, divided by the count in float64 (as NumPy does). A complex sum
    is divided as the CPU's complex128 / float64 division does it (CPython's algorithm with
    a zero imaginary divisor), so a nan or inf part spreads to the other part there too."""
    acc = it.compute_dtype
    if acc.kind == "c":
        re, im = "acc_re.to(tl.float64)", "acc_im.to(tl.float64)"
        fin = (f"({re} + {im} * 0.0) / div", f"({im} - {re} * 0.0) / div")
        fin_dt, comb = _dt.complex128, COMPLEX_COMB["sum"]
    else:
        fin, fin_dt, comb = "acc.to(tl.float64) / div", _dt.float64, "a + b"
    _run(it, dict(op="mean", in_dt=_in(it), acc=acc, out=it.operands[0]._dtype,
                  init=_identity(acc, 0), comb=comb, fin=fin, fin_dt=fin_dt),
         float(it.reduced_numel))


def _minmax(it, op):
    acc = it.compute_dtype  # bool input: uint8
    if acc.kind == "f":
        init = _lit(acc, -math.inf if op == "max" else math.inf)
        cmp = ">" if op == "max" else "<"
        comb = f"tl.where((b {cmp} a) | (b != b), b, a)"  # nan propagates
    else:
        info = _dt.iinfo(acc)
        init = _lit(acc, info.min if op == "max" else info.max)
        comb = f"tl.where(b {'>' if op == 'max' else '<'} a, b, a)"
    _run(it, dict(op=op, in_dt=_in(it), acc=acc, out=it.operands[0]._dtype, init=init,
                  comb=comb))


def max_kernel(it):
    _minmax(it, "max")


def min_kernel(it):
    _minmax(it, "min")


def _logical(it, op):
    # truth values as uint8 0/1 (reduced with max / min: or / and)
    # (a complex value is true when either part is: NumPy's and the CPU's v != 0)
    in_dt = _in(it)
    _run(it, dict(op=op, in_dt=in_dt, acc=_dt.uint8, out=it.operands[0]._dtype,
                  init="1" if op == "all" else "0",
                  comb="tl.maximum(a, b)" if op == "any" else "tl.minimum(a, b)",
                  fmap="to_bool(v_re) | to_bool(v_im)" if in_dt.kind == "c" else "to_bool(v)",
                  load_dt=_value_dt(in_dt)))


def any_kernel(it):
    _logical(it, "any")


def all_kernel(it):
    _logical(it, "all")


def _sqdev(it, divisor, take_sqrt):
    """sum(|x - mean|^2) / divisor (sqrt for std); operand 1 is the mean in the compute
    dtype, and the input is read in that dtype too. A complex deviation's |d|^2 is
    re(d)^2 + im(d)^2 summed in the component dtype (as the CPU kernel)."""
    mean_dt = it.operands[1]._dtype
    acc = _dt.real_for(mean_dt)
    fin = "acc.to(tl.float64) / div"
    if take_sqrt:
        fin = f"sqrt({fin})"
    fmap = ("(v_re - m_re) * (v_re - m_re) + (v_im - m_im) * (v_im - m_im)"
            if mean_dt.kind == "c" else "(v - m) * (v - m)")
    _run(it, dict(op="std" if take_sqrt else "var", in_dt=_in(it), acc=acc,
                  out=it.operands[0]._dtype, init=_lit(acc, 0), comb="a + b",
                  fmap=fmap, fin=fin, fin_dt=_dt.float64, aux_dt=mean_dt),
         float(divisor))


def var_kernel(it, divisor):
    _sqdev(it, divisor, False)


def std_kernel(it, divisor):
    _sqdev(it, divisor, True)


# ---- argmax / argmin ----------------------------------------------------------------------------
def _arg_reduce(it, op):
    """Index of the first extreme along the one reduced dim (TensorIterator.reduce layout;
    the op layer flattens axis=None), stored in the output's (index) dtype."""
    in_dt = _in(it)
    if in_dt.kind == "c":
        raise UnsupportedKernelError(f"{op}(): complex dtypes are not supported by the CUDA "
                                     f"reduction kernels")
    lay, kept, red = _split_dims(it)
    if len(red) > 1:
        raise RuntimeError(f"{op}(): expected one reduced dim in the layout, got {len(red)} "
                           f"(shape {lay.shape})")
    ops = _operands(it, lay)  # out= may be complex (int64 casts to it same_kind)
    n_red = lay.shape[red[0]] if red else 1  # no reduced dim left: it had size 1
    rsi = ops[-1].strides[red[0]] if red else 0
    kept_sizes = [lay.shape[d] for d in kept]
    n_out = math.prod(kept_sizes)
    acc = it.compute_dtype
    spec = ArgSpec(op, in_dt, acc, it.operands[0]._dtype, len(kept))
    mode = _launch.current_mode()
    device = it.device.index
    tiles = _tiles(mode, n_out, n_red, bool(red) and red[0] == 0)
    n_split, chunk = _split(mode, device, n_out, n_red, tiles[0], tiles[1])
    out_kept = [ops[0].strides[d] for d in kept]
    in_kept = [ops[-1].strides[d] for d in kept]
    idx64 = not _fits(lay.shape, [op.strides for op in ops], n_out, n_red)
    grid = (_launch.cdiv(n_out, tiles[0]), n_split)
    if n_split == 1:  # p_vout / p_idx unused: any pointer
        args = [ops[0].arg, ops[0].arg, ops[-1].arg, ops[0].arg, n_out, n_red, n_red]
        args += kept_sizes + out_kept + in_kept + [rsi, n_red]
        _launch_arg_reduction(spec, grid, args, device, tiles, idx64, False, False, mode)
        return
    # stage 1: each chunk's (value, first index) into vals / idx [sid, o]
    from ...allocation import empty
    idx = empty((n_split * n_out,), dtype=_dt.int64, device=it.device)
    vals = empty((n_split * n_out,), dtype=acc, device=it.device)
    idx_arg = _launch.arg_for(idx._storage.data_ptr(), _dt.int64)
    vals_arg = _launch.arg_for(vals._storage.data_ptr(), acc)
    args = [idx_arg, vals_arg, ops[-1].arg, ops[0].arg, n_out, n_red, n_red]
    args += kept_sizes + out_kept + in_kept + [rsi, chunk]
    _launch_arg_reduction(spec, grid, args, device, tiles, idx64, True, False, mode)
    # stage 2: the pairs of each output, chunks in index order (kept coordinates are o's
    # digits, so the buffers' strides over the kept dims are contiguous)
    final = ArgSpec(op, acc, acc, it.operands[0]._dtype, len(kept))
    part_kept = list(itertools.accumulate([1] + kept_sizes[:-1], operator.mul))[:len(kept)]
    tiles2 = _tiles(mode, n_out, n_split, n_out == 1)
    args = [ops[0].arg, vals_arg, vals_arg, idx_arg, n_out, n_split, n_red]
    args += kept_sizes + out_kept + part_kept + [n_out, n_split]
    _launch_arg_reduction(final, (_launch.cdiv(n_out, tiles2[0]), 1), args, device, tiles2,
                          idx64, False, True, mode)
    del idx, vals  # stream-ordered: the allocator reuses them only after these launches


def _launch_arg_reduction(spec, grid, args, device, tiles, idx64, partial, pairs, mode):
    bo, br, warps = tiles
    _launch.launch(_arg_kernel_for(spec, mode), grid, args, device, BLOCK_O=bo, BLOCK_R=br,
                   TREE=mode == "interpret", IDX64=idx64, PARTIAL=partial, PAIRS=pairs,
                   num_warps=warps, enable_fp_fusion=False)


def argmax_kernel(it):
    _arg_reduce(it, "argmax")


def argmin_kernel(it):
    _arg_reduce(it, "argmin")


def _arg_job(op, in_dt, acc, nkept, tiles, stage=0):
    """stage 0: a whole reduction; 1: a split reduction's chunks; 2: its combining pass."""
    from .launch import Job, triton_type as _triton_type
    from .launch import _ARG_DTYPE

    def build():
        spec = ArgSpec(op, acc if stage == 2 else in_dt, acc, _dt.int64, nkept)
        fn = _arg_kernel_for(spec, "compiled")
        ptr = lambda dt: "*" + _triton_type(_ARG_DTYPE.get(dt, dt.name))  # noqa: E731
        sig = {"p_out": "*i64", "p_vout": ptr(acc), "p_in": ptr(spec.in_dt), "p_idx": "*i64"}
        const = dict(zip(("BLOCK_O", "BLOCK_R"), GPU_TILES[tiles][:2]), TREE=False,
                     IDX64=False, PARTIAL=stage == 1, PAIRS=stage == 2)
        for p in fn.arg_names:
            sig.setdefault(p, "constexpr" if p in const else "i32")
        attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]}
        return fn, sig, const, attrs, {"num_warps": GPU_TILES[tiles][2],
                                       "enable_fp_fusion": False}
    return Job(op, f"{in_dt.name}->int64 kept{nkept} {tiles}"
               + ("", " partial", " pairs")[stage], build)


def aot_jobs(quick=False):
    """aot.py's jobs for argmax / argmin: value dtype classes on inner and outer layouts."""
    f32 = _dt.float32
    cases = [("argmax", f32, f32), ("argmin", _dt.float64, _dt.float64),
             ("argmax", _dt.float16, f32), ("argmin", _dt.bfloat16, f32),
             ("argmax", _dt.int64, _dt.int64), ("argmin", _dt.int8, _dt.int8),
             ("argmax", _dt.bool_, _dt.uint8)]
    layouts = [(0, "full", 0), (0, "full", 1), (0, "full", 2), (1, "inner", 1),
               (1, "inner", 0), (1, "outer", 0), (2, "outer", 0)]
    if quick:
        cases, layouts = cases[:1], layouts[1:5]
    return [_arg_job(op, in_dt, acc, nk, tiles, stage) for op, in_dt, acc in cases
            for nk, tiles, stage in layouts]

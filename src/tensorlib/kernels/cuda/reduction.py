"""CUDA reduction kernels (Triton): sum, prod, mean, max, min, any, all, var, std.

They read ``TensorIterator.reduce``'s layout (dim 0 innermost; operand 0 is the output viewed
with stride 0 along reduced dims, then the aux operand of var/std — the mean — then the input)
and split its dims into kept dims (output stride != 0) and reduced dims. A program owns
BLOCK_O outputs and walks the reduced elements in [BLOCK_O, BLOCK_R] tiles, combining them
elementwise into a tile accumulator; the tile is reduced along its second axis at the end
(``tl.reduce`` on a GPU; a halving tree of reshape/split in the interpreter, whose tl.reduce
would call the combine function once per element in Python). Inner reductions (dim 0
reduced) get wide BLOCK_R, so lanes read the contiguous rows; outer ones wide BLOCK_O.

Accumulators follow the CPU kernels: the iterator's compute dtype (int64 for integer sums,
float32 for half types), max/min propagate nan, mean and var divide in float64. Floating sums
are blocked (per-lane partial sums, then a tree), close to NumPy's pairwise summation.
argmax / argmin (``arg_reduction_source``) reduce (value, index) pairs over the single reduced
dim the op layer leaves (axis=None arrives flattened): the first index of the extreme wins and a
nan counts as the extreme (NumPy's rule). Scans (cumsum, cumprod) are in scan.py.

Complex values (Triton has no complex type) are (re, im) pairs of component tiles: a complex
tensor is passed as a pointer to its real component with doubled offset and strides (the
imaginary part one element further), the accumulator is two tiles, and the combine takes and
returns pairs (``tl.reduce`` accepts tuples). sum / mean add per component; prod multiplies
as (ac - bd, ad + bc), as the CPU's Numba complex product; var / std accumulate
|x - mean|^2 in the component dtype; any / all test either part. A real result stored into a
complex out= gets imaginary part 0.
"""
from __future__ import annotations

import itertools
import math
import operator

from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from . import launch as _launch
from .pointwise import (VALUE_TL, cast_code, component_operands, load_code, scalar_code,
                        store_code)

__all__ = ["sum_kernel", "prod_kernel", "mean_kernel", "max_kernel", "min_kernel", "any_kernel",
           "all_kernel", "var_kernel", "std_kernel", "argmax_kernel", "argmin_kernel",
           "ReductionSpec", "reduction_source", "ArgSpec", "arg_reduction_source", "GPU_TILES",
           "aot_jobs", "COMPLEX_COMB", "value_names", "comp_tl", "tuple_code", "load_parts",
           "store_parts"]

_I32_MAX = 2 ** 31 - 1
# (BLOCK_O, BLOCK_R, num_warps) on a GPU
GPU_TILES = {"inner": (4, 512, 8), "outer": (128, 16, 4), "full": (1, 4096, 8)}


class ReductionSpec:
    """One generated reduction kernel. ``comb``: elementwise combine of tiles ``a``, ``b``;
    ``fmap``: the loaded value ``v`` (and mean ``m``) -> accumulated value; ``fin``: ``acc``
    (and the divisor ``div``) -> result value of dtype ``fin_dt``.

    Complex values are (re, im) pairs of component tiles: a complex dtype's names get ``_re``
    / ``_im`` suffixes (``v_re``, ``acc_im``, ``a_re``...), ``init`` / ``fmap`` / ``fin`` are
    then tuples of one expression per component and ``comb`` returns a pair."""

    __slots__ = ("op", "in_dt", "acc", "out", "init", "comb", "fmap", "fin", "fin_dt", "aux_dt",
                 "load_dt", "nkept", "nred", "key")

    def __init__(self, op, in_dt, acc, out, init, comb, nkept, nred, fmap=None, fin=None,
                 fin_dt=None, aux_dt=None, load_dt=None):
        self.op, self.in_dt, self.acc, self.out = op, in_dt, acc, out
        self.fin_dt = fin_dt or acc
        self.aux_dt = aux_dt
        self.load_dt = load_dt or aux_dt or acc  # what the loaded value ``v`` is converted to
        self.init = _per_part(init, acc)
        self.comb = comb
        self.fmap = _per_part(fmap, acc) if fmap is not None else tuple(value_names(acc, "v"))
        self.fin = _per_part(fin, self.fin_dt) if fin is not None else \
            tuple(value_names(self.fin_dt, "acc"))
        self.nkept, self.nred = nkept, nred
        self.key = (op, in_dt, acc, out, self.init, comb, self.fmap, self.fin, self.fin_dt,
                    aux_dt, self.load_dt, nkept, nred)


# ---- complex values as component pairs ---------------------------------------------------------
def value_names(dtype, base):
    """Kernel names of a value of ``dtype``: one, or its (re, im) component pair."""
    return [f"{base}_re", f"{base}_im"] if dtype.kind == "c" else [base]


def tuple_code(names):
    """A value's names as one argument of tl.reduce / tl.associative_scan (a tuple for pairs)."""
    return names[0] if len(names) == 1 else f"({', '.join(names)})"


def _per_part(exprs, dtype):
    exprs = exprs if isinstance(exprs, tuple) else (exprs,)
    if len(exprs) != len(value_names(dtype, "x")):
        raise ValueError(f"expected {len(value_names(dtype, 'x'))} expression(s) for {dtype}, "
                         f"got {exprs!r}")
    return exprs


def comp_tl(dtype):
    """Triton value type of a dtype's component (the dtype's own for real dtypes)."""
    return VALUE_TL[_dt.real_for(dtype)]


def load_parts(dt, to_dt, ptrs, mask, shape):
    """Code of the values of ``to_dt`` (one per component) read from storage of ``dt`` at
    ``ptrs``; a complex ``dt`` is addressed by its real component (imaginary part at +1), a
    real value read as complex gets a zero imaginary part."""
    comp, to_comp = _dt.real_for(dt), _dt.real_for(to_dt)
    n = len(value_names(dt, "x"))
    vals = []
    for j in range(n):
        p = ptrs if j == 0 else f"{ptrs} + 1"
        vals.append(cast_code(comp, to_comp, load_code(comp, f"tl.load({p}, mask={mask}, "
                                                             f"other=0)")))
    if to_dt.kind == "c" and n == 1:
        vals.append(f"tl.full({shape}, 0, {comp_tl(to_dt)})")
    return vals


def store_parts(dt, val_dt, vals, ptrs, mask, shape):
    """Statements storing values ``vals`` of ``val_dt`` into storage of ``dt`` at ``ptrs``
    (complex: the real component's pointer); a real value stored as complex gets imaginary
    part 0 (a complex value is never stored as real: same_kind casting forbids it)."""
    comp, val_comp = _dt.real_for(dt), _dt.real_for(val_dt)
    if dt.kind != "c" and val_dt.kind == "c":
        raise UnsupportedKernelError(f"cannot store {val_dt} values as {dt}")
    vals = [store_code(comp, cast_code(val_comp, comp, v)) for v in vals]
    if dt.kind == "c" and val_dt.kind != "c":
        vals.append(f"tl.full({shape}, 0, {comp_tl(dt)})")
    return [f"tl.store({ptrs if j == 0 else ptrs + ' + 1'}, {v}, mask={mask})"
            for j, v in enumerate(vals)]


def _decompose(lines, var, idx, n, sizes):
    """Coordinates of linear index ``idx`` over dims ``sizes`` (innermost first)."""
    lines.append(f"    rem_{var} = {idx}")
    for d in range(n - 1):
        lines.append(f"    {var}{d} = rem_{var} % {sizes}{d}")
        lines.append(f"    rem_{var} = rem_{var} // {sizes}{d}")
    if n:
        lines.append(f"    {var}{n - 1} = rem_{var}")


def reduction_source(spec: ReductionSpec) -> str:
    nk, nr = spec.nkept, spec.nred
    aux = spec.aux_dt is not None
    params = ["p_out"] + (["p_aux"] if aux else []) + ["p_in", "n_out", "n_red"]
    params += [f"ks{d}" for d in range(nk)] + [f"kso{d}" for d in range(nk)]
    params += [f"ksa{d}" for d in range(nk)] if aux else []
    params += [f"ksi{d}" for d in range(nk)]
    params += [f"rs{d}" for d in range(nr)] + [f"rsi{d}" for d in range(nr)]
    params += ["r_chunk", "div_lo", "div_hi", "BLOCK_O: tl.constexpr", "BLOCK_R: tl.constexpr",
               "TREE: tl.constexpr", "IDX64: tl.constexpr", "PARTIAL: tl.constexpr"]
    acc_tl = comp_tl(spec.acc)
    accs, a_s, b_s = (value_names(spec.acc, n) for n in ("acc", "a", "b"))
    tile = "(BLOCK_O, BLOCK_R)"
    lines = [
        f"# Generated by tensorlib.kernels.cuda.reduction: {spec.op} {spec.in_dt.name} -> "
        f"{spec.acc.name} -> {spec.out.name}, {nk} kept / {nr} reduced dims",
        "",
        "",
        "@jit",
        f"def combine({', '.join(a_s + b_s)}):",
        f"    return {spec.comb}",
        "",
        "",
        "@jit(do_not_specialize=['div_lo', 'div_hi'])",
        f"def kernel({', '.join(params)}):",
        "    pid = tl.program_id(0)",
        "    if IDX64:",
        "        o = pid.to(tl.int64) * BLOCK_O + tl.arange(0, BLOCK_O).to(tl.int64)",
        "        rr = tl.arange(0, BLOCK_R).to(tl.int64)",
        "    else:",
        "        o = pid * BLOCK_O + tl.arange(0, BLOCK_O)",
        "        rr = tl.arange(0, BLOCK_R)",
        "    omask = o < n_out",
    ]
    _decompose(lines, "k", "o", nk, "ks")
    for name, st in (("oo", "kso"), ("oi", "ksi")) + ((("oa", "ksa"),) if aux else ()):
        terms = " + ".join(f"k{d} * {st}{d}" for d in range(nk)) if nk else "o * 0"
        lines.append(f"    {name} = {terms}")
    if aux:
        ms = load_parts(spec.aux_dt, spec.aux_dt, "p_aux + oa", "omask", "(BLOCK_O,)")
        for name, m in zip(value_names(spec.aux_dt, "m"), ms):
            lines.append(f"    {name} = ({m})[:, None]")
    lines += [f"    {a} = tl.full({tile}, {init}, {acc_tl})" for a, init in zip(accs, spec.init)]
    # grid axis 1 splits the reduced elements into chunks of r_chunk (a multiple of BLOCK_R)
    lines += [
        "    sid = tl.program_id(1)",
        "    if IDX64:",
        "        r_lo = sid.to(tl.int64) * r_chunk",
        "    else:",
        "        r_lo = sid * r_chunk",
        "    for start in range(r_lo, r_lo + r_chunk, BLOCK_R):",
        "        r = start + rr",
    ]
    body = []
    _decompose(body, "q", "r", nr, "rs")
    lines += ["    " + ln for ln in body]
    terms = " + ".join(f"q{d} * rsi{d}" for d in range(nr)) if nr else "r * 0"
    lines += [
        f"        ri = {terms}",
        "        mask = omask[:, None] & (r < n_red)[None, :]",
    ]
    loads = load_parts(spec.in_dt, spec.load_dt, "p_in + (oi[:, None] + ri[None, :])", "mask",
                       tile)
    for name, v in zip(value_names(spec.load_dt, "v"), loads):
        lines.append(f"        {name} = {v}")
    vs = value_names(spec.acc, "v")
    lines.append(f"        {', '.join(vs)} = "
                 + ", ".join(f"({f}).to({acc_tl})" for f in spec.fmap))
    masked = ", ".join(f"tl.where(mask, {v}, tl.full({tile}, {init}, {acc_tl}))"
                       for v, init in zip(vs, spec.init))
    lines += [
        f"        {', '.join(accs)} = combine({', '.join(accs)}, {masked})",
        "    if TREE:",
        "        for _ in tl.static_range(BLOCK_R.bit_length() - 1):",
    ]
    for acc, a, b in zip(accs, a_s, b_s):
        lines.append(f"            {a}, {b} = tl.split(tl.reshape({acc}, "
                     f"(BLOCK_O, {acc}.shape[1] // 2, 2)))")
    lines.append(f"            {', '.join(accs)} = combine({', '.join(a_s + b_s)})")
    lines += [f"        {acc} = tl.reshape({acc}, (BLOCK_O,))" for acc in accs]
    lines.append("    else:")
    lines.append(f"        {', '.join(accs)} = tl.reduce({tuple_code(accs)}, 1, combine)")
    # a partial result: the chunk's accumulator, stored at [sid, o] of a contiguous
    # (n_split, n_out) buffer of the accumulator dtype (p_out points at it); a second
    # reduction (split_spec) combines the chunks and finishes
    scale = 2 if spec.acc.kind == "c" else 1
    lines.append("    if PARTIAL:")
    lines += ["        " + st for st in store_parts(
        spec.acc, spec.acc, accs, f"p_out + (sid * n_out + o) * {scale}", "omask", "(BLOCK_O,)")]
    lines.append("    else:")
    lines.append(f"        div = {scalar_code(_dt.float64, 'div_lo', 'div_hi')}")
    res = value_names(spec.fin_dt, "res")
    lines.append(f"        {', '.join(res)} = {', '.join(spec.fin)}")
    lines += ["        " + st for st in store_parts(spec.out, spec.fin_dt, res, "p_out + oo",
                                                     "omask", "(BLOCK_O,)")]
    return "\n".join(lines) + "\n"


def _kernel_for(spec, mode):
    return _launch.cached_module(spec.key, f"red_{spec.op}", lambda: reduction_source(spec),
                                 mode).kernel


def _lit(dtype, value):
    """A Triton literal of ``value`` typed ``dtype``'s value type."""
    if dtype is _dt.bool_:
        return "True" if value else "False"
    if isinstance(value, float):
        if math.isinf(value):
            return "float('-inf')" if value < 0 else "float('inf')"
        return repr(value)
    return str(int(value))


def _split_dims(it):
    lay = it.layout()
    out_s = lay.strides[0]
    kept = [d for d in range(len(lay.shape)) if out_s[d] != 0]
    red = [d for d in range(len(lay.shape)) if out_s[d] == 0]
    return lay, kept, red


def _fits(shape, strides, n_out, n_red):
    """Whether int32 indices suffice: ``strides`` per operand (component units for complex;
    their imaginary part lies one further)."""
    # lanes of the last block / chunk run past the end: keep their indices in int32 too
    if max(n_out, n_red) > _I32_MAX - (1 << 16):
        return False
    for st in strides:
        span = sum((shape[d] - 1) * abs(st[d]) for d in range(len(shape)))
        if span + 1 > _I32_MAX:
            return False
    return True


def _operands(it, lay):
    """Each operand's pointer argument and element strides; a complex tensor is addressed by
    its real component (pointwise.component_operands: doubled offset and strides, imaginary
    part at +1)."""
    return [component_operands(t, st, off)[0]
            for t, st, off in zip(it.operands, lay.strides, lay.offsets)]


def _tiles(mode, n_out, n_red, inner):
    """(BLOCK_O, BLOCK_R, num_warps)."""
    if mode == "interpret":
        bo = min(_launch.next_pow2(n_out), 64)
        return bo, min(_launch.next_pow2(n_red), max(16, 4096 // bo)), 4
    if n_out == 1:
        return GPU_TILES["full"]  # no lanes wasted on outputs that do not exist
    return GPU_TILES["inner" if inner else "outer"]


_SMS: dict = {}


def _sm_count(device: int) -> int:
    n = _SMS.get(device)
    if n is None:
        from ...runtime.cuda import context
        n = _SMS[device] = context.state.driver.get_properties(device).multi_processor_count
    return n


def _split(mode, device, n_out, n_red, bo, br):
    """(n_split, r_chunk): how many programs share each output's reduced elements. With few
    outputs (a full reduction has one) one program per output would walk millions of
    elements alone while the GPU's other SMs idle; splitting the reduced range into chunks
    (partial results, then one combining pass) keeps about 4 programs per SM busy. The
    interpreter splits from much smaller sizes so the tests reach this path."""
    programs = _launch.cdiv(n_out, bo)
    if mode == "interpret":
        target, min_chunk = 4, 2 * br
    else:
        target, min_chunk = 4 * _sm_count(device), 8 * br
    if programs >= target or n_red < 2 * min_chunk:
        return 1, n_red
    n_split = min(_launch.cdiv(target, programs), _launch.cdiv(n_red, min_chunk))
    chunk = _launch.cdiv(_launch.cdiv(n_red, n_split), br) * br
    return _launch.cdiv(n_red, chunk), chunk


class _Plan:
    """A reduction's launches for one (spec, layout): kernels, grids, options and the size /
    stride arguments, computed once (``_plans``); a call adds pointers and the divisor."""

    __slots__ = ("first", "final", "n_split", "n_out", "acc")

    def __init__(self, first, final, n_split, n_out, acc):
        # first / final: (kernel, grid, size-and-stride args, launch options); final is None
        # unless the reduction is split (stage 1 stores partials, stage 2 combines them)
        self.first, self.final, self.n_split, self.n_out, self.acc = \
            first, final, n_split, n_out, acc

    def run(self, ptrs, div, device):
        words = list(_launch.pack_scalar(_dt.float64.np_dtype.type(div), _dt.float64))
        kernel, grid, mid, options = self.first
        if self.final is None:
            _launch.launch(kernel, grid, ptrs + mid + words, device.index, **options)
            return
        from ...allocation import empty
        part = empty((self.n_split * self.n_out,), dtype=self.acc, device=device)
        part_arg = _launch.arg_for(part._storage.data_ptr(), self.acc)
        _launch.launch(kernel, grid, [part_arg] + ptrs[1:] + mid + words, device.index,
                       **options)
        kernel, grid, mid, options = self.final
        _launch.launch(kernel, grid, [ptrs[0], part_arg] + mid + words, device.index,
                       **options)
        # the stream orders both launches; the allocator keeps part's block for this stream
        del part


def _options(mode, tiles, idx64, partial):
    bo, br, warps = tiles
    return dict(BLOCK_O=bo, BLOCK_R=br, TREE=mode == "interpret", IDX64=idx64,
                PARTIAL=partial, num_warps=warps, enable_fp_fusion=False)


def _plan(it, lay, spec_args, mode):
    _, kept, red = _split_dims(it)
    ops = _operands(it, lay)
    if not red:  # nothing reduced along a non-trivial dim (e.g. reducing size-1 dims)
        red_sizes, red_in = [1], [0]
    else:
        red_sizes = [lay.shape[d] for d in red]
        red_in = [ops[-1].strides[d] for d in red]
    kept_sizes = [lay.shape[d] for d in kept]
    n_out = math.prod(kept_sizes)
    n_red = math.prod(red_sizes)
    spec = ReductionSpec(nkept=len(kept), nred=len(red_sizes), **spec_args)
    tiles = _tiles(mode, n_out, n_red, bool(red) and red[0] == 0)
    n_split, chunk = _split(mode, it.device.index, n_out, n_red, tiles[0], tiles[1])
    out_kept = [ops[0].strides[d] for d in kept]
    mid = [n_out, n_red] + kept_sizes + out_kept
    mid += [ops[1].strides[d] for d in kept] if it.naux > 0 else []
    mid += [ops[-1].strides[d] for d in kept] + red_sizes + red_in + [chunk]
    idx64 = not _fits(lay.shape, [op.strides for op in ops], n_out, n_red)
    first = (_kernel_for(spec, mode), (_launch.cdiv(n_out, tiles[0]), n_split), mid,
             _options(mode, tiles, idx64, n_split > 1))
    if n_split == 1:
        return _Plan(first, None, 1, n_out, spec.acc)
    # stage 2 combines the chunks of each output (its kept coordinates are o's digits, so
    # the partials' strides over the kept dims are contiguous) and finishes
    scale = 2 if spec.acc.kind == "c" else 1
    part_kept = list(itertools.accumulate([scale] + kept_sizes[:-1], operator.mul))[:len(kept)]
    final_spec = ReductionSpec(op=spec_args["op"], in_dt=spec.acc, acc=spec.acc, out=spec.out,
                               init=spec_args["init"], comb=spec_args["comb"],
                               fin=spec_args.get("fin"), fin_dt=spec_args.get("fin_dt"),
                               nkept=len(kept), nred=1)
    tiles2 = _tiles(mode, n_out, n_split, n_out == 1)
    mid2 = [n_out, n_split] + kept_sizes + out_kept + part_kept
    mid2 += [n_split, n_out * scale, n_split]
    final = (_kernel_for(final_spec, mode), (_launch.cdiv(n_out, tiles2[0]), 1), mid2,
             _options(mode, tiles2, idx64, False))
    return _Plan(first, final, n_split, n_out, spec.acc)


_plans: dict = {}  # (spec, operand dtypes, layout, mode, device) -> _Plan
_PLANS_MAX = 4096


def _run(it, spec_args, div=1.0):
    lay = it.layout()
    mode = _launch.current_mode()
    ops = it.operands
    key = (tuple(spec_args.items()), tuple(lay.shape), tuple(lay.strides), it.naux, mode,
           it.device.index, tuple(t._dtype for t in ops))
    plan = _plans.get(key)
    if plan is None:
        plan = _plan(it, lay, spec_args, mode)
        if len(_plans) >= _PLANS_MAX:
            _plans.pop(next(iter(_plans)))
        _plans[key] = plan
    arg_for = _launch.arg_for
    ptrs = []
    for t, off in zip(ops, lay.offsets):  # complex: the real component's pointer
        if t._dtype.kind == "c":
            ptrs.append(arg_for(t._storage.data_ptr(), _dt.real_for(t._dtype), off * 2))
        else:
            ptrs.append(arg_for(t._storage.data_ptr(), t._dtype, off))
    plan.run(ptrs, div, it.device)


def _in(it):
    return it.operands[-1]._dtype


def _value_dt(dtype):
    return _dt.float32 if dtype in (_dt.float16, _dt.bfloat16) else dtype


# complex combines over (re, im) pairs, written as the CPU's (Numba's) complex + and *
COMPLEX_COMB = {"sum": "a_re + b_re, a_im + b_im",
                 "prod": "a_re * b_re - a_im * b_im, a_re * b_im + a_im * b_re"}


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


# ---- argmax / argmin ---------------------------------------------------------------------------
class ArgSpec:
    """One generated argmax/argmin kernel: input dtype, value dtype compared (``acc``: float32
    for half types, uint8 for bool), output (index) dtype, number of kept dims."""

    __slots__ = ("op", "in_dt", "acc", "out", "nkept", "key")

    def __init__(self, op, in_dt, acc, out, nkept):
        self.op, self.in_dt, self.acc, self.out, self.nkept = op, in_dt, acc, out, nkept
        self.key = (op, in_dt, acc, out, nkept)


def arg_reduction_source(spec: ArgSpec) -> str:
    """Each lane of a [BLOCK_O, BLOCK_R] tile keeps its best (value, index); a lane takes an
    element when it is strictly better or the lane has none yet (index == n_red), so per lane
    the first extreme wins. The lanes are then combined pairwise: better value, or an equal
    value (two nans are equal here) with the lower index. A lane with no element holds the
    worst value and index n_red, so it never beats a real one."""
    nk = spec.nkept
    acc_tl = VALUE_TL[spec.acc]
    cmp = ">" if spec.op == "argmax" else "<"
    if spec.acc.kind == "f":
        init = _lit(spec.acc, -math.inf if spec.op == "argmax" else math.inf)
        better = f"(v {cmp} b) | ((v != v) & (b == b))"
        same = "(bv == av) | ((bv != bv) & (av != av))"
    else:
        info = _dt.iinfo(spec.acc)
        init = _lit(spec.acc, info.min if spec.op == "argmax" else info.max)
        better = f"v {cmp} b"
        same = "bv == av"
    # p_idx / PAIRS: the inputs are (value, index) pairs (stage 2 of a split reduction:
    # p_in holds the chunks' best values, p_idx their indices); n_none is the index meaning
    # "no element yet" (the original reduced length). PARTIAL: store the pair of each chunk
    # at [sid, o] (p_out: int64 indices, p_vout: values) instead of the result.
    params = ["p_out", "p_vout", "p_in", "p_idx", "n_out", "n_red", "n_none"]
    params += [f"ks{d}" for d in range(nk)] + [f"kso{d}" for d in range(nk)]
    params += [f"ksi{d}" for d in range(nk)]
    params += ["rsi", "r_chunk", "BLOCK_O: tl.constexpr", "BLOCK_R: tl.constexpr",
               "TREE: tl.constexpr", "IDX64: tl.constexpr", "PARTIAL: tl.constexpr",
               "PAIRS: tl.constexpr"]
    at = "(oi[:, None] + r[None, :] * rsi)"
    load = load_code(spec.in_dt, f"tl.load(p_in + {at}, mask=mask, other=0)")
    lines = [
        f"# Generated by tensorlib.kernels.cuda.reduction: {spec.op} {spec.in_dt.name} -> "
        f"{spec.acc.name} -> index {spec.out.name}, {nk} kept dims",
        "",
        "",
        "@jit",
        "def better(v, b):",
        f"    return {better}",
        "",
        "",
        "@jit",
        "def combine(av, ai, bv, bi):",
        f"    take = better(bv, av) | (({same}) & (bi < ai))",
        "    return tl.where(take, bv, av), tl.where(take, bi, ai)",
        "",
        "",
        "@jit",
        f"def kernel({', '.join(params)}):",
        "    pid = tl.program_id(0)",
        "    if IDX64:",
        "        o = pid.to(tl.int64) * BLOCK_O + tl.arange(0, BLOCK_O).to(tl.int64)",
        "        rr = tl.arange(0, BLOCK_R).to(tl.int64)",
        "    else:",
        "        o = pid * BLOCK_O + tl.arange(0, BLOCK_O)",
        "        rr = tl.arange(0, BLOCK_R)",
        "    omask = o < n_out",
    ]
    _decompose(lines, "k", "o", nk, "ks")
    for name, st in (("oo", "kso"), ("oi", "ksi")):
        terms = " + ".join(f"k{d} * {st}{d}" for d in range(nk)) if nk else "o * 0"
        lines.append(f"    {name} = {terms}")
    lines += [
        f"    best = tl.full((BLOCK_O, BLOCK_R), {init}, {acc_tl})",
        "    bidx = (o[:, None] * 0 + rr[None, :] * 0) + n_none  # n_none: no element yet",
        "    sid = tl.program_id(1)",
        "    if IDX64 or PAIRS:",
        "        bidx = bidx.to(tl.int64)",
        "        r_lo = sid.to(tl.int64) * r_chunk",
        "    else:",
        "        r_lo = sid * r_chunk",
        "    for start in range(r_lo, r_lo + r_chunk, BLOCK_R):",
        "        r = start + rr",
        "        mask = omask[:, None] & (r < n_red)[None, :]",
        f"        v = {cast_code(spec.in_dt, spec.acc, load)}",
        "        if PAIRS:",
        f"            ix = tl.load(p_idx + {at}, mask=mask, other=0)",
        "        else:",
        "            ix = r[None, :] + bidx * 0",
        "        take = mask & (better(v, best) | (bidx == n_none))",
        "        best = tl.where(take, v, best)",
        "        bidx = tl.where(take, ix, bidx)",
        "    if TREE:",
        "        for _ in tl.static_range(BLOCK_R.bit_length() - 1):",
        "            av, bv = tl.split(tl.reshape(best, (BLOCK_O, best.shape[1] // 2, 2)))",
        "            ai, bi = tl.split(tl.reshape(bidx, (BLOCK_O, bidx.shape[1] // 2, 2)))",
        "            best, bidx = combine(av, ai, bv, bi)",
        "        best = tl.reshape(best, (BLOCK_O,))",
        "        bidx = tl.reshape(bidx, (BLOCK_O,))",
        "    else:",
        "        best, bidx = tl.reduce((best, bidx), 1, combine)",
        "    res = bidx.to(tl.int64)",
        "    if PARTIAL:",
        "        tl.store(p_out + (sid * n_out + o), res, mask=omask)",
    ]
    lines += ["        " + st for st in store_parts(spec.acc, spec.acc, ["best"],
                                                     "p_vout + (sid * n_out + o)", "omask",
                                                     "(BLOCK_O,)")]
    lines.append("    else:")
    lines += ["        " + st for st in store_parts(spec.out, _dt.int64, ["res"], "p_out + oo",
                                                     "omask", "(BLOCK_O,)")]
    return "\n".join(lines) + "\n"


def _arg_kernel_for(spec, mode):
    return _launch.cached_module(("arg", spec.key), f"red_{spec.op}",
                                 lambda: arg_reduction_source(spec), mode).kernel


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

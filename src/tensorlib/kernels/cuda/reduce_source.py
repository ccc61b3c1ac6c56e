"""Triton source of the CUDA reduction kernels: value reductions (sum, prod, mean, max, min,
any, all, var, std) and argmax / argmin. reduce_plan.py caches their launches and splits long
reductions; reduction.py holds the stub entry points that fill the specs.

A kernel reads ``TensorIterator.reduce``'s layout (dim 0 innermost; operand 0 is the output
viewed with stride 0 along reduced dims, then the aux operand of var/std — the mean — then the
input) as kept dims and reduced dims. A program owns BLOCK_O outputs and walks the reduced
elements in [BLOCK_O, BLOCK_R] tiles, combining them elementwise into a tile accumulator; the
tile is reduced along its second axis at the end (``tl.reduce`` on a GPU; a halving tree of
reshape/split in the interpreter, whose tl.reduce would call the combine function once per
element in Python). Grid axis 1 splits the reduced elements into chunks: with ``PARTIAL`` a
program stores its chunk's accumulator (argmax: its (value, first index) pair) and a second
kernel of the same template combines the chunks and finishes.

Complex values (Triton has no complex type) are (re, im) pairs of component tiles: a complex
tensor is passed as a pointer to its real component with doubled offset and strides (the
imaginary part one element further), the accumulator is two tiles, and the combine takes and
returns pairs (``tl.reduce`` accepts tuples). The helpers for such pairs (``value_names``,
``load_parts``, ``store_parts``...) are shared with scan.py.

The generated text is the kernel cache's key: its header still names kernels.cuda.reduction
(where these templates lived before the split), so the text is unchanged.
"""
from __future__ import annotations

import math

from ... import dtypes as _dt
from ...dispatch.stub import UnsupportedKernelError
from .pointwise_source import VALUE_TL, cast_code, load_code, scalar_code, store_code

__all__ = ["ReductionSpec", "reduction_source", "ArgSpec", "arg_reduction_source",
           "COMPLEX_COMB", "value_names", "comp_tl", "tuple_code", "load_parts", "store_parts",
           "lit"]


# complex combines over (re, im) pairs, written as the CPU's (Numba's) complex + and *
COMPLEX_COMB = {"sum": "a_re + b_re, a_im + b_im",
                 "prod": "a_re * b_re - a_im * b_im, a_re * b_im + a_im * b_re"}


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


# ---- complex values as component pairs ----------------------------------------------------------
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


def lit(dtype, value):
    """A Triton literal of ``value`` typed ``dtype``'s value type."""
    if dtype is _dt.bool_:
        return "True" if value else "False"
    if isinstance(value, float):
        if math.isinf(value):
            return "float('-inf')" if value < 0 else "float('inf')"
        return repr(value)
    return str(int(value))


# ---- argmax / argmin ----------------------------------------------------------------------------
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
        init = lit(spec.acc, -math.inf if spec.op == "argmax" else math.inf)
        better = f"(v {cmp} b) | ((v != v) & (b == b))"
        same = "(bv == av) | ((bv != bv) & (av != av))"
    else:
        info = _dt.iinfo(spec.acc)
        init = lit(spec.acc, info.min if spec.op == "argmax" else info.max)
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


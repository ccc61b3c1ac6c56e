"""First calls of the CPU reductions (kernels/cpu/reduction.py), while the full kernel a call
would run is neither compiled in this process nor in the disk cache.

A full reduction kernel costs 0.5-2.5 s to compile (serial_rows of max / argmax / sum, the
outer mode of a sum along axis 0); a script that reduces once would wait for that. Here the
same results come, bit for bit, from NumPy steps and at most the module's own small ``block``
kernel:

* exact reductions (max / min, argmax / argmin, integer sum / prod, any / all) are NumPy's
  reductions, whose value or index is the kernel's (any order gives it), with the kernel's
  choices where more than one bit pattern is "the" answer: a float max / min over contiguous
  rows returns the canonical nan (the integer-key block does) and, for a zero result, the sign
  the block of the first zero picks (+0.0 for max when that block holds one, -0.0 for min); the
  outer mode (dim 0 kept) keeps the last nan and the first zero in row order (its select);
* float sums (sum, mean, prod, var / std) over contiguous rows call the module's ``block``
  (the very kernel serial_rows calls, with its vectorized partial sums) per block of BLOCK
  elements and fold the block results in the same two-level cascade in NumPy scalars;
* the outer mode repeats serial_outer's fixed order in NumPy array operations: four rows
  combined as ((x0 . x1) . (x2 . x3)), then folded into the column accumulators in row order
  (no reassociation there: each step is one IEEE operation, as NumPy's);
* cumsum / cumprod are NumPy's accumulate from the kernel's initial value (0 + x0 is +0.0 for
  x0 = -0.0, as the kernel's first step), a strictly sequential fold as the kernel's loop.

A float sum or scan that meets an input nan runs the full kernel instead: which payload
survives when two nans meet depends on the operand order LLVM chose (fadd commutes).

A layout or dtype outside these (strided rows, more kept / reduced dims, half or complex
results, too many Python-level steps) is not supported (value_supported / arg_supported say
so): the caller compiles the full kernel.
reduction.py decides when the full kernel is worth compiling instead (cores.parallel_ready's
rule: the combination repeats with real work) and starts it on a background thread.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ... import dtypes as _dt
from .reduce_common import BLOCK, FAN, MINMAX_BLOCK

__all__ = ["value_supported", "value_cold", "arg_supported", "arg_cold", "scan_supported",
           "scan_cold", "MAX_STEPS"]

MAX_STEPS = 8192  # Python-level steps (block calls, row folds) a cold call may take
MAX_COPY = 1 << 24  # elements the outer mode's NumPy steps may copy

_FLOATS = (_dt.float32, _dt.float64)


def _view(arr, off, shape, strides):
    """The elements of 1-D ``arr`` at ``off + sum(i_d * strides[d])`` as an array of shape."""
    isz = arr.itemsize
    return as_strided(arr[off:], shape, tuple(s * isz for s in strides))


def _np(d):
    return np.bool_ if d is _dt.bool_ else d.np_dtype.type


def _plain(d):
    # dtypes NumPy holds as themselves in kernel arrays (not the raw-bits half types)
    return d is _dt.bool_ or (d.kind in "iuf" and d not in (_dt.float16, _dt.bfloat16))


_SELECT = {
    "b if (b > a or b != b) else a": lambda a, b: np.where((b > a) | (b != b), b, a),
    "b if (b < a or b != b) else a": lambda a, b: np.where((b < a) | (b != b), b, a),
    "b if b > a else a": lambda a, b: np.where(b > a, b, a),
    "b if b < a else a": lambda a, b: np.where(b < a, b, a),
    "a + b": np.add, "a * b": np.multiply, "a | b": np.bitwise_or, "a & b": np.bitwise_and,
}
_ACCUMULATE = {"a + b": np.add, "a * b": np.multiply}
_FINS = {"acc": lambda acc, div: acc, "acc / div": lambda acc, div: acc / div,
         "np.sqrt(acc / div)": lambda acc, div: np.sqrt(acc / div)}
_FMAPS = {"v": lambda v, m: v, "(v != 0)": lambda v, m: v != 0,
          "(v - m) * (v - m)": lambda v, m: (v - m) * (v - m)}


def _fin(spec, acc, div):
    """fin(acc, div) cast to the output dtype: in the fin dtype (float64 for a division),
    then rounded once, as the kernel's cast does."""
    if spec.fin == "acc":
        return acc
    fin_np = _np(spec.fin_dt)
    if isinstance(acc, np.ndarray):
        acc = acc.astype(fin_np)
    else:
        acc = fin_np(acc)
    return _FINS[spec.fin](acc, np.float64(div))


# ---------------------------------------------------------------- value reductions
def _exact_kind(spec):
    """'minmax' / 'intsum' / 'logical' / 'count' when NumPy's own reduction gives the kernel's
    answer, None otherwise."""
    ins, acc, out = spec.in_dt, spec.acc_dt, spec.out_dt
    if not _plain(ins):
        return None
    if spec.op in ("max", "min"):
        if acc is ins or (ins is _dt.bool_ and acc is _dt.uint8):
            return "minmax"
    elif spec.op in ("sum", "prod") and acc.kind in "iu" and out is acc and spec.aux_dt is None:
        return "intsum"
    elif spec.op in ("any", "all") and ins.kind != "c":
        return "logical"
    elif spec.op == "count_nonzero":
        return "count"
    return None


def _exact_rows(spec, kind, x):
    """The kernel's answer per row of x (2-D) for an exact kind, on contiguous rows."""
    if kind == "logical":
        return x.any(axis=1) if spec.op == "any" else x.all(axis=1)
    if kind == "count":
        return np.count_nonzero(x, axis=1)
    if kind == "intsum":
        red = np.sum if spec.op == "sum" else np.prod
        return red(x, axis=1, dtype=_np(spec.acc_dt))
    r = x.max(axis=1) if spec.op == "max" else x.min(axis=1)
    if spec.in_dt in _FLOATS:
        # the integer-key block: a canonical nan, and a zero's sign from the first block
        # holding a zero (+0.0 if it has one for max, -0.0 if it has one for min)
        r[np.isnan(r)] = np.nan
        rows = np.flatnonzero(r == 0)
        if rows.size:
            z = x[rows] == 0
            start = np.argmax(z, axis=1) // MINMAX_BLOCK * MINMAX_BLOCK
            end = np.minimum(start + MINMAX_BLOCK, x.shape[1])
            # zeros of the sign that wins (+0.0 for max), counted up to each column
            won = np.cumsum(z & (np.signbit(x[rows]) == (spec.op == "min")), axis=1)
            idx = np.arange(rows.size)
            before = np.where(start > 0, won[idx, np.maximum(start - 1, 0)], 0)
            has = won[idx, end - 1] > before
            sign = has if spec.op == "min" else ~has
            r[rows] = np.where(sign, -0.0, 0.0).astype(r.dtype)
    return r


def _exact_outer(spec, kind, x):
    """The kernel's answer per column of x (rows: the reduced dim) in outer mode."""
    if kind != "minmax" or spec.in_dt not in _FLOATS:
        return _exact_rows(spec, kind, x.T)
    r = x.max(axis=0) if spec.op == "max" else x.min(axis=0)
    # the select keeps the last nan and the first of tied zeros, in row order
    nan = np.flatnonzero(np.isnan(r))
    if nan.size:
        last = x.shape[0] - 1 - np.argmax(np.isnan(x[::-1, nan]), axis=0)
        r[nan] = x[last, nan]
    zero = np.flatnonzero(r == 0)
    if zero.size:
        r[zero] = x[np.argmax(x[:, zero] == 0, axis=0), zero]
    return r


def _block_rows(spec, mod, out, aux, inp, div, n0, nkept, pi, si, po, so, pa, sa):
    """serial_rows's loop with its own compiled block: the same block results, folded in the
    same cascade in NumPy scalars of the accumulator dtype."""
    block = mod.block
    acc_np = _np(spec.acc_dt)
    out_np = out.dtype.type
    init = acc_np(eval(spec.init, {"np": np}))  # noqa: S307 - a literal of our own source
    comb = _SELECT[spec.comb]
    has_aux = spec.aux_dt is not None
    for j in range(nkept):
        q = pi + j * si
        l1 = l2 = init
        cnt = 0
        i = 0
        while i < n0:
            nb = min(BLOCK, n0 - i)
            if has_aux:
                b = block(inp, q + i, 1, nb, aux[pa + j * sa])
            else:
                b = block(inp, q + i, 1, nb)
            l1 = comb(l1, acc_np(b))
            cnt += 1
            if cnt == FAN:
                l2 = comb(l2, l1)
                l1 = init
                cnt = 0
            i += nb
        r = out_np(_fin(spec, comb(l2, l1), div))
        if r != r:
            _check_nan(r, inp[q:q + n0], spec.in_dt)
        out[po + j * so] = r


def value_supported(spec, meta):
    """Whether value_cold serves this value reduction (``spec``) of layout ``meta``
    (reduction.py's value layout): contiguous rows with at most one kept dim, or the outer
    mode with at most one kept and one reduced dim besides dim 0, real dtypes."""
    inner, n0 = meta[0], int(meta[1])
    nk, nr = int(meta[8]), int(meta[9])
    if nk > 1 or nr > (0 if inner else 1) or spec.acc_dt.kind == "c":
        return False
    nkept = int(meta[12]) if nk else 1
    kind = _exact_kind(spec)
    if inner:
        if meta[4] != 1:
            return False
        return kind is not None or (spec.out_dt in _FLOATS and spec.fmap in _FMAPS and
                                    nkept * -(-n0 // BLOCK) <= MAX_STEPS)
    if kind is not None:
        return True
    nrows = int(meta[12 + 4 * nk]) if nr else 1
    steps = nkept * (nrows // 4 + 4 if spec.comb in _ACCUMULATE else nrows)
    return (spec.comb in _SELECT and spec.fmap in _FMAPS and _plain(spec.in_dt)
            and spec.out_dt in _FLOATS + (spec.acc_dt,) and steps <= MAX_STEPS
            and nrows * n0 <= MAX_COPY)


class _Ambiguous(Exception):
    """A float sum met an input nan: which payload the result keeps when two nans meet
    depends on the operand order LLVM chose for the kernel (fadd commutes)."""


def value_cold(spec, mod, full, meta, out, aux, inp, div):
    """Runs the value reduction of ``spec`` (``mod``: its generated module) described by
    ``meta`` without its full kernel (a layout value_supported accepts); when a float sum
    meets an input nan, runs the full kernel ``full`` instead (it compiles: rare on a first
    call, and the only way to the kernel's nan payload)."""
    try:
        with np.errstate(all="ignore"):  # (the kernels raise no floating-point warnings)
            _value_cold(spec, mod, meta, out, aux, inp, div)
    except _Ambiguous:
        full(meta, out, aux, inp, div)


def _check_nan(r, x, in_dt):
    """Raises _Ambiguous when a nan result r comes from input nans in x (not only from inf -
    inf, whose nan is the one default nan whatever the order)."""
    if not np.isnan(r).any():
        return
    if in_dt in (_dt.float16, _dt.bfloat16):  # raw bits
        nan = (x & 0x7FFF) > (0x7C00 if in_dt is _dt.float16 else 0x7F80)
    else:
        nan = np.isnan(x)
    if nan.any():
        raise _Ambiguous


def _value_cold(spec, mod, meta, out, aux, inp, div):
    # bool inputs come as their bytes (reduction.input_array); NumPy's steps read them as bool,
    # the module's own block kernel as the kernels do
    block_inp = inp
    if spec.in_dt is _dt.bool_:
        inp = inp.view(np.bool_)
    inner, n0 = meta[0], int(meta[1])
    nk, nr = int(meta[8]), int(meta[9])
    po, pa, pi = int(meta[5]), int(meta[6]), int(meta[7])
    nkept, so, sa, si = (int(v) for v in meta[12:16]) if nk else (1, 0, 0, 0)
    kind = _exact_kind(spec)
    if inner:
        if kind is not None:
            r = _exact_rows(spec, kind, _view(inp, pi, (nkept, n0), (si, 1)))
            _view(out, po, (nkept,), (so,))[...] = r
        else:
            _block_rows(spec, mod, out, aux, block_inp, div, n0, nkept, pi, si, po, so, pa,
                        sa)
        return
    # outer mode: dim 0 kept (columns), at most one reduced dim (rows) and one more kept dim
    os0, as0, is0 = int(meta[2]), int(meta[3]), int(meta[4])
    rb = 12 + 4 * nk
    nrows, rstride = (int(meta[rb]), int(meta[rb + 1])) if nr else (1, 0)
    for j in range(nkept):
        x = _view(inp, pi + j * si, (nrows, n0), (rstride, is0))
        o = _view(out, po + j * so, (n0,), (os0,))
        if kind is not None:
            o[...] = _exact_outer(spec, kind, x)
            continue
        m = _view(aux, pa + j * sa, (n0,), (as0,)) if spec.aux_dt is not None else None
        f = _FMAPS[spec.fmap](x.astype(_np(spec.load_dt)), m)
        r = _fin(spec, _outer_fold(spec, f, is0), div)
        if r.dtype.kind == "f":
            bad = np.isnan(r)
            if bad.any():
                _check_nan(r, x[:, bad], spec.in_dt)
        o[...] = r


def _outer_fold(spec, f, is0):
    """serial_outer's accumulation of the mapped rows f (rows, columns) per column."""
    acc_np = _np(spec.acc_dt)
    init = acc_np(eval(spec.init, {"np": np}))  # noqa: S307 - a literal of our own source
    comb = _SELECT[spec.comb]
    f = f.astype(acc_np, copy=False)
    k = f.shape[0] // 4 if is0 == 1 else 0
    steps = [np.full((1, f.shape[1]), init, acc_np)]
    if k:
        steps.append(comb(comb(f[0:4 * k:4], f[1:4 * k:4]), comb(f[2:4 * k:4], f[3:4 * k:4])))
    steps.append(f[4 * k:])
    seq = np.concatenate(steps)
    acc = _ACCUMULATE.get(spec.comb)
    if acc is not None:
        # accumulate is the sequential fold r[i] = r[i - 1] . seq[i], as the kernel's loop
        return acc.accumulate(seq, axis=0)[-1]
    r = seq[0]
    for row in seq[1:]:
        r = comb(r, row)
    return r


# ---------------------------------------------------------------- argmax / argmin
def arg_supported(in_dt, meta):
    """Whether arg_cold serves argmax / argmin of ``in_dt`` and layout ``meta`` (reduction.py's
    arg layout): contiguous rows with at most one kept dim, or the outer mode with at most one
    kept dim besides dim 0."""
    if not (in_dt is _dt.float16 or _plain(in_dt)):
        return False
    inner = meta[0]
    nk, nr = int(meta[6]), int(meta[7])
    return nk <= 1 and nr <= (0 if inner else 1) and (not inner or meta[3] == 1)


def arg_cold(op, in_dt, meta, out, inp):
    """argmax / argmin (``op``) of the layout ``meta`` through NumPy's (a layout
    arg_supported accepts): the first extreme, a nan counting as the extreme (the first nan
    wins), -0.0 and +0.0 tied, as the kernels."""
    if in_dt is _dt.float16:
        inp = inp.view(np.float16)
    elif in_dt is _dt.bool_:
        inp = inp.view(np.bool_)  # (its bytes: reduction.input_array)
    inner, n0 = meta[0], int(meta[1])
    nk, nr = int(meta[6]), int(meta[7])
    po, pi = int(meta[4]), int(meta[5])
    nkept, so, si = (int(v) for v in meta[9:12]) if nk else (1, 0, 0)
    red = np.argmax if op == "argmax" else np.argmin
    if inner:
        _view(out, po, (nkept,), (so,))[...] = red(_view(inp, pi, (nkept, n0), (si, 1)), axis=1)
        return
    os0, is0 = int(meta[2]), int(meta[3])
    rb = 9 + 3 * nk
    nrows, rstride = (int(meta[rb]), int(meta[rb + 1])) if nr else (1, 0)
    for j in range(nkept):
        x = _view(inp, pi + j * si, (nrows, n0), (rstride, is0))
        _view(out, po + j * so, (n0,), (os0,))[...] = red(x, axis=0)


# ---------------------------------------------------------------- cumsum / cumprod
def scan_supported(in_dt, acc, out_dt, meta):
    """Whether scan_cold serves this scan: real dtypes NumPy holds as themselves, loads that
    are exact conversions (integers to int64 / uint64, a float to itself), a result in the
    accumulator dtype, at most MAX_COPY elements."""
    if not (_plain(in_dt) and out_dt is acc and acc.kind in "iuf"):
        return False
    if acc.kind == "f" and in_dt is not acc:
        return False
    n, nd = int(meta[1]), int(meta[4])
    return n * int(np.prod(meta[8:8 + nd])) <= MAX_COPY


def scan_cold(op, acc, full, meta, out, inp):
    """cumsum / cumprod (``op``) of the scan layout ``meta`` (reduction.py's scan layout; a
    layout scan_supported accepts) through NumPy's accumulate; the full kernel ``full``
    when a float input holds a nan."""
    n, osa, isa, nd = int(meta[1]), int(meta[2]), int(meta[3]), int(meta[4])
    sizes = tuple(int(v) for v in meta[8:8 + nd])
    ost = tuple(int(v) for v in meta[8 + nd:8 + 2 * nd])
    ist = tuple(int(v) for v in meta[8 + 2 * nd:8 + 3 * nd])
    x = _view(inp, int(meta[7]), sizes + (n,), ist + (isa,))
    if acc.kind == "f" and np.isnan(x).any():
        full(meta, out, inp)
        return
    acc_np = _np(acc)
    seq = np.empty(sizes + (n + 1,), acc_np)
    seq[..., 0] = 0 if op == "cumsum" else 1
    seq[..., 1:] = x
    ufunc = np.add if op == "cumsum" else np.multiply
    with np.errstate(all="ignore"):
        # accumulate is the sequential fold r[k] = r[k - 1] . seq[k], as the kernel's loop
        res = ufunc.accumulate(seq, axis=-1)
    _view(out, int(meta[6]), sizes + (n,), ost + (osa,))[...] = res[..., 1:]

"""Numba CPU kernels for reductions (sum, prod, mean, max/min, any/all, var/std, argmax/argmin)
and scans (cumsum, cumprod).

Like the pointwise kernels, each (op, dtypes) gets a small generated module in the kernel cache
dir holding a serial and a parallel variant, compiled lazily with ``@njit(cache=True)``.

Reductions read ``TensorIterator.reduce``'s layout: dim 0 is the input's fastest dim.
* inner mode (dim 0 reduced): per output element, rows of the reduced dims are reduced in
  blocks of BLOCK elements; a float sum block is compiled with ``reassoc`` (only that helper)
  so LLVM vectorizes it with many independent partial sums, and block results go through a
  two-level cascade, which keeps the error close to NumPy's pairwise sum.
* outer mode (dim 0 kept): a tile of output columns is accumulated four input rows at a time
  (vectorizes across columns, like NumPy's axis-0 loop, with a quarter of the accumulator
  traffic); threads take column tiles.
When there are fewer outputs than threads the parallel variant also splits the reduced rows
(``nsplit``) into per-thread partials combined at the end.

Compile time (a cold first call): each variant is two functions, ``<variant>_inner`` and
``<variant>_outer``, so a call compiles only its mode; contiguous rows (in stride 1 along dim 0,
no reduced outer dims, at most one kept dim: sum(x), sum(x, axis=-1), argmax(x)...) take
``serial_rows``, the inner loop without the general layout decoding (bit for bit
serial_inner's results). Float sum and mean share one module (mean divides by the count, sum
by 1.0). Helpers without fastmath are inlined in Numba's IR (compiled apart they cost a
compile and machine code of their own).

This module picks the variant and launches it; the source templates and the module assembly are
in kernels/cpu/reduce_source.py, the small-call plans in kernels/cpu/reduce_plan.py.
"""
from __future__ import annotations

import math
import threading
from types import SimpleNamespace

import numpy as np

from ... import dtypes as _dt
from .casting import kernel_array
from .. import codegen as _codegen
from .pointwise import load_generated_module
from .reduce_plan import _cap, _captured, _captured_later, capture, input_np
from .reduction_cold import (arg_cold, arg_supported, scan_cold, scan_supported, value_cold,
                             value_supported)
from .reduce_source import ValueSpec, arg_source, extreme, lit, scan_source
from ...runtime.cpu import cores
from ...runtime.cpu.streams import launch
from .cold_route import go_cold

__all__ = ["sum_kernel", "prod_kernel", "mean_kernel", "max_kernel", "min_kernel", "any_kernel",
           "all_kernel", "sqdev_kernel", "var_kernel", "std_kernel", "argmax_kernel",
           "argmin_kernel", "cumsum_kernel", "cumprod_kernel", "capture"]

# Below this many input elements a reduction runs on one thread. The parallel variant costs
# ~70 us more per call than the serial one on this 2-core VM (measured 2026-11-28, quiet,
# NUMBA_NUM_THREADS 1 vs 2: float32 max / sum of 131K elements 17-23 us serial, 86-99 us
# parallel; 524K: 98-127 vs 129-197; 1M: equal at ~190 us; 2M: parallel 1.3x faster).
PAR_GRAIN = 1 << 20
TILE_BYTES = 16384    # outer mode: accumulator tile per work item (fits L1)
ROWS_KERNEL = True    # contiguous-row reductions use serial_rows (tests compare with False)

_lock = threading.Lock()
_mods: dict = {}


def _get_module(key, prefix, make_source):
    def build():
        mod = load_generated_module(prefix, make_source())
        if hasattr(mod, "serial_inner"):
            # (serial, parallel) twins per mode, for cores.parallel_ready
            mod.inner = SimpleNamespace(serial=mod.serial_inner, parallel=mod.parallel_inner)
            mod.outer = SimpleNamespace(serial=mod.serial_outer, parallel=mod.parallel_outer)
        return mod
    return _codegen.once(_mods, _lock, key, build)

def _even_split(nwork, nthreads):
    """How many pieces to cut each of nwork items into so that a static schedule gives every
    thread the same share (1 when there are already plenty of items)."""
    if nwork % nthreads == 0 or nwork >= 4 * nthreads:
        return 1
    return nthreads // math.gcd(nwork, nthreads)


def _tile_for(n0, nwork, nthreads, parallel, itemsize):
    """Columns per outer-mode work item: the whole row up to TILE_BYTES, cut (in multiples of
    64; long runs keep the prefetchers busy) so the threads get equal shares."""
    tile_max = max(64, TILE_BYTES // itemsize)
    pieces = _even_split(nwork, nthreads) if parallel else 1
    per = -(-n0 // pieces)
    if pieces > 1:
        per = -(-per // 64) * 64
    return max(1, min(tile_max, n0, per))


_META_SAMPLE = np.empty(0, np.int64)  # a meta array's type, for cores.parallel_ready


def _value_meta(it, acc_itemsize, mod, arrays=None, serial=False):
    """Packs the reduction layout for the value kernels; returns (meta, fn, parallel);
    ``serial``: never the parallel kernel.

    meta: inner, n0, out/aux/in stride of dim 0, out/aux/in offsets, #kept dims, #reduced
    dims, nsplit, tile, then kept sizes and out/aux/in strides, then reduced sizes and in
    strides (dims after dim 0, innermost first)."""
    lay = it.layout()
    shape = lay.shape
    out_s, in_s = lay.strides[0], lay.strides[-1]
    aux_s = lay.strides[1] if it.naux else out_s
    inner = out_s[0] == 0
    kept = [d for d in range(1, len(shape)) if out_s[d] != 0]
    red = [d for d in range(1, len(shape)) if out_s[d] == 0]
    n0 = shape[0]
    nkept = math.prod(shape[d] for d in kept)
    nrows = math.prod(shape[d] for d in red)
    nthreads = _threads()
    work = n0 * nkept * nrows
    twins = mod.inner if inner else mod.outer
    # (the argument types for a background compile: serial_rows may serve the calls before,
    # so the serial twin's signature may not be known)
    parallel = not serial and nthreads > 1 and work >= PAR_GRAIN and cores.parallel_ready(
        twins, arrays and (_META_SAMPLE, *arrays, np.float64(1.0)), work)
    nsplit, tile = 1, 1
    if inner:
        if parallel:
            nsplit = _even_split(nkept, nthreads)
    else:
        tile = _tile_for(n0, nkept, nthreads, parallel, acc_itemsize)
        ntile = -(-n0 // tile)
        if parallel and nrows >= 2 * nthreads:
            nsplit = _even_split(nkept * ntile, nthreads)
    offs = lay.offsets
    meta = [int(inner), n0, out_s[0], aux_s[0], in_s[0], offs[0],
            offs[1] if it.naux else offs[0], offs[-1], len(kept), len(red), nsplit, tile]
    meta += [shape[d] for d in kept] + [out_s[d] for d in kept] + [aux_s[d] for d in kept]
    meta += [in_s[d] for d in kept]
    meta += [shape[d] for d in red] + [in_s[d] for d in red]
    if parallel:
        fn = twins.parallel
    elif ROWS_KERNEL and inner and in_s[0] == 1 and not red and len(kept) <= 1:
        fn = mod.serial_rows  # (results bit for bit serial_inner's)
    else:
        fn = twins.serial
    return np.array(meta, np.int64), fn, parallel


def _threads():
    return cores.threads()  # one while the machine is busy (runtime/cpu/cores.py)


# A call whose serial kernel is neither compiled nor in the disk cache takes the cold route
# (kernels/cpu/reduction_cold.py: NumPy steps and at most the module's small block kernel, the
# same bits) instead of compiling it (0.5-2.5 s), by kernels/cpu/cold_route.py's rule.
COLD = True           # False: never cold; "always": every supported call cold (tests)


def _go_cold(fn, args, work):
    """Whether this call of serial kernel ``fn`` (not compiled in this process) runs cold."""
    return go_cold(COLD, fn, args, work)


def _run_value(it, spec, div=1.0, name=None):
    mod = _get_module(spec.key(), f"red_{spec.op}", spec.source)
    out = kernel_array(it.operands[0])
    aux = kernel_array(it.operands[1]) if it.naux else out
    inp = input_array(it.operands[-1])
    # Scans that stop early over 1-byte elements stay on one thread: an early stop waited for
    # the team's wake-up (max of 1e7 random bools ~27 us, one thread 2.7; NumPy 2.0); a full
    # scan of 1e7 bytes takes ~1.25x the team's time (max of zeros 100 -> 126 us; NumPy 110-150)
    meta, fn, parallel = _value_meta(it, spec.acc_dt.itemsize, mod, (out, aux, inp),
                                     spec.stop is not None and spec.in_dt.itemsize == 1)
    if (not fn.overloads or COLD == "always") and not parallel and value_supported(spec, meta):
        args = (meta, out, aux, inp, np.float64(div))
        if _go_cold(fn, args, it.reduced_numel * it.result._numel):
            launch(value_cold, name or spec.op, it.operands[0], it.operands[1:], spec, mod, fn,
                   *args)
            if _cap.on:
                _captured_later()
            return
    launch(fn, name or spec.op, it.operands[0], it.operands[1:], meta, out, aux, inp,
           np.float64(div))
    if _cap.on:
        _captured(it.operands[0], it.operands[1] if it.naux else None, it.operands[-1],
                  "value", fn, parallel, meta, div, 7)


def input_array(t):
    """A reduction's or scan's input array as the generated kernels read it (input_np)."""
    return t._storage.typed(input_np(t._dtype))


def _load_dt(dtype):
    # Half types are read as float32; everything else as itself.
    return _dt.float32 if dtype in (_dt.float16, _dt.bfloat16) else dtype


def _sum_like(it, op):
    acc = it.compute_dtype
    in_dt = it.operands[-1]._dtype
    if op == "sum" and acc.kind == "f":
        # not complex: complex / (1.0 + 0j) is no no-op, (inf + 4j) / 1 gives inf + nan j
        _run_value(it, _float_sum_spec(in_dt, acc, it.operands[0]._dtype), 1.0, "sum")
        return
    spec = ValueSpec(op, in_dt, acc, acc, it.operands[0]._dtype,
                      init=lit(acc, 0 if op == "sum" else 1),
                      comb="a + b" if op == "sum" else "a * b",
                      reassoc=op == "sum" and acc.kind in "fc")
    _run_value(it, spec)


def _float_sum_spec(in_dt, acc, out_dt):
    """The float / complex sum of mean, and of float sum (one compiled module for both): the
    sum divided by ``div`` in float64 / complex128, then cast to the output dtype. A float
    sum passes div = 1.0, an exact no-op (an acc value is exact in the wider type and converts
    back unchanged); a complex sum has its own module (a complex division by 1 is not exact
    for infinite parts)."""
    return ValueSpec("sum", in_dt, acc, acc, out_dt, init=lit(acc, 0), comb="a + b",
                      fin="acc / div", fin_dt=_dt.complex128 if acc.kind == "c" else _dt.float64,
                      reassoc=True)


def sum_kernel(it):
    """it.compute_dtype is the accumulator (the caller picks int64 / float32 for half / ...)."""
    _sum_like(it, "sum")


def prod_kernel(it):
    _sum_like(it, "prod")


def mean_kernel(it):
    """Sum in the compute dtype, divided by the count in float64 (as NumPy's true_divide by an
    intp count does), then cast to the output dtype."""
    acc = it.compute_dtype
    if acc.kind in "fc":
        spec = _float_sum_spec(it.operands[-1]._dtype, acc, it.operands[0]._dtype)
    else:
        spec = ValueSpec("mean", it.operands[-1]._dtype, acc, acc, it.operands[0]._dtype,
                          init=lit(acc, 0), comb="a + b", fin="acc / div",
                          fin_dt=_dt.float64, reassoc=True)
    _run_value(it, spec, float(it.reduced_numel), "mean")


def _minmax(it, op):
    acc = it.compute_dtype  # bool input: uint8
    cmp = ">" if op == "max" else "<"
    # For floats a nan candidate always wins, and a nan accumulator never loses: nan propagates.
    comb = f"b if (b {cmp} a or b != b) else a" if acc.kind == "f" else f"b if b {cmp} a else a"
    in_dt = it.operands[-1]._dtype
    stop = None  # floats: a nan would still win over +-inf
    if in_dt is _dt.bool_:
        stop = lit(acc, int(op == "max"))
    elif acc.kind in "iu":
        stop = extreme(acc, "min" if op == "max" else "max")
    spec = ValueSpec(op, in_dt, acc, acc, it.operands[0]._dtype,
                     init=extreme(acc, op), comb=comb, stop=stop)
    _run_value(it, spec)


def max_kernel(it):
    _minmax(it, "max")


def min_kernel(it):
    _minmax(it, "min")


def _logical(it, op):
    in_dt = it.operands[-1]._dtype
    load_dt = _load_dt(in_dt)
    spec = ValueSpec(op, in_dt, load_dt, _dt.bool_, it.operands[0]._dtype,
                      init=lit(_dt.bool_, op == "all"), comb="a | b" if op == "any" else "a & b",
                      fmap="v" if in_dt is _dt.bool_ else "(v != 0)",
                      stop=lit(_dt.bool_, op == "any"))
    _run_value(it, spec)


def any_kernel(it):
    _logical(it, "any")


def all_kernel(it):
    _logical(it, "all")


def count_nonzero_kernel(it):
    """The count of the nonzero elements (a nan counts, -0.0 does not) in int64: a sum of
    (x != 0) in one pass (not_equal, then a sum of its flags, read and wrote the flags:
    1e5 int16 11.9 us)."""
    in_dt = it.operands[-1]._dtype
    spec = ValueSpec("count_nonzero", in_dt, _load_dt(in_dt), _dt.int64, it.operands[0]._dtype,
                     init=lit(_dt.int64, 0), comb="a + b", fmap="np.int64(v != 0)")
    _run_value(it, spec)


def sqdev_kernel(it, divisor, take_sqrt):
    """sum(|x - mean|^2) / divisor (then sqrt for std). Operand 1 is the mean in the compute
    dtype; the input is read in that dtype too, so complex deviations stay complex."""
    mean_dt = it.operands[1]._dtype
    acc = _dt.real_for(mean_dt)
    d2 = ("(v - m).real * (v - m).real + (v - m).imag * (v - m).imag"
          if mean_dt.kind == "c" else "(v - m) * (v - m)")
    spec = ValueSpec("std" if take_sqrt else "var", it.operands[-1]._dtype, mean_dt, acc,
                      it.operands[0]._dtype, init=lit(acc, 0), comb="a + b", fmap=d2,
                      fin="np.sqrt(acc / div)" if take_sqrt else "acc / div",
                      fin_dt=_dt.float64, aux_dt=mean_dt, reassoc=True)
    _run_value(it, spec, float(divisor))


def var_kernel(it, divisor):
    sqdev_kernel(it, divisor, False)


def std_kernel(it, divisor):
    sqdev_kernel(it, divisor, True)


# ---------------------------------------------------------------- argmax / argmin
def _arg_reduce(it, op):
    """Index of the first extreme along the single reduced dim (the caller flattens axis=None);
    a nan counts as the extreme, so the first nan wins, as in NumPy."""
    in_dt = it.operands[-1]._dtype
    acc = it.compute_dtype
    out_dt = it.operands[0]._dtype
    mod = _get_module(("arg", op, in_dt, acc, out_dt), f"red_{op}",
                      lambda: arg_source(op, in_dt, acc, out_dt))
    lay = it.layout()
    shape = lay.shape
    out_s, in_s = lay.strides[0], lay.strides[-1]
    inner = out_s[0] == 0
    kept = [d for d in range(1, len(shape)) if out_s[d] != 0]
    red = [d for d in range(1, len(shape)) if out_s[d] == 0]
    assert len(red) <= (0 if inner else 1), "argmax/argmin reduce a single dim"
    nkept = math.prod(shape[d] for d in kept)
    nthreads = _threads()
    work = math.prod(shape)
    twins = mod.inner if inner else mod.outer
    out_a, in_a = kernel_array(it.operands[0]), input_array(it.operands[-1])
    # inner mode spreads the kept rows over threads: one row (argmax(x)) has nothing to spread,
    # and a parallel launch would only add the threads' start-up; nor do bool rows, whose
    # scans mostly stop at their first elements (argmax along 100 rows of 1e5 random bools:
    # 29 us on the team, ~5 on one thread; NumPy 1.5)
    parallel = (nthreads > 1 and work >= PAR_GRAIN and (nkept > 1 or not inner)
                and not (inner and in_dt is _dt.bool_)
                and cores.parallel_ready(twins, (_META_SAMPLE, out_a, in_a), work))
    tile = 1 if inner else _tile_for(shape[0], nkept, nthreads, parallel, acc.itemsize)
    meta = [int(inner), shape[0], out_s[0], in_s[0], lay.offsets[0], lay.offsets[-1],
            len(kept), len(red), tile]
    meta += [shape[d] for d in kept] + [out_s[d] for d in kept] + [in_s[d] for d in kept]
    meta += [shape[d] for d in red] + [in_s[d] for d in red]
    if parallel:
        fn = twins.parallel
    elif ROWS_KERNEL and inner and in_s[0] == 1 and len(kept) <= 1:
        fn = mod.serial_rows
    else:
        fn = twins.serial
    meta = np.array(meta, np.int64)
    if ((not fn.overloads or COLD == "always") and not parallel and arg_supported(in_dt, meta)
            and _go_cold(fn, (meta, out_a, in_a), work)):
        launch(arg_cold, op, it.operands[0], it.operands[1:], op, in_dt, meta, out_a, in_a)
        if _cap.on:
            _captured_later()
        return
    launch(fn, op, it.operands[0], it.operands[1:], meta, out_a, in_a)
    if _cap.on:
        _captured(it.operands[0], None, it.operands[-1], "arg", fn, parallel, meta, None, 5)


def argmax_kernel(it):
    _arg_reduce(it, "argmax")


def argmin_kernel(it):
    _arg_reduce(it, "argmin")


# ---------------------------------------------------------------- scans
def _scan(it, n, out_stride, in_stride, op):
    """it: a TensorIterator over the output and input with the scan axis selected away (its
    layout covers the other dims); n, out_stride, in_stride describe the scan axis."""
    out_dt = it.operands[0]._dtype
    in_dt = it.operands[1]._dtype
    acc = it.compute_dtype
    mod = _get_module(("scan", op, in_dt, acc, out_dt), f"scan_{op}",
                      lambda: scan_source(op, in_dt, acc, out_dt))
    lay = it.layout()
    shape = lay.shape
    nthreads = _threads()
    work = n * math.prod(shape)
    parallel = nthreads > 1 and work >= PAR_GRAIN and cores.parallel_ready(mod, work=work)
    # Outer mode when another dim is closer together in the input than the scan axis: then
    # rows of that dim are scanned together (vectorizes, reads memory in order).
    inner = shape[0] == 1 or abs(in_stride) <= abs(lay.strides[1][0])
    tile = 1
    if not inner:
        tile = _tile_for(shape[0], math.prod(shape[1:]), nthreads, parallel, acc.itemsize)
    meta = [int(inner), n, out_stride, in_stride, len(shape), tile, lay.offsets[0],
            lay.offsets[1]]
    meta += list(shape) + list(lay.strides[0]) + list(lay.strides[1])
    fn = mod.parallel if parallel else mod.serial
    meta = np.array(meta, np.int64)
    out_a, in_a = kernel_array(it.operands[0]), input_array(it.operands[1])
    if ((not fn.overloads or COLD == "always") and not parallel
            and scan_supported(in_dt, acc, out_dt, meta)
            and _go_cold(fn, (meta, out_a, in_a), work)):
        # (NumPy's steps read a bool input as bool, not as the kernels' bytes)
        launch(scan_cold, op, it.operands[0], it.operands[1:], op, acc, fn, meta, out_a,
               in_a.view(np.bool_) if in_dt is _dt.bool_ else in_a)
        if _cap.on:
            _captured_later()
        return
    launch(fn, op, it.operands[0], it.operands[1:], meta, out_a, in_a)
    if _cap.on:
        _captured(it.operands[0], None, it.operands[1], "arg", fn, parallel, meta, None, 7)


def cumsum_kernel(it, n, out_stride, in_stride):
    _scan(it, n, out_stride, in_stride, "cumsum")


def cumprod_kernel(it, n, out_stride, in_stride):
    _scan(it, n, out_stride, in_stride, "cumprod")

"""The pointwise fast paths' CPU runners (ops/pointwise.py, ops/copy.py call them through the
stub kernel's attributes): what the full path (pointwise.run_pointwise) computes for dense
operands, without a TensorIterator.

* ``dense_runner`` / ``dense_runner3``: the functional form on contiguous operands of one shape
  (one or two tensors, a Python-scalar operand; three for ``where``): allocate the result and
  run the flat loop on raw addresses, or above the grain the parallel tile loop with its meta
  packed here (``_above_grain``).
* ``strided_runner``: the same for 1-D operands with any strides (the tile loop, meta packed
  here).
* ``layout_runner``: any other layout of the tensor operands (broadcasting, transposed or N-D
  strided views, mixed dtypes; functional, in place, out=, ``where``), per exact layout: the
  full path's loop nest and meta, worked out once.
* ``inplace_runner``: ``x op= y`` into x's own memory below the grain.
* ``fill_dense`` / ``fill_strided`` / ``copy_dense`` / ``copy_strided``: fill_ of contiguous
  tensors and of strided views (NumPy's strided assignment), copy_ of contiguous tensors, and
  same-dtype copies from a strided source (small ones: small_copy's raw-address loop; else
  NumPy's strided copy over the storages' bytes).

Each declines (returns None) what the full path must do: a user CPU stream current, the
profiler above the grain, empty tensors; operands with queued CPU-stream work are waited for.
"""
from __future__ import annotations

import time

import numpy as np

from ... import dtypes as _dt
from ...iterator import compute_dtype_for
from ...runtime.cpu import cores, streams as _streams
from ...runtime.cpu.streams import inline_call as _inline_call
from ...storage import Storage
from ...tensor import Tensor, contiguous_strides
from ...dispatch.pointwise_info import COPY, FILL
from ...dtype_scalars import scalar_to_compute
from . import small_copy as _small_copy
from .arrays import kernel_np_dtype, strided_array
from .casting import kernel_array
from . import cold_route as _cold
from .cold_route import ready_every, ready_once
from .short_rows_copy import copy_short_rows_serial as _copy_short_rows_serial
from .transpose_copy import copy_transposed_serial as _copy_transposed_serial
from .pointwise import GRAIN, SHORT_INNER, built_flat_entry, combination_module, flat_entry, \
    parallel_grain, run_pointwise, rows_entry, rows_module, rows_plan, rows_samples, \
    strided_entry, strided_layout, strided_loop, strided_plan, tile_meta

__all__ = ["dense_runner", "dense_runner3", "dense_runner3_scalar", "dense_runner3_scalars",
           "strided_runner",
           "layout_runner", "inplace_runner",
           "out_runner", "fill_dense", "fill_strided", "copy_dense", "copy_strided", "host_call"]

_SCALAR_SAMPLES = {bool: True, int: 1, float: 1.0, complex: 1j}  # a value of each exact type


def _last_value_cache(compute, name, arg):
    """``convert(v)``: ``scalar_to_compute(v, compute, name, arg)``, remembering the last
    value: an argument left at its default, or a literal in a loop, is the same object on every
    call. The (object, value) pair is replaced as one tuple, so threads may share it."""
    last = (object(), None)

    def convert(v):
        nonlocal last
        seen = last
        if v is seen[0]:
            return seen[1]
        c = scalar_to_compute(v, compute, name, arg)  # raises on a bad value
        last = (v, c)
        return c

    return convert


def _above_grain(info, kinds, dtypes, compute, out_dtype, flat, reads_out=()):
    """For the dense fast paths above the grain: ``run(n, tensors, values, like, into=None)``
    allocates the result (``like(storage, tensors[0], out_dtype)`` makes the tensor), or writes
    into ``into`` (a contiguous ``out=`` tensor of ``n`` elements, returned), and runs the
    combination's ``flat_parallel`` loop (the flat loop's raw addresses, tiles over the team),
    or the ``flat`` loop while that variant is not ready or one thread would run it, as the full
    path would (``reads_out``: the loops reading those tensor arguments through ``into``, as
    ``flat`` does). None (nothing run) while a user CPU stream is current or the profiler is
    on."""
    out_item = out_dtype.itemsize
    twins = None  # flat_parallel and its serial twin (cores.parallel_ready's pair)

    def run(n, tensors, values, like, into=None):
        nonlocal twins
        if not _streams.runs_inline():
            return None  # the full path queues or records it
        if into is None:
            _wait_queued(*tensors)
            st, offset = Storage.allocate(n * out_item), 0
        else:
            _wait_queued(into, *tensors)
            st, offset = into._storage, into._offset
        args = (n, st._ptr + offset * out_item,
                *[t._storage._ptr + t._offset * t._dtype.itemsize for t in tensors], *values)
        if twins is None:
            twins = cores.twins(combination_module(info, kinds, dtypes, compute, out_dtype,
                                                   reads_out).flat_parallel, flat)
        if cores.team_ready(twins, args, n):
            cores.call(twins.parallel, args, serial=flat)
        else:
            flat(*args)
        return like(st, tensors[0], out_dtype) if into is None else into
    return run


# A costly loop (pow, tan, float64 sinh...: 2-4 ns an element on one core, against exp's
# ~0.3 ns the wide-vector grain suits) earns a team's start (~10 us while it is awake) back
# from far fewer elements than its grain: the dense and out= runners of a compute-bound op
# (ops.yaml tag wide_vectors; memory-bound loops keep their grain) time their flat loop from
# MIN_GRAIN elements and lower their grain to where the loop would take TEAM_PAYS_S on one
# thread (by the cheapest time per element seen, so a slow call never lowers it; never below
# MIN_GRAIN: a call below it compares its size once, as before, and is not timed).
# Measured on Zen 4, 2 threads (benchmarks/breadth_cpu.py, 21 transcendentals x float32 /
# float64, tensorlib / NumPy geomean): 1e5 elements 1.17 -> 0.74 (float32 pow 211 -> 117 us,
# float64 tan 312 -> 166); 2e4 1.26 -> 1.10 with 25 us (1.16 with 40 us).
TEAM_PAYS_S = 25e-6
MIN_GRAIN = 1 << 13
_perf = time.perf_counter


def _grain_state(info):
    """A runner's grain state: [its grain, the least seconds per element seen, the size from
    which a call compares its grain: MIN_GRAIN for a compute-bound op, else the grain]."""
    grain = parallel_grain(info)
    return [grain, float("inf"), MIN_GRAIN if info.wide_vectors else grain]


def _grain_probe(info, flat):
    """(state, timed): ``state[0]`` the runner's grain, lowered as ``timed(n, ...)`` (``flat``
    run and timed) finds the loop costly (see TEAM_PAYS_S)."""
    state = _grain_state(info)
    return state, _timed_flat(info, state, flat)


def _timed_flat(info, state, flat):
    """``flat`` timed into grain ``state`` (several loops of one runner may share it), or
    ``flat`` itself for a memory-bound op."""
    if not info.wide_vectors:
        return flat
    cap = parallel_grain(info)

    def timed(*args):
        t0 = _perf()
        flat(*args)
        cost = (_perf() - t0) / args[0]
        if cost < state[1]:
            state[1] = cost
            state[0] = max(MIN_GRAIN, min(cap, int(TEAM_PAYS_S / cost)))
    return timed


def host_call(fn, name, st):
    """``fn`` (a raw-address kernel writing storage ``st``) to call from the host now: itself;
    while CPU streams or the profiler are in use, the inline call that records it as ``name``
    (after st's queued users); None while a user CPU stream is current (the caller's general
    path launches on that stream)."""
    if not _streams._slow:
        return fn
    call = _inline_call(fn, name)
    if call is not None and st._uses is not None:
        _streams.wait_uses(st)
    return call


def _wait_queued(*operands):
    """Waits for queued CPU-stream work on the tensor operands' memory (the raw-address loops
    skip Storage.typed(), which would wait)."""
    for x in operands:
        st = getattr(x, "_storage", None)
        if st is not None and st._uses is not None:
            _streams.wait_uses(st)


def _dense_combination(info, dtype, scalar_pos, scalar_operand, scalar_type):
    """(kinds, dtypes, compute dtype) of the loop for ``info`` on ``dtype`` tensor operands, one
    of them (``scalar_operand``: 0 or 1) a Python scalar of ``scalar_type`` when given, as
    TensorIterator.build would derive them; None for what the fast paths leave to it."""
    ntensors = len(info.tensor_args)
    if len(scalar_pos) > 1 or (ntensors == 1 and scalar_pos):
        return None  # no such pointwise op today; the full path serves it
    if scalar_operand is None:
        return "T" * ntensors, (dtype,) * ntensors, compute_dtype_for(dtype)
    if ntensors != 2 or info.bool_args or scalar_type not in _SCALAR_SAMPLES:
        return None
    # What TensorIterator.build derives for (tensor, Python scalar): weak promotion.
    common = _dt.result_type(dtype, _SCALAR_SAMPLES[scalar_type])
    if info.int_to_float and common.kind in "biu":
        return None  # int -> float ops follow the default float dtype: full path
    kinds = "ST" if scalar_operand == 0 else "TS"
    dtypes = (None, dtype) if scalar_operand == 0 else (dtype, None)
    return kinds, dtypes, compute_dtype_for(common)


def inplace_runner(info, dtype, scalar_pos, scalar_type=None):
    """The in-place fast path's runner (ops/pointwise.py): ``run(a, b, args)`` computes
    ``a op= b`` into ``a``'s own memory: ``out_runner``'s run with ``a`` as the output (its
    loops read ``a`` through the output's pointer). The result is written in ``a``'s dtype, as
    the full path's out=self does (its cast rules were checked by the full calls that made
    this combination hot)."""
    run = out_runner(info, dtype, dtype, scalar_pos, scalar_type)
    if run is None:
        return None
    return lambda a, b, args: run(a, a, b, args)


def out_runner(info, dtype, out_dtype, scalar_pos, scalar_type=None):
    """The out= fast path's runner (ops/pointwise.py): ``run(d, a, b, args)`` computes
    ``op(a, b)`` into ``d`` (``out=d``) with the flat loop, for contiguous ``d`` (of
    ``out_dtype``) and ``a`` (of ``dtype``) of one shape (above the parallel grain through
    _above_grain, as the dense fast path), ``b`` None
    (unary), a contiguous tensor of ``a``'s dtype and shape, or a Python scalar of
    ``scalar_type`` (converted as the full path converts it); tensors sharing ``d``'s storage
    are ``d`` itself (the caller checks), and are read through ``d`` (the in-place loops, built
    on first need: see pointwise._reading_out). The flat loop casts the result to ``out_dtype``, as
    the full path's loop for that output does (its cast rules were checked by the full calls
    that made this combination hot). Returns ``d``, or None for what the full path must do
    (empty tensors, a user CPU stream current; above the grain also the profiler on)."""
    scalar_operand = None if scalar_type is None else 1
    combo = _dense_combination(info, dtype, scalar_pos, scalar_operand, scalar_type)
    if combo is None:
        return None
    kinds, dtypes, compute = combo
    item = dtype.itemsize
    out_item = out_dtype.itemsize
    name = info.name
    variants = {}  # (a is d, b is d) -> (flat, big, timed): the loops reading those through d
    grain = _grain_state(info)  # shared by the loops
    probe = grain[2]

    def loops(key):
        v = variants.get(key)
        if v is None:
            reads = tuple(arg for arg, read in zip(info.tensor_args, key) if read)
            flat = flat_entry(info, kinds, dtypes, compute, out_dtype, reads)
            v = variants[key] = (flat, _above_grain(info, kinds, dtypes, compute, out_dtype,
                                                    flat, reads),
                                 _timed_flat(info, grain, flat))
        return v
    sp = scalar_pos[0] if scalar_pos else None
    scalar = _last_value_cache(compute, name, info.scalar_args[0]) if scalar_pos else None
    value = (_last_value_cache(compute, name, info.tensor_args[1])
             if scalar_type is not None else None)
    unary = len(info.tensor_args) == 1

    def run(d, a, b, args):
        n = a._numel
        if not n:
            return None
        flat, big, timed = loops((a is d, b is d))
        call = flat
        if n >= probe:
            if n >= grain[0]:
                if unary:
                    return big(n, (a,), (), None, d)
                v = () if value is None else (value(b),)  # the operand first, as the full path
                vals = v + (() if sp is None else (scalar(args[sp]),))
                return big(n, (a,) if v else (a, b), vals, None, d)
            call = timed
        if _streams._slow:
            call = _inline_call(flat, name)
            if call is None:
                return None
            _wait_queued(d, a, b)
        pd = d._storage._ptr + d._offset * out_item
        pa = a._storage._ptr + a._offset * item
        if unary:
            call(n, pd, pa)
            return d
        if value is not None:
            v = value(b)  # the operand first, then the Scalar argument: the full path's order
            call(n, pd, pa, v, *(() if sp is None else (scalar(args[sp]),)))
        else:
            vals = () if sp is None else (scalar(args[sp]),)
            call(n, pd, pa, b._storage._ptr + b._offset * item, *vals)
        return d
    return run


def dense_runner(info, dtype, out_dtype, scalar_pos, scalar_operand=None, scalar_type=None):
    """The dense fast path's runner for ``info`` on contiguous ``dtype`` operands of one shape
    (see ops/pointwise.py): allocates the output and calls the ``flat`` loop with raw
    addresses. With ``scalar_operand`` (0 or 1) that operand of a binary op is a Python scalar
    of ``scalar_type`` instead (converted to the compute dtype exactly as the full path does,
    with its errors). Above the parallel grain the combination's parallel loop runs once it is
    ready (_above_grain), else the flat loop. Declines (returns None) for empty tensors, and
    while a user CPU stream is current (above the grain also under the profiler): the full path
    handles those. Operands with queued
    CPU-stream work are waited for, as the full path's Storage.typed() does; under the profiler
    the loop is recorded as the full path's launch would record it. ``scalar_pos``: where the
    op's Scalar arguments are in ``args``. The runner is ``run(t, other, args)``: ``t`` a
    tensor operand, ``other`` the second tensor, the Python scalar, or None (unary)."""
    ntensors = len(info.tensor_args)
    combo = _dense_combination(info, dtype, scalar_pos, scalar_operand, scalar_type)
    if combo is None:
        return None
    kinds, dtypes, compute = combo
    flat = flat_entry(info, kinds, dtypes, compute, out_dtype)
    big = _above_grain(info, kinds, dtypes, compute, out_dtype, flat)
    grain, timed = _grain_probe(info, flat)
    probe = grain[2]
    item = dtype.itemsize
    out_item = out_dtype.itemsize
    name = info.name
    sp = scalar_pos[0] if scalar_pos else None
    scalar = (_last_value_cache(compute, name, info.scalar_args[0]) if scalar_pos else None)
    value = (_last_value_cache(compute, name, info.tensor_args[scalar_operand])
             if scalar_operand is not None else None)

    # One variant per operand count: a generic one (tuples, loops) costs a sizeable part
    # of the ~3 us a tiny op takes.
    if ntensors == 1:
        def run(a, b, args):
            n = a._numel
            if not n:
                return None
            sa = a._storage
            call = flat
            if n >= probe:
                if n >= grain[0]:
                    return big(n, (a,), (), Tensor._make_dense)
                call = timed
            if _streams._slow:
                call = _inline_call(flat, name)
                if call is None:
                    return None
                if sa._uses is not None:
                    _streams.wait_uses(sa)  # as Storage.typed() would on the default stream
            st = Storage.allocate(n * out_item)
            call(n, st._ptr, sa._ptr + a._offset * item)
            return Tensor._make_dense(st, a, out_dtype)
    elif scalar_operand is not None:
        def run(a, b, args):
            n = a._numel
            if not n:
                return None
            sa = a._storage
            call = flat
            if n >= probe:
                if n >= grain[0]:
                    # the operand first, then the Scalar argument: the full path's order
                    v = value(b)
                    return big(n, (a,), (v,) if sp is None else (v, scalar(args[sp])),
                               _c_order_like)
                call = timed
            if _streams._slow:
                call = _inline_call(flat, name)
                if call is None:
                    return None
                if sa._uses is not None:
                    _streams.wait_uses(sa)  # as Storage.typed() would on the default stream
            v = value(b)  # the operand first, then the Scalar argument: the full path's order
            st = Storage.allocate(n * out_item)
            if sp is None:
                call(n, st._ptr, sa._ptr + a._offset * item, v)
            else:
                call(n, st._ptr, sa._ptr + a._offset * item, v, scalar(args[sp]))
            return _c_order_like(st, a, out_dtype)
    else:
        def run(a, b, args):
            n = a._numel
            if not n:
                return None
            sa = a._storage
            sb = b._storage
            call = flat
            if n >= probe:
                if n >= grain[0]:
                    return big(n, (a, b), () if sp is None else (scalar(args[sp]),),
                               Tensor._make_dense)
                call = timed
            if _streams._slow:
                call = _inline_call(flat, name)
                if call is None:
                    return None
                if sa._uses is not None or sb._uses is not None:
                    _streams.wait_uses(sa)  # as Storage.typed() would on the default stream
                    _streams.wait_uses(sb)
            st = Storage.allocate(n * out_item)
            if sp is None:
                call(n, st._ptr, sa._ptr + a._offset * item, sb._ptr + b._offset * item)
            else:
                call(n, st._ptr, sa._ptr + a._offset * item, sb._ptr + b._offset * item,
                     scalar(args[sp]))
            return Tensor._make_dense(st, a, out_dtype)
    return run


def _dense_copy(t, n):
    """A new dense 1-D tensor holding 1-D tensor ``t``'s ``n`` elements in order:
    copy_strided's raw-address copy below the grain, the copy op above it."""
    c = Tensor._make(Storage.allocate(n * t._dtype.itemsize), (n,), (1,), 0, t._dtype)
    c._contiguous = True
    if copy_strided(c, t) is None:
        c.copy_(t)
    return c


def _via_dense_copies(flat, n, tensors, vals, np_in, out_item, out_dtype):
    """A new 1-D result of flat loop ``flat`` over NumPy's dense copies of 1-D ``tensors``
    (``n`` elements of NumPy dtype ``np_in`` each): compiles nothing, the strided runner's
    route while its own loop compiles."""
    keep = [np.ascontiguousarray(strided_array(t, np_in)) for t in tensors]
    st = Storage.allocate(n * out_item)
    flat(n, st._ptr, *[x.ctypes.data for x in keep], *vals)
    return Tensor._make(st, (n,), (1,), 0, out_dtype)


def strided_runner(info, dtype, out_dtype, scalar_pos, scalar_operand=None, scalar_type=None):
    """The fast path's runner for 1-D tensor operands of one length with any strides
    (``x[::2] * y[::-1]``, ``x[::3] + 2.0``): ``run(t, other, args)`` as dense_runner's, into a
    contiguous result (what the full path allocates for 1-D). Below the grain with nonzero
    steps: the combination's strided loop on raw addresses (``strided_entry``); otherwise its
    tile loop over one dim with the meta packed here. None for what the full path must do."""
    combo = _dense_combination(info, dtype, scalar_pos, scalar_operand, scalar_type)
    if combo is None:
        return None
    kinds, dtypes, compute = combo
    np_out, np_in = kernel_np_dtype(out_dtype), kernel_np_dtype(dtype)
    out_item = out_dtype.itemsize
    item = dtype.itemsize
    grain = parallel_grain(info)
    two = kinds == "TT"
    name = info.name
    sp = scalar_pos[0] if scalar_pos else None
    scalar = _last_value_cache(compute, name, info.scalar_args[0]) if scalar_pos else None
    value = (_last_value_cache(compute, name, info.tensor_args[scalar_operand])
             if scalar_operand is not None else None)
    mod = None
    raw = None  # (the strided loop, that loop timed into the grain state)
    pending = None  # strided_loop's answer ((): compiled at once), until raw is made
    # An op whose scalar element is dear (ops.yaml gathers, wide_vectors) gathers its strided
    # operands a block at a time: in the strided loop below the grain, in the tile loop's
    # contiguous branch from it (the strided branches ran one element at a time: sin 1e6 16.5
    # ms, NumPy's strided 1.8). A compute-bound one (wide_vectors) over real floats, from its
    # timed grain on (lowered for a costly loop: pow, tan; see TEAM_PAYS_S), copies them dense
    # and runs the flat loops on the team, as the dense path does (float32 x[::2] ** 2.7 of
    # 1e5 elements: the gathering strided loop alone 424-434 us, this 293-344). Either way the
    # same elements in the same blocks of BLOCK from the first: the same forms, the dense
    # path's bits.
    wide = info.wide_vectors and compute.kind == "f"
    state = _grain_state(info) if wide else None
    team = None  # a compute-bound op's above-grain runner on dense copies (_above_grain)

    def raw_ready(n):
        """Whether the strided loop may be made now: for an op that gathers (its loop gathers
        blocks and runs the block loop: 0.36-0.61 s to compile, exp / sqrt / sin of float32 on
        a Zen 3 VM) where one loop serves every value, once compiled or on disk (else it starts
        compiling in the background, cold_route's rule); at once for the others (a cheap op's
        loop, 0.14-0.18 s, 0.23-0.38 with one operand's constant-step loops: less than a loop
        of calls loses on the routes meanwhile, beside a second compile on the same cores;
        likewise where the values pick the loop)."""
        nonlocal pending
        if pending is None:
            pending = (info.gathers and strided_loop(info, kinds, dtypes, compute, out_dtype)
                       or ())
        return not pending or ready_every(pending[0], n, lambda: pending)

    def run(a, b, args):
        nonlocal mod, raw, team
        n = a._numel
        if not n or (_streams._slow and not _streams.runs_inline()):
            return None
        vals = () if value is None else (value(b),)  # the operand first, then the Scalar
        if sp is not None:
            vals += (scalar(args[sp]),)
        s0 = a._strides[0]
        s1 = b._strides[0] if two else 1
        if _streams._slow:
            _wait_queued(a, b)  # as Storage.typed() would (a user stream declined above)
        if wide and n >= state[0]:
            if team is None:
                team = _above_grain(info, kinds, dtypes, compute, out_dtype,
                                    flat_entry(info, kinds, dtypes, compute, out_dtype))
            ts = [t if t._strides[0] == 1 else _dense_copy(t, n) for t in ((a, b) if two else (a,))]
            return team(n, ts, vals, Tensor._make_dense)  # (ts[0]: dense, 1-D)
        if n < grain and s0 and s1:
            if raw is None and not raw_ready(n):
                # Compiling in the background (in the foreground it stalled the 32nd call of
                # exp(x[::2]) 0.33-0.53 s): the flat loop over dense copies where the full
                # path's cold route (or a dense call) built it, else the full path (whose
                # cold route builds it)
                flat = built_flat_entry(info, kinds, dtypes, compute, out_dtype)
                if flat is None:
                    return None
                return _via_dense_copies(flat, n, (a, b) if two else (a,), vals, np_in,
                                         out_item, out_dtype)
            # raw addresses: each operand from its lowest element, with its step
            if raw is None:
                loop = strided_entry(info, kinds, dtypes, compute, out_dtype)
                raw = (loop, _timed_flat(info, state, loop) if wide else loop)
            st = Storage.allocate(n * out_item)
            pa = a._storage._ptr + (a._offset + (n - 1) * s0 if s0 < 0 else a._offset) * item
            fn = raw[1] if wide and n >= state[2] else raw[0]
            if two:
                pb = b._storage._ptr + (b._offset + (n - 1) * s1 if s1 < 0 else b._offset) * item
                fn(n, st._ptr, pa, s0, pb, s1, *vals)
            else:
                fn(n, st._ptr, pa, s0, *vals)
            t = Tensor._make_dense(st, a, out_dtype)
            t._strides = (1,)  # (a's shape, dense)
            return t
        if mod is None:
            mod = combination_module(info, kinds, dtypes, compute, out_dtype)
        st = Storage.allocate(n * out_item)
        if two:
            meta = np.array((1, n, 1, s0, s1, 0, a._offset, b._offset), np.int64)
            kargs = (meta, st.typed(np_out), a._storage.typed(np_in), b._storage.typed(np_in),
                     *vals)
        else:
            meta = np.array((1, n, 1, s0, 0, a._offset), np.int64)
            kargs = (meta, st.typed(np_out), a._storage.typed(np_in), *vals)
        if n >= grain and cores.team_ready(mod, kargs, n):
            cores.call(mod.parallel, kargs, serial=mod.serial)
        else:
            mod.serial(*kargs)
        return Tensor._make(st, (n,), (1,), 0, out_dtype)
    return run


def layout_runner(info, it, scalar_pos, into=False):
    """The fast path's runner for one operand layout the dense and 1-D runners do not take
    (broadcast shapes, transposed or N-D strided views, mixed dtypes; the caller keys runners by the
    operands' dtypes, shapes and strides, and for the in-place and out= forms by the layout of the
    tensor written into, ``into``, and which operands are that tensor; a call reads the offsets: a
    runner made for one view serves another of its layout): from ``it``, the TensorIterator of a
    full call over its result, the full path's loop nest, meta and result layout are worked out
    once, so a call allocates the result (or takes ``into``) and runs the same kernel on the same
    meta (the same bits). ``run(tensors, value, args, into)``: the tensor operands in op order, the
    Python-scalar operand (or None), the op's arguments (its Scalar arguments are read there), the
    tensor to write (None: a new one). A layout that coalesces to one dense block per operand (the
    same dim order for all) runs the flat loops on raw addresses, as the full path does. None for
    one-dim layouts with a broadcast element (step 0) the rows loop does not take (the full path
    serves it as a value) and for int -> float ops on integer tensors (their result follows the
    default float dtype); a call returns None (the full path) on a user CPU stream, under the
    profiler, or when an operand other than ``into`` itself shares its memory. Operands that are
    ``into`` itself are read through it (the in-place loops, built on first need: see
    pointwise._reading_out)."""
    lay = it.layout()
    ops = it.operands
    tensors = [x for x in ops[1:] if isinstance(x, Tensor)]
    kinds = "".join("T" if isinstance(x, Tensor) else "S" for x in ops[1:])
    # one dim after coalescing: every operand one dense block in the same order (x.T + y.T,
    # exp(x.T)): the flat loops on raw addresses, as the full path runs them; other steps
    # (x2[:, ::2] * 2.0): the rows loop as one row where it takes them, else (exp, log of
    # x2[:, ::2]: compute-bound or with block forms) the loop nest, as the full path runs them;
    # a broadcast element (step 0) is left to the full path (it serves it as a value)
    one_block = len(lay.shape) == 1 and all(s == (1,) for s in lay.strides)
    rows = rows_plan(info, lay, kinds, tensors)
    if ((len(lay.shape) == 1 and rows is None and any(s == (0,) for s in lay.strides))
            or (lay.offsets[0] != 0 and not into) or not tensors
            or len(scalar_pos) > 1 or not it.numel
            or (info.int_to_float and all(t._dtype.kind in "biu" for t in tensors))):
        return None
    out = ops[0]
    out_dtype = out._dtype
    compute = it.compute_dtype
    dtypes = tuple(x._dtype if isinstance(x, Tensor) else None for x in ops[1:])
    meta = tile_meta(lay)
    shape, strides = out._shape, out._strides
    contiguous = out.is_contiguous()  # (every result of the runner: this layout)
    n = out._numel
    nbytes = n * out_dtype.itemsize  # (a fresh result: dense, in some dim order)
    np_out = kernel_np_dtype(out_dtype)
    np_ins = [kernel_np_dtype(t._dtype) for t in tensors]
    name = info.name
    value = None
    if "S" in kinds:
        value = _last_value_cache(compute, name, info.tensor_args[kinds.index("S")])
    scalar = _last_value_cache(compute, name, info.scalar_args[0]) if scalar_pos else None
    sp = scalar_pos[0] if scalar_pos else None
    big = n >= parallel_grain(info)
    names = [arg for arg, x in zip(info.tensor_args, ops[1:]) if isinstance(x, Tensor)]
    # (the operands an in-place loop may read through the output: laid out as it is)
    as_out = [t._dtype is out_dtype and s == lay.strides[0] and o == lay.offsets[0]
              for t, s, o in zip(tensors, lay.strides[1:], lay.offsets[1:])]
    variants = {}  # reads_out -> its _Loops (built on first need: in place never reads ())
    items = [t._dtype.itemsize for t in tensors]  # (a call's byte offsets: its offsets times these)
    rows_fn = [None]  # the rows loop's entry point, once compiled or on disk
    if rows is not None:
        n0, n1, row_ops = rows
        rows_mod = rows_module(info, kinds, dtypes, compute, out_dtype)  # (cold_route's key)

        def rows_make():
            return rows_mod.rows, rows_samples(info, kinds, compute)
    # a one-dim layout of an op that gathers, below the grain: the strided loop the full path
    # runs ((dispatcher, samples) for cold_route; the operands' strided_plan), once compiled
    # or on disk
    strided = (strided_layout(info, lay, compute, dtypes, out_dtype) and not big
               and strided_loop(info, kinds, dtypes, compute, out_dtype)) or None
    strided_fn = [None]
    if strided is not None:
        strided_ops = strided_plan(lay, tensors)

    def run(ts, v, args, dst=None):
        if _streams._slow and not _streams.runs_inline():
            return None  # the full path queues or records it
        reads = ()
        if dst is not None:
            for arg, t, same in zip(names, ts, as_out):
                if t is dst and same:
                    reads += (arg,)
                elif t._storage is dst._storage:
                    return None  # the full path copies an overlapping operand first
        vals = () if value is None else (value(v),)  # the operand first, then the Scalar
        if sp is not None:
            vals += (scalar(args[sp]),)
        if rows is not None:
            fn = rows_fn[0]
            if fn is None:
                if not ready_every(rows_mod, n, rows_make):
                    return None  # the full path's cold route serves (no nest for this layout)
                fn = rows_fn[0] = rows_entry(rows_mod, info, kinds, compute)
            return _run_rows(ts, vals, dst, fn)
        if strided is not None:
            fn = strided_fn[0]
            if fn is None:
                if not ready_every(strided[0], n, lambda: strided):
                    return None  # the full path's cold route serves (no nest for this layout)
                fn = strided_fn[0] = strided_entry(info, kinds, dtypes, compute, out_dtype)
            st, o = _raw_output(ts, dst)
            fargs = [n, o]  # (strided_args inlined, as rows_args is below)
            for t, (low, item, step) in zip(ts, strided_ops):
                fargs += (t._storage._ptr + t._offset * item + low, step)
            fn(*fargs, *vals)
            return dst if st is None else Tensor._make(st, shape, strides, 0, out_dtype,
                                                       contiguous)
        loops = variants.get(reads) or variants.setdefault(
            reads, _Loops(info, kinds, dtypes, compute, out_dtype, reads, one_block))
        if loops.flat is not None:
            return _run_blocks(ts, vals, dst, loops)
        mod = loops.module()
        # (the READY test first: no closure, no call on a hot call)
        if mod not in _cold.READY and not ready_every(
                mod, n, lambda: (mod.serial, (meta, np.empty(0, np_out), *[
                    t._storage.typed(d) for t, d in zip(ts, np_ins)], *vals))):
            return None  # the loop nest not compiled: the full path's cold route serves
        # (typed() waits for queued CPU-stream work on the operands, as the full path's; a
        # fresh result has none, and its view is not worth keeping)
        if dst is None:
            st = Storage.allocate(nbytes)
            target = st.buffer[:nbytes].view(np_out)
        else:
            target = dst._storage.typed(np_out)
        # (the meta holds the making call's offsets, output's first, last: a call whose
        # tensors sit elsewhere, a sliding window's views, runs on a copy with its own)
        m = meta
        offsets = (0 if dst is None else dst._offset, *[t._offset for t in ts])
        if offsets != lay.offsets:
            m = meta.copy()
            m[len(m) - len(offsets):] = offsets
        kargs = (m, target, *[t._storage.typed(d) for t, d in zip(ts, np_ins)], *vals)
        if big and cores.team_ready(mod, kargs, n):
            cores.call(mod.parallel, kargs, serial=mod.serial)
        else:
            mod.serial(*kargs)
        return dst if dst is not None else Tensor._make(st, shape, strides, 0, out_dtype,
                                                        contiguous)

    def _raw_output(ts, dst):
        """(the fresh result's storage or None, the output's address) for a loop on raw
        addresses, after queued CPU-stream work on the operands (as Storage.typed() would)."""
        if _streams._slow:
            _wait_queued(dst, *ts)
        if dst is None:
            st = Storage.allocate(nbytes)
            return st, st._ptr
        return None, dst._storage._ptr + dst._offset * out_dtype.itemsize

    def _run_rows(ts, vals, dst, fn):
        st, o = _raw_output(ts, dst)
        fargs = [n0, o, n1]  # (rows_args inlined: a call is a noticeable share of ~5 us)
        for t, (low, item, step, rstep) in zip(ts, row_ops):
            fargs += (t._storage._ptr + t._offset * item + low, step, rstep)
        fn(*fargs, *vals)
        return dst if st is None else Tensor._make(st, shape, strides, 0, out_dtype, contiguous)

    def _run_blocks(ts, vals, dst, loops):
        st, o = _raw_output(ts, dst)
        fargs = (n, o, *[t._storage._ptr + t._offset * i for t, i in zip(ts, items)], *vals)
        # (the combination's module only where its team may run)
        if big and cores.team_ready(loops.twins(), fargs, n):
            cores.call(loops.module().flat_parallel, fargs, serial=loops.flat)
        else:
            loops.flat(*fargs)
        return dst if st is None else Tensor._make(st, shape, strides, 0, out_dtype, contiguous)
    return run


class _Loops:
    """A layout runner's loops of one combination reading ``reads`` (tensor argument names)
    through the output: the combination's module (on first need) and, for one-block layouts,
    the flat loop."""
    __slots__ = ("key", "flat", "_mod", "_twins")

    def __init__(self, info, kinds, dtypes, compute, out_dtype, reads, one_block):
        self.key = (info, kinds, dtypes, compute, out_dtype, reads)
        self.flat = flat_entry(*self.key) if one_block else None
        self._mod = self._twins = None

    def module(self):
        if self._mod is None:
            self._mod = combination_module(*self.key)
        return self._mod

    def twins(self):
        if self._twins is None:
            self._twins = cores.twins(self.module().flat_parallel, self.flat)
        return self._twins


def _c_order_like(st, a, dtype):
    """A tensor over ``st`` of contiguous ``a``'s shape with C-order strides: what the full path
    allocates when it does not take its dense set-up (it copies the strides of ``a`` then, whose
    size-1 dims may have any stride)."""
    t = Tensor._make_dense(st, a, dtype)
    s = a._strides
    if len(s) != 1 or s[0] != 1:
        c = contiguous_strides(a._shape)
        if c != s:
            t._strides = c
    return t


def dense_runner3_scalar(info, dtypes, out_dtype, scalar_operand, scalar_type):
    """``where(cond, 0, x)`` / ``where(cond, x, 2.5)``: as dense_runner3 with the operand at
    ``scalar_operand`` (1 or 2) a Python scalar of ``scalar_type`` (converted to the compute
    dtype as the full path converts it, same errors); ``dtypes``: the two tensors' (condition
    first). ``run(cond, t, value)``."""
    if (len(info.tensor_args) != 3 or scalar_operand not in (1, 2)
            or scalar_type not in _SCALAR_SAMPLES or info.tensor_args[0] not in info.bool_args
            or any(a in info.bool_args for a in info.tensor_args[1:])):
        return None
    common = _dt.result_type(dtypes[1], _SCALAR_SAMPLES[scalar_type])  # weak promotion
    if info.int_to_float and common.kind in "biu":
        return None
    compute = compute_dtype_for(common)
    kinds = "TST" if scalar_operand == 1 else "TTS"
    kdtypes = ((dtypes[0], None, dtypes[1]) if scalar_operand == 1
               else (dtypes[0], dtypes[1], None))
    flat = flat_entry(info, kinds, kdtypes, compute, out_dtype)
    big = _above_grain(info, kinds, kdtypes, compute, out_dtype, flat)
    grain = parallel_grain(info)
    ia, it = dtypes[0].itemsize, dtypes[1].itemsize
    out_item = out_dtype.itemsize
    name = info.name
    value = _last_value_cache(compute, name, info.tensor_args[scalar_operand])

    def run(a, t, s):
        n = a._numel
        if not n:
            return None
        v = value(s)
        if n >= grain:
            return big(n, (a, t), (v,), _c_order_like)
        call = flat
        if _streams._slow:
            call = _inline_call(flat, name)
            if call is None:
                return None
            _wait_queued(a, t)
        st = Storage.allocate(n * out_item)
        call(n, st._ptr, a._storage._ptr + a._offset * ia, t._storage._ptr + t._offset * it, v)
        return _c_order_like(st, a, out_dtype)
    return run


def dense_runner3_scalars(info, dtypes, out_dtype, scalar_types):
    """A three-operand op on one contiguous tensor and two Python scalars (clip's one-pass form
    ``clip_bounds(x, 0.2, 0.8)``) of ``scalar_types``, converted to the compute dtype as the
    full path converts them (same order, same errors); ``dtypes``: the tensor's. As
    dense_runner3, ``run(a, v1, v2)``."""
    if (len(info.tensor_args) != 3 or any(t not in _SCALAR_SAMPLES for t in scalar_types)
            or any(a in info.bool_args for a in info.tensor_args)):
        return None
    common = _dt.result_type(dtypes[0], *(_SCALAR_SAMPLES[t] for t in scalar_types))
    if info.int_to_float and common.kind in "biu":
        return None
    compute = compute_dtype_for(common)
    kinds, kdtypes = "TSS", (dtypes[0], None, None)
    flat = flat_entry(info, kinds, kdtypes, compute, out_dtype)
    big = _above_grain(info, kinds, kdtypes, compute, out_dtype, flat)
    grain = parallel_grain(info)
    ia, out_item, name = dtypes[0].itemsize, out_dtype.itemsize, info.name
    first = _last_value_cache(compute, name, info.tensor_args[1])
    second = _last_value_cache(compute, name, info.tensor_args[2])

    def run(a, s1, s2):
        n = a._numel
        if not n:
            return None
        v1, v2 = first(s1), second(s2)
        if n >= grain:
            return big(n, (a,), (v1, v2), _c_order_like)
        call = flat
        if _streams._slow:
            call = _inline_call(flat, name)
            if call is None:
                return None
            _wait_queued(a)
        st = Storage.allocate(n * out_item)
        call(n, st._ptr, a._storage._ptr + a._offset * ia, v1, v2)
        return _c_order_like(st, a, out_dtype)
    return run


def dense_runner3(info, dtypes, out_dtype, scalar_pos):
    """The dense fast path's runner for a pointwise op with three tensor operands (``where``) on
    contiguous operands of one shape and backend, of the ``dtypes`` given: as dense_runner,
    ``run(a, b, c)``."""
    if scalar_pos or len(info.tensor_args) != 3:
        return None
    promoted = [d for name, d in zip(info.tensor_args, dtypes) if name not in info.bool_args]
    common = _dt.result_type(*promoted) if len(promoted) > 1 else promoted[0]
    if info.int_to_float and common.kind in "biu":
        return None
    compute = compute_dtype_for(common)
    flat = flat_entry(info, "TTT", tuple(dtypes), compute, out_dtype)
    big = _above_grain(info, "TTT", tuple(dtypes), compute, out_dtype, flat)
    grain = parallel_grain(info)
    ia, ib, ic = (d.itemsize for d in dtypes)
    out_item = out_dtype.itemsize
    name = info.name

    def run(a, b, c):
        n = a._numel
        if not n:
            return None
        sa, sb, sc = a._storage, b._storage, c._storage
        if n >= grain:
            return big(n, (a, b, c), (), _c_order_like)
        call = flat
        if _streams._slow:
            call = _inline_call(flat, name)
            if call is None:
                return None
            for s_ in (sa, sb, sc):
                if s_._uses is not None:
                    _streams.wait_uses(s_)  # as Storage.typed() would on the default stream
        st = Storage.allocate(n * out_item)
        call(n, st._ptr, sa._ptr + a._offset * ia, sb._ptr + b._offset * ib,
             sc._ptr + c._offset * ic)
        return _c_order_like(st, a, out_dtype)
    return run


_fill_flats: dict = {}  # dtype -> the fill kernel's flat loop
_fill_converts: dict = {}  # (dtype, Python type of the value) -> its converter
_half_elements: dict = {}  # half dtype -> (the last converted value, its element's bits)


def _fill_compute(dtype):
    # ops.copy.fill_'s compute dtype: float64 for half types (one rounding, not two)
    return _dt.float64 if dtype in (_dt.float16, _dt.bfloat16) else dtype


def _fill_value(dtype, value):
    """A fill ``value`` (a Python scalar of an exact type) in the type the fill kernel computes
    in, as the full path converts it (same errors): ops.copy.fill_'s common dtype is the
    tensor's, its compute dtype _fill_compute's."""
    key = (dtype, type(value))
    convert = _fill_converts.get(key)
    if convert is None:
        convert = _fill_converts[key] = _last_value_cache(_fill_compute(dtype), "fill", "value")
    return convert(value)


def _fill_flat(dtype):
    flat = _fill_flats.get(dtype)
    if flat is None:
        flat = _fill_flats[dtype] = flat_entry(FILL, "S", (None,), _fill_compute(dtype), dtype)
    return flat


def fill_dense(t, value):
    """``t.fill_(value)`` for a contiguous CPU tensor and a Python scalar of an exact type
    (ops/copy.py checked both): the fill kernel's flat loop on raw addresses, the value converted
    as the full path converts it (same errors). Returns None (nothing done) for what the full
    path must do: big tensors, a user CPU stream."""
    n = t._numel
    if not n:
        return t  # as the full path: nothing to write, the value is not even converted
    if n >= GRAIN:
        return None
    dtype = t._dtype
    st = t._storage
    call = host_call(_fill_flat(dtype), "fill", st)
    if call is None:
        return None
    v = _fill_value(dtype, value)
    call(n, st._ptr + t._offset * dtype.itemsize, v)
    return t


def fill_strided(t, value):
    """``t.fill_(value)`` for a CPU tensor whose elements are not one block (``x[::2]``,
    ``x[:, 0]``, a diagonal) and a Python scalar of an exact type (ops/copy.py checked both):
    NumPy's strided assignment over the storage's bytes, of the element the fill kernel would
    store (the value converted as the full path converts it; a half type's bits from the
    kernel's own conversion; queued CPU-stream work on the storage is waited for). Returns
    None for what the full path must do: big tensors, repeated elements (a zero stride: the
    full path refuses them), a read-only storage, a user CPU stream or the profiler current."""
    n = t._numel
    if not n:
        return t
    st = t._storage
    if n >= GRAIN or st.readonly or 0 in t._strides or (_streams._slow
                                                       and not _streams.runs_inline()):
        return None
    dtype = t._dtype
    v = _fill_value(dtype, value)
    np_dtype = kernel_np_dtype(dtype)
    if dtype is _dt.float16 or dtype is _dt.bfloat16:
        last = _half_elements.get(dtype)
        if last is not None and last[0] is v:
            v = last[1]  # (the converter hands back its last value itself)
        else:
            one = np.empty(1, np_dtype)  # (a fresh scratch element: threads may fill at once)
            _fill_flat(dtype)(1, one.ctypes.data, v)
            _half_elements[dtype] = (v, one[0])
            v = one[0]
    strided_array(t, np_dtype)[...] = v
    return t


_copy_flats: dict = {}


def copy_dense(dst, src):
    """``dst.copy_(src)`` for CPU tensors of one shape in different storages, both contiguous
    or both one dense block in the same dim order (ops/copy.py checked that): the copy
    kernel's flat loop over the blocks (casting as the full path casts).
    Returns None for empty or big tensors, while a user CPU stream is current and under the
    profiler."""
    n = dst._numel
    if n >= GRAIN or not n:
        return None
    key = (src._dtype, dst._dtype)
    flat = _copy_flats.get(key)
    if flat is None:
        # ops.copy.copy_: common dtype = the source's (no promotion), output = dst's dtype.
        flat = _copy_flats[key] = flat_entry(COPY, "T", (src._dtype,),
                                             compute_dtype_for(src._dtype), dst._dtype)
    sd, ss = dst._storage, src._storage
    call = flat
    if _streams._slow:
        if _streams._prof is not None:
            return None  # the profiler counts a copy's bytes: launch() records them
        call = _inline_call(flat, "copy")
        if call is None:
            return None
        if sd._uses is not None or ss._uses is not None:
            _streams.wait_uses(sd)
            _streams.wait_uses(ss)
    call(n, sd._ptr + dst._offset * dst._dtype.itemsize,
         ss._ptr + src._offset * src._dtype.itemsize)
    return dst


SHORT_ROWS_MIN = 2048  # elements: below, the short-rows kernel's call costs more than it saves


def copy_strided(dst, src):
    """``dst.copy_(src)`` of one dtype and shape below the parallel grain, in different
    storages, any strides (a transpose made contiguous, a slice with steps, a broadcast source;
    a destination with no element written twice, dense or a window of a bigger tensor):
    up to small_copy.MAX_ELEMENTS into a dense destination, small_copy's raw-address loop where
    the source folds to two dims, else NumPy's strided copy over the storages' bytes (a
    same-dtype copy moves bits, so half types copy as uint16). Returns None for what the full
    path must do: big tensors, another dtype, a user CPU stream or the profiler current."""
    n = dst._numel
    dtype = dst._dtype
    if n >= GRAIN or not n or src._dtype is not dtype or (_streams._slow
                                                          and not _streams.runs_inline()):
        return None
    dense = dst._contiguous or dst.is_contiguous()
    if (SHORT_ROWS_MIN < n <= _small_copy.MAX_ELEMENTS and dense and len(dst._shape) == 2
            and _copy_short_rows_serial(dst, src, small=True)):
        # rows of 2-15 from 2048 elements once their kernel is compiled or on disk: the raw loop
        # below goes element by element (int64 x[:, 3:15].copy() of 1000 rows: 18.8 -> 8.4 us)
        return dst
    if n <= _small_copy.MAX_ELEMENTS and dense:
        # a few thousand elements into a dense destination: the raw-address loop, where the
        # source's layout folds to two dims (the NumPy views alone cost ~1 us)
        fold = _small_copy.fold_2d(src._shape, src._strides)
        loop = fold and _small_copy.copy_loop(dtype.itemsize)
        if loop:
            n0, n1, s0, s1 = fold
            lo = src._offset + (n0 - 1) * min(s0, 0) + (n1 - 1) * min(s1, 0)  # lowest element
            if _streams._slow:
                _wait_queued(dst, src)  # as Storage.typed() would (a user stream declined above)
            item = dtype.itemsize
            loop(n, dst._storage._ptr + dst._offset * item, src._storage._ptr + lo * item, n1,
                 1 + (n0 - 1) * abs(s0) + (n1 - 1) * abs(s1), src._offset - lo, s0, s1)
            return dst
    if (len(dst._shape) == 2 and dense
            and (_copy_transposed_serial(dst, src) or _copy_short_rows_serial(dst, src))):
        return dst  # x.T.contiguous(), tl.repeat(x, 8): the kernels above the grain run
    if (len(dst._shape) > 1 and dst._shape[-1] < SHORT_INNER and not src._strides[-1]
            and _copy_nest_ready(dst, src)):
        # a short broadcast last dim (repeat, expand): NumPy's copy runs n short rows (1e5 x 2
        # float32: 283 us); the loop nest runs long inner loops (72 us)
        return None
    np_dtype = kernel_np_dtype(dtype)
    strided_array(dst, np_dtype)[...] = strided_array(src, np_dtype)
    return dst


_META_SAMPLE = np.empty(0, np.int64)


def _copy_nest_ready(dst, src):
    """Whether the copy loop nest the full path runs for this dtype pair is compiled or on
    disk (cold_route's rule: until then NumPy's copy serves, and the nest compiles in the
    background once such copies repeat; compiling it at once made a first tl.repeat 0.42 s)."""
    def make():
        mod = combination_module(COPY, "T", (src._dtype,), compute_dtype_for(src._dtype),
                                 dst._dtype)
        return mod.serial, (_META_SAMPLE, kernel_array(dst), kernel_array(src))
    return ready_once(("copy nest", src._dtype, dst._dtype), dst._numel, make)


run_pointwise.dense_runner = dense_runner
run_pointwise.strided_runner = strided_runner
run_pointwise.layout_runner = layout_runner
run_pointwise.inplace_runner = inplace_runner
run_pointwise.out_runner = out_runner
run_pointwise.dense_runner3 = dense_runner3
run_pointwise.dense_runner3_scalar = dense_runner3_scalar
run_pointwise.dense_runner3_scalars = dense_runner3_scalars
run_pointwise.fill_dense = fill_dense
run_pointwise.fill_strided = fill_strided
run_pointwise.copy_dense = copy_dense
run_pointwise.copy_strided = copy_strided

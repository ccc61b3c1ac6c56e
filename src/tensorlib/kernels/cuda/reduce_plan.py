"""Launch plans of the CUDA reductions and the split-reduction policy (the kernels' source:
reduce_source.py; the stub entry points: reduction.py).

``_run`` keeps a plan per (spec arguments, layout, mode, device, operand dtypes) (``_Plan``:
kernels, grids, launch options and the size / stride arguments); a call adds only pointers and
the divisor. The policy: tiles per layout (``_tiles``: inner reductions — dim 0 reduced — get
wide BLOCK_R so lanes read contiguous rows, outer ones wide BLOCK_O), int32 indices when they
fit (``_fits``), and when few outputs own many reduced elements (a full reduction has one) the
reduced range split into chunks, about 4 programs per SM (``_split``): stage 1 stores each
chunk's accumulator, stage 2 combines them and finishes.
"""
from __future__ import annotations

import itertools
import math
import operator

from ... import dtypes as _dt
from . import launch as _launch
from .pointwise import component_operands
from .reduce_source import ReductionSpec, arg_reduction_source, reduction_source

__all__ = ["GPU_TILES"]


_I32_MAX = 2 ** 31 - 1
# (BLOCK_O, BLOCK_R, num_warps) on a GPU
GPU_TILES = {"inner": (4, 512, 8), "outer": (128, 16, 4), "full": (1, 4096, 8)}


# ---- kernels ------------------------------------------------------------------------------------
def _kernel_for(spec, mode):
    return _launch.cached_module(spec.key, f"red_{spec.op}", lambda: reduction_source(spec),
                                 mode).kernel


def _arg_kernel_for(spec, mode):
    return _launch.cached_module(("arg", spec.key), f"red_{spec.op}",
                                 lambda: arg_reduction_source(spec), mode).kernel


# ---- the policy: tiles, index width, split ------------------------------------------------------
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


# ---- plans per layout ---------------------------------------------------------------------------
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

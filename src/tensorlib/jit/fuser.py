"""The fuser: ``fuse`` (jit/fuser_groups.py) groups connected pointwise ops, and a trailing
reduction, into ``prim::FusionGroup`` nodes; ``compile_group`` turns each into ONE generated
Numba kernel (source: jit/fuser_source.py; CUDA groups: jit/fuser_cuda.py) and the runner that
lays out its operands and launches it.
"""
from __future__ import annotations

import math
import threading
import types

import numpy as np

from ..allocation import empty_strided_like_order
from ..shape import broadcast_strides, coalesce, contiguous_strides
from ..storage import Storage
from ..tensor import Tensor
from .fuser_groups import REDUCE_OPS, FusionError, fuse, node_dtypes
from .passes import pointwise_info
from .fuser_source import Gen, all_source, pointwise_source, rows_source
from .ir import Graph

__all__ = ["fuse", "fuse_and_compile", "compile_group", "FusionError", "node_dtypes"]

# row / all-axes reductions and chains holding a compute-bound op: threads pay from here
GRAIN = 1 << 15
ALL_BLOCK = 1 << 16  # elements per partial of an all-axes reduction


# ---- runners ---------------------------------------------------------------------------------
_row_cache: dict = {}
_cache_lock = threading.Lock()


def _row_offsets(lead, strides, offset):
    key = (lead, strides, offset)
    ro = _row_cache.get(key)
    if ro is None:
        ro = np.full(lead if lead else (1,), offset, np.int64)
        for d, (n, s) in enumerate(zip(lead, strides)):
            shp = [1] * len(lead)
            shp[d] = n
            ro = ro + (np.arange(n, dtype=np.int64) * s).reshape(shp)
        ro = np.ascontiguousarray(ro.reshape(-1))
        with _cache_lock:
            if len(_row_cache) > 256:
                _row_cache.clear()
            _row_cache[key] = ro
    return ro


def _kind_of(t) -> str:
    return f"{t.dtype.name}[{len(t.shape)}d]"


def compile_group(node):
    """The callable running a prim::FusionGroup node: ``run(*inputs) -> tuple of outputs``."""
    from ..kernels.cpu.casting import kernel_array
    from ..kernels.cpu.pointwise import GRAIN as PW_GRAIN, _entry_point, load_generated_module
    from ..runtime.cpu import streams as _streams, vector_width
    from ..runtime.cpu.streams import launch_pair
    sub = node.attrs["subgraph"]
    mode = node.attrs.get("mode", "pw")
    if sub.outputs[0].type.device != "cpu":
        from .fuser_cuda import compile_group_cuda
        names = [n.op_name for n in sub.nodes if n.kind != "prim::Constant"]
        return compile_group_cuda(node, "fused_" + "_".join(names))
    gen = Gen(sub)
    name = "fused_" + "_".join(gen.names)
    # No shapes in the source (the kernels take them as arguments): the same chain specialized
    # for another shape is the same module, compiled once per process and cached once on disk.
    what = (f"{name} {[_kind_of(v.type) for v in sub.inputs]} -> "
            f"{[_kind_of(o.type) for o in sub.outputs]}")
    values = [v for _, v in gen.params]
    out_types = [o.type for o in sub.outputs]
    src = {"pw": pointwise_source, "rows": rows_source, "all": all_source}[mode](
        gen, sub, what)
    # a group holding a compute-bound op (ops.yaml tag wide_vectors) prefers 512-bit vectors,
    # as that op's eager kernel does
    wide = any(getattr(pointwise_info(n), "wide_vectors", False) for n in sub.nodes)
    src = vector_width.source_marker(wide) + src
    mod = load_generated_module("jit", src)
    label = name if len(name) <= 120 else name[:117] + "..."

    if mode == "pw":
        # a chain of memory-bound ops starts threads where one such eager loop does
        # (kernels/cpu/pointwise.py GRAIN); one holding a compute-bound op is dearer than that
        # op alone: fused GELU on the team beats one thread from ~5e4 elements (65536: 83-88
        # vs 125-129 us; 4e4: 87 vs 78-80 us), so it keeps GRAIN below
        grain = GRAIN if wide else PW_GRAIN
        shape = out_types[0].shape
        ndim = len(shape)
        numel = math.prod(shape)

        layouts = {}  # per inputs' (strides, offsets): outputs' strides, loop meta, dense?
        flat = types.SimpleNamespace(serial=mod.flat_serial, parallel=mod.flat_parallel)
        nbytes = [numel * t.dtype.itemsize for t in out_types]
        dtypes = [t.dtype for t in out_types]
        in_items = [v.type.dtype.itemsize for v in sub.inputs]
        entry = None  # the dense serial loop's compiled entry point (no dispatcher per call)

        def layout(ins):
            order = next((t for t in ins if t._shape == shape), None)
            dev = order.device if order is not None else ins[0].device
            # the eager output's layout: the first full-shape input's memory order
            ostr = empty_strided_like_order(shape, dtypes[0], dev, order)._strides
            strides = [ostr] * len(out_types) + [
                tuple(broadcast_strides(t._shape, t._strides, ndim)) for t in ins]
            perm = sorted((d for d in range(ndim) if shape[d] != 1), key=lambda d: abs(ostr[d]))
            cshape, cstr = coalesce([shape[d] for d in perm], [[s[d] for d in perm]
                                                                for s in strides])
            meta = np.array((len(cshape),) + cshape + sum(cstr, ()) +
                            (0,) * len(out_types) + tuple(t._offset for t in ins), np.int64)
            dense = all(t._shape == shape and t.is_contiguous() for t in ins) and (
                ostr == contiguous_strides(shape))
            return ostr, meta, dense

        def run(*ins):
            nonlocal entry
            key = tuple([(t._strides, t._offset) for t in ins])
            lay = layouts.get(key)
            if lay is None:
                if len(layouts) > 64:
                    layouts.clear()
                lay = layouts[key] = layout(ins)
            ostr, meta, dense = lay
            dev = ins[0]._storage.device
            outs = [Tensor._make(Storage.allocate(nb, dev), shape, ostr, 0, dt)
                    for nb, dt in zip(nbytes, dtypes)]
            if numel == 0:
                return tuple(outs)
            if not dense:
                ops = outs + list(ins)
                args = (meta, *[kernel_array(t) for t in ops], *values)
                launch_pair(mod, numel, grain, label, outs, ops, *args)
                return tuple(outs)
            args = (numel, *[o._storage._ptr for o in outs],
                    *[t._storage._ptr + t._offset * it for t, it in zip(ins, in_items)],
                    *values)
            if numel < grain and not _streams._slow:
                if entry is None:
                    entry = _entry_point(flat.serial, len(args) - 1 - len(values), values)
                entry(*args)
                return tuple(outs)
            ops = outs + list(ins)
            if _streams._slow:
                for t in ops:
                    kernel_array(t)  # waits for queued writers, as the full path's arrays do
            launch_pair(flat, numel, grain, label, outs, ops, *args)
            return tuple(outs)
    else:
        shape = next(n.inputs[0].type.shape for n in sub.nodes if n.op_name in REDUCE_OPS)
        R = math.prod(shape[:-1])
        C = shape[-1]
        lead = tuple(shape[:-1])
        nd = len(shape)
        if mode == "all":
            # C elements read flat (all_source): the grouping admitted only inputs that are
            # contiguous with the group's shape or single elements
            R, C, lead = 1, math.prod(shape), ()
        RB = max(1, min(64, R // 32))
        CB = 4096  # column block: the reduction buffer stays in L1/L2

        def operand(t, output=False):
            if output and t._shape == lead:  # a non-keepdims reduction result
                full = tuple(t._strides) + (0,)
            else:
                full = broadcast_strides(t._shape, t._strides, nd)
            return _row_offsets(lead, tuple(full[:-1]), t._offset), full[-1], kernel_array(t)

        # The kernel was generated for the observed layouts: inputs read with unit column
        # stride (contiguous when specialized) or, in an all-axes group, as one flat row. A
        # call whose inputs are laid out otherwise (not expected: the guard fixes the graph
        # inputs' contiguity) runs the group's ops one by one instead of reading wrongly.
        unit = [v.type.contiguous and (v.type.shape[-1] if v.type.shape else 1) != 1
                for v in sub.inputs]
        fallback = None

        def layout_ok(ins):
            for t, u in zip(ins, unit):
                if mode == "all":
                    if t._numel > 1 and not (t._shape == shape and t.is_contiguous()):
                        return False
                elif u and t._strides[-1] != 1:
                    return False
            return True

        def run(*ins):
            nonlocal fallback
            if not layout_ok(ins):
                if fallback is None:
                    from .interpreter import Interpreter
                    fallback = Interpreter(sub)
                return tuple(fallback(*ins))
            dev = ins[0].device
            outs = [empty_strided_like_order(t.shape, t.dtype, dev, None) for t in out_types]
            if mode == "all":  # flat operands: (array, element offset) each
                args = [C, ALL_BLOCK, CB]
                for t in outs + list(ins):
                    args += (kernel_array(t), t._offset)
            else:
                args = [R, C, RB, CB]
                for o in outs:
                    args += operand(o, True)
                for t in ins:
                    args += operand(t)
            args += values
            launch_pair(mod, R * C, GRAIN, label, outs, list(ins), *args)
            return tuple(outs)
    run.__name__ = name
    run.source = src
    return run


def fuse_and_compile(graph: Graph) -> dict:
    """Fuses ``graph`` (in place) and compiles every group: {FusionGroup node: runner}."""
    return {n: compile_group(n) for n in fuse(graph)}


"""The first calls of a pointwise op over strided or broadcast operands, while the loop nest of
its combination is neither compiled nor on disk: dense copies and the flat loop.

The loop nest (``serial`` of a combination module: the N-D tile loop with its contiguous,
broadcast-scratch and strided branches) costs ~0.6 s to compile cold; the flat loop over
dense operands (``flat``, the one every contiguous call of the op uses) about half that, and
nothing once the op has run on contiguous tensors. So while the nest is not ready, such a call
copies each tensor operand into a dense buffer in the iteration order (NumPy's copy of the raw
words: no kernel), runs the flat loop over them and copies the result into the output's
layout; the nest compiles in the background once the combination repeats (cold_route's rule).
The layout runners (pointwise_fast.py), which call the nest directly once a layout is hot,
hand such calls back here too. Measured 2026-12-06 on a 2-core Zen 4 VM, ``X - col``
((1000, 100) float32 minus (1000, 1)) in a fresh process with empty kernel caches, after a
contiguous subtract: first call 0.43-0.71 s -> 7-11 ms; cold calls ~130-240 us (the nest's
34) until the nest, compiled in a child process, loads ~1.2 s later; no call of a 3 s loop
over 40 ms.

The flat loop computes each element as the nest does (the same expression and conversions; no
reassociation), so the bits are the nest's. An op with block_fast forms chooses its form per
block of BLOCK elements, and the nest's blocks start at each innermost row's start (its tiles,
TILE, are a multiple of BLOCK): the flat loop then runs once per row of the dense copy (at
most COLD_ROWS_MAX rows), so its blocks are the nest's (float32 sin(x[::2]) / log(X[::2, ::2])
cold: 2.4-2.9 s with the nest compiled at the first call, 1.2 s this way). Not while a user
CPU stream is current or the profiler records (the launch path queues and records the
kernels); queued CPU-stream work on the operands was waited for when the caller took their
arrays (Storage.typed).
"""
from __future__ import annotations

import numpy as np

from ...runtime.cpu import streams as _streams
from ...tensor import Tensor
from .cold_route import ready_every

__all__ = ["run_dense_copies", "COLD_MAX", "COLD_ROWS_MAX"]

COLD_MAX = 1 << 24  # elements: above, the copies' memory is not worth a cold call
COLD_ROWS_MAX = 4096  # flat loop calls a cold call of a block-form op makes (~1 us each)
_WORDS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
          8: np.dtype(np.uint64), 16: np.dtype("V16")}


def run_dense_copies(mod, info, lay, meta, ops, kinds, dtypes, compute, arrays, values,
                     flat_entry):
    """Serves a call of combination module ``mod`` (its nest's arguments: ``meta``,
    ``arrays``, ``values``) by dense copies and the flat loop when its loop nest is not ready
    (see above); False (nothing done) otherwise. ``mod`` None: a call whose loop is not the
    nest (a small two-dim layout's rows loop, which its caller found not ready). ``flat_entry``:
    pointwise.flat_entry (passed in: this module sits below pointwise.py)."""
    numel = lay.numel
    inner = lay.shape[0] if info.block_forms else numel  # (elements a flat loop call takes)
    if (not numel or numel > COLD_MAX or numel // inner > COLD_ROWS_MAX
            or (_streams._slow and not _streams.runs_inline())
            or any(kind == "S" and name in info.bool_args  # (flat takes compute-dtype values)
                   for kind, name in zip(kinds, info.tensor_args))
            or mod is not None and ready_every(mod, numel,
                                               lambda: (mod.serial, (meta, *arrays, *values)))):
        return False
    out = ops[0]
    shape = lay.shape[::-1]  # NumPy's C order: the layout's innermost dim last
    addresses = []
    keep = []  # the dense copies, alive until the loop has run
    k = 0
    for x in ops[1:]:
        if isinstance(x, Tensor):
            k += 1
            dense = np.ascontiguousarray(_view(x, shape, lay.strides[k], lay.offsets[k]))
            keep.append(dense)
            addresses.append(dense.ctypes.data)
    target = _view(out, shape, lay.strides[0], lay.offsets[0])
    result = target if target.flags.c_contiguous else np.empty(shape, target.dtype)
    flat = flat_entry(info, kinds, tuple(dtypes), compute, out._dtype)
    if inner == numel:
        flat(numel, result.ctypes.data, *addresses, *values)
    else:  # a call per row of the innermost dim: blocks from each row's start, as the nest's
        steps = [inner * result.itemsize] + [inner * x.itemsize for x in keep]
        starts = [result.ctypes.data] + addresses
        for r in range(numel // inner):
            flat(inner, *[a + r * s for a, s in zip(starts, steps)], *values)
    if result is not target:
        target[...] = result
    return True


def _view(t, shape, strides, offset):
    """Tensor ``t``'s elements in the iteration order as a NumPy array of raw words."""
    item = t._dtype.itemsize
    return np.ndarray(shape, _WORDS[item], t._storage.buffer, offset * item,
                      tuple(s * item for s in strides[::-1]))

"""What the same-dtype copies on raw words share (transpose_copy.py, short_rows_copy.py,
small_copy.py): the word type of each element width (a copy moves bits, so one compiled loop
per width serves every dtype), and the launch of a kernel pair over a 2-D TensorIterator
layout."""
from __future__ import annotations

import numpy as np

from ...runtime.cpu.streams import launch_pair

__all__ = ["WORDS", "launch_copy"]

WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def launch_copy(kernels, out, src, word, lay, grain) -> None:
    """``kernels`` (``.serial`` / ``.parallel``, each taking (out's words, out's offset, src's
    words, src's offset, n0, n1, s0, s1)) over ``lay``'s two dims (innermost first; s0, s1:
    src's strides) as ``word``s, launched as the copy (streams.launch_pair)."""
    n0, n1 = lay.shape
    s0, s1 = lay.strides[1]
    o_off, a_off = lay.offsets
    launch_pair(kernels, n0 * n1, grain, "copy", out, (src,), out._storage.typed(word), o_off,
                src._storage.typed(word), a_off, n0, n1, s0, s1)

"""The index-unravel loop of the generated CPU kernels, written by one function.

A kernel gets its layout in ``meta``: the dims' sizes, then each operand's stride per dim. To
find where a flat index (a tile's outer index, a kept output, a reduced row, a matrix of a
batch) starts in each operand, it peels the index into one index per dim, first dim fastest,
and adds index * stride to each operand's offset. The pointwise tile loops (and the JIT's fused
kernels through them), the reduction, argmax and scan kernels and the batched matmul all do
this; :func:`unravel_lines` writes that loop for each, with the text they held before (the
generated text is the kernel cache's key, so it stays byte-identical).
"""
from __future__ import annotations

__all__ = ["unravel_lines", "unravel_source"]


def unravel_lines(index, dims, sizes, offsets, indent, note=""):
    """Source lines peeling ``index`` over ``dims`` and adding, per dim ``d``, its index times
    ``meta[<base> + d]`` to each ``(variable, base)`` of ``offsets``::

        rem = <index>  # <note>
        for d in <dims>:
            size = meta[<sizes> + d]
            idx = rem % size
            rem //= size
            <variable> += idx * meta[<base> + d]

    ``dims`` is the loop's iterable (``"range(nk)"``, ``"range(1, ndim)"``...), ``sizes`` and
    each base an expression of an index into meta, ``indent`` the first line's column. With
    ``index=None`` the ``rem`` line is left to the caller."""
    pad = " " * indent
    lines = []
    if index is not None:
        lines.append(f"{pad}rem = {index}" + (f"  # {note}" if note else ""))
    lines += [f"{pad}for d in {dims}:",
              f"{pad}    size = meta[{sizes} + d]",
              f"{pad}    idx = rem % size",
              f"{pad}    rem //= size"]
    lines += [f"{pad}    {var} += idx * meta[{base} + d]" for var, base in offsets]
    return lines


def unravel_source(*args, **kwargs) -> str:
    """:func:`unravel_lines` as one string, for the string templates (no trailing newline)."""
    return "\n".join(unravel_lines(*args, **kwargs))

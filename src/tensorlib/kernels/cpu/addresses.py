"""Raw addresses as Numba arrays inside kernels.

The dispatch fast path (tiny dense pointwise ops) hands its kernel plain integers: Numba's
dispatcher passes an int in ~50 ns, while each NumPy array argument costs a type fingerprint
and an unboxing, several times that. The kernel turns the integers back into arrays here.
"""
from __future__ import annotations

from numba import carray, njit, types
from numba.extending import intrinsic

__all__ = ["array_at"]


@intrinsic
def _pointer(typingctx, address, dtype):
    """``address`` (an integer) as a typed pointer to ``dtype`` (a NumPy scalar type)."""
    if not isinstance(address, types.Integer) or not isinstance(dtype, types.NumberClass):
        return None
    ptr = types.CPointer(dtype.dtype)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(ptr))

    return ptr(address, dtype), codegen


@njit(inline="always")
def array_at(address, n, dtype):
    """The ``n`` elements of type ``dtype`` at ``address`` as a contiguous 1-D array."""
    return carray(_pointer(address, dtype), (n,))

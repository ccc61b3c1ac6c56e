"""Raw addresses as Numba arrays inside kernels.

The dispatch fast path (tiny dense pointwise ops) hands its kernel plain integers: Numba's
dispatcher passes an int in ~50 ns, while each NumPy array argument costs a type fingerprint
and an unboxing, several times that. The kernel turns the integers back into arrays here.
"""
from __future__ import annotations

from llvmlite import ir
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
        # The pointer comes back from a call LLVM cannot see into, not from an inline
        # ``inttoptr``: LLVM's alias analysis then knows (as for a pointer argument) that it
        # cannot point into the module's private constant tables (vector_math/trig.py's float64
        # sin/cos/tan reduction table). With ``inttoptr`` every table load may alias the
        # output store, and the loop stays scalar. One call per array, not per element.
        pty = context.get_value_type(ptr)
        mod = builder.module
        name = f"tl_address_{args[0].type}_as_{ptr.dtype}_pointer"
        fn = mod.globals.get(name)
        if fn is None:
            fn = ir.Function(mod, ir.FunctionType(pty, [args[0].type]), name)
            fn.linkage = "internal"
            fn.attributes.add("noinline")
            b = ir.IRBuilder(fn.append_basic_block())
            b.ret(b.inttoptr(fn.args[0], pty))
        return builder.call(fn, [args[0]])

    return ptr(address, dtype), codegen


@njit(inline="always")
def array_at(address, n, dtype):
    """The ``n`` elements of type ``dtype`` at ``address`` as a contiguous 1-D array."""
    return carray(_pointer(address, dtype), (n,))

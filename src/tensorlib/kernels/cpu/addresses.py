"""Raw addresses as Numba arrays inside kernels.

The dispatch fast path (tiny dense pointwise ops) hands its kernel plain integers: Numba's
dispatcher passes an int in ~50 ns, while each NumPy array argument costs a type fingerprint
and an unboxing, several times that. The kernel turns the integers back into arrays here.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["array_at", "stack_scratch", "tile_view", "gather", "SCRATCH"]

SCRATCH = 1024  # elements of a stack_scratch array


def _address_as_pointer(builder, address, pty):
    """``address`` (an LLVM integer) as the LLVM pointer type ``pty``.

    The pointer comes back from a call LLVM cannot see into, not from an inline ``inttoptr``:
    LLVM's alias analysis then knows (as for a pointer argument) that it cannot point into the
    module's private constant tables (vector_math/trig.py's float64 sin/cos/tan reduction
    table). With ``inttoptr`` every table load may alias the output store, and the loop stays
    scalar. One call per array, not per element."""
    mod = builder.module
    name = f"tl_address_{address.type}_as_{pty.pointee}_pointer"
    fn = mod.globals.get(name)
    if fn is None:
        fn = ir.Function(mod, ir.FunctionType(pty, [address.type]), name)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block())
        b.ret(b.inttoptr(fn.args[0], pty))
    return builder.call(fn, [address])


@intrinsic
def array_at(typingctx, address, n, dtype):
    """The ``n`` elements of type ``dtype`` (a NumPy scalar type) at ``address`` as a
    contiguous 1-D array.

    Built in place rather than through ``numba.carray``: carray's implementation is a jitted
    overload whose environment lives in ``numba.np.arrayobj``, and loading any cached kernel
    that used it imports that module and what it pulls in (~23 ms of a warm process's first
    kernel call, measured 2026-12-05)."""
    if not (isinstance(address, types.Integer) and isinstance(n, types.Integer)
            and isinstance(dtype, types.NumberClass)):
        return None
    arrty = types.Array(dtype.dtype, 1, "C")

    def codegen(context, builder, signature, args):
        address_v, n_v, _ = args
        eltype = context.get_data_type(arrty.dtype)
        itemsize = context.get_abi_sizeof(eltype)
        intp = context.get_value_type(types.intp)
        arr = context.make_array(arrty)(context, builder)
        context.populate_array(
            arr, data=_address_as_pointer(builder, address_v, eltype.as_pointer()),
            shape=[context.cast(builder, n_v, n, types.intp)],
            strides=[ir.Constant(intp, itemsize)],
            itemsize=ir.Constant(intp, itemsize), meminfo=None)
        return arr._getvalue()

    return arrty(address, n, dtype), codegen


@intrinsic
def stack_scratch(typingctx, like):
    """A contiguous 1-D array of SCRATCH elements of ``like``'s dtype in the calling kernel's
    stack frame (allocated once, in its entry block, however often the call runs; each
    thread of a parallel loop has its own), uninitialised. Like array_at, no NRT allocation
    and nothing from ``numba.np.arrayobj`` (cached kernels load without it)."""
    if not isinstance(like, types.Array):
        return None
    arrty = types.Array(like.dtype, 1, "C")

    def codegen(context, builder, signature, args):
        eltype = context.get_data_type(arrty.dtype)
        itemsize = context.get_abi_sizeof(eltype)
        intp = context.get_value_type(types.intp)
        data = cgutils.alloca_once(builder, eltype, size=SCRATCH)
        arr = context.make_array(arrty)(context, builder)
        context.populate_array(arr, data=data, shape=[ir.Constant(intp, SCRATCH)],
                               strides=[ir.Constant(intp, itemsize)],
                               itemsize=ir.Constant(intp, itemsize), meminfo=None)
        return arr._getvalue()

    return arrty(like), codegen


@intrinsic
def tile_view(typingctx, like, scratch, use_scratch, start, n):
    """``like[start:start + n]``, or ``scratch[:n]`` when ``use_scratch`` (contiguous 1-D
    arrays of one dtype), as one array whose data pointer is selected: a branch choosing
    between the two slices made LLVM compile the loop that reads the result ~0.1 s longer."""
    if not (isinstance(like, types.Array) and isinstance(scratch, types.Array)
            and like.dtype == scratch.dtype and isinstance(use_scratch, types.Boolean)
            and isinstance(start, types.Integer) and isinstance(n, types.Integer)):
        return None
    arrty = types.Array(like.dtype, 1, "C")

    def codegen(context, builder, signature, args):
        like_v, scratch_v, use_v, start_v, n_v = args
        intp = context.get_value_type(types.intp)
        eltype = context.get_data_type(arrty.dtype)
        itemsize = context.get_abi_sizeof(eltype)
        src = context.make_array(like)(context, builder, like_v)
        tmp = context.make_array(scratch)(context, builder, scratch_v)
        first = builder.gep(src.data, [context.cast(builder, start_v, start, types.intp)])
        data = builder.select(use_v, tmp.data, first)
        arr = context.make_array(arrty)(context, builder)
        context.populate_array(arr, data=data, shape=[context.cast(builder, n_v, n, types.intp)],
                               strides=[ir.Constant(intp, itemsize)],
                               itemsize=ir.Constant(intp, itemsize), meminfo=None)
        return arr._getvalue()

    return arrty(like, scratch, use_scratch, start, n), codegen


@njit(inline="always", error_model="numpy")
def gather(scratch, arr, first, step, n):
    """``scratch[i] = arr[first + i * step]`` for i < n (unsigned indices: no negative-index
    check): a strided operand's chunk made contiguous for a vectorized loop. Step 2 (x[::2],
    x[:, ::2], a complex array's real parts) is spelled with a constant, so LLVM loads whole
    vectors and deinterleaves them (5e4 float32: 18.2 -> 11.9 us on a Zen 3 VM)."""
    if step == 2:
        for i in range(n):
            scratch[i] = arr[np.uint64(first + i * 2)]
    else:
        for i in range(n):
            scratch[i] = arr[np.uint64(first + i * step)]

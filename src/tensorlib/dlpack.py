"""DLPack interchange: ``Tensor.__dlpack__`` / ``__dlpack_device__`` (producer) and
``tl.from_dlpack`` (consumer), zero-copy with NumPy and any other DLPack library.

The C structs of dlpack.h are declared with ctypes. A producer call builds a DLManagedTensor
(legacy capsule "dltensor") or, when the consumer passes ``max_version >= (1, 0)``, a
DLManagedTensorVersioned ("dltensor_versioned"), whose ``manager_ctx`` owns a reference to a
record holding the tensor (so its memory stays alive), the struct and the shape/strides
arrays. The consumer renames the capsule to "used_..." and calls the deleter when done; a
capsule never consumed calls it from its destructor -- possibly while the consumer's own
exception is pending, which is why both are native code (see "native callbacks" below).
Imported memory is wrapped in a borrowed Storage whose owner calls the producer's deleter when
the last tensor over it dies.

Read-only tensors (``Storage.readonly``): a versioned capsule carries the read-only flag
(DLPACK_FLAG_BITMASK_READ_ONLY) so the consumer does not write (NumPy makes a non-writeable
array); the legacy capsule has no flags, so a read-only tensor exports through it only as a
copy (copy=True), else BufferError. A capsule flagged read-only imports as a read-only tensor
over the same memory (as NumPy does); copy=True gives a writable copy.

Devices: CPU memory (kDLCPU, and CUDA pinned host memory kDLCUDAHost on import) is shared.
CUDA tensors of the real driver export as kDLCUDA (device pointers); other devices raise
BufferError naming the device.
"""
from __future__ import annotations

import ctypes
import enum
import weakref

import numpy as np

from . import dtypes as _dt
from .device import CPU, Device
from .storage import Storage
from .tensor import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "tensor_dlpack", "tensor_dlpack_device",
           "DLPACK_VERSION"]

DLPACK_VERSION = (1, 0)
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


# DLDataTypeCode
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    # deleter is void (*)(DLManagedTensor *); held as a plain address
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


# ---------------------------------------------------------------- CPython capsule API
# Own prototypes (PYFUNCTYPE: called with the GIL held) rather than setting argtypes on the
# process-wide ctypes.pythonapi functions.
def _capi(name, restype, *argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _capi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                     ctypes.c_void_p)
_capsule_is_valid = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_capsule_get_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object,
                             ctypes.c_char_p)
_capsule_set_name = _capi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_incref = _capi("Py_IncRef", None, ctypes.py_object)

# Capsule names must outlive the capsules: module-level bytes.
_NAME = b"dltensor"
_USED = b"used_dltensor"
_NAME_V = b"dltensor_versioned"
_USED_V = b"used_dltensor_versioned"

# address of the managed struct -> the record keeping the exported tensor and structs alive.
# Weak values: the strong reference is the one the struct's manager_ctx owns, dropped by the
# deleter, and the entry goes with the record. No lock (dict operations are atomic under the
# GIL): the deleter can run in a finalizer or the GC on a thread already inside this module.
_live = weakref.WeakValueDictionary()


class _Export:
    __slots__ = ("tensor", "managed", "shape", "strides", "__weakref__")


# ---------------------------------------------------------------- native callbacks
# The capsule destructor runs inside PyCapsule's dealloc, which a consumer may trigger while
# its own exception is pending (NumPy refusing bfloat16 sets RuntimeError, then drops the
# capsule). A Python function behind a ctypes callback cannot run correctly then: ctypes
# checks PyErr_Occurred() when it converts arguments and after each PYFUNCTYPE call, and a
# Python call that returns with an exception set becomes "SystemError: returned a result with
# an exception set" -- so saving the consumer's exception (PyErr_Fetch) may work, but
# restoring it (PyErr_Restore) from Python cannot, and clearing it turns the consumer's error
# into "SystemError: returned NULL without setting an exception". So the destructor and the
# deleters are native functions (Numba cfuncs, compiled on the first export, cached on
# disk). The destructor, as dlpack.h's reference one, calls the struct's deleter only when
# the capsule was never consumed (still named "dltensor" / "dltensor_versioned") and touches
# no Python state itself. The deleter takes the GIL (DLPack lets consumers call it from any
# thread) and saves and restores the error indicator around its one Python-level action:
# Py_DecRef of the record that manager_ctx holds.
_callbacks = None  # {"destructor": address, "legacy": address, "versioned": address}
_compiled = []  # every compiled set, never freed: live capsules may point into any of them


def _native_callbacks() -> dict:
    global _callbacks
    if _callbacks is None:
        # no lock: two threads racing here both compile, and both results stay alive
        try:
            compiled = _compile_callbacks(cache=True)
        except RuntimeError:  # Numba found no writable cache location
            compiled = _compile_callbacks(cache=False)
        _compiled.append(compiled)
        if _callbacks is None:
            _callbacks = compiled
    return _callbacks


def _compile_callbacks(cache: bool) -> dict:
    from llvmlite import ir
    from numba import cfunc, types
    from numba.core import cgutils
    from numba.extending import intrinsic

    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)

    def load_pointer(builder, base, offset):
        slot = builder.gep(builder.bitcast(base, i8p), [ir.Constant(ir.IntType(64), offset)])
        return builder.load(builder.bitcast(slot, i8p.as_pointer()))

    @intrinsic
    def drop_manager_ctx(typingctx, managed, offset):
        if not isinstance(offset, types.IntegerLiteral):
            return None
        off = offset.literal_value

        def codegen(context, builder, sig, args):
            pyapi = context.get_python_api(builder)
            alive = builder.call(cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(i32, []), "Py_IsInitialized"), [])
            # after interpreter shutdown: leak, as NumPy's deleter does
            with builder.if_then(builder.icmp_signed("!=", alive, ir.Constant(i32, 0))):
                gil = pyapi.gil_ensure()
                with pyapi.err_push():
                    pyapi.decref(builder.bitcast(load_pointer(builder, args[0], off),
                                                 pyapi.pyobj))
                pyapi.gil_release(gil)
            return context.get_dummy_value()
        return types.void(types.voidptr, offset), codegen

    @intrinsic
    def release_unconsumed(typingctx, capsule):
        def codegen(context, builder, sig, args):
            mod = builder.module
            is_valid = cgutils.get_or_insert_function(
                mod, ir.FunctionType(i32, [i8p, i8p]), "PyCapsule_IsValid")
            get_pointer = cgutils.get_or_insert_function(
                mod, ir.FunctionType(i8p, [i8p, i8p]), "PyCapsule_GetPointer")
            deleter_type = ir.FunctionType(ir.VoidType(), [i8p]).as_pointer()
            for name, offset in ((_NAME, DLManagedTensor.deleter.offset),
                                 (_NAME_V, DLManagedTensorVersioned.deleter.offset)):
                cname = context.insert_const_bytes(mod, name + b"\0")
                valid = builder.call(is_valid, [args[0], cname])
                with builder.if_then(builder.icmp_signed("!=", valid, ir.Constant(i32, 0))):
                    managed = builder.call(get_pointer, [args[0], cname])
                    deleter = load_pointer(builder, managed, offset)
                    with builder.if_then(cgutils.is_not_null(builder, deleter)):
                        builder.call(builder.bitcast(deleter, deleter_type), [managed])
            return context.get_dummy_value()
        return types.void(types.voidptr), codegen

    legacy_ctx = DLManagedTensor.manager_ctx.offset
    versioned_ctx = DLManagedTensorVersioned.manager_ctx.offset

    @cfunc(types.void(types.voidptr), cache=cache)
    def legacy_deleter(managed):
        drop_manager_ctx(managed, legacy_ctx)

    @cfunc(types.void(types.voidptr), cache=cache)
    def versioned_deleter(managed):
        drop_manager_ctx(managed, versioned_ctx)

    @cfunc(types.void(types.voidptr), cache=cache)
    def capsule_destructor(capsule):
        release_unconsumed(capsule)

    # the cfunc objects own the compiled code: keep them with the addresses
    return {"destructor": capsule_destructor.address, "legacy": legacy_deleter.address,
            "versioned": versioned_deleter.address,
            "_keep": (legacy_deleter, versioned_deleter, capsule_destructor)}


# ---------------------------------------------------------------- dtypes and devices
def _dl_dtype(dtype) -> DLDataType:
    kind = dtype.kind
    if dtype is _dt.bfloat16:
        code = _BFLOAT
    else:
        code = {"b": _BOOL, "i": _INT, "u": _UINT, "f": _FLOAT, "c": _COMPLEX}[kind]
    return DLDataType(code, dtype.itemsize * 8, 1)


_FROM_DL = {
    (_INT, 8): _dt.int8, (_INT, 16): _dt.int16, (_INT, 32): _dt.int32, (_INT, 64): _dt.int64,
    (_UINT, 8): _dt.uint8, (_UINT, 16): _dt.uint16, (_UINT, 32): _dt.uint32,
    (_UINT, 64): _dt.uint64, (_FLOAT, 16): _dt.float16, (_FLOAT, 32): _dt.float32,
    (_FLOAT, 64): _dt.float64, (_BFLOAT, 16): _dt.bfloat16, (_COMPLEX, 64): _dt.complex64,
    (_COMPLEX, 128): _dt.complex128, (_BOOL, 8): _dt.bool_,
}


def _cuda_backend():
    try:
        from . import cuda
        return cuda.backend()
    except Exception:
        return None


def tensor_dlpack_device(self) -> tuple:
    """``Tensor.__dlpack_device__()``: (DLDeviceType, device id)."""
    dev = self.device
    if dev.type == "cpu":
        return (DLDeviceType.kDLCPU, 0)
    if dev.type == "cuda":
        return (DLDeviceType.kDLCUDA, dev.index or 0)
    raise BufferError(f"__dlpack_device__(): device '{dev}' has no DLPack device type")


def _device_name(dl_type, dl_id) -> str:
    try:
        name = DLDeviceType(dl_type).name
    except ValueError:
        name = f"device type {dl_type}"
    return f"{name}:{dl_id}"


# ---------------------------------------------------------------- producer
def tensor_dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: a PyCapsule for a DLPack consumer (see the module docstring)."""
    t = self
    if stream is not None and not isinstance(stream, int):
        raise TypeError(f"__dlpack__(): argument 'stream' must be an int or None, got "
                        f"{type(stream).__name__}")
    copied = False
    if dl_device is not None:
        want_type, want_id = int(dl_device[0]), int(dl_device[1])
        if (want_type, want_id) != tuple(int(v) for v in tensor_dlpack_device(t)):
            if want_type != DLDeviceType.kDLCPU:
                raise BufferError(f"__dlpack__(): can't export a tensor on '{t.device}' to "
                                  f"{_device_name(want_type, want_id)}")
            if copy is False:
                raise BufferError(f"__dlpack__(): exporting the tensor on '{t.device}' to the "
                                  f"CPU needs a copy, but copy=False")
            t = t.cpu()
            copied = True
    if t.device.type == "cuda":
        if _cuda_backend() != "real":
            raise BufferError(f"__dlpack__(): tensor on '{t.device}' is host memory of the "
                              f"'{_cuda_backend()}' CUDA backend, not a CUDA device; export "
                              f"it with dl_device=(kDLCPU, 0) or call .cpu() first")
        if stream != -1:
            # The consumer reads on its own stream: finish our work on this device first.
            from .runtime.cuda.streams import current_stream
            current_stream(t.device.index).synchronize()
    elif t.device.type != "cpu":
        raise BufferError(f"__dlpack__(): can't export a tensor on device '{t.device}'")
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    readonly = not copied and t._storage.readonly
    if readonly and not versioned and not copy:
        raise BufferError("__dlpack__(): the tensor is read-only and the legacy DLPack "
                          "capsule (max_version None or < (1, 0)) has no read-only flag, so "
                          "the consumer could write to it; ask for max_version=(1, 0) or for "
                          "a copy (copy=True)")
    if copy and not copied:
        t = t.clone()
        copied, readonly = True, False
    flags = (FLAG_IS_COPIED if copied else 0) | (FLAG_READ_ONLY if readonly else 0)
    return _capsule(t, versioned, flags)


def _capsule(t: Tensor, versioned: bool, flags: int):
    native = _native_callbacks()
    rec = _Export()
    rec.tensor = t
    nd = t.ndim
    rec.shape = (ctypes.c_int64 * max(nd, 1))(*t.shape)
    rec.strides = (ctypes.c_int64 * max(nd, 1))(*t.stride())
    dl = DLTensor()
    dl.data = t.data_ptr()
    dev_type, dev_id = tensor_dlpack_device(t)
    dl.device = DLDevice(int(dev_type), int(dev_id))
    dl.ndim = nd
    dl.dtype = _dl_dtype(t.dtype)
    dl.shape = ctypes.cast(rec.shape, ctypes.POINTER(ctypes.c_int64))
    dl.strides = ctypes.cast(rec.strides, ctypes.POINTER(ctypes.c_int64))
    dl.byte_offset = 0
    if versioned:
        m = DLManagedTensorVersioned()
        m.version = DLPackVersion(*DLPACK_VERSION)
        m.flags = flags
        name = _NAME_V
    else:
        m = DLManagedTensor()
        name = _NAME
    m.dl_tensor = dl
    # manager_ctx owns a reference to the record, dropped by the deleter (consumer done, or
    # the capsule destroyed unconsumed); the record owns the struct and the tensor
    m.manager_ctx = id(rec)
    m.deleter = native["versioned" if versioned else "legacy"]
    rec.managed = m
    addr = ctypes.addressof(m)
    _live[addr] = rec
    capsule = _capsule_new(addr, name, native["destructor"])
    _incref(rec)  # only once the capsule exists: its destructor is now the one owner
    return capsule


# ---------------------------------------------------------------- consumer
class _Imported:
    """Owner of imported memory: calls the producer's deleter when the Storage dies."""

    __slots__ = ("ptr", "deleter")

    def __init__(self, ptr, deleter):
        self.ptr, self.deleter = ptr, deleter

    def release(self):
        ptr, deleter, self.ptr = self.ptr, self.deleter, None
        if ptr and deleter:
            # PYFUNCTYPE keeps the GIL: deleters DECREF Python objects
            ctypes.PYFUNCTYPE(None, ctypes.c_void_p)(deleter)(ptr)

    def __del__(self):
        self.release()


def _call_producer(x, kwargs):
    try:
        return x.__dlpack__(**kwargs), True
    except TypeError:
        # A producer from before DLPack 1.0 / Array API 2023.12 takes no keywords (or just
        # stream): ask for the legacy capsule and apply device/copy ourselves.
        stream = kwargs.get("stream")
        if stream is not None:
            return x.__dlpack__(stream=stream), False
        return x.__dlpack__(), False


def from_dlpack(x, /, *, device=None, copy=None):
    """A tensor over the memory of ``x`` (anything with ``__dlpack__``), zero-copy unless a
    copy is asked for (copy=True), or needed and allowed (copy=None: a different ``device``).
    copy=False never copies and raises BufferError instead. Read-only memory is shared as a
    read-only tensor (``is_readonly``)."""
    from .allocation import resolve_device as _resolve_device
    target = None if device is None else _resolve_device(device, "from_dlpack")
    if isinstance(x, Tensor):
        from .ops.creation import asarray
        return asarray(x, device=target, copy=copy)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack(): {type(x).__name__} does not implement __dlpack__")
    src_type, src_id = (int(v) for v in x.__dlpack_device__())
    kwargs = {"max_version": DLPACK_VERSION}
    if copy is not None:
        kwargs["copy"] = copy
    if target is not None and target.type == "cpu" and src_type not in (
            DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        kwargs["dl_device"] = (DLDeviceType.kDLCPU, 0)
    if src_type == DLDeviceType.kDLCUDA:
        kwargs["stream"] = _consumer_stream(src_id)
    capsule, modern = _call_producer(x, kwargs)
    t, flags = _import_capsule(capsule, copy)
    if not modern:
        flags &= ~FLAG_IS_COPIED
    if target is not None and target != t.device:
        if copy is False:
            raise BufferError(f"from_dlpack(): moving the data from '{t.device}' to "
                              f"'{target}' needs a copy, but copy=False")
        return t.to(target)
    if copy and not flags & FLAG_IS_COPIED:
        t = t.clone()
    return t


def _consumer_stream(device_id):
    """The stream handle a CUDA producer must make the data ready on (ours, current)."""
    try:
        from .runtime.cuda.streams import current_stream
        handle = getattr(current_stream(device_id), "cuda_stream", None)
        return 1 if not handle else int(handle)  # 1: the legacy default stream
    except Exception:
        return 1


def _import_capsule(capsule, copy):
    if _capsule_is_valid(capsule, _NAME_V):
        name, used, versioned = _NAME_V, _USED_V, True
    elif _capsule_is_valid(capsule, _NAME):
        name, used, versioned = _NAME, _USED, False
    else:
        raise ValueError("from_dlpack(): expected a 'dltensor' or 'dltensor_versioned' "
                         "capsule (was it already consumed?)")
    ptr = _capsule_get_pointer(capsule, name)
    if versioned:
        m = DLManagedTensorVersioned.from_address(ptr)
        flags = int(m.flags)
        major = int(m.version.major)
    else:
        m = DLManagedTensor.from_address(ptr)
        flags, major = 0, 1
    # From here on we own it: the deleter runs whatever happens next.
    _capsule_set_name(capsule, used)
    owner = _Imported(ptr, m.deleter)
    if major != 1:
        owner.release()
        raise BufferError(f"from_dlpack(): DLPack version {major}.x is not supported "
                          f"(supported: 1.x)")
    dl = m.dl_tensor
    dev_type, dev_id = int(dl.device.device_type), int(dl.device.device_id)
    key = (int(dl.dtype.code), int(dl.dtype.bits))
    dtype = _FROM_DL.get(key)
    if dtype is None or dl.dtype.lanes != 1:
        owner.release()
        raise BufferError(f"from_dlpack(): unsupported DLPack dtype (code {key[0]}, bits "
                          f"{key[1]}, lanes {dl.dtype.lanes})")
    nd = int(dl.ndim)
    shape = tuple(int(dl.shape[i]) for i in range(nd))
    if dl.strides:
        strides = tuple(int(dl.strides[i]) for i in range(nd))
    else:
        from .tensor import contiguous_strides
        strides = contiguous_strides(shape)
    data = int(dl.data or 0) + int(dl.byte_offset)
    if dev_type in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        t = _wrap_host(data, shape, strides, dtype, owner)
    elif dev_type == DLDeviceType.kDLCUDA and _cuda_backend() == "real":
        t = _wrap_cuda(data, shape, strides, dtype, owner, dev_id)
    else:
        owner.release()
        raise BufferError(f"from_dlpack(): data on {_device_name(dev_type, dev_id)} is not "
                          f"supported (tensorlib imports kDLCPU, kDLCUDAHost and, with a "
                          f"CUDA GPU, kDLCUDA memory)")
    if flags & FLAG_READ_ONLY and not flags & FLAG_IS_COPIED:
        t._storage.readonly = True  # shared as NumPy does; writes through it are refused
    return t, flags


def _extent(data, shape, strides, itemsize):
    """(lowest byte address, byte length) the view covers."""
    if any(n == 0 for n in shape):
        return data, 0
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    return data + lo * itemsize, (hi - lo + 1) * itemsize


def _wrap_host(data, shape, strides, dtype, owner):
    low, nbytes = _extent(data, shape, strides, dtype.itemsize)
    if nbytes:
        buf = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(low), dtype=np.uint8)
    else:
        buf = np.empty(0, np.uint8)
    storage = Storage(nbytes, CPU, low, buf, owner=owner)
    return Tensor._make(storage, shape, strides, (data - low) // dtype.itemsize, dtype)


def _wrap_cuda(data, shape, strides, dtype, owner, dev_id):
    low, nbytes = _extent(data, shape, strides, dtype.itemsize)
    storage = Storage(nbytes, Device("cuda", dev_id), low, None, owner=owner)
    return Tensor._make(storage, shape, strides, (data - low) // dtype.itemsize, dtype)

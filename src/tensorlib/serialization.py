"""Pickling tensors: ``Tensor.__reduce_ex__`` and the reconstructor that pickles name.

A tensor pickles as a call ``tensorlib.serialization._rebuild_tensor(version, device,
dtype_name, shape, data, readonly[, requires_grad])`` -- plain values only, nothing of tensorlib's object layout:

``version``
    ``FORMAT_VERSION`` (1); a pickle of another version is refused.
``device``
    ``str(tensor.device)``: ``"cpu"``, ``"cuda:0"``...
``dtype_name``
    the dtype's name (``"float32"``, ``"bfloat16"``, ``"bool"``...).
``shape``
    tuple of non-negative ints.
``data``
    the elements in C (row-major) order, ``prod(shape) * itemsize`` bytes, little-endian, as
    stored (bfloat16: its 16 raw bits; bool: one byte 0/1; complex: real then imaginary).
    Protocol 5 hands them to pickle as a ``pickle.PickleBuffer`` (out of band with a
    ``buffer_callback``); for a contiguous CPU tensor the buffer is a read-only view of the
    tensor's own memory (zero-copy). Protocols < 5 get ``bytes`` in the pickle.
``readonly``
    the tensor was read-only (``Storage.readonly``); the loaded one is read-only too.
``requires_grad`` (present only when True)
    the tensor required grad; the loaded one is a leaf that requires grad (as PyTorch loads
    it: no graph and no ``.grad`` travel, a non-leaf comes back as a leaf).

What comes back is a new, compact (C-contiguous, offset 0) tensor of the same shape, dtype and
device, owning its memory: loading always copies ``data`` into freshly allocated storage (so a
load never aliases, nor outlives, the buffers handed to ``pickle.loads``). Views and strided
tensors (transposed, negative strides, broadcast zero strides) are materialized at dump time;
two tensors sharing storage come back as two independent tensors. ``copy.copy`` and
``copy.deepcopy`` go through the same reduction, so both give an independent copy, as NumPy's
do.

CUDA tensors go through host memory: their data is copied to the host at dump time and the
loaded tensor is moved to the same CUDA device. Where that device does not exist, loading
raises RuntimeError naming it (as ``torch.load`` does); to load such a pickle elsewhere, run
``pickle.load`` inside ``with tensorlib.serialization.map_location("cpu"):``.

A corrupt or truncated pickle (unknown version, device or dtype name, a bad shape, a data
buffer of the wrong size) raises TypeError or ValueError naming ``_rebuild_tensor`` and the
field; nothing is read outside ``data``.
"""
from __future__ import annotations

import contextlib
import math
import pickle
import threading

import numpy as np

from . import dtypes as _dt
from .device import CPU, Device

__all__ = ["FORMAT_VERSION", "reduce_tensor", "map_location"]

FORMAT_VERSION = 1
_FN = "tensorlib.serialization._rebuild_tensor()"
_DTYPES = {d.name: d for d in _dt.ALL_DTYPES}
_MAX_DIM = 1 << 62  # what allocation can address; keeps every extent inside int64
_tls = threading.local()


# ---------------------------------------------------------------- dumping
def reduce_tensor(t, protocol):
    """``Tensor.__reduce_ex__``: (reconstructor, arguments) as described in the module doc."""
    device = t.device
    host = t if device.type == "cpu" else t.cpu()
    readonly = t._storage.readonly
    data = _host_bytes(host)
    if protocol >= 5:
        data = pickle.PickleBuffer(data)
    else:
        data = data.tobytes()
    args = (FORMAT_VERSION, str(device), t.dtype.name, tuple(t.shape), data, readonly)
    if t.requires_grad:
        args += (True,)  # only then: other tensors' pickles stay what older versions read
    return _rebuild_tensor, args


def _host_bytes(t) -> np.ndarray:
    """The elements of CPU tensor ``t`` in C order as a read-only 1-D uint8 array: a view of
    its memory when it is contiguous, else a compact copy."""
    from .tensor import _HostView
    nbytes = t.numel() * t.dtype.itemsize
    if nbytes == 0:
        return np.empty(0, np.uint8)
    item = t.dtype.itemsize
    if t.is_contiguous():
        interface = {"version": 3, "shape": (nbytes,), "typestr": "|u1",
                     "data": (t.data_ptr(), True), "strides": None}
    else:
        interface = {"version": 3, "shape": t.shape, "typestr": t.dtype.storage_np_dtype.str,
                     "data": (t.data_ptr(), True),
                     "strides": tuple(s * item for s in t.stride())}
    # _HostView holds the Storage: its block is not reused while the array (or a
    # PickleBuffer over it) lives
    arr = np.asarray(_HostView(t._storage, interface))
    if not t.is_contiguous():
        arr = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        arr.flags.writeable = False
    return arr


# ---------------------------------------------------------------- loading
@contextlib.contextmanager
def map_location(device):
    """Within the block (this thread), tensors unpickle onto ``device`` (e.g. ``"cpu"``)
    whatever device they were pickled from."""
    target = Device(device) if not isinstance(device, Device) else device
    previous = getattr(_tls, "target", None)
    _tls.target = target
    try:
        yield target
    finally:
        _tls.target = previous


def _bad(kind, field, msg):
    return kind(f"{_FN}: field '{field}': {msg} (corrupt pickle, or one from an incompatible "
                f"tensorlib)")


def _check_version(version):
    if type(version) is not int:
        raise _bad(TypeError, "version", f"expected an int, got {type(version).__name__}")
    if version != FORMAT_VERSION:
        raise _bad(ValueError, "version", f"tensor pickle format version {version} is not "
                   f"supported (this tensorlib reads version {FORMAT_VERSION})")


def _check_dtype(name):
    if type(name) is not str:
        raise _bad(TypeError, "dtype_name", f"expected a str, got {type(name).__name__}")
    dtype = _DTYPES.get(name)
    if dtype is None:
        raise _bad(ValueError, "dtype_name", f"unknown dtype {name!r:.40}")
    return dtype


def _check_shape(shape):
    if type(shape) not in (tuple, list):
        raise _bad(TypeError, "shape", f"expected a tuple of ints, got {type(shape).__name__}")
    for n in shape:
        if not isinstance(n, int) or isinstance(n, bool):
            raise _bad(TypeError, "shape", f"expected a tuple of ints, got {shape!r:.80}")
        if not 0 <= n <= _MAX_DIM:
            raise _bad(ValueError, "shape", f"dimensions must be in [0, 2**62], got "
                       f"{tuple(shape)!r:.80}")
    return tuple(int(n) for n in shape)


def _check_device(spec):
    if type(spec) is not str:
        raise _bad(TypeError, "device", f"expected a str, got {type(spec).__name__}")
    try:
        return Device(spec)
    except (TypeError, ValueError) as e:
        raise _bad(ValueError, "device", str(e)) from None


def _check_data(data, nbytes) -> memoryview:
    """``data`` as a memoryview (the caller releases it), checked to be C-contiguous and to
    hold exactly ``nbytes``."""
    try:
        view = memoryview(data)
    except TypeError:
        raise _bad(TypeError, "data", f"expected a bytes-like buffer, got "
                   f"{type(data).__name__}") from None
    if view.nbytes != nbytes:
        got = view.nbytes
        view.release()
        raise _bad(ValueError, "data", f"holds {got} bytes, the shape and dtype need "
                   f"{nbytes} (truncated?)")
    if not view.c_contiguous:
        view.release()
        raise _bad(ValueError, "data", "the buffer is not contiguous")
    return view


def _target_device(device: Device) -> Device:
    override = getattr(_tls, "target", None)
    if override is not None:
        return override
    if device.type != "cuda":
        return device
    from .runtime.cuda import context
    index = device.index or 0
    count = context.device_count() if context.is_available() else 0
    if index >= count:
        have = ("no CUDA device is available" if count == 0
                else f"this machine has {count} CUDA device(s)")
        raise RuntimeError(f"{_FN}: the tensor was pickled on '{device}', but {have}; to load "
                           f"it on another device, unpickle inside "
                           f"`with tensorlib.serialization.map_location('cpu'):`")
    return device


def _rebuild_tensor(version, device, dtype_name, shape, data, readonly=False,
                    requires_grad=False):
    """The reconstructor tensor pickles call (see the module docstring). Validates every
    field before touching memory."""
    _check_version(version)
    device = _check_device(device)
    dtype = _check_dtype(dtype_name)
    shape = _check_shape(shape)
    if type(readonly) is not bool:
        raise _bad(TypeError, "readonly", f"expected a bool, got {type(readonly).__name__}")
    if type(requires_grad) is not bool:
        raise _bad(TypeError, "requires_grad",
                   f"expected a bool, got {type(requires_grad).__name__}")
    if requires_grad and dtype.kind not in "fc":
        raise _bad(ValueError, "requires_grad", f"only float and complex tensors can require "
                   f"gradients, got dtype {dtype.name}")
    nbytes = math.prod(shape) * dtype.itemsize
    view = _check_data(data, nbytes)
    try:
        target = _target_device(device)
        from .allocation import empty
        t = empty(shape, dtype=dtype, device=CPU)
        if nbytes:
            # one copy, into fresh storage: nothing of the caller's buffer is kept
            t._storage.buffer[:nbytes] = np.frombuffer(view, dtype=np.uint8)
    finally:
        view.release()
    if target.type != "cpu":
        t = t.to(target)
    if readonly and hasattr(t._storage, "readonly"):
        t._storage.readonly = True
    if requires_grad:
        t.requires_grad_()
    return t

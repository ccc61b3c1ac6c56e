"""Creation ops: ``full`` / ``zeros`` / ``ones``, the ``*_like`` fills, ``arange``, ``linspace``,
``eye``, and tensors from existing data (``asarray``, ``tensor``, ``from_numpy``).

Each allocates through ``allocation.py`` (the tensor layer's raw allocation: ``empty``,
``empty_strided``, ``empty_like``, pinned memory) and then runs a fill kernel. ``tl.empty`` and
``tl.empty_like`` are the allocation module's own functions.
"""
from __future__ import annotations

import math
import operator
from struct import error as _StructError, pack_into as _pack_into

import numpy as np

from .. import dtypes as _dt
from ..allocation import empty_1d, empty_like, empty_strided, new_dense_cpu, normalize_shape, \
    resolve_device
from ..device import plain_cpu
from ..dispatch.binding import set_requires_grad
from ..dispatch.keys import TLS_IN_USE
from .copy import zero_bytes as _zero_bytes
from ..shape import contiguous_strides
from ..storage import Storage
from ..tensor import Tensor

__all__ = ["asarray", "tensor", "from_numpy", "zeros", "ones", "full", "zeros_like", "ones_like",
           "full_like", "arange", "linspace", "eye"]

_PY_SCALAR_TYPES = frozenset((bool, int, float, complex))
_fill = None  # ops.copy.fill_ (imported on first use, after the ops are registered)
_full_fills = None  # (ops.copy.fill_dense_fast, fill_iterated), imported at full's first call
_coerce = None  # ops.indexing._coerce_scalar (likewise)
_streams = None  # runtime.cpu.streams (likewise)


def full(shape, fill_value, dtype=None, device=None, pin_memory=False, op="full") -> Tensor:
    if not (type(shape) is tuple and len(shape) == 1 and type(shape[0]) is int
            and shape[0] >= 0):
        shape = normalize_shape(shape, op)
    if dtype is None:
        dtype = _dt.python_scalar_dtype(_scalar(fill_value, op))
    if (plain_cpu(device) and not pin_memory and type(dtype) is _dt.DType
            and type(fill_value) in _PY_SCALAR_TYPES and not TLS_IN_USE[0]):
        # Direct path (a CPU tensor, no dispatch key set on any thread): what empty_strided
        # and the dispatcher's fill_ would do, without their general checks.
        t = new_dense_cpu(shape, dtype)
        if t is not None:
            global _full_fills
            if _full_fills is None:
                from .copy import fill_dense_fast, fill_iterated
                _full_fills = (fill_dense_fast, fill_iterated)
            dense, iterated = _full_fills
            return t if dense(t, fill_value) else iterated(t, fill_value)
    t = empty_strided(shape, contiguous_strides(shape), dtype, device, op, pin_memory)
    return t.fill_(fill_value)


def zeros(shape, dtype=None, device=None, pin_memory=False) -> Tensor:
    if type(shape) is int:
        shape = (shape,)
    if (type(shape) is tuple and len(shape) == 1 and type(shape[0]) is int and shape[0] >= 0
            and (dtype is None or type(dtype) is _dt.DType) and plain_cpu(device)
            and not pin_memory and not TLS_IN_USE[0]):
        # The common call: copy.zero_bytes' one memset of the new C-order tensor, without
        # full's checks and fill dispatch around it (zeros((1000,)) ~2.45 -> ~2.2 us); what
        # it declines (a CPU stream or the profiler in use) goes through full
        t = new_dense_cpu(shape, dtype or _dt.default_float())
        if t is not None and _zero_bytes(t):
            return t
    # "zeros" so size/device errors name the function the user called
    return full(shape, 0, dtype or _dt.default_float(), device, pin_memory, "zeros")


def ones(shape, dtype=None, device=None, pin_memory=False) -> Tensor:
    return full(shape, 1, dtype or _dt.default_float(), device, pin_memory, "ones")


def zeros_like(x, dtype=None, device=None):
    return empty_like(x, dtype=dtype, device=device).fill_(0)


def ones_like(x, dtype=None, device=None):
    return empty_like(x, dtype=dtype, device=device).fill_(1)


def full_like(x, fill_value, dtype=None, device=None):
    return empty_like(x, dtype=dtype, device=device).fill_(fill_value)


def _scalar(v, op, arg="fill_value"):
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, (bool, int, float, complex)):
        return v
    if hasattr(v, "item") and hasattr(v, "dtype"):  # NumPy scalars
        return v.item()
    raise TypeError(f"{op}(): argument '{arg}' must be a number, got {type(v).__name__}")


def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
    if stop is None:
        start, stop = 0, start
    exact = type(start) is int and type(stop) is int and type(step) is int
    if not exact:
        # (exact ints, the common case, need neither conversion nor these checks)
        start, stop, step = (_scalar(v, "arange", n) for v, n in
                             ((start, "start"), (stop, "stop"), (step, "step")))
        for v, n in ((start, "start"), (stop, "stop"), (step, "step")):
            if isinstance(v, complex):
                raise TypeError(f"arange(): argument '{n}' must be real, got {v!r}")
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"arange(): argument '{n}' must be finite, got {v!r}")
    if step == 0:
        raise ValueError("arange(): argument 'step' must be nonzero")
    try:
        n = max(math.ceil((stop - start) / step), 0)
    except OverflowError:  # (stop - start) / step is inf
        raise OverflowError(f"arange(): {start}..{stop} in steps of {step} has too many "
                            f"elements") from None
    if dtype is None:
        dtype = _INT_OF_INTS if exact else _dt.result_type(start, stop, step)
    if n and plain_cpu(device) and type(dtype) is _dt.DType:
        t = _dense_range(n, dtype, start, step)
        if t is not None:
            return t
    t = empty_1d(n, dtype, None if plain_cpu(device) else device)
    return t._fill_range(start, step)


# what result_type gives for Python ints alone (arange) and real Python numbers (linspace): it
# depends on the values' types only
_INT_OF_INTS = _dt.result_type(0, 1, 1)
_FLOAT_OF_REALS = _dt.result_type(0, 1, 1.0)
_REAL_TYPES = frozenset((bool, int, float))
_range_dense = None  # the CPU kernel's dense range fill (ops.copy.range_fast_for), or False


def _dense_range(n, dtype, start, step):
    """A new C-order CPU tensor of n > 0 elements holding start + i*step: what
    ``empty_1d(n, dtype, None)._fill_range(start, step)`` gives, through the CPU kernel's
    dense range fill when it takes it; None when the size needs empty()'s checks."""
    t = new_dense_cpu((n,), dtype)
    if t is None:
        return None
    global _range_dense
    fast = _range_dense
    if fast is None:
        from .copy import range_fast_for
        fast = _range_dense = range_fast_for(t) or False
    if fast and fast(t, start, step) is not None:
        return t
    return t._fill_range(start, step)


def linspace(start, stop, num, dtype=None, device=None, endpoint=True) -> Tensor:
    if type(start) not in _PY_SCALAR_TYPES:
        start = _scalar(start, "linspace", "start")
    if type(stop) not in _PY_SCALAR_TYPES:
        stop = _scalar(stop, "linspace", "stop")
    if type(num) is not int:
        num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace(): argument 'num' must be non-negative, got {num}")
    if dtype is None:
        dtype = (_FLOAT_OF_REALS if type(start) in _REAL_TYPES and type(stop) in _REAL_TYPES
                 else _dt.result_type(start, stop, 1.0))
    div = (num - 1) if endpoint else num
    try:
        step = (stop - start) / div if div > 0 else 0.0
    except OverflowError:  # (ints beyond float64's range)
        raise OverflowError(f"linspace(): arguments 'start' = {start!r} and 'stop' = {stop!r} "
                            f"are too far apart for a floating-point step") from None
    t = None
    if num and plain_cpu(device) and type(dtype) is _dt.DType:
        t = _dense_range(num, dtype, start, step)
    if t is None:
        t = empty_1d(num, dtype, None if plain_cpu(device) else device)  # (None: the direct path)
        t._fill_range(start, step)
    if endpoint and num > 1:
        # exact end point, as NumPy guarantees
        global _fill, _coerce
        if _coerce is None:
            from .indexing import _coerce_scalar as _coerce
        lim = _NP_ENDPOINT.get(t._dtype)
        if lim is not None and (type(stop) is float or (type(stop) is int
                                                        and -_BIG < stop < _BIG)):
            v = float(stop)  # (what _coerce gives for a real float dtype)
        else:
            try:
                v = _coerce(stop, t._dtype, "linspace")
            except (OverflowError, ValueError) as e:  # (named for the argument)
                raise type(e)(f"linspace(): argument 'stop' = {stop!r} can't be an element of "
                              f"{t._dtype}") from None
        if TLS_IN_USE[0] or t._storage.device.type != "cpu":
            t[num - 1] = v
        else:  # what t[num - 1] = stop does, without its key parsing and dispatch
            if _fill is None:
                from .copy import fill_ as _fill
            if lim is not None and type(v) is float and abs(v) <= lim[1] and not _cpu_slow():
                # float32 / float64 on the host with no CPU stream or profiler in use: C's
                # conversion rounds a float in range to the element as the fill kernel does
                # (to nearest; beyond float32's range NumPy would warn where the kernel gives
                # inf quietly); struct's native format is that conversion
                _pack_into(lim[2], t._storage.buffer, (num - 1) * lim[3], v)
            else:
                _fill(Tensor._make(t._storage, (), (), num - 1, t._dtype), v)
    return t


_BIG = 1 << 1000  # ints below this in magnitude convert to float without an OverflowError
_NP_ENDPOINT = {_dt.float32: (np.float32, float(np.finfo(np.float32).max), "f", 4),
                _dt.float64: (np.float64, math.inf, "d", 8)}


def _cpu_slow():
    global _streams
    if _streams is None:
        from .copy import _cpu_streams
        _streams = _cpu_streams()
    return _streams._slow


def eye(n_rows, n_cols=None, k=0, dtype=None, device=None) -> Tensor:
    n_cols = n_rows if n_cols is None else n_cols
    for v, arg in ((n_rows, "n_rows"), (n_cols, "n_cols")):
        if v < 0:
            raise ValueError(f"eye(): argument '{arg}' must be non-negative, got {v}")
    t = full((n_rows, n_cols), 0, dtype=dtype or _dt.default_float(), device=device, op="eye")
    count = max(0, min(n_rows + min(k, 0), n_cols - max(k, 0)))  # the diagonal's length
    if not count:
        return t
    np_dtype = t._dtype.np_dtype
    if (type(t) is Tensor and t._storage.device.type == "cpu" and np_dtype is not None
            and not TLS_IN_USE[0] and not _cpu_slow()):
        # one strided store into the fresh C-order storage (the diagonal view's fill_ would
        # build a TensorIterator: 10 us of a 30 x 30 eye's 16)
        step = n_cols + 1
        start = k if k >= 0 else -k * n_cols
        t._storage.typed(np_dtype)[start:start + count * step:step] = 1
    else:
        t.diagonal(k).fill_(1)
    return t


# ---- from existing data ------------------------------------------------------------------------
_PY_DEFAULTS = {"f": "float32", "c": "complex64", "i": "int64", "u": "int64", "b": "bool"}


def from_numpy(array) -> Tensor:
    """A CPU tensor sharing ``array``'s memory (and keeping it alive); no copy."""
    if type(array) is np.ndarray:
        t = _borrow_dense(array)  # (the common array, without the checks below: 5.1 -> ~4 us)
        if t is not None:
            return t
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy(): expected a numpy.ndarray, got {type(array).__name__}")
    dtype = _dt.from_numpy_dtype(array.dtype)
    if not array.dtype.isnative:
        raise TypeError(f"from_numpy(): byte-swapped arrays ({array.dtype}) are not supported; "
                        f"use array.astype(array.dtype.newbyteorder('='))")
    item = array.itemsize
    if any(s % item for s in array.strides):
        raise ValueError(f"from_numpy(): strides {array.strides} are not a multiple of the "
                         f"item size {item}")
    storage, offset = Storage.from_buffer(array)
    return Tensor._make(storage, array.shape, tuple(s // item for s in array.strides),
                        offset // item, dtype)


def _only_ints(obj) -> bool:
    """Nested lists/tuples of Python (or NumPy) ints and bools only; stops at the first other."""
    if isinstance(obj, (list, tuple)):
        return all(_only_ints(x) for x in obj)
    return isinstance(obj, (int, np.integer, np.bool_))


_NUMBERS = (bool, int, float, complex, np.bool_, np.number)


def _scalars(obj):
    """The scalars of nested lists/tuples, in order."""
    if isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _scalars(x)
    else:
        yield obj


def _convert_python(obj, np_dtype, dtype, op):
    """``np.asarray(obj, dtype=np_dtype)``: each Python number converted once, straight to the
    target (NumPy 2's rules: out-of-range ints and non-finite floats into an integer dtype
    raise). Errors name op, the argument and the offending value."""
    try:
        return np.asarray(obj, dtype=np_dtype)
    except (OverflowError, ValueError, TypeError) as e:
        err = e
    for x in _scalars(obj):  # the error path only: find the value NumPy refused
        try:
            np.asarray(x, dtype=np_dtype)
        except (OverflowError, ValueError, TypeError) as e:
            kind = type(e) if isinstance(e, (OverflowError, TypeError)) else ValueError
            raise kind(f"{op}(): argument 'obj' holds the value {x!r:.60}, which {dtype} can't "
                       f"represent ({e})") from None
    raise ValueError(f"{op}(): cannot convert argument 'obj' ({type(obj).__name__}) to "
                     f"{dtype}: {err}") from None


def _infer_numpy(obj, op, dtype=None):
    """Python data (scalars, nested lists/tuples, NumPy scalars inside them) -> NumPy array.

    With ``dtype`` the numbers convert straight to it, rounding once (bfloat16, which NumPy
    lacks: through the exact float64 / int64 values, then one rounding by the tensor cast).
    Without it, tensorlib's defaults: float -> float32, complex -> complex64, int -> int64
    (uint64 beyond int64), bool -> bool."""
    try:
        arr = np.asarray(obj)  # exact: float64 / complex128 / int64 / bool (or object)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{op}(): cannot build a tensor from {type(obj).__name__}: {e}") from None
    python_data = not isinstance(obj, (np.ndarray, np.generic))
    big_ints = python_data and arr.size and arr.dtype.kind in "fO" and _only_ints(obj)
    if big_ints and (dtype is None or dtype is _dt.bfloat16 or dtype.kind in "iu"):
        # NumPy turns ints beyond int64 into float64 (lists) or object (scalars): use uint64
        # when they fit, never a lossy float.
        try:
            arr = np.asarray(obj, dtype=np.uint64)
        except (OverflowError, ValueError):
            if dtype is None:
                raise OverflowError(f"{op}(): Python int out of the range of int64 and uint64 "
                                    f"in {str(obj)[:60]}") from None
            if dtype is _dt.bfloat16:  # beyond uint64: through float64, as NumPy's halves go
                return _convert_python(obj, np.float64, dtype, op)
            arr = None  # an integer dtype: _convert_python names the value
    # object arrays: big ints among floats or complex (fine with a dtype, checked below)
    numbers_only = big_ints or (python_data and dtype is not None and arr.dtype.kind == "O"
                                and all(isinstance(x, _NUMBERS) for x in _scalars(obj)))
    if arr is not None and arr.dtype.kind not in "biufc" and not numbers_only:
        raise TypeError(f"{op}(): data must be numeric or bool, got {arr.dtype} from "
                        f"{type(obj).__name__} ({str(obj)[:60]})")
    if not python_data:
        return arr
    if dtype is None:
        default = _PY_DEFAULTS[arr.dtype.kind]
        if arr.dtype.kind == "u":
            default = "uint64"
        return arr.astype(default, copy=False)
    if dtype is _dt.bfloat16:
        if arr.dtype.kind == "O":
            return _convert_python(obj, np.float64, dtype, op)
        if arr.dtype.kind == "c":
            raise TypeError(f"{op}(): argument 'obj' holds complex values, which bfloat16 "
                            f"can't represent")
        return arr  # exact; the tensor cast rounds once
    if arr is not None and arr.dtype == dtype.np_dtype and not big_ints:
        return arr  # already exact in the requested dtype
    return _convert_python(obj, dtype.np_dtype, dtype, op)


_PYBUF_FULL_RO = 0x11C  # PyBUF_INDIRECT | PyBUF_FORMAT: what memoryview() asks for


def _buffer_numpy(obj):
    """A NumPy array over the memory of a buffer-protocol object (memoryview, array.array,
    bytes, bytearray, ctypes arrays, a class with ``__buffer__``), keeping the buffer's own
    format as dtype (bytes: uint8) and its writability; None for other objects."""
    try:
        mv = memoryview(obj)
    except TypeError:
        # PEP 688's Python-level __buffer__ (memoryview() calls it itself from Python 3.12)
        get = getattr(type(obj), "__buffer__", None)
        if get is None:
            return None
        mv = get(obj, _PYBUF_FULL_RO)
        if not isinstance(mv, memoryview):
            mv = memoryview(mv)
    try:
        return np.asarray(mv)
    except (ValueError, TypeError) as e:
        raise TypeError(f"asarray(): unsupported buffer format {mv.format!r} of "
                        f"{type(obj).__name__}: {e}") from None


_NOT_BUFFERS = (list, tuple, bool, int, float, complex, str, np.generic)


def asarray(obj, /, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """Array API asarray: shares memory with a Tensor, a NumPy array or a buffer-protocol object
    (memoryview, array.array, bytes...) when it can (copy=None), always copies with copy=True,
    and raises if a copy is needed under copy=False. Read-only memory (a non-writeable NumPy
    array, bytes) is shared as a read-only tensor; copy=True gives a writable one.

    Python data (scalars, nested sequences) converts straight to ``dtype`` when given (one
    rounding; out-of-range ints raise); without it: float -> float32, int -> int64, complex ->
    complex64, bool -> bool."""
    if type(obj) is np.ndarray and dtype is None and device is None and copy is None and \
            requires_grad is False:
        t = _borrow_dense(obj)
        if t is not None:
            return t
    if dtype is not None:
        dtype = _dt.to_dtype(dtype, op="asarray")
    if type(obj) in _PACKABLE and plain_cpu(device) and requires_grad is False and \
            copy is not False:
        t = _packed(obj, dtype)
        if t is not None:
            return t
    target = None if device is None else resolve_device(device, "asarray")
    private = False  # from_np made here from Python data or a NumPy scalar: nobody else's
    if isinstance(obj, Tensor):
        src = obj
    else:
        from_np = None
        if isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__") or \
                hasattr(obj, "__array__"):
            from_np = np.asarray(obj)
            private = isinstance(obj, np.generic)
        elif not isinstance(obj, _NOT_BUFFERS):
            from_np = _buffer_numpy(obj)
        if from_np is not None:
            if from_np.dtype.kind not in "biufc" and from_np.dtype.name != "bfloat16":
                # (ml_dtypes' bfloat16 holds the bits tensorlib's bfloat16 stores)
                raise TypeError(f"asarray(): unsupported array dtype {from_np.dtype}")
        else:
            if copy is False:
                raise ValueError("asarray(): copy=False is impossible for Python sequences "
                                 "and scalars")
            from_np = _infer_numpy(obj, "asarray", dtype)
            private = True
        if from_np.dtype.byteorder not in "=|" or \
                any(s % from_np.itemsize for s in from_np.strides):
            if copy is False:
                raise ValueError(f"asarray(): copy=False is impossible: the data "
                                 f"({from_np.dtype}, strides {from_np.strides}) needs a copy "
                                 f"to native byte order and aligned strides")
            from_np = np.array(from_np, dtype=from_np.dtype.newbyteorder("="), order="C")
        src = _owned_copy(from_np) if private else from_numpy(from_np)
    need_copy = (dtype is not None and dtype is not src.dtype) or \
        (target is not None and target != src.device)
    if copy is False and need_copy:
        raise ValueError(f"asarray(): copy=False is impossible: converting {src.dtype} on "
                         f"'{src.device}' to {dtype or src.dtype} on '{target or src.device}' "
                         f"needs a copy")
    # (a private array's tensor is already a copy: copy=True needs no second one)
    copy_now = need_copy or (copy and not private)
    out = src.astype(dtype or src.dtype, copy=True, device=target) if copy_now else src
    return out if requires_grad is False else set_requires_grad(out, requires_grad, "asarray")


_NATIVE_DTYPES: dict = {}  # np.dtype -> tensorlib dtype, for native-order numeric dtypes


def _borrow_dense(arr):
    """What from_numpy gives for a non-empty, C-contiguous, writeable ``arr`` of a native
    numeric dtype, without the checks those properties settle (asarray(a) of 1e3 float32
    5.0 -> ~2.5 us); None for any other array."""
    flags = arr.flags
    if not (flags.c_contiguous and flags.writeable) or not arr.size:
        return None
    npd = arr.dtype
    dtype = _NATIVE_DTYPES.get(npd)
    if dtype is None:
        if not npd.isnative or npd.kind not in "biufc":
            return None
        dtype = _NATIVE_DTYPES[npd] = _dt.from_numpy_dtype(npd)
    item = npd.itemsize
    storage, _ = Storage.from_buffer(arr)  # (a dense writeable array: one block, offset 0)
    return Tensor._make(storage, arr.shape, tuple([s // item for s in arr.strides]), 0, dtype)


# Python data packed straight into a new tensor's bytes: (element type, requested dtype) ->
# (dtype, struct format). struct's native formats convert as C does, as NumPy's conversion
# does: a float rounds to nearest into float32, -0.0 and nan payloads kept.
_PACK = {(float, None): (_dt.float32, "f"), (float, _dt.float32): (_dt.float32, "f"),
         (float, _dt.float64): (_dt.float64, "d"), (int, None): (_dt.int64, "q"),
         (int, _dt.int64): (_dt.int64, "q"), (bool, None): (_dt.bool_, "?"),
         (bool, _dt.bool_): (_dt.bool_, "?")}
_PACKABLE = frozenset((float, int, bool, list, tuple))
_F32_MAX = float(np.finfo(np.float32).max)
_PACK_MAX = 64  # longer sequences: NumPy's conversion costs less per element


def _packed(obj, dtype):
    """``asarray(obj, dtype=dtype)`` for a Python float / int / bool, or a flat list / tuple of
    1 to _PACK_MAX values of one of those types (exactly), into a dtype of _PACK: a new CPU
    tensor holding the packed values (asarray(2.0) ~9 -> ~2 us). None for other data, and for
    values struct refuses (ints beyond int64, floats beyond float32's range): the general path
    converts them with NumPy's warnings and errors."""
    if type(obj) is list or type(obj) is tuple:
        n = len(obj)
        if not 0 < n <= _PACK_MAX:
            return None
        kind = type(obj[0])
        for x in obj:
            if type(x) is not kind:
                return None
        shape = (n,)
    else:
        kind, n, shape = type(obj), 1, ()
    entry = _PACK.get((kind, dtype))
    if entry is None:
        return None
    if entry[1] == "f":
        # native "f" casts without a range check (1e300 would be inf without NumPy's
        # overflow warning); nan and inf go the general way too
        big = _F32_MAX
        if shape:
            for x in obj:
                if not -big <= x <= big:
                    return None
        elif not -big <= obj <= big:
            return None
    t = new_dense_cpu(shape, entry[0])
    try:
        if shape:
            _pack_into(f"{n}{entry[1]}", t._storage.buffer, 0, *obj)
        else:
            _pack_into(entry[1], t._storage.buffer, 0, obj)
    except (OverflowError, _StructError):
        return None
    return t


def _owned_copy(arr) -> Tensor:
    """A CPU tensor holding a copy of ``arr``, a NumPy array no one else has (made from Python
    data or a NumPy scalar): for the small arrays these are, cheaper than from_numpy's borrowed
    memory (byte bounds, a ctypes view: ~5 us of a ~9 us ``asarray(2.0)``)."""
    t = new_dense_cpu(arr.shape, _dt.from_numpy_dtype(arr.dtype))
    if t is None:
        return from_numpy(arr)  # (beyond any machine: from_numpy's checks say so)
    if arr.size:
        np.copyto(t._storage.buffer[:arr.nbytes].view(arr.dtype).reshape(arr.shape), arr)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Always copies ``data`` (as torch.tensor does)."""
    out = asarray(data, dtype=dtype, device=device, copy=True)
    return out if requires_grad is False else set_requires_grad(out, requires_grad, "tensor")

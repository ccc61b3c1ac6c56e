"""tensorlib tensors as dask.array chunks, and dask's ``array.backend`` "tensorlib".

Two parts:

* **Chunk type** (:func:`register`): ``tl.Tensor`` joins dask's chunk types
  (``register_chunk_type``: dask arrays handle arithmetic with tensors instead of deferring to
  them) and dask's per-type dispatch tables get tensorlib implementations: ``concatenate_lookup``,
  ``tensordot_lookup``, ``take_lookup``, ``empty_lookup``, ``divide_lookup``, ``numel_lookup`` /
  ``nannumel_lookup`` (mean/var/std), ``to_numpy_dispatch`` (``x.to_backend("numpy")``), plus
  ``normalize_token`` (``from_array`` names a tensor by hashing its bytes, not by pickling it)
  and ``sizeof`` (distributed's memory accounting). The rest of what dask calls on chunks is
  NumPy's API (``np.sum``, ``np.where``, ufuncs...), which reaches tensorlib through
  ``Tensor.__array_function__`` / ``__array_ufunc__`` (``numpy_interop.py``).
  ``register()`` runs by itself: ``import tensorlib`` calls :func:`install_import_hook`, which
  registers at once when ``dask.array`` is already imported, or right after dask.array's
  ``backends`` module finishes importing otherwise. Importing tensorlib never imports dask.

* **Backend** (:class:`TensorlibBackendEntrypoint`, entry point ``dask.array.backends:
  tensorlib`` in pyproject.toml): under ``dask.config.set({"array.backend": "tensorlib"})``,
  ``da.ones / zeros / empty / full / arange`` make tensorlib chunks, and ``da.random`` draws them
  with tensorlib's Philox generator (:class:`RandomState` for the legacy functions,
  :class:`PhiloxBitGenerator` for ``da.random.default_rng``). Every chunk gets its own seed
  (dask spawns them), so results do not depend on the scheduler or on which worker runs a chunk.

* **Between processes** (``distributed``): CPU tensors get distributed's "dask" serializer
  (:func:`register_distributed`, hooked like ``register()``): one frame that is the tensor's own
  memory on the sending side, and a tensor over the received frame on the other, so a chunk is
  copied by neither (pickle, which ``serialization.py`` keeps, copies on load). CUDA tensors
  fall through to pickle (via host memory).
"""
from __future__ import annotations

import math
import sys
import threading

import numpy as np

from .random import Generator as _Generator

__all__ = ["register", "register_distributed", "install_import_hook",
           "TensorlibBackendEntrypoint", "RandomState", "PhiloxBitGenerator",
           "to_tensorlib_dispatch"]

_lock = threading.Lock()
_registered = False


def _tl():
    import tensorlib
    return tensorlib


def _tl_dtype(dtype, op, arg="dtype"):
    """tensorlib dtype for a NumPy dtype / name / tensorlib dtype; None stays None."""
    if dtype is None:
        return None
    from . import dtypes as _dt
    if isinstance(dtype, _dt.DType):
        return dtype
    try:
        return _dt.from_numpy_dtype(dtype)
    except TypeError:
        raise TypeError(f"{op}(): argument '{arg}': tensorlib has no dtype for "
                        f"{dtype!r}") from None


def _as_tensor(x, op, arg):
    """A tensor for ``x`` (NumPy arrays and scalars borrowed zero-copy where NumPy allows)."""
    tl = _tl()
    if isinstance(x, tl.Tensor):
        return x
    if isinstance(x, np.ndarray) or np.isscalar(x):
        return tl.asarray(x)
    raise TypeError(f"{op}(): argument '{arg}' must be a tensorlib Tensor or a NumPy array, "
                    f"got {type(x).__name__}")


# ---------------------------------------------------------------- chunk functions
def _concatenate(arrays, axis=0):
    arrays = [_as_tensor(a, "dask concatenate", "arrays") for a in arrays]
    return _tl().concat(arrays, axis=axis)


def _tensordot(a, b, axes=2):
    return _tl().tensordot(_as_tensor(a, "dask tensordot", "a"),
                           _as_tensor(b, "dask tensordot", "b"), axes=axes)


def _take(a, indices, axis=0):
    tl = _tl()
    a = _as_tensor(a, "dask take", "a")
    indices = _as_tensor(indices, "dask take", "indices")
    if indices.ndim != 1:
        # tl.take follows the Array API (1-D indices); NumPy's n-d form is take + reshape
        flat = tl.take(a, indices.reshape((-1,)), axis=axis)
        ax = axis % a.ndim
        shape = a.shape[:ax] + indices.shape + a.shape[ax + 1:]
        return flat.reshape(shape)
    return tl.take(a, indices, axis=axis)


def _empty(shape, dtype=None, **kwargs):
    # dask passes NumPy dtypes; tensorlib's default float (float32) would change the meaning
    tl = _tl()
    return tl.empty(tuple(shape), dtype=_tl_dtype(np.float64 if dtype is None else dtype,
                                                  "dask empty"))


def _divide(a, b, dtype=None):
    tl = _tl()
    out = tl.divide(_as_tensor(a, "dask divide", "a"), _as_tensor(b, "dask divide", "b"))
    if dtype is not None:
        out = out.astype(_tl_dtype(dtype, "dask divide"))
    return out


def _ravel(self):
    """NumPy's ``ravel()``: the elements in C order, a view when the layout allows."""
    return self.reshape((-1,))


def _counts_shape(shape, axis, keepdims):
    axes = range(len(shape)) if axis is None else \
        [a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)]
    count = math.prod(shape[a] for a in axes)
    if keepdims:
        out = tuple(1 if i in axes else n for i, n in enumerate(shape))
    else:
        out = tuple(n for i, n in enumerate(shape) if i not in axes)
    return count, out


def _numel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    """How many elements each reduced position counts (mean/var divide by it)."""
    tl = _tl()
    count, shape = _counts_shape(tuple(x.shape), axis, keepdims)
    dtype = _tl_dtype(np.float64 if dtype is None else dtype, "dask numel")
    return tl.full(shape, count, dtype=dtype)


def _nannumel(x, axis=None, keepdims=False, dtype=None, **kwargs):
    tl = _tl()
    valid = tl.logical_not(tl.isnan(x))
    dtype = _tl_dtype(np.float64 if dtype is None else dtype, "dask nannumel")
    return tl.sum(valid.astype(dtype), axis=axis, keepdims=keepdims)


def _to_numpy(x, **kwargs):
    # a CPU tensor's zero-copy view; CUDA tensors come to the host first
    return x.numpy() if x.device.type == "cpu" else x.cpu().numpy()


def _from_numpy(x, **kwargs):
    return _tl().asarray(x)


def _tokenize_tensor(t):
    """What dask hashes to name a tensor: its bytes (NumPy's normalizer on a zero-copy view),
    dtype name (bfloat16 and uint16 share storage bits), shape and strides, device."""
    from dask.tokenize import normalize_token
    host = t if t.device.type == "cpu" else t.cpu()
    return ("tensorlib.Tensor", t.dtype.name, str(t.device), tuple(t.shape), t.stride(),
            normalize_token(host._to_host_numpy()))


def _sizeof_tensor(t):
    # the memory the tensor refers to (a view counts its extent, as NumPy's does)
    return int(t.numel() * t.dtype.itemsize)


to_tensorlib_dispatch = None  # a dask Dispatch, made by register()


def register():
    """Registers tensorlib with dask.array (idempotent; see the module docstring)."""
    global _registered, to_tensorlib_dispatch
    with _lock:
        if _registered:
            return
        # submodules only: this may run while the dask.array package is still importing
        from dask.array import dispatch as dd
        from dask.array.chunk_types import register_chunk_type
        from dask.sizeof import sizeof
        from dask.tokenize import normalize_token
        from dask.utils import Dispatch
        from .tensor import Tensor

        register_chunk_type(Tensor)
        # dask reads these of chunks directly: `__array_priority__` picks the library of mixed
        # operands (da.tensordot, concatenate; below dask.Array's 11 so dask arrays still
        # handle arithmetic with tensors), `ravel()` flattens arg-reduction chunks
        if not hasattr(Tensor, "__array_priority__"):
            Tensor.__array_priority__ = 10
        if not hasattr(Tensor, "ravel"):
            Tensor.ravel = _ravel
        dd.concatenate_lookup.register(Tensor, _concatenate)
        dd.tensordot_lookup.register(Tensor, _tensordot)
        dd.take_lookup.register(Tensor, _take)
        dd.empty_lookup.register(Tensor, _empty)
        dd.divide_lookup.register(Tensor, _divide)
        dd.numel_lookup.register(Tensor, _numel)
        dd.nannumel_lookup.register(Tensor, _nannumel)
        dd.to_numpy_dispatch.register(Tensor, _to_numpy)
        to_tensorlib_dispatch = Dispatch("to_tensorlib_dispatch")
        to_tensorlib_dispatch.register(np.ndarray, _from_numpy)
        to_tensorlib_dispatch.register(Tensor, lambda x, **kwargs: x)
        normalize_token.register(Tensor, _tokenize_tensor)
        sizeof.register(Tensor, _sizeof_tensor)
        _registered = True


# ---------------------------------------------------------------- distributed's serializer
_FN = "tensorlib.dask_backend: distributed deserialize"


def _dask_serialize_tensor(t):
    """distributed's "dask" serializer family for CPU tensors: a header (dtype name, shape,
    read-only) and one frame, the C-order bytes: the tensor's own memory when it is
    contiguous, as the pickle path (``serialization._host_bytes``). CUDA tensors go on to the
    pickle family (NotImplementedError), which moves them through host memory."""
    if t.device.type != "cpu":
        raise NotImplementedError("CUDA tensors are pickled (through host memory)")
    from .serialization import _host_bytes
    header = {"dtype": t.dtype.name, "shape": list(t.shape),
              "readonly": bool(t._storage.readonly)}
    return header, [memoryview(_host_bytes(t))]


def _dask_deserialize_tensor(header, frames):
    """The receiving side: a tensor over the received frame, without a copy (as distributed
    does for NumPy arrays; the frame is a buffer of its own, which the tensor keeps alive).
    A frame that is misaligned for the dtype, or read-only while the tensor was writable, is
    copied. Every field is checked (typed errors naming it)."""
    from . import dtypes as _dt
    from .shape import contiguous_strides
    from .storage import Storage
    from .tensor import Tensor
    dtype = _dt._BY_NAME.get(header.get("dtype")) if isinstance(header.get("dtype"), str) \
        else None
    if dtype is None:
        raise ValueError(f"{_FN}: field 'dtype': unknown dtype {header.get('dtype')!r:.40}")
    shape = header.get("shape")
    if not isinstance(shape, (list, tuple)) or not all(
            isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 1 << 62 for n in shape):
        raise ValueError(f"{_FN}: field 'shape': expected non-negative ints, got {shape!r:.80}")
    shape = tuple(shape)
    if len(frames) != 1:
        raise ValueError(f"{_FN}: expected one data frame, got {len(frames)}")
    arr = np.frombuffer(frames[0], dtype=np.uint8)
    nbytes = math.prod(shape) * dtype.itemsize
    if arr.nbytes != nbytes:
        raise ValueError(f"{_FN}: field 'data': {arr.nbytes} bytes, the shape and dtype need "
                         f"{nbytes} (truncated?)")
    readonly = bool(header.get("readonly", False))
    if arr.ctypes.data % dtype.itemsize or (not arr.flags.writeable and not readonly):
        arr = arr.copy()
    storage, offset = Storage.from_buffer(arr)
    if readonly:
        storage.readonly = True
    return Tensor._make(storage, shape, contiguous_strides(shape), offset // dtype.itemsize,
                        dtype)


def register_distributed():
    """Registers the serializer above with distributed (idempotent)."""
    global _distributed_registered
    with _lock:
        if _distributed_registered:
            return
        from distributed.protocol.serialize import dask_deserialize, dask_serialize
        from .tensor import Tensor
        dask_serialize.register(Tensor)(_dask_serialize_tensor)
        dask_deserialize.register(Tensor)(_dask_deserialize_tensor)
        _distributed_registered = True


_distributed_registered = False


# ---------------------------------------------------------------- registering on import
# module -> what to run once it has executed: dask.array.backends is imported by dask.array's
# __init__ after core and dispatch; distributed's serializer registries live in the other
_HOOKS = {"dask.array.backends": register,
          "distributed.protocol.serialize": register_distributed}


class _RegisterAfterImport:
    """A meta path finder (the protocol needs only find_spec; importlib.abc would cost every
    `import tensorlib` ~20 ms) that finds nothing itself: wraps the loader of the modules in
    ``_HOOKS`` so that their registration runs once the module has executed; leaves
    ``sys.meta_path`` when none is left to wait for."""

    def __init__(self, waiting):
        self.waiting = set(waiting)

    def find_spec(self, name, path, target=None):
        if name not in self.waiting:
            return None
        self.waiting.discard(name)
        sys.meta_path.remove(self)  # also keeps find_spec below from finding us
        import importlib.util
        try:
            spec = importlib.util.find_spec(name)
        finally:
            if self.waiting:
                sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module
        then = _HOOKS[name]

        def exec_module(module):
            original(module)
            then()
        spec.loader.exec_module = exec_module
        return spec


def install_import_hook():
    """Called by ``import tensorlib``: registers with dask.array and distributed now where
    they are loaded, and arranges for the registration of the others when they are."""
    waiting = []
    for name, then in _HOOKS.items():
        if name in sys.modules:
            then()
        else:
            waiting.append(name)
    if waiting and not any(isinstance(f, _RegisterAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport(waiting))


# ---------------------------------------------------------------- random numbers
def _philox_seed(seed, op):
    """A 64-bit Philox key from what NumPy accepts as a seed (None: OS entropy; an int; an
    array of uint32 words, as dask's RandomState hands each chunk; a SeedSequence)."""
    if not isinstance(seed, np.random.SeedSequence):
        try:
            seed = np.random.SeedSequence(None if seed is None else
                                          np.asarray(seed, dtype=np.uint64).ravel().tolist()
                                          if not isinstance(seed, int) else seed)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{op}(): argument 'seed' must be None, a non-negative int, an "
                            f"array of them or a SeedSequence, got {seed!r:.60} ({e})") from None
    words = seed.generate_state(2, np.uint32)
    return int(words[0]) | int(words[1]) << 32


def _size(size, op):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    try:
        return tuple(int(n) for n in size)
    except TypeError:
        raise TypeError(f"{op}(): argument 'size' must be an int or a tuple of ints, got "
                        f"{size!r:.60}") from None


def _scalar_param(value, op, arg):
    """Distribution parameters are Python scalars here: per-element parameter arrays are not
    supported by tensorlib's samplers."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return float(value)
    raise TypeError(f"{op}(): argument '{arg}' must be a real scalar with the tensorlib dask "
                    f"backend (arrays of parameters are not supported), got "
                    f"{type(value).__name__}")


class RandomState:
    """``np.random.RandomState``'s sampling methods on tensorlib's Philox generator: what
    ``da.random.random / normal / uniform / randint...`` call per chunk under the tensorlib
    backend. Seeded from dask's per-chunk state words; values are float64 (int64 for
    ``randint``), as NumPy's. Methods tensorlib has no sampler for raise AttributeError."""

    _METHODS = ("random_sample", "random", "uniform", "normal", "standard_normal", "randint")

    def __init__(self, seed=None):
        tl = _tl()
        self._gen = tl.Generator("cpu").manual_seed(_philox_seed(seed, "RandomState"))

    def __getattr__(self, name):
        raise AttributeError(f"tensorlib's dask RandomState has no sampler {name!r} (it has "
                             f"{', '.join(self._METHODS)})")

    def random_sample(self, size=None):
        return _tl().rand(_size(size, "random_sample"), dtype=_tl().float64,
                          generator=self._gen)

    random = random_sample

    def uniform(self, low=0.0, high=1.0, size=None):
        low, high = _scalar_param(low, "uniform", "low"), _scalar_param(high, "uniform", "high")
        out = _tl().empty(_size(size, "uniform"), dtype=_tl().float64)
        return out.uniform_(low, high, generator=self._gen)

    def normal(self, loc=0.0, scale=1.0, size=None):
        loc = _scalar_param(loc, "normal", "loc")
        scale = _scalar_param(scale, "normal", "scale")
        out = _tl().empty(_size(size, "normal"), dtype=_tl().float64)
        return out.normal_(loc, scale, generator=self._gen)

    def standard_normal(self, size=None):
        return _tl().randn(_size(size, "standard_normal"), dtype=_tl().float64,
                           generator=self._gen)

    def randint(self, low, high=None, size=None, dtype=np.int64):
        if high is None:
            low, high = 0, low
        return _tl().randint(int(low), int(high), _size(size, "randint"),
                             dtype=_tl_dtype(dtype, "randint"), generator=self._gen)


class PhiloxBitGenerator(_Generator):
    """The bit generator ``da.random.default_rng`` hands out under the tensorlib backend: a
    CPU ``tl.Generator`` seeded from a NumPy ``SeedSequence``.

    dask spawns one child sequence per chunk from ``_seed_seq``, makes
    ``PhiloxBitGenerator(child)`` in the task and calls ``tensorlib.random.default_rng`` on it
    (which takes a ``tl.Generator`` as it is), so each chunk has its own Philox key."""

    def __init__(self, seed=None):
        super().__init__("cpu")
        self._seed_seq = seed if isinstance(seed, np.random.SeedSequence) else \
            np.random.SeedSequence(seed)
        self.manual_seed(_philox_seed(self._seed_seq, "PhiloxBitGenerator"))

    def __reduce__(self):
        # tl.Generator pickles as a plain Generator; keep the class and the seed sequence
        return _rebuild_bitgen, (self._seed_seq, self.offset)


def _rebuild_bitgen(seed_seq, offset):
    return PhiloxBitGenerator(seed_seq).set_offset(offset)


# ---------------------------------------------------------------- the backend entry point
def _meta(dtype, ndim=0):
    return _tl().empty((0,) * ndim, dtype=_tl_dtype(dtype, "dask meta"))


def _ones_chunk(shape, dtype=None, meta=None):
    return _tl().ones(tuple(shape), dtype=_tl_dtype(dtype, "dask ones"))


def _zeros_chunk(shape, dtype=None, meta=None):
    return _tl().zeros(tuple(shape), dtype=_tl_dtype(dtype, "dask zeros"))


def _empty_chunk(shape, dtype=None, meta=None):
    return _tl().empty(tuple(shape), dtype=_tl_dtype(dtype, "dask empty"))


def _full_chunk(shape, fill_value=None, dtype=None, meta=None):
    return _tl().full(tuple(shape), fill_value, dtype=_tl_dtype(dtype, "dask full"))


def _arange_chunk(start, step, dtype, block_info=None):
    """Elements lo..hi of ``arange(start, ..., step)`` as ``start + i * step`` (NumPy's
    formula), computed in float64/int64 then cast to ``dtype``."""
    tl = _tl()
    lo, hi = block_info[None]["array-location"][0]
    dt = _tl_dtype(dtype, "dask arange")
    i = tl.arange(lo, hi, dtype=tl.int64)
    if dt.kind in "iu" and isinstance(start, int) and isinstance(step, int):
        return (i * step + start).astype(dt)
    return (i.astype(tl.float64) * step + start).astype(dt)


def _creation(op, chunk_fn, shape, dtype, chunks, name, meta, kwargs, **chunk_kwargs):
    from dask.array.wrap import wrap_func_shape_as_first_arg
    if kwargs:
        raise TypeError(f"da.{op}() with the tensorlib backend: unsupported argument(s) "
                        f"{', '.join(sorted(kwargs))}")
    dtype = np.dtype(dtype)
    _tl_dtype(dtype, f"da.{op}")  # refuse a dtype tensorlib lacks before building a graph
    if isinstance(shape, np.ndarray):
        shape = shape.tolist()
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if meta is not None and not isinstance(meta, _tl().Tensor):
        raise TypeError(f"da.{op}() with the tensorlib backend: argument 'meta' must be a "
                        f"tensorlib Tensor, got {type(meta).__name__}")
    extra = {} if name is None else {"name": name}
    # the chunk function receives dtype, meta and chunk_kwargs (dask binds them with partial)
    return wrap_func_shape_as_first_arg(chunk_fn, shape, dtype=dtype, chunks=chunks,
                                        meta=_meta(dtype, len(shape)), **chunk_kwargs, **extra)


def _entrypoint_class():
    from dask.array.backends import ArrayBackendEntrypoint
    register()

    class TensorlibBackendEntrypoint(ArrayBackendEntrypoint):
        """dask's ``array.backend`` "tensorlib": creation functions and ``da.random`` make
        tensorlib chunks (float64 by default, as dask's NumPy backend)."""

        @classmethod
        def to_backend_dispatch(cls):
            return to_tensorlib_dispatch

        @classmethod
        def to_backend(cls, data, **kwargs):
            from .tensor import Tensor
            if isinstance(data._meta, Tensor):
                return data
            return data.map_blocks(to_tensorlib_dispatch, meta=_meta(data.dtype, data.ndim),
                                   **kwargs)

        @property
        def RandomState(self):
            return RandomState

        @property
        def default_bit_generator(self):
            return PhiloxBitGenerator

        @staticmethod
        def ones(shape, *, dtype=None, meta=None, chunks="auto", name=None, **kwargs):
            return _creation("ones", _ones_chunk, shape, dtype or np.float64, chunks, name,
                             meta, kwargs)

        @staticmethod
        def zeros(shape, *, dtype=None, meta=None, chunks="auto", name=None, **kwargs):
            return _creation("zeros", _zeros_chunk, shape, dtype or np.float64, chunks, name,
                             meta, kwargs)

        @staticmethod
        def empty(shape, *, dtype=None, meta=None, chunks="auto", name=None, **kwargs):
            return _creation("empty", _empty_chunk, shape, dtype or np.float64, chunks, name,
                             meta, kwargs)

        @staticmethod
        def full(shape, fill_value, *, dtype=None, meta=None, chunks="auto", name=None,
                 **kwargs):
            if np.ndim(fill_value) != 0:
                raise ValueError(f"da.full() with the tensorlib backend: fill_value must be "
                                 f"a scalar, got shape {np.shape(fill_value)}")
            if dtype is None:
                dtype = np.asarray(fill_value).dtype  # NumPy's rule for full()
            return _creation("full", _full_chunk, shape, dtype, chunks, name, meta, kwargs,
                             fill_value=fill_value)

        @staticmethod
        def arange(start, /, stop=None, step=1, *, dtype=None, meta=None, chunks="auto",
                   like=None, name=None, **kwargs):
            import dask.array as da
            if stop is None:
                start, stop = 0, start
            if step == 0:
                raise ValueError("da.arange() with the tensorlib backend: step must not be 0")
            n = max(0, math.ceil((stop - start) / step))
            if dtype is None:
                dtype = np.arange(start, start + step, step).dtype  # NumPy's dtype rule
            dtype = np.dtype(dtype)
            from dask.array.core import normalize_chunks
            chunks = normalize_chunks(chunks, (n,), dtype=dtype)
            return da.map_blocks(_arange_chunk, start, step, dtype, chunks=chunks,
                                 dtype=dtype, meta=_meta(dtype, 1),
                                 **({} if name is None else {"name": name}))

    return TensorlibBackendEntrypoint


def __getattr__(name):
    # the entry point class subclasses dask's, so it is made on first use (dask loads it only
    # after dask.array is imported); importing this module never imports dask
    if name == "TensorlibBackendEntrypoint":
        cls = _entrypoint_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

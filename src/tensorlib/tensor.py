"""Tensor: Storage + shape / strides (in elements) / offset / dtype. Ops are attached from the YAML."""
from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dt
from .dispatch.keys import AUTOGRAD_BIT, BACKEND_MASK, TLS_IN_USE, backend_key_for
from .shape import contiguous_strides, is_contiguous as _is_contiguous, normalize_axis

_ndarray = np.ndarray
# DType -> NumPy's typestr of its host representation (bfloat16, which NumPy lacks, absent)
_TYPESTR = {d: d.np_dtype.str for d in _dt.ALL_DTYPES if d is not _dt.bfloat16
            and d.np_dtype is not None}

__all__ = ["Tensor", "contiguous_strides"]  # contiguous_strides: re-exported from .shape


class AutogradMeta:
    """A tensor's autograd state, created only for tensors that take part in autograd.

    ``grad_fn``/``output_nr``: the graph node that made the tensor and which of its outputs it is
    (None for leaves). ``view_base``/``view_version``: for a differentiable view, the tensor it views
    and the storage version when its ``grad_fn`` was last set (an in-place write through another
    view makes that ``grad_fn`` stale). ``hooks``: gradient hooks in registration order.
    ``accumulator``: a leaf's gradient-accumulating node (it refers back weakly), made once so
    every op reading the leaf points at the same node.

    The defaults are class attributes, so recording an op's output sets only what differs (this
    runs once per recorded output).
    """

    requires_grad = False
    grad = None
    grad_fn = None
    output_nr = 0
    hooks = None
    retains_grad = False
    view_base = None
    view_version = 0
    accumulator = None
    accumulator_edge = None  # (accumulator, 0), made once: recording reads it per op

    def __init__(self, grad_fn=None, output_nr=0):
        if grad_fn is not None:
            self.grad_fn = grad_fn
            self.output_nr = output_nr


class _HostView:
    """What NumPy wraps for a zero-copy view; holding the Storage keeps its block from reuse."""

    __slots__ = ("__array_interface__", "storage")

    def __init__(self, storage, interface):
        self.storage = storage
        self.__array_interface__ = interface


class Tensor:
    __slots__ = ("_storage", "_shape", "_strides", "_offset", "_dtype", "_ks", "_numel",
                 "_contiguous", "_autograd", "__weakref__")
    # NumPy defers binary operators to us instead of treating a Tensor as an object scalar.
    __array_ufunc__ = None
    __hash__ = object.__hash__

    def __init__(self, *args, **kwargs):
        raise TypeError("Tensor cannot be constructed directly; use tensorlib.asarray, "
                        "tensorlib.tensor, tensorlib.empty or another factory")

    @staticmethod
    def _make(storage, shape: tuple, strides: tuple, offset: int, dtype,
              contiguous=None) -> "Tensor":
        """``contiguous``: is_contiguous() where the caller knows it (a plan's results: the next
        op taking one as an operand then skips working it out); None: on first need."""
        t = object.__new__(Tensor)
        t._storage = storage
        t._shape = shape
        t._strides = strides
        t._offset = offset
        t._dtype = dtype
        t._ks = backend_key_for(storage.device.type)
        t._numel = math.prod(shape)
        t._contiguous = contiguous
        t._autograd = None
        return t

    @staticmethod
    def _make_dense(storage, like: "Tensor", dtype) -> "Tensor":
        """A tensor over fresh ``storage`` with contiguous ``like``'s shape and strides (the
        dispatch fast path: skips recomputing what ``like`` already knows)."""
        t = object.__new__(Tensor)
        t._storage = storage
        t._shape = like._shape
        t._strides = like._strides
        t._offset = 0
        t._dtype = dtype
        t._ks = like._ks & BACKEND_MASK
        t._numel = like._numel
        t._contiguous = True
        t._autograd = None
        return t

    def _view(self, shape, strides, offset) -> "Tensor":
        """A tensor sharing this one's storage (the caller checked the bounds)."""
        return Tensor._make(self._storage, tuple(shape), tuple(strides), offset, self._dtype)

    # ---- metadata -------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of elements (Array API); ``numel()`` is the PyTorch spelling."""
        return self._numel

    def numel(self) -> int:
        return self._numel

    def dim(self) -> int:
        return len(self._shape)

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._storage.device

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._numel * self._dtype.itemsize

    def stride(self, dim=None):
        if dim is None:
            return self._strides
        return self._strides[normalize_axis(dim, self.ndim, "stride")]

    def storage_offset(self) -> int:
        return self._offset

    def untyped_storage(self):
        return self._storage

    def data_ptr(self) -> int:
        return self._storage.data_ptr() + self._offset * self._dtype.itemsize

    def is_contiguous(self) -> bool:
        c = self._contiguous
        if c is None:
            c = self._contiguous = _is_contiguous(self._shape, self._strides)
        return c

    @property
    def is_cuda(self) -> bool:
        return self._storage.device.type == "cuda"

    @property
    def is_readonly(self) -> bool:
        """True when the tensor views read-only memory (e.g. ``asarray`` of a non-writeable NumPy
        array or of ``bytes``); views share the flag. Writes (in-place ops, ``out=``,
        ``__setitem__``) raise ValueError; ``numpy()`` gives a non-writeable array."""
        return self._storage.readonly

    @property
    def T(self) -> "Tensor":
        if not self._ks & ~BACKEND_MASK and not TLS_IN_USE[0] and type(self) is Tensor:
            # No key above the backend: the dispatcher would call permute's kernel directly,
            # which gives this view.
            return Tensor._make(self._storage, self._shape[::-1], self._strides[::-1],
                                self._offset, self._dtype)
        return self.permute(tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> "Tensor":
        if self.ndim < 2:
            raise ValueError(f"mT: tensor must have at least 2 dimensions, got shape {self._shape}")
        return self.transpose(-2, -1)

    # ---- autograd metadata (tensorlib.autograd records the graph; see AutogradMeta) -------
    @property
    def requires_grad(self) -> bool:
        m = self._autograd
        return m is not None and (m.requires_grad or m.grad_fn is not None)

    @requires_grad.setter
    def requires_grad(self, flag) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True) -> "Tensor":
        """Marks a leaf tensor as one whose gradient backward() accumulates in ``.grad``."""
        flag = bool(requires_grad)
        m = self._autograd
        if m is not None and m.grad_fn is not None:
            if flag:
                return self
            raise RuntimeError(
                "requires_grad_(False): this tensor is not a leaf (it has grad_fn "
                f"{m.grad_fn.name()}); use detach() for a tensor outside the graph")
        if flag and self._dtype.kind not in "fc":
            raise RuntimeError(f"requires_grad_(): only float and complex tensors can require "
                               f"gradients, got dtype {self._dtype}")
        if m is None:
            if not flag:
                return self
            m = self._autograd = AutogradMeta()
        m.requires_grad = flag
        self._ks = self._ks | AUTOGRAD_BIT if flag else self._ks & ~AUTOGRAD_BIT
        return self

    @property
    def grad(self):
        m = self._autograd
        return None if m is None else m.grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"grad: must be a Tensor or None, got {type(value).__name__}")
            if value._shape != self._shape or value._dtype is not self._dtype or \
                    value.device != self.device:
                raise RuntimeError(
                    f"grad: assigned gradient has shape {value._shape}, dtype {value._dtype}, "
                    f"device {value.device}; the tensor has shape {self._shape}, dtype "
                    f"{self._dtype}, device {self.device}")
        m = self._autograd
        if m is None:
            if value is None:
                return
            m = self._autograd = AutogradMeta()
        m.grad = value

    @property
    def grad_fn(self):
        m = self._autograd
        return None if m is None else m.grad_fn

    @property
    def is_leaf(self) -> bool:
        m = self._autograd
        return m is None or m.grad_fn is None

    @property
    def _version(self) -> int:
        """Bumped by every write into this tensor's storage (in-place ops, ``out=``,
        ``__setitem__``, ``copy_``); shared by all views of the storage."""
        return self._storage.version

    def detach(self) -> "Tensor":
        """A tensor over the same memory, outside the autograd graph."""
        return Tensor._make(self._storage, self._shape, self._strides, self._offset, self._dtype)

    def detach_(self) -> "Tensor":
        m = self._autograd
        if m is not None and m.view_base is not None:
            raise RuntimeError("detach_(): can't detach a view in place; use detach()")
        self._autograd = None
        self._ks &= BACKEND_MASK
        return self

    # ---- host access ----------------------------------------------------------------------
    def _host_interface(self) -> dict:
        st = self._storage
        typestr = _TYPESTR.get(self._dtype)
        if typestr is None:
            raise TypeError("numpy(): NumPy has no bfloat16; convert first, e.g. x.astype(tl.float32)")
        if st.buffer is None:
            raise TypeError(f"numpy(): tensor on device '{self.device}' is not host-accessible; "
                            f"call .cpu() first")
        # (numpy(), np.asarray(t): 5.0-5.8 -> ~2.5 us on 1000 elements with the typestr made
        # once per dtype, the pointer read directly when nothing is queued on the bytes, and
        # no strides for a C-contiguous tensor: NumPy's own, the same view)
        item = self._dtype.itemsize
        ptr = st._ptr if st._uses is None else st.data_ptr()  # (data_ptr waits for the queue)
        return {"version": 3, "shape": self._shape, "typestr": typestr,
                "data": (ptr + self._offset * item, st.readonly),
                "strides": None if (self._contiguous or self.is_contiguous()) else
                tuple([s * item for s in self._strides])}

    def numpy(self) -> np.ndarray:
        """A zero-copy NumPy view (CPU tensors); writes go both ways (not writeable when the
        tensor is read-only)."""
        if self._storage.device.type != "cpu":
            raise TypeError(f"numpy(): can't convert a tensor on '{self.device}' to NumPy; "
                            f"use .cpu() first")
        return np.asarray(_HostView(self._storage, self._host_interface()))

    @property
    def __array_interface__(self):
        # AttributeError (not TypeError) so NumPy falls back to __array__, which converts.
        if self._storage.device.type != "cpu":
            raise AttributeError("__array_interface__ is only defined for CPU tensors")
        if self._dtype is _dt.bfloat16:
            raise AttributeError("__array_interface__: NumPy has no bfloat16")
        return self._host_interface()

    def __array__(self, dtype=None, copy=None):
        if self._dtype is _dt.bfloat16:
            arr = self._to_host_numpy()
            copied = True
        else:
            copied = self._storage.device.type != "cpu"
            arr = self.numpy() if not copied else self._to_host_numpy()
        if copy is False and (copied or (dtype is not None and np.dtype(dtype) != arr.dtype)):
            raise ValueError("__array__(): copy=False is impossible: the data is not a host "
                             "array of that dtype")
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        if copy and not copied:
            arr = arr.copy()
        return arr

    def _to_host_numpy(self) -> np.ndarray:
        """Values as a NumPy array (bfloat16 widened to float32), copying only when needed."""
        t = self if self._storage.device.type == "cpu" else self.cpu()
        if t._dtype is _dt.bfloat16:
            raw = np.asarray(_HostView(t._storage, {**_bf16_raw_interface(t)}))
            return (raw.astype(np.uint32) << 16).view(np.float32)
        return t.numpy()

    def item(self):
        if self._numel != 1:
            raise ValueError(f"item(): a tensor with {self._numel} elements cannot be converted "
                             f"to a Python scalar")
        st = self._storage
        npd = self._dtype.np_dtype
        if st._uses is None and npd is not None and st.buffer is not None and \
                st.device.type == "cpu":
            # the one element read from the bytes (nothing queued on them: no stream to wait
            # for); a whole NumPy view took ~2 us of bool(x.any()), float(loss)...
            return _ndarray((), npd, st.buffer, self._offset * npd.itemsize).item()
        return self._to_host_numpy().reshape(()).item()

    def tolist(self):
        return self._to_host_numpy().tolist()

    def __bool__(self):
        if self._numel != 1:
            raise ValueError(f"bool(): the truth value of a tensor with {self._numel} elements "
                             f"is ambiguous; use any() or all()")
        return bool(self.item())

    def __int__(self):
        self._check_scalar("int")
        return int(self.item().real if self._dtype.is_complex else self.item())

    def __float__(self):
        self._check_scalar("float")
        if self._dtype.is_complex:
            raise TypeError("float(): can't convert a complex tensor to float")
        return float(self.item())

    def __complex__(self):
        self._check_scalar("complex")
        return complex(self.item())

    def __index__(self):
        if self._dtype.kind not in "iu" or self._numel != 1:
            raise TypeError(f"__index__(): only integer tensors of a single element can be used "
                            f"as an index, got dtype {self._dtype} with {self._numel} elements")
        return int(self.item())

    def _check_scalar(self, what):
        if self._numel != 1:
            raise TypeError(f"{what}(): only tensors with one element can be converted to Python "
                            f"scalars, got {self._numel} elements")

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self.select(0, i) for i in range(self._shape[0]))

    def __repr__(self):
        from .formatting import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__

    # __reduce_ex__ (pickling: serialization.reduce_tensor) and __array_namespace__
    # (array_api_info.array_namespace) are attached by the package's __init__, which sits above
    # both.


def _bf16_raw_interface(t: Tensor) -> dict:
    return {
        "version": 3, "shape": t._shape, "typestr": "<u2", "data": (t.data_ptr(), False),
        "strides": tuple(s * 2 for s in t._strides),
    }

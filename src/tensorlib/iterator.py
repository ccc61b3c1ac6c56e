"""TensorIterator: broadcasting, type promotion, output allocation and loop layout for kernels.

A structured op's ``meta`` builds one of these from its operands; the device kernel then reads
``layout()`` (shape with dim 0 innermost, per-operand element strides and offsets, after
reordering dims into memory order and coalescing contiguous ones) and never re-derives it.
Operands: outputs first, then inputs (tensors or Python scalars).
"""
from __future__ import annotations

import math

from . import dtypes as _dt
from .allocation import checked_nbytes, empty_strided_like_order
from .shape import broadcast_shapes, broadcast_strides, coalesce, normalize_axis, span
from .storage import Storage
from .tensor import Tensor

__all__ = ["TensorIterator", "Layout", "memory_overlap", "empty_strided_like_order",
           "compute_dtype_for"]

_PY_SCALARS = (bool, int, float, complex)


class Layout:
    """What a kernel loops over: ``shape[0]`` is the innermost (fastest) dimension."""

    __slots__ = ("shape", "strides", "offsets")

    def __init__(self, shape, strides, offsets):
        self.shape = shape        # tuple of ints, len >= 1
        self.strides = strides    # one tuple per operand, in elements
        self.offsets = offsets    # one int per operand, in elements

    @property
    def numel(self):
        return math.prod(self.shape)

    def max_offset_span(self, k):
        """Largest |element offset| operand k reaches from its own start offset: what an index
        must hold when the kernel's base pointer is already advanced to ``offsets[k]``."""
        lo = hi = 0
        for n, s in zip(self.shape, self.strides[k]):
            if s > 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        return max(-lo, hi)

    def __repr__(self):
        return f"Layout(shape={self.shape}, strides={self.strides}, offsets={self.offsets})"


def memory_overlap(a: Tensor, b: Tensor) -> str:
    """'full' if a and b view the same elements the same way, 'partial' if their byte ranges
    intersect otherwise, 'none' when disjoint."""
    if a._storage is not b._storage or a._numel == 0 or b._numel == 0:
        return "none"
    if (a._shape == b._shape and a._strides == b._strides and a._offset == b._offset
            and a._dtype is b._dtype):
        return "full"
    alo, aend = span(a._shape, a._strides, a._offset)
    blo, bend = span(b._shape, b._strides, b._offset)
    ai, bi = a._dtype.itemsize, b._dtype.itemsize
    return "partial" if alo * ai < bend * bi and blo * bi < aend * ai else "none"


def has_internal_overlap(t: Tensor) -> bool:
    """True when two indices of t surely address one element (a zero stride on a dim of size > 1,
    as expand() makes). Layouts too intricate to decide are allowed, as PyTorch does."""
    if t._numel == 0:
        return False
    return any(s == 0 and n > 1 for n, s in zip(t._shape, t._strides))


class TensorIterator:
    """Built by the ``binary`` / ``unary`` / ``nullary`` / ``build`` constructors below."""

    __slots__ = ("op", "operands", "noutputs", "shape", "common_dtype", "compute_dtype",
                 "device", "_layout")

    # ---- construction -----------------------------------------------------------------------
    @classmethod
    def build(cls, op: str, outputs, inputs, *, promote_inputs=True, int_to_float=False,
              output_dtype=None, enforce_safe_cast=True, check_same_dtype=False,
              compute_dtype=None, promote_skip=(), common_dtype=None):
        """outputs: list of Tensor|None (None = allocate); inputs: Tensors or Python scalars.

        output_dtype: fixed dtype of allocated outputs (e.g. bool for comparisons) or a callable
        mapping the common dtype to it; default the common dtype.
        promote_skip: indices of inputs left out of promotion (e.g. where()'s condition).
        common_dtype: fixes the common dtype instead of promoting (e.g. fill_: the output's).
        """
        if (outputs[0] is None and len(outputs) == 1 and common_dtype is None
                and compute_dtype is None and not promote_skip and not check_same_dtype):
            it = cls._build_dense(op, inputs, int_to_float, output_dtype)
            if it is not None:
                return it
        # The plan cache: everything below except the operands' storages and offsets is a
        # function of the key (op, options, and per operand its dtype, shape, strides, device,
        # or a Python scalar's exact type), so a repeated layout reuses it.
        key = None
        if cls is TensorIterator:
            key = _plan_key(op, outputs, inputs, (promote_inputs, int_to_float, output_dtype,
                                                  enforce_safe_cast, check_same_dtype,
                                                  compute_dtype, promote_skip, common_dtype))
            if key is not None:
                try:
                    plan = _PLANS.get(key)
                except TypeError:  # an unhashable option (e.g. a list as promote_skip)
                    plan = key = None
                if plan is not None:
                    return plan.instantiate(op, outputs, inputs)
        it = cls._build_general(op, outputs, inputs, promote_inputs, int_to_float,
                                output_dtype, enforce_safe_cast, check_same_dtype,
                                compute_dtype, promote_skip, common_dtype)
        if key is not None:
            _store_plan(key, it, outputs, inputs)
        return it

    @classmethod
    def _build_general(cls, op, outputs, inputs, promote_inputs, int_to_float, output_dtype,
                       enforce_safe_cast, check_same_dtype, compute_dtype, promote_skip,
                       common_dtype):
        it = object.__new__(cls)
        it.op = op
        it.noutputs = len(outputs)
        tensors = [x for x in inputs if isinstance(x, Tensor)]
        for x in inputs:
            if not isinstance(x, Tensor) and not isinstance(x, _PY_SCALARS):
                raise TypeError(f"{op}(): expected a Tensor or a Python scalar, got "
                                f"{type(x).__name__}")
        given_outputs = [o for o in outputs if o is not None]
        if not tensors and not given_outputs:
            raise TypeError(f"{op}(): at least one argument must be a Tensor")
        it.device = _common_device(op, tensors + given_outputs)

        # Broadcast shape of the inputs (Python scalars are 0-d); a fill takes the output's.
        shape = tensors[0]._shape if tensors else given_outputs[0]._shape
        for t in tensors[1:]:
            if t._shape != shape:
                shape = broadcast_shapes(shape, t._shape, op=op)
        it.shape = shape

        # Common dtype with Python scalars weak (result_type handles both).
        if common_dtype is not None:
            common = common_dtype
        elif check_same_dtype:
            common = tensors[0]._dtype
            for t in tensors[1:]:
                if t._dtype is not common:
                    raise TypeError(f"{op}(): expected all inputs to have dtype {common}, got "
                                    f"{t._dtype}")
        elif promote_inputs:
            promoted = [x for i, x in enumerate(inputs) if i not in promote_skip]
            common = (_dt.result_type(*promoted) if len(promoted) > 1
                      else _single_dtype(promoted[0]))
        else:
            common = tensors[0]._dtype
        if int_to_float and common.kind in "biu":
            common = _dt.default_float()
        it.common_dtype = common
        it.compute_dtype = compute_dtype or compute_dtype_for(common)

        # Outputs: validate given ones, allocate missing ones in the inputs' memory order.
        if output_dtype is None:
            out_dtype = common
        elif callable(output_dtype):
            out_dtype = output_dtype(common)
        else:
            out_dtype = output_dtype
        order_src = next((t for t in tensors if t._shape == shape), None)
        ops = []
        for out in outputs:
            if out is None:
                out = empty_strided_like_order(shape, out_dtype, it.device, order_src)
            else:
                _check_output(op, out, shape, out_dtype, enforce_safe_cast)
            ops.append(out)

        # An input that partially overlaps an output is read from a private copy, so the result
        # is what the out-of-place op would give; exact aliasing (x.add_(y)) is safe as is.
        for i, x in enumerate(inputs):
            if isinstance(x, Tensor):
                for out in ops[:it.noutputs]:
                    if memory_overlap(out, x) == "partial":
                        x = x.clone()
                        break
            ops.append(x)
        it.operands = ops
        it._layout = None
        return it

    @classmethod
    def _build_dense(cls, op, inputs, int_to_float, output_dtype):
        """Fast set-up (PyTorch's fast_set_up) when every input is a contiguous tensor of one
        shape, dtype and device: the output is contiguous and the loop is one flat dimension.
        Returns None when the general path is needed."""
        t0 = inputs[0]
        if type(t0) is not Tensor:
            return None
        shape, dtype, device = t0._shape, t0._dtype, t0._storage.device
        for x in inputs:
            if (type(x) is not Tensor or x._shape != shape or x._dtype is not dtype
                    or x._storage.device is not device or not x.is_contiguous()):
                return None
        common = dtype
        if int_to_float and common.kind in "biu":
            common = _dt.default_float()
        if output_dtype is None:
            out_dtype = common
        elif callable(output_dtype):
            out_dtype = output_dtype(common)
        else:
            out_dtype = output_dtype
        # Same element count as an existing input, so no size checks are needed.
        storage = Storage.allocate(t0._numel * out_dtype.itemsize, device)
        out = Tensor._make(storage, shape, t0._strides, 0, out_dtype)
        it = object.__new__(cls)
        it.op = op
        it.noutputs = 1
        it.device = device
        it.shape = shape
        it.common_dtype = common
        it.compute_dtype = compute_dtype_for(common)
        it.operands = [out, *inputs]
        it._layout = Layout((out._numel,), ((1,),) * (len(inputs) + 1),
                            (0,) + tuple(x._offset for x in inputs))
        return it

    @classmethod
    def binary(cls, op, a, b, out=None, **kw):
        return cls.build(op, [out], [a, b], **kw)

    @classmethod
    def unary(cls, op, a, out=None, **kw):
        return cls.build(op, [out], [a], **kw)

    # ---- accessors --------------------------------------------------------------------------
    def output(self, i=0) -> Tensor:
        return self.operands[i]

    @property
    def inputs(self):
        return self.operands[self.noutputs:]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def reads_a_copy(self, inputs) -> bool:
        """Whether this iterator reads one of the tensors of ``inputs`` (the call's inputs in
        order; Python scalars among them or left out) from a private copy: an input partly
        overlapping an output is (see build), and a layout worked out from this iterator is
        then the copy's, not the input's."""
        mine = (x for x in self.operands[self.noutputs:] if isinstance(x, Tensor))
        given = (t for t in inputs if isinstance(t, Tensor))
        return any(x is not t for x, t in zip(mine, given))

    def tensor_operands(self):
        """Indices of operands that are tensors (Python scalars are passed by value)."""
        return [i for i, x in enumerate(self.operands) if isinstance(x, Tensor)]

    # ---- loop layout ------------------------------------------------------------------------
    def layout(self) -> Layout:
        """Broadcast strides per tensor operand, dims reordered innermost-first by the first
        output's strides and coalesced where every operand is contiguous across them."""
        if self._layout is not None:
            return self._layout
        ndim = len(self.shape)
        idx = self.tensor_operands()
        ops = self.operands
        strides = [broadcast_strides(ops[k]._shape, ops[k]._strides, ndim) for k in idx]
        # Drop size-1 dims; order the rest by output stride magnitude (innermost first), ties
        # broken by the inputs so e.g. a transposed input still reads in its own order.
        dims = [d for d in range(ndim) if self.shape[d] != 1]
        dims.sort(key=lambda d: tuple(abs(s[d]) for s in strides), reverse=True)
        shape = [self.shape[d] for d in reversed(dims)]
        per_op = [[s[d] for d in reversed(dims)] for s in strides]
        # Coalesce dim j+1 into j when contiguous for all operands.
        shape, per_op = coalesce(shape, per_op)
        self._layout = Layout(shape, per_op, tuple(self.operands[k]._offset for k in idx))
        return self._layout

    def can_use_32bit_indexing(self) -> bool:
        lay = self.layout()
        limit = 2 ** 31 - 1
        return lay.numel <= limit and all(lay.max_offset_span(k) <= limit
                                          for k in range(len(lay.offsets)))

    def split_32bit(self):
        """Yields Layouts whose in-piece element offsets each fit in int32 (for 32-bit GPU
        indexing). A piece's ``offsets`` (64-bit) move the base pointers, as PyTorch does."""
        limit = 2 ** 31 - 1
        pending = [self.layout()]
        while pending:
            lay = pending.pop()
            if lay.numel <= limit and all(lay.max_offset_span(k) <= limit
                                          for k in range(len(lay.offsets))):
                yield lay
                continue
            # Halve the dim with the largest reach, so each piece covers half the extent.
            d = max(range(len(lay.shape)),
                    key=lambda j: (lay.shape[j] - 1) * max(abs(s[j]) for s in lay.strides))
            n = lay.shape[d]
            if n == 1:
                raise OverflowError(f"{self.op}(): a single element offset exceeds 2**31")
            half = n // 2
            for start, length in ((0, half), (half, n - half)):
                shape = lay.shape[:d] + (length,) + lay.shape[d + 1:]
                offsets = tuple(o + start * s[d] for o, s in zip(lay.offsets, lay.strides))
                pending.append(Layout(shape, lay.strides, offsets))


# ---- the plan cache -----------------------------------------------------------------------------
# What TensorIterator.build derives from an operand layout (common / compute dtype, broadcast
# shape, the outputs it allocates, the loop layout's shape and strides) depends on nothing but
# the key below, so a repeated call with the same layout (a strided or broadcast op in a loop)
# takes it from here instead of recomputing it; only the operands' offsets (and whether a given
# output overlaps an input) are per call. Plans are stored only after a successful fresh build,
# so every error still comes from the fresh path.
_PLANS: dict = {}
PLAN_CACHE_SIZE = 4096  # entries; the oldest goes first when full
_SCALAR_KEY_TYPES = frozenset(_PY_SCALARS)  # exact types only (np.float64 & co. are not cached)


def _plan_key(op, outputs, inputs, opts):
    """The plan cache's key, or None when the call is not cacheable (a Tensor subclass, a
    non-Python scalar operand, a non-Tensor out). A device is keyed as (backend key, index):
    Device's own hash is a Python call."""
    key = [op, opts]
    for o in outputs:
        if o is None:
            key.append(None)
        elif type(o) is Tensor:
            key.append((o._dtype, o._shape, o._strides, o._ks, o._storage.device.index))
        else:
            return None
    for x in inputs:
        t = type(x)
        if t is Tensor:
            key.append((x._dtype, x._shape, x._strides, x._ks, x._storage.device.index))
        elif t in _SCALAR_KEY_TYPES:
            key.append(t)
        else:
            return None
    if opts[1]:
        key.append(_dt.default_float())  # int_to_float follows the default float dtype
    return tuple(key)


class _Plan:
    """One cached TensorIterator set-up (see _PLANS)."""

    __slots__ = ("device", "shape", "common", "compute", "allocs", "given", "tensor_idx",
                 "lshape", "lstrides")

    def instantiate(self, op, outputs, inputs):
        it = object.__new__(TensorIterator)
        it.op = op
        it.noutputs = len(outputs)
        it.device = device = self.device
        it.shape = self.shape
        it.common_dtype = self.common
        it.compute_dtype = self.compute
        ops = list(outputs)
        for i, alloc in self.allocs:
            shape, strides, nbytes, dtype, ks, numel, contiguous = alloc
            out = object.__new__(Tensor)
            out._storage = Storage.allocate(nbytes, device)
            out._shape = shape
            out._strides = strides
            out._offset = 0
            out._dtype = dtype
            out._ks = ks
            out._autograd = None
            out._numel = numel
            out._contiguous = contiguous
            ops[i] = out
        if self.given:
            # An input partially overlapping a given output is read from a copy (as build);
            # only one sharing the output's storage can overlap it.
            given = ops[:]
            for x in inputs:
                if type(x) is Tensor:
                    st = x._storage
                    for out in given:
                        if out._storage is st and memory_overlap(out, x) == "partial":
                            it.operands = _operands_with_copies(given, inputs)
                            it._layout = None  # a copied input has its own strides
                            return it
            ops.extend(inputs)
        else:
            ops.extend(inputs)
        it.operands = ops
        it._layout = Layout(self.lshape, self.lstrides,
                            tuple([ops[k]._offset for k in self.tensor_idx]))
        return it


def _operands_with_copies(outs, inputs):
    """outputs + inputs, each input that partially overlaps an output replaced by a copy."""
    ops = list(outs)
    for x in inputs:
        if isinstance(x, Tensor):
            for out in outs:
                if memory_overlap(out, x) == "partial":
                    x = x.clone()
                    break
        ops.append(x)
    return ops


def _store_plan(key, it, outputs, inputs):
    if it.reads_a_copy(inputs):
        return  # an input was copied (overlap with out=): that depends on more than the key
    ops = it.operands
    allocs = []  # (output position, what to allocate there) per allocated output
    for i, o in enumerate(outputs):
        if o is None:
            t = ops[i]
            nbytes = checked_nbytes(t._shape, t._strides, t._dtype, it.op)
            allocs.append((i, (t._shape, t._strides, nbytes, t._dtype, t._ks, t._numel,
                               t.is_contiguous())))
    lay = it.layout()
    plan = object.__new__(_Plan)
    plan.device = it.device
    plan.shape = it.shape
    plan.common = it.common_dtype
    plan.compute = it.compute_dtype
    plan.allocs = tuple(allocs)
    plan.given = len(allocs) < len(outputs)
    plan.tensor_idx = tuple(it.tensor_operands())
    plan.lshape = lay.shape
    plan.lstrides = lay.strides
    if len(_PLANS) >= PLAN_CACHE_SIZE:
        try:
            del _PLANS[next(iter(_PLANS))]
        except (KeyError, RuntimeError, StopIteration):  # another thread got there first
            pass
    _PLANS[key] = plan


def clear_plan_cache() -> None:
    """Drops every cached TensorIterator plan (tests; nothing else needs it)."""
    _PLANS.clear()


# ---- helpers ------------------------------------------------------------------------------------
def _single_dtype(x):
    return x._dtype if isinstance(x, Tensor) else _dt.python_scalar_dtype(x)


def compute_dtype_for(dtype):
    # Half types are computed in float32, as PyTorch's opmath type does.
    if dtype is _dt.float16 or dtype is _dt.bfloat16:
        return _dt.float32
    return dtype


def _common_device(op, tensors):
    dev = tensors[0].device
    for t in tensors[1:]:
        if t.device != dev:
            raise RuntimeError(f"{op}(): expected all tensors on one device, got '{dev}' and "
                               f"'{t.device}'")
    return dev


def _check_output(op, out, shape, dtype, enforce_safe_cast):
    """Validates an out= tensor (pointwise and reduction modes alike)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{op}(): argument 'out' must be a Tensor, got {type(out).__name__}")
    if out._shape != shape:
        raise ValueError(f"{op}(): argument 'out': output with shape {out._shape} doesn't match "
                         f"the result shape {shape}")
    if enforce_safe_cast and out._dtype is not dtype and not _dt.can_cast(dtype, out._dtype,
                                                                          "same_kind"):
        raise TypeError(f"{op}(): result type {dtype} can't be cast to the dtype {out._dtype} of "
                        f"argument 'out'")
    if has_internal_overlap(out):
        raise RuntimeError(f"{op}(): argument 'out' (shape {out._shape}, strides {out._strides}) "
                           f"has elements that share memory; write to a contiguous copy instead")


# ---- reduction mode -----------------------------------------------------------------------------
class ReductionIterator(TensorIterator):
    """A TensorIterator whose first operand is the output viewed with the *input's* shape and
    stride 0 along the reduced dims; ``aux`` operands (e.g. var's mean) are viewed the same way.
    Operands: [output, *aux, input]. ``layout()`` orders dims by the input's memory order, so dim
    0 is the input's fastest dim: a zero output stride there means an inner (contiguous)
    reduction, otherwise an outer one (rows accumulated into the output vector)."""

    __slots__ = ("result", "axes", "keepdims", "reduced_numel", "naux")

    def output(self, i=0) -> Tensor:
        """The result tensor (operand 0 is its input-shaped, zero-strided view)."""
        return self.result

    @property
    def input(self) -> Tensor:
        return self.operands[-1]


def _reduce(cls, op: str, input, axes, keepdims: bool = False, out=None, out_dtype=None, *,
            compute_dtype=None, aux=(), enforce_safe_cast=True) -> ReductionIterator:
    """Reduction over ``axes`` (None = all, an int, or a sequence of ints; negative allowed).

    out_dtype: dtype of an allocated output (default: the input's); a given ``out`` must have
    the result shape and a dtype out_dtype casts to (same_kind). compute_dtype: what the kernel
    accumulates in (default: float32 for half types, else out_dtype). aux: tensors of the result
    shape (keepdims or not) read alongside the output.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'x' must be a Tensor, got {type(input).__name__}")
    ndim = input.ndim
    if axes is None:
        red = tuple(range(ndim))
    else:
        seq = (axes,) if isinstance(axes, int) else tuple(axes)
        red = tuple(normalize_axis(a, ndim, op) for a in seq)
        if len(set(red)) != len(red):
            raise ValueError(f"{op}(): argument 'axis' has duplicate axes: {tuple(seq)}")
        if ndim == 0:
            red = ()  # a 0-d tensor accepts axis 0 / -1 and reduces nothing
    red_set = frozenset(red)
    shape = input._shape
    keep_shape = tuple(1 if d in red_set else n for d, n in enumerate(shape))
    result_shape = keep_shape if keepdims else tuple(n for d, n in enumerate(shape)
                                                     if d not in red_set)
    out_dtype = input._dtype if out_dtype is None else out_dtype
    device = input.device

    if out is None:
        # Lay the result out in the input's memory order (reduced dims keep their input stride
        # as a tie-breaker when kept as size 1).
        order = input._view(result_shape,
                            tuple(s for d, s in enumerate(input._strides)
                                  if keepdims or d not in red_set), input._offset)
        out = empty_strided_like_order(result_shape, out_dtype, device, order)
    else:
        _check_output(op, out, result_shape, out_dtype, enforce_safe_cast)
        if out.device != device:
            raise RuntimeError(f"{op}(): expected the output on '{device}', got '{out.device}'")
        if memory_overlap(out, input) != "none":
            input = input.clone()  # the kernel writes outputs while still reading the input

    it = object.__new__(ReductionIterator)
    it.op = op
    it.noutputs = 1
    it.shape = shape
    it.device = device
    it.common_dtype = input._dtype
    it.compute_dtype = compute_dtype or compute_dtype_for(out_dtype)
    it.result = out
    it.axes = tuple(sorted(red_set))
    it.keepdims = keepdims
    it.reduced_numel = math.prod(shape[d] for d in red_set)
    it.naux = len(aux)
    # aux tensors may come in either result form; ndim tells which.
    views = [_restride_reduced(out, shape, red_set, keepdims)]
    views += [_restride_reduced(t, shape, red_set, t.ndim == ndim) for t in aux]
    it.operands = views + [input]
    it._layout = _reduce_layout(it.operands)
    return it


def _restride_reduced(t: Tensor, shape, red_set, keepdims) -> Tensor:
    """t (result-shaped) seen with the input's shape: stride 0 along the reduced dims."""
    strides = []
    src = iter(zip(t._shape, t._strides))
    for d in range(len(shape)):
        if d in red_set:
            if keepdims:
                next(src)
            strides.append(0)
        else:
            n, s = next(src)
            strides.append(0 if n == 1 else s)
    return t._view(shape, tuple(strides), t._offset)


def _reduce_layout(operands) -> Layout:
    """Dims ordered innermost-first by the input's stride (then the output's), size-1 dims
    dropped, neighbours coalesced where every operand is contiguous across them; reduced dims
    only ever merge with reduced dims (their output stride is 0)."""
    inp = operands[-1]
    shape = inp._shape
    ndim = len(shape)
    strides = [broadcast_strides(t._shape, t._strides, ndim) for t in operands]
    dims = [d for d in range(ndim) if shape[d] != 1]
    dims.sort(key=lambda d: (abs(strides[-1][d]), abs(strides[0][d])), reverse=True)
    dims.reverse()
    lshape, lstrides = coalesce([shape[d] for d in dims], [[s[d] for d in dims] for s in strides])
    return Layout(lshape, lstrides, tuple(t._offset for t in operands))


TensorIterator.reduce = classmethod(_reduce)

"""Array API manipulation functions, device-generic, composed from views, copy_, pointwise
ops, advanced indexing and searchsorted (no kernels of their own):
concat, stack, flip, roll, repeat, tile, tril, triu, meshgrid, broadcast_arrays, take,
take_along_axis, diff, unstack, expand_dims.

flip, meshgrid and broadcast_arrays return views (as NumPy's flip and PyTorch's meshgrid do);
the others return new tensors. ``meshgrid`` / ``broadcast_arrays`` take a list in ops.yaml (the
schema has no varargs); :func:`meshgrid_varargs` / :func:`broadcast_arrays_varargs` are the
Array API spellings ``f(*arrays)``. :func:`nonempty_list_op` wraps the
generated ``concat`` / ``stack``: an empty list has no tensor to dispatch on, so it is refused
before the dispatcher with a ValueError.
"""
from __future__ import annotations

from ..dispatch.namespace import ops as _ops

import math
import operator

from .. import dtypes as _dt
from ..dispatch.keys import BACKEND_MASK, TLS_IN_USE, backend_key_for
from ..allocation import empty, new_dense_cpu
from ..storage import Storage
from ..shape import broadcast_shapes, contiguous_strides, normalize_axes, normalize_axis
from ..tensor import Tensor
from .copy import _copy_fast, _cpu_streams, _fast_for, contiguous as _contiguous, copy_ as _copy_
from .views import broadcast_to, narrow, reshape, select, unsqueeze

__all__ = ["concat", "stack", "flip", "roll", "repeat", "tile", "tril", "triu", "meshgrid",
           "broadcast_arrays", "take", "take_along_axis", "diff", "meshgrid_varargs",
           "broadcast_arrays_varargs", "unstack", "expand_dims", "nonempty_list_op"]


def _tensor(op, x, arg="x"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{arg}' must be a Tensor, got {type(x).__name__}")


def _same_device(op, arrays):
    dev = arrays[0].device
    for a in arrays[1:]:
        if a.device != dev:
            raise RuntimeError(f"{op}(): expected all tensors on '{dev}', got one on "
                               f"'{a.device}'")
    return dev


def _index_tensor(op, ix, arg):
    """``ix`` checked to be an integer tensor, as int64 (a view of it when it already is)."""
    _tensor(op, ix, arg)
    if ix.dtype.kind not in "iu":
        raise TypeError(f"{op}(): argument '{arg}' must have an integer dtype, got {ix.dtype}")
    return ix.astype(_dt.int64, copy=False)


# ---------------------------------------------------------------- concat, stack
_CPU_KS = backend_key_for("cpu")


def _concat_dense(arrays, axis):
    """concat of contiguous tensors of one dtype and device, while no dispatch key is set on
    any thread: the output is allocated and each input copied in directly (along an axis with
    only size-1 dims before it each input is one block of the output, along another axis one
    block of each output row: see _blocks). None for anything else (the general path checks,
    raises and handles it)."""
    first = arrays[0]
    if type(first) is not Tensor or type(axis) is not int or TLS_IN_USE[0]:
        return None
    shape = first._shape
    nd = len(shape)
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        return None
    dtype, ks, dev = first._dtype, first._ks, first._storage.device
    rest = shape[ax + 1:]
    total = 0
    for a in arrays:
        s = a._shape if type(a) is Tensor else None
        if (s is None or a._dtype is not dtype or a._ks != ks
                or (a._storage.device is not dev and a._storage.device != dev)
                or not (a._contiguous or a.is_contiguous())
                # (pieces of one shape, the usual join, need no slices compared)
                or s != shape and (len(s) != nd or s[ax + 1:] != rest or s[:ax] != shape[:ax])):
            return None
        total += s[ax]
    return _blocks(arrays, shape[:ax] + (total,) + rest, dtype, ks, first,
                   math.prod(shape[:ax]) if ax else 1)


def _blocks(arrays, oshape, dtype, ks, first, rows=1):
    """A new C-order tensor of ``oshape`` holding the contiguous ``arrays`` (of ``dtype`` and
    key set ``ks``) one after the other in each of its ``rows`` (the product of the dims
    before the joined axis): concat / stack, each input one block of every output row. On the
    host byte copies at every size (_host_blocks; memcpy's stores beat the copy kernel's
    threads on big joins too: two float32 halves of 2e6 on a Zen 3 VM 0.42-0.55 ms against
    0.53-0.80, of 1e7 4.4-5.0 against 4.5-5.2); one row on another device, or where
    _host_blocks declines, the device's copy_ per block. None where more than one row would
    need the device's copy kernel (the general path serves)."""
    item = dtype.itemsize
    if ks & BACKEND_MASK == _CPU_KS:
        out = _host_blocks(arrays, oshape, dtype, rows)
        if out is not None or rows != 1:
            return out
    elif rows != 1:
        return None
    device = first._storage.device
    out = new_dense_cpu(oshape, dtype) if ks & BACKEND_MASK == _CPU_KS else None
    if out is None:
        out = Tensor._make(Storage.allocate(math.prod(oshape) * item, device), oshape,
                           contiguous_strides(oshape), 0, dtype)
    st = out._storage
    fast = _fast_for(_copy_fast, "copy_dense", first)  # the device's copy_ fast path
    start = 0
    for a in arrays:
        n = a._numel
        if n:
            dst = Tensor._make(st, a._shape, a._strides, start, dtype)
            dst._contiguous = True
            if fast is None or fast(dst, a) is None:
                _copy_(dst, a)
        start += n
    return out


def _host_blocks(arrays, oshape, dtype, rows):
    """_blocks on the host: one 2-D byte copy per input (a same-dtype copy moves bits), its
    rows into a column band of the output's rows (one row: the input is one block of the
    output), after queued CPU-stream work on the inputs. Along an inner axis at every size:
    concat of two (31, 31) float32 along axis 1 53 -> ~6 us (NumPy 2.3); 1e6 / 1e7 float32
    elements 207 / 6200 us (NumPy 196 / 12100; the general path's window copies on the team
    ~650 / ~9000). None while a user CPU stream or the profiler is current (the copies are
    launched there) and where the allocation needs the general checks."""
    streams = _cpu_streams()
    if streams._slow and not streams.runs_inline():
        return None
    out = new_dense_cpu(oshape, dtype)
    nbytes = out._numel * dtype.itemsize if out is not None else 0
    if not nbytes:
        return out
    for a in arrays:
        if a._storage._uses is not None:
            streams.wait_uses(a._storage)
    buffer = out._storage.buffer
    item = dtype.itemsize
    pos = 0
    if rows == 1:  # each input one block of the output: 1-D slices (2-D views cost ~0.4 us each)
        for a in arrays:
            w = a._numel * item
            off = a._offset * item
            buffer[pos:pos + w] = a._storage.buffer[off:off + w]
            pos += w
        return out
    grid = buffer[:nbytes].reshape(rows, nbytes // rows)
    for a in arrays:
        w = a._numel // rows * item
        if w:
            off = a._offset * item
            grid[:, pos:pos + w] = a._storage.buffer[off:off + rows * w].reshape(rows, w)
            pos += w
    return out


def _stack_dense(arrays, axis):
    """stack of contiguous tensors of one dtype, backend and shape (each input one block of
    every output row, as in _concat_dense; what stack's general path gives for them), while
    no dispatch key is set on any thread. None for anything else."""
    first = arrays[0]
    if type(first) is not Tensor or type(axis) is not int or TLS_IN_USE[0]:
        return None
    shape = first._shape
    nd = len(shape) + 1
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        return None
    dtype, ks, dev = first._dtype, first._ks, first._storage.device
    for a in arrays:
        if (type(a) is not Tensor or a._dtype is not dtype or a._ks != ks
                or (a._storage.device is not dev and a._storage.device != dev)
                or a._shape != shape or not (a._contiguous or a.is_contiguous())):
            return None
    return _blocks(arrays, shape[:ax] + (len(arrays),) + shape[ax:], dtype, ks, first,
                   math.prod(shape[:ax]) if ax else 1)


def concat(arrays, axis=0):
    op = "concat"
    if arrays and axis is not None:
        out = _concat_dense(arrays, axis)
        if out is not None:
            return out
    if not arrays:
        raise ValueError(f"{op}(): argument 'arrays' must hold at least one tensor")
    dev = _same_device(op, arrays)
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError(f"{op}(): 0-d tensors can't be concatenated (use stack or axis=None)")
    ax = normalize_axis(axis, first.ndim, op)
    for i, a in enumerate(arrays[1:], 1):
        if a.ndim != first.ndim or any(m != n for d, (m, n) in
                                       enumerate(zip(a.shape, first.shape)) if d != ax):
            raise ValueError(f"{op}(): tensor {i} has shape {a.shape}, which does not match "
                             f"the shape {first.shape} of tensor 0 outside axis {ax}")
    dtype = _dt.result_type(*arrays)
    shape = list(first.shape)
    shape[ax] = sum(a.shape[ax] for a in arrays)
    out = empty(tuple(shape), dtype=dtype, device=dev)
    start = 0
    for a in arrays:
        n = a.shape[ax]
        if n:
            narrow(out, ax, start, n).copy_(a)
        start += n
    return out


def nonempty_list_op(name, generated):
    """Array API ``name(arrays, /, *, axis=0)`` (concat, stack): the generated binding
    ``generated`` after refusing an empty sequence, which has no tensor to dispatch on."""
    def fn(arrays, /, *, axis=0):
        if isinstance(arrays, (list, tuple)) and not arrays:
            raise ValueError(f"{name}(): argument 'arrays' must hold at least one tensor, got "
                             f"{arrays!r}")
        return generated(arrays, axis=axis)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "tensorlib"
    fn.__doc__ = generated.__doc__
    return fn


def stack(arrays, axis=0):
    op = "stack"
    if arrays:
        out = _stack_dense(arrays, axis)
        if out is not None:
            return out
    if not arrays:
        raise ValueError(f"{op}(): argument 'arrays' must hold at least one tensor")
    dev = _same_device(op, arrays)
    shape = arrays[0].shape
    for i, a in enumerate(arrays[1:], 1):
        if a.shape != shape:
            raise ValueError(f"{op}(): tensor {i} has shape {a.shape}, but tensor 0 has "
                             f"{shape}")
    ax = normalize_axis(axis, len(shape) + 1, op)
    out_shape = shape[:ax] + (len(arrays),) + shape[ax:]
    out = empty(out_shape, dtype=_dt.result_type(*arrays), device=dev)
    for i, a in enumerate(arrays):
        select(out, ax, i).copy_(a)
    return out


# ---------------------------------------------------------------- flip, roll
def _axes(op, axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return normalize_axes(axes, ndim, op)


def flip(x, axis=None):
    """A view with the given axes reversed (negative strides)."""
    _tensor("flip", x)
    strides = list(x._strides)
    offset = x._offset
    for d in _axes("flip", axis, x.ndim):
        n = x._shape[d]
        if n > 1:
            offset += (n - 1) * strides[d]
            strides[d] = -strides[d]
    return x._view(x._shape, strides, offset)


def _roll_axis(x, shift, ax):
    n = x.shape[ax]
    s = shift % n if n else 0
    if s == 0:
        return x.clone()
    # the last s along ax, then the rest: a join (contiguous x along its first axis: two
    # byte copies, concat's dense path)
    return concat([narrow(x, ax, n - s, s), narrow(x, ax, 0, n - s)], axis=ax)


def _roll_flat_dense(x, shift):
    """roll(x, shift) over x's flattened order for a contiguous x: its last s elements, then
    the rest, as concat's dense path joins them (two byte copies on the CPU), from views of x's
    storage made directly (no reshape or narrow: 1e3 float32 8.1 -> 5.7 us, NumPy 5.6); None
    where that path does not take them (the general way serves)."""
    n = x._numel
    s = shift % n if n else 0
    if not s or not (x._contiguous or x.is_contiguous()):
        return None
    out = _concat_dense([x._view((s,), (1,), x._offset + n - s),
                         x._view((n - s,), (1,), x._offset)], 0)
    return None if out is None else out._view(x._shape, contiguous_strides(x._shape), 0)


def roll(x, shift, axis=None):
    op = "roll"
    _tensor(op, x)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    if axis is None:
        if len(shifts) != 1:
            raise ValueError(f"{op}(): a tuple 'shift' needs a matching 'axis'")
        out = _roll_flat_dense(x, operator.index(shifts[0]))
        if out is not None:
            return out
        return reshape(_roll_axis(reshape(x, (-1,)), shifts[0], 0), x.shape)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"{op}(): 'shift' {shifts} and 'axis' {axes} differ in length")
    out = x
    # NumPy sums the shifts of a repeated axis
    total = {}
    for s, a in zip(shifts, axes):
        d = normalize_axis(a, x.ndim, op)
        total[d] = total.get(d, 0) + s
    for d, s in total.items():
        out = _roll_axis(out, s, d)
    return out if out is not x else x.clone()


# ---------------------------------------------------------------- repeat, tile
def repeat(x, repeats, axis=None):
    """Each element repeated ``repeats`` times along ``axis`` (flattened when None);
    ``repeats`` is an int, or one count per element (a sequence or a 1-D integer tensor)."""
    op = "repeat"
    _tensor(op, x)
    if axis is None:
        if len(x._shape) != 1:
            x = reshape(x, (-1,))
        axis = 0
    nd = len(x._shape)
    ax = normalize_axis(axis, nd, op)
    n = x._shape[ax] if nd else 1
    if nd == 0:
        x = reshape(x, (1,))
    if isinstance(repeats, (tuple, list)):
        # the binding's int[]: one int repeats everything (as NumPy's length-1 list does)
        if len(repeats) == 1:
            repeats = repeats[0]
        else:
            from .creation import tensor
            repeats = tensor(list(repeats), dtype=_dt.int64, device=x.device) if repeats \
                else empty((0,), dtype=_dt.int64, device=x.device)
    if type(repeats) is not int and isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = int(repeats.item())
    if type(repeats) is int or not isinstance(repeats, Tensor):
        r = operator.index(repeats)
        if r < 0:
            raise ValueError(f"{op}(): argument 'repeats' must be non-negative, got {r}")
        # x with a zero-stride dim of r after ``ax`` (unsqueeze and expand as one view), made
        # dense, that dim and ``ax`` read as one (below the keys: no dispatch)
        shape, strides = x._shape, x._strides
        return _dense_as(x._view(shape[:ax + 1] + (r,) + shape[ax + 1:],
                                 strides[:ax + 1] + (0,) + strides[ax + 1:], x._offset),
                         shape[:ax] + (n * r,) + shape[ax + 1:])
    if repeats.ndim != 1 or repeats.shape[0] != n:
        raise ValueError(f"{op}(): argument 'repeats' must be an int or a 1-D tensor of "
                         f"{n} counts, got shape {repeats.shape}")
    cumulative_sum, _min = _ops.cumulative_sum, _ops.min
    from .sorting import searchsorted
    if n and int(_min(repeats).item()) < 0:
        raise ValueError(f"{op}(): argument 'repeats' must be non-negative")
    ends = cumulative_sum(repeats.astype(_dt.int64, copy=False))
    total = int(ends[-1].item()) if n else 0
    from .creation import arange
    positions = arange(total, dtype=_dt.int64, device=x.device)
    # output position p comes from the first element whose running count exceeds p
    src = searchsorted(ends, positions, side="right")
    return take(x, src, axis=ax)


def tile(x, repetitions):
    op = "tile"
    _tensor(op, x)
    reps = tuple([operator.index(r) for r in repetitions])
    if reps and min(reps) < 0:
        raise ValueError(f"{op}(): argument 'repetitions' must be non-negative, got {reps}")
    shape, strides = x._shape, x._strides
    pad = len(reps) - len(shape)
    if pad > 0:
        shape, strides = (1,) * pad + shape, (0,) * pad + strides
    elif pad < 0:
        reps = (1,) * -pad + reps
    # x viewed as (r1, n1, r2, n2, ...) with zero strides along each r, made dense and read as
    # (r1 * n1, r2 * n2, ...) (views made directly, below the keys: no dispatch; plain loops,
    # no generators: 1e3 float32 tile 6.6 -> 5.5 us)
    vshape, vstrides, oshape = [], [], []
    for r, n, s in zip(reps, shape, strides):
        vshape += (r, n)
        vstrides += (0, s)
        oshape.append(r * n)
    return _dense_as(x._view(tuple(vshape), tuple(vstrides), x._offset), tuple(oshape))


def _dense_as(view, shape):
    """``view`` (a broadcast: zero strides) made dense, read as ``shape`` (same size, C order):
    repeat's and tile's copy."""
    dense = _contiguous(view)
    return dense._view(shape, contiguous_strides(shape), dense._offset)


# ---------------------------------------------------------------- tril, triu
def _triangle(op, x, k, lower):
    _tensor(op, x)
    if x.ndim < 2:
        raise ValueError(f"{op}(): argument 'x' must have at least 2 dimensions, got shape "
                         f"{x.shape}")
    greater_equal, less_equal = _ops.greater_equal, _ops.less_equal
    subtract, where = _ops.subtract, _ops.where
    from .creation import arange
    m, n = x.shape[-2:]
    rows = reshape(arange(m, dtype=_dt.int64, device=x.device), (m, 1))
    cols = arange(n, dtype=_dt.int64, device=x.device)
    offset = subtract(cols, rows)  # (m, n): j - i
    keep = less_equal(offset, k) if lower else greater_equal(offset, k)
    zero = empty((), dtype=x.dtype, device=x.device).fill_(0)
    return where(keep, x, zero)


def tril(x, k=0):
    return _triangle("tril", x, k, True)


def triu(x, k=0):
    return _triangle("triu", x, k, False)


# ---------------------------------------------------------------- meshgrid, broadcast_arrays
def meshgrid(arrays, indexing="xy"):
    op = "meshgrid"
    if indexing not in ("xy", "ij"):
        raise ValueError(f"{op}(): argument 'indexing' must be 'xy' or 'ij', got {indexing!r}")
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ValueError(f"{op}(): tensor {i} must be 1-D, got shape {a.shape}")
    if arrays:
        _same_device(op, arrays)
        dt = _dt.result_type(*arrays)
        arrays = [a.astype(dt, copy=False) for a in arrays]
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        d = i
        if indexing == "xy" and len(arrays) >= 2 and i < 2:
            d = 1 - i
        shape = [1] * len(arrays)
        shape[d] = a.shape[0]
        out.append(broadcast_to(reshape(a, tuple(shape)), tuple(sizes)))
    return out


def broadcast_arrays(arrays):
    shape = broadcast_shapes(*(a.shape for a in arrays), op="broadcast_arrays")
    return [broadcast_to(a, shape) for a in arrays]


def _dispatch_list(name, arrays, *rest):
    # Through the dispatcher (not the namespace attribute, which these functions replace).
    from ..dispatch.dispatcher import get_op
    if not arrays:
        return []  # no tensor to dispatch on, and nothing to return
    for i, a in enumerate(arrays):
        _tensor(name, a, f"arrays[{i}]")
    return get_op(name).call(tuple(arrays), *rest)


def meshgrid_varargs(*arrays, indexing="xy"):
    """Array API ``meshgrid(*arrays, indexing='xy')``."""
    if not isinstance(indexing, str):
        raise TypeError(f"meshgrid(): argument 'indexing' must be a str, got "
                        f"{type(indexing).__name__}")
    return _dispatch_list("meshgrid", arrays, indexing)


def broadcast_arrays_varargs(*arrays):
    """Array API ``broadcast_arrays(*arrays)``."""
    return _dispatch_list("broadcast_arrays", arrays)


# ---------------------------------------------------------------- take, take_along_axis
def take(x, indices, axis=None):
    if (type(x) is Tensor and type(indices) is Tensor and len(x._shape) == 1
            and indices._dtype is _dt.int64 and len(indices._shape) == 1
            and (axis is None or (type(axis) is int and (axis == 0 or axis == -1)))):
        try:
            return x[indices]  # what the checks below come to for a 1-D x and int64 indices
        except IndexError as e:
            raise _named("take", e) from None
    op = "take"
    _tensor(op, x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{op}(): argument 'axis' is required for a tensor of {x.ndim} "
                             f"dimensions")
        axis = 0
    ax = normalize_axis(axis, x.ndim, op)
    ix = _index_tensor(op, indices, "indices")
    if ix.ndim != 1:
        raise ValueError(f"{op}(): argument 'indices' must be 1-D, got shape {ix.shape}")
    if x.ndim == 0:
        raise ValueError(f"{op}(): argument 'x' must have at least one dimension")
    try:
        return x[(slice(None),) * ax + (ix,)]
    except IndexError as e:
        raise _named(op, e) from None


def _named(op, e):
    """The IndexError ``e`` of the x[...] by which ``op`` indexes, naming ``op`` and its
    argument 'indices' where it names __getitem__, which the user did not call."""
    head, _, rest = str(e).partition("(): ")
    return IndexError(f"{op}(): argument 'indices': {rest}") if head == "__getitem__" else e


_take_along_small = None  # kernels.cpu.indexing.take_along_small (imported on first use)


def take_along_axis(x, indices, axis=-1):
    op = "take_along_axis"
    _tensor(op, x)
    if (type(x) is Tensor and type(indices) is Tensor and type(axis) is int
            and x._ks == _CPU_KS and x._shape and not TLS_IN_USE[0]):
        # small CPU calls: NumPy's take_along_axis of the raw words
        global _take_along_small
        if _take_along_small is None:
            from ..kernels.cpu.indexing import take_along_small as _take_along_small
        nd = len(x._shape)
        if -nd <= axis < nd:
            out = _take_along_small(x, indices, axis % nd)
            if out is not None:
                return out
    ix = _index_tensor(op, indices, "indices")
    if ix.ndim != x.ndim:
        raise ValueError(f"{op}(): 'indices' has {ix.ndim} dimensions but 'x' has {x.ndim}")
    ax = normalize_axis(axis, x.ndim, op)
    from .creation import arange
    # x[i0, ..., indices, ..., ik] with aranges on the other dims; advanced indexing broadcasts
    # them against indices (either side may have size 1 there)
    key = []
    for d in range(x.ndim):
        if d == ax:
            key.append(ix)
            continue
        grid = [1] * x.ndim
        grid[d] = x.shape[d]
        key.append(reshape(arange(x.shape[d], dtype=_dt.int64, device=x.device), tuple(grid)))
    try:
        return x[tuple(key)]
    except IndexError as e:
        raise _named(op, e) from None


# ---------------------------------------------------------------- diff
def diff(x, axis=-1, n=1, prepend=None, append=None):
    op = "diff"
    _tensor(op, x)
    if x.ndim == 0:
        raise ValueError(f"{op}(): argument 'x' must have at least one dimension")
    if n < 0:
        raise ValueError(f"{op}(): argument 'n' must be non-negative, got {n}")
    ax = normalize_axis(axis, x.ndim, op)
    if n == 0:
        return x.clone()  # as NumPy: prepend / append are not applied either
    y = x
    if prepend is not None or append is not None:
        y = concat([p for p in (prepend, x, append) if p is not None], axis=ax)
    diff_op = _ops.not_equal if y.dtype is _dt.bool_ else _ops.subtract
    for _ in range(n):
        m = y._shape[ax]
        if m == 0:
            break
        # y[1:] and y[:-1] along ax, as views made directly (below the keys: no dispatch)
        shape = y._shape[:ax] + (m - 1,) + y._shape[ax + 1:]
        y = diff_op(y._view(shape, y._strides, y._offset + y._strides[ax]),
                    y._view(shape, y._strides, y._offset))
    return y


# ---------------------------------------------------------------- unstack, expand_dims
def unstack(x, axis=0):
    """Array API unstack: views of x, one per index along ``axis``."""
    _tensor("unstack", x)
    if x.ndim == 0:
        raise ValueError("unstack(): argument 'x' must have at least one dimension, got a 0-d "
                         "tensor")
    d = normalize_axis(axis, x.ndim, "unstack")
    return tuple(select(x, d, i) for i in range(x.shape[d]))


def expand_dims(x, axis=0):
    """Array API expand_dims: a view with a size-1 axis inserted at ``axis`` (in [-N-1, N])."""
    _tensor("expand_dims", x)
    a = normalize_axis(axis, x.ndim + 1, "expand_dims")
    return unsqueeze(x, a)

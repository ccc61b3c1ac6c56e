"""The structured kernel shared by every pointwise op declared with ``pointwise:`` in ops.yaml.

meta: a TensorIterator over the op's tensor arguments (broadcast, promotion, output);
impl: the ``pointwise`` DispatchStub's kernel for the iterator's device, handed the op's
PointwiseInfo (dispatch/pointwise_info.py); it picks the per-dtype kernel.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dtype_info import iinfo
from ..dtype_scalars import ScalarOutOfRange
from ..dtype_scalars import scalar_to_compute  # noqa: F401 - its home is the dtype layer
from ..iterator import TensorIterator
from ..dispatch.keys import BACKEND_MASK
from ..dispatch.pointwise_info import DTYPE_CLASSES, PointwiseInfo  # noqa: F401 - re-exported
from ..dispatch.stub import UnsupportedKernelError, get_stub
from ..runtime.cpu import streams as _cpu_streams
from ..tensor import Tensor

__all__ = ["PointwiseInfo", "make_pointwise_kernel", "DTYPE_CLASSES", "scalar_to_compute",
           "HOT_CALLS"]

_POINTWISE_STUB = get_stub("pointwise")  # one stub for every pointwise op (and copy, fill)

# Calls of one (op, dtype, backend) combination through the full path before the dense fast
# path's runner is made for it.
HOT_CALLS = 32

# Exact types of the Python-scalar operands the dense fast path serves (subclasses such as
# np.float64 or an IntEnum go the full way).
_PY_SCALAR_TYPES = frozenset((bool, int, float, complex))

def make_pointwise_kernel(info: PointwiseInfo, schema):
    """Returns ``kernel(*schema_args, out)``, registered for the functional, in-place and out ops."""
    names = [a.name for a in schema.arguments if not a.is_out]
    tensor_pos = [names.index(n) for n in info.tensor_args]
    scalar_pos = [names.index(n) for n in info.scalar_args]
    skip = tuple(info.tensor_args.index(n) for n in info.bool_args)
    stub = _POINTWISE_STUB
    if info.output == "bool":
        out_dtype = _dt.bool_
    elif info.output == "real":
        out_dtype = _dt.real_for
    else:
        out_dtype = None

    def iterate(out, args):
        return TensorIterator.build(info.name, [out], [args[i] for i in tensor_pos],
                                    int_to_float=info.int_to_float, output_dtype=out_dtype,
                                    promote_skip=skip)

    def kernel(*args):
        it = iterate(args[-1], args)
        if it.common_dtype.kind not in info.kinds:
            raise UnsupportedKernelError(f"{info.name}(): not supported for dtype "
                                         f"{it.common_dtype}")
        if info.no_half and it.common_dtype.itemsize == 2 and it.common_dtype.kind == "f":
            raise UnsupportedKernelError(
                f"{info.name}(): not supported for dtype {it.common_dtype} (it computes in "
                f"float32, whose result does not round to the {it.common_dtype} answer)")
        if it.numel:
            stub.kernel_for(it.device.type, it.common_dtype)(it, info,
                                                             [args[i] for i in scalar_pos])
        return it.output()

    kernel.__name__ = kernel.__qualname__ = f"{info.name}_structured"
    if len(tensor_pos) <= 2 and not skip:
        kernel.functional = _dense_fast_path(info, kernel, tensor_pos, scalar_pos, stub,
                                             iterate)
        kernel.inplace = _dense_inplace_path(info, kernel, tensor_pos, scalar_pos, stub,
                                             iterate)
        kernel.with_out = _dense_out_path(info, kernel, tensor_pos, scalar_pos, stub, iterate)
    elif len(tensor_pos) == 3 and not scalar_pos:
        kernel.functional = _dense_fast_path3(info, kernel, tensor_pos, stub, iterate)
    if info.compares:
        kernel.functional = _any_int(info, kernel.functional, iterate, False)
        kernel.with_out = _any_int(info, kernel.with_out, iterate, True)
    return kernel


def _any_int(info, fn, iterate, with_out):
    """``fn`` (a comparison's functional or out= path) where a Python int outside the integer
    dtype the comparison computes in compares as the number it is, as in NumPy 2
    (``uint8_x != -1``, ``uint8_x < 300``): every element gets the same answer, the
    expression's value with the int beside either end of the dtype's range. The output (shape,
    out= checks) is the iterator's, as for any call."""
    code = compile(info.expr, f"<{info.name}>", "eval")

    def answer(e, args, out):
        end = int(iinfo(e.dtype).min)
        value = eval(code, {}, {a: e.value if a == e.arg else end  # noqa: S307 - ops.yaml's
                                for a in info.tensor_args})        # checked expression
        it = iterate(out, args)
        if it.numel:
            it.output().fill_(bool(value))
        return it.output()

    # (the two operands spelled out: a comparison's schema has exactly these, and a wrapper
    # packing *args cost ~40 ns more per call)
    if with_out:
        def compare(a, b, out):
            try:
                return fn(a, b, out)
            except ScalarOutOfRange as e:
                return answer(e, (a, b, out), out)
    else:
        def compare(a, b):
            try:
                return fn(a, b)
            except ScalarOutOfRange as e:
                return answer(e, (a, b), None)

    compare.__name__ = compare.__qualname__ = getattr(fn, "__name__", info.name)
    return compare


def _now_hot(counts, key) -> bool:
    """Counts one successful full call of a fast-path combination; True at the HOT_CALLS-th,
    when its runner is to be made (making one may compile a kernel: not worth it for a
    combination used a few times)."""
    n = counts[key] = counts.get(key, 0) + 1
    return n >= HOT_CALLS


def _learned(runners, counts, key, result, stub, device_of, factory, make_args):
    """``result`` of a successful full call of fast-path combination ``key``; at its
    HOT_CALLS-th its runner is made by the device kernel's ``factory(*make_args)`` for the
    device of ``device_of`` (None: no such fast path there) and kept in ``runners``. The cold
    branch of the in-place and out= wrappers, whose hot branches stay inline (a call there
    costs a measurable share of a tiny op)."""
    if _now_hot(counts, key):
        make = _runner_factory(stub, device_of, factory)
        runners[key] = make and make(*make_args)
    return result


def _runner_factory(stub, result, name):
    """The device kernel's runner factory ``name`` for the device of ``result`` (a Tensor), or
    None (not a Tensor, or a device without that fast path)."""
    if not isinstance(result, Tensor):
        return None
    return getattr(stub.kernels.get(result.device.type), name, None)


def layout_of(by_layout, args, a, b, into, head=()):
    """``by_layout`` (see layout_path) for tensor ``a`` and ``b`` (a tensor on a's backend, an
    exact-type Python scalar at position 1, or None for a unary op) into ``into``, keyed by
    their layouts after ``head`` (the out= tensor's); None: the full path. The keys leave the
    offsets out (the runner reads them per call: a sliding window's views, ``x[i] * col`` or
    ``frames[i] -= mean`` over i, share one runner); into a given tensor they say which
    operands are that tensor itself (read through it; another view of its memory goes the
    full path)."""
    if type(b) is Tensor:  # (each key one tuple display: no concatenation on a hot call)
        if (a._ks ^ b._ks) & BACKEND_MASK:
            return None
        if into is None:
            return by_layout(args, (a._dtype, a._ks, a._shape, a._strides, b._dtype, b._shape,
                                    b._strides), (a, b))
        return by_layout(args, head + (a._dtype, a._ks, a._shape, a._strides, a is into,
                                       b._dtype, b._shape, b._strides, b is into),
                         (a, b), None, into)
    if into is None:
        key = (a._dtype, a._ks, a._shape, a._strides)
    else:
        key = head + (a._dtype, a._ks, a._shape, a._strides, a is into)
    if b is None:
        return by_layout(args, key, (a,), None, into)
    if type(b) in _PY_SCALAR_TYPES:
        return by_layout(args, key + (type(b),), (a,), b, into)
    return None


def _dense_inplace_path(info, kernel, tensor_pos, scalar_pos, stub, iterate):
    """The in-place form (out=self: ``x op= y``, ``x.exp_()``) without a TensorIterator: a
    contiguous self and either nothing more (unary), a contiguous tensor of its dtype, shape
    and backend that is self or shares no memory with it, or a Python scalar of an exact type
    at position 1. Per (dtype, backend[, scalar type]) once HOT_CALLS full calls succeeded (so
    the full path has raised any cast error for that combination); the device kernel's
    ``inplace_runner`` makes the runner, which declines big tensors and user streams. Other
    layouts (``h += bias``, a strided self) are learned per exact layout (layout_path)."""
    if tensor_pos[0] != 0:
        return None
    runners = {}
    counts = {}
    unary = len(tensor_pos) == 1
    scalars = _PY_SCALAR_TYPES
    by_layout = layout_path(info, kernel, stub, iterate, scalar_pos)

    def layout(args, a, b):
        out = layout_of(by_layout, args, a, b, a)
        return out if out is not None else kernel(*args, a)

    def inplace(*args):
        a = args[0]
        if type(a) is Tensor and (a._contiguous or a.is_contiguous()):
            if unary:
                key = (a._dtype, a._ks)
            else:
                b = args[tensor_pos[1]]
                if type(b) is Tensor:
                    if (b._dtype is not a._dtype or (a._ks ^ b._ks) & BACKEND_MASK
                            or b._shape != a._shape or not (b._contiguous or b.is_contiguous())
                            or (b._storage is a._storage and b._offset != a._offset)):
                        return layout(args, a, b)
                    key = (a._dtype, a._ks)
                elif type(b) in scalars:
                    key = (a._dtype, a._ks, type(b))
                else:
                    return kernel(*args, a)
            run = runners.get(key)
            if run is not None:
                out = run(a, None if unary else b, args)
                if out is not None:
                    return out
            elif key not in runners:
                return _learned(runners, counts, key, kernel(*args, a), stub, a,
                                "inplace_runner", (info, a._dtype, scalar_pos,
                                                   key[2] if len(key) == 3 else None))
        elif type(a) is Tensor:
            return layout(args, a, None if unary else args[tensor_pos[1]])
        return kernel(*args, a)

    inplace.__name__ = inplace.__qualname__ = f"{info.name}_structured[out=self]"
    return inplace


def _dense_out_path(info, kernel, tensor_pos, scalar_pos, stub, iterate):
    """The out= form (``tl.exp(x, out=y)``, ``tl.add(a, b, out=c)``) without a TensorIterator:
    a contiguous ``out`` of the operand's shape and backend (any dtype the full path accepted
    for it), a contiguous first operand, and nothing more (unary), a contiguous tensor of its
    dtype, shape and backend, or a Python scalar of an exact type at position 1; an operand
    sharing out's storage must be out itself (the full path copies a partly overlapping one).
    Per (dtype, out dtype, backend[, scalar type]) once HOT_CALLS full calls succeeded (so
    the full path has raised any cast or shape error for that combination); the device
    kernel's ``out_runner`` makes the runner, which declines user streams (above the parallel
    grain also the profiler). Other layouts are learned per exact layout, out's included
    (layout_path)."""
    if tensor_pos[0] != 0:
        return None
    runners = {}
    counts = {}
    unary = len(tensor_pos) == 1
    scalars = _PY_SCALAR_TYPES
    by_layout = layout_path(info, kernel, stub, iterate, scalar_pos, with_out=True)

    def layout(args, d, a):
        out = None
        if type(d) is Tensor and type(a) is Tensor and not (a._ks ^ d._ks) & BACKEND_MASK:
            out = layout_of(by_layout, args, a, None if unary else args[tensor_pos[1]], d,
                             (d._dtype, d._shape, d._strides))
        return out if out is not None else kernel(*args)

    def with_out(*args):
        d = args[-1]
        a = args[0]
        if (type(d) is Tensor and type(a) is Tensor and d._shape == a._shape
                and not (a._ks ^ d._ks) & BACKEND_MASK
                and (d._contiguous or d.is_contiguous()) and (a._contiguous or a.is_contiguous())
                and (a._storage is not d._storage
                     or (a._offset == d._offset and a._dtype is d._dtype))):
            if unary:
                b = None
                key = (a._dtype, d._dtype, a._ks)
            else:
                b = args[tensor_pos[1]]
                if type(b) is Tensor:
                    if (b._dtype is not a._dtype or (a._ks ^ b._ks) & BACKEND_MASK
                            or b._shape != a._shape or not (b._contiguous or b.is_contiguous())
                            or (b._storage is d._storage
                                and (b._offset != d._offset or b._dtype is not d._dtype))):
                        return layout(args, d, a)
                    key = (a._dtype, d._dtype, a._ks)
                elif type(b) in scalars:
                    key = (a._dtype, d._dtype, a._ks, type(b))
                else:
                    return kernel(*args)
            run = runners.get(key)
            if run is not None:
                out = run(d, a, b, args)
                if out is not None:
                    return out
            elif key not in runners:
                return _learned(runners, counts, key, kernel(*args), stub, a, "out_runner",
                                (info, a._dtype, d._dtype, scalar_pos,
                                 key[3] if len(key) == 4 else None))
        return layout(args, d, a)

    with_out.__name__ = with_out.__qualname__ = f"{info.name}_structured[out=]"
    return with_out


def _dense_fast_path3(info, kernel, tensor_pos, stub, iterate):
    """The dense fast path for three tensor operands (``where``): contiguous, of one shape and
    backend, per (dtypes, backend) once HOT_CALLS full calls succeeded (see _dense_fast_path);
    the device kernel's ``dense_runner3`` makes the runner. With a Python scalar for ``self``
    or ``other`` (``where(mask, 0, x)``), per (dtypes, backend, scalar type, position) through
    ``dense_runner3_scalar``; with two (``clip_bounds(x, 0.2, 0.8)``), per (dtype, backend,
    scalar types) through ``dense_runner3_scalars``. Three tensors of other layouts
    (broadcasting) are learned per exact layout (layout_path)."""
    runners = {}
    counts = {}
    p0, p1, p2 = tensor_pos
    by_layout = layout_path(info, kernel, stub, iterate, ())

    def serve(args, key, factory, dtypes, extra, x, y, z):
        """The runner of ``key`` on (x, y, z), or the full path, which makes the runner with
        ``factory(info, dtypes, out dtype, *extra)`` once the combination is hot."""
        run = runners.get(key)
        if run is not None:
            out = run(x, y, z)
            if out is not None:
                return out
        elif key not in runners:
            result = kernel(*args, None)
            if _now_hot(counts, key):
                make = _runner_factory(stub, result, factory)
                runners[key] = make and make(info, dtypes, result._dtype, *extra)
            return result
        return kernel(*args, None)

    def functional(*args):
        a = args[p0]
        b = args[p1]
        c = args[p2]
        if (type(a) is Tensor and type(b) is Tensor and type(c) is Tensor
                and a._shape == b._shape == c._shape and a._ks == b._ks == c._ks
                and (a._contiguous or a.is_contiguous()) and (b._contiguous or b.is_contiguous())
                and (c._contiguous or c.is_contiguous())):
            dtypes = (a._dtype, b._dtype, c._dtype)
            return serve(args, dtypes + (a._ks,), "dense_runner3", dtypes, ((),), a, b, c)
        if (type(a) is Tensor and type(b) in _PY_SCALAR_TYPES and type(c) in _PY_SCALAR_TYPES
                and (a._contiguous or a.is_contiguous())):
            # clip_bounds(x, 0.2, 0.8): two Python scalars beside a tensor
            return serve(args, (a._dtype, a._ks, type(b), type(c)), "dense_runner3_scalars",
                         (a._dtype,), ((type(b), type(c)),), a, b, c)
        if type(a) is Tensor and (type(b) in _PY_SCALAR_TYPES) != (type(c) in _PY_SCALAR_TYPES):
            pos, t, v = (1, c, b) if type(b) in _PY_SCALAR_TYPES else (2, b, c)
            if (type(t) is Tensor and a._shape == t._shape and a._ks == t._ks
                    and (a._contiguous or a.is_contiguous())
                    and (t._contiguous or t.is_contiguous())):
                # where(cond, 0, x): a Python scalar beside two tensors (relu's gradient)
                dtypes = (a._dtype, t._dtype)
                return serve(args, dtypes + (a._ks, type(v), pos), "dense_runner3_scalar",
                             dtypes, (pos, type(v)), a, t, v)
        elif (type(a) is Tensor and type(b) is Tensor and type(c) is Tensor
              and not ((a._ks ^ b._ks) | (a._ks ^ c._ks)) & BACKEND_MASK):
            # (a new result: the offsets are read per call, see layout_of)
            out = by_layout(args, (a._ks, a._dtype, a._shape, a._strides,
                                   b._dtype, b._shape, b._strides,
                                   c._dtype, c._shape, c._strides), (a, b, c))
            if out is not None:
                return out
        return kernel(*args, None)

    functional.__name__ = functional.__qualname__ = f"{info.name}_structured[out=None]"
    return functional


def _single_value(t, other):
    """The value of ``t``, a tensor holding one element (broadcast or not) whose broadcast with
    ``other`` is ``other``'s shape, as the Python scalar the dense fast path takes in its
    place; None when it must go the full way: not that shape, not host memory, a half type
    (computed in float32 from its bits), or a user CPU stream current (the kernel then reads
    the value in stream order). Queued writers of its memory are waited for, as ``typed()``
    does for any kernel launched on the default stream."""
    st = t._storage
    if (st.device.type != "cpu" or len(t._shape) > len(other._shape)
            or (t._dtype.itemsize == 2 and t._dtype.kind == "f")
            or (_cpu_streams._slow and _cpu_streams.tls.queue is not _cpu_streams.DEFAULT)):
        return None
    if t._numel != 1 and (t._shape != other._shape or not t._numel):
        return None
    return st.typed(t._dtype.storage_np_dtype)[t._offset].item()


STRIDED = "strided"  # last item of the runner keys of 1-D non-contiguous operands


def layout_path(info, kernel, stub, iterate, scalar_pos, with_out=False):
    """``by_layout(args, key, tensors, value=None, into=None)``: the layout runner learned for
    ``key`` (a layout: the operands' dtypes, shapes and strides, and for the in-place and out= forms
    ``into``'s and which operands are ``into``: layout_of) run on the tensor operands ``tensors``
    (op order), the Python-scalar operand ``value`` and, with ``into``, into that tensor; the full
    path (``kernel(*args, into)``; ``kernel(*args)`` ``with_out``, whose args end with it) until the
    layout is hot. None: the caller takes the full path (a runner declined the call)."""
    layouts = {}
    counts = {}

    def by_layout(args, key, tensors, value=None, into=None):
        run = layouts.get(key)
        if run is not None:
            return run(tensors, value, args, into)
        if key in layouts:
            return None
        before = None if into is None else (into._shape, into._strides, into._offset)
        result = kernel(*args) if with_out else kernel(*args, into)
        if _now_hot(counts, key):
            if len(layouts) >= LAYOUT_KEYS:
                layouts.clear()
                counts.clear()
            # (an out= tensor the full path resized is not the layout the key names)
            same = into is None or (into._shape, into._strides, into._offset) == before
            make = same and _runner_factory(stub, result, "layout_runner")
            if not make:
                layouts[key] = None
            else:
                it = iterate(result, args)
                # (an input overlapping the written tensor read from a copy: the copy's layout
                # is not the key's, so no runner from this call; a later one may make it)
                if not it.reads_a_copy(tensors):
                    layouts[key] = make(info, it, scalar_pos, into is not None)
        elif len(counts) >= 16 * LAYOUT_KEYS:
            counts.clear()
        return result

    by_layout.layouts = layouts
    return by_layout


# Operand layouts whose runners (or counts) one op keeps before it starts afresh: a loop over
# many distinct layouts (views of many shapes or strides) must not grow them without end.
LAYOUT_KEYS = 256


def _dense_fast_path(info, kernel, tensor_pos, scalar_pos, stub, iterate):
    """The functional form (out=None) with PyTorch's fast set-up taken one step further: when
    the tensor operands are contiguous, of one shape, dtype and backend, a per-(dtype, backend)
    runner from the device kernel (``kernel.dense_runner``) allocates the output and runs the
    loop without building a TensorIterator. A combination goes the full way (which raises
    any error) until it has succeeded HOT_CALLS times; then its runner is made, with the output
    dtype the full path gave (making one may compile a kernel: not worth it for a combination
    used a few times). A runner ``run(a, b_or_None, args)`` returns None for what it does not take (e.g. big or
    pending-stream operands); it reads the op's Scalar arguments from ``args``. A binary op
    with one contiguous tensor and one Python scalar (bool, int, float, complex: exact types)
    is served the same way, per (dtype, backend, scalar type, scalar position): its runner
    converts the scalar as the full path does (same errors) and runs a flat loop generated
    for that operand kind. Any other layout of tensor operands on one backend (broadcast
    shapes, transposed or N-D strided views, mixed dtypes) is learned per exact layout
    (dtypes, shapes, strides, offsets; ``by_layout``): the device kernel's ``layout_runner``
    works out the full path's loop and meta once, from the TensorIterator of the hot call
    (``iterate(result, args)``)."""
    runners = {}

    def make_runner(dtype, result, scalar_operand=None, scalar_type=None, strided=False):
        if info.int_to_float and dtype.kind in "biu" and scalar_operand is None:
            return None  # int -> float ops follow the settable default float dtype
        make = _runner_factory(stub, result, "strided_runner" if strided else "dense_runner")
        if make is None:
            return None
        if scalar_operand is None:
            return make(info, dtype, result._dtype, scalar_pos)
        return make(info, dtype, result._dtype, scalar_pos, scalar_operand, scalar_type)

    counts = {}

    def counted(key, a, result):
        if _now_hot(counts, key):
            runners[key] = make_runner(a._dtype, result, strided=len(key) == 3)
        return result

    def counted_scalar(key, t, pos, result):
        if _now_hot(counts, key):
            runners[key] = make_runner(t._dtype, result, pos, key[2], strided=len(key) == 5)
        return result

    def strided(key, t, other, args, pos=None):
        """A 1-D operand that is not contiguous: the strided runner (keys end in STRIDED);
        ``pos``: where a Python-scalar operand ``other`` is (None: a tensor or no operand)."""
        run = runners.get(key)
        if run is not None:
            return run(t, other, args)
        if key not in runners:
            result = kernel(*args, None)
            if pos is None:
                return counted(key, t, result)
            return counted_scalar(key, t, pos, result)
        return None

    # ops.yaml integer_scalar_min of each tensor operand (pow's exponent), else no bound
    int_lows = [_dt.INTEGER_SCALAR_MIN.get((info.name, arg), -np.inf)
                for arg in info.tensor_args]

    def one_element(t, one, pos, args):
        """``one`` (a one-element tensor) as the Python scalar operand at ``pos`` beside ``t``
        through the Python-scalar runners; None: the full path decides."""
        v = _single_value(one, t)
        if v is None or type(v) is int and v < int_lows[pos]:
            # (a tensor exponent below pow's integer_scalar_min computes, unlike a Python one:
            # the full path serves it)
            return None
        key = (t._dtype, t._ks, type(v), pos)
        run = runners.get(key)
        if run is not None:
            return run(t, v, args)
        if key not in runners:
            return counted_scalar(key, t, pos, kernel(*args, None))
        return None

    by_layout = layout_path(info, kernel, stub, iterate, scalar_pos)

    # One variant per operand count: a generic one (tuples, loops) costs a sizeable part
    # of the ~3 us a tiny op takes.
    if len(tensor_pos) == 1:
        (p0,) = tensor_pos

        def functional(*args):
            a = args[p0]
            if type(a) is Tensor:
                if a._contiguous or a.is_contiguous():
                    key = (a._dtype, a._ks)
                    run = runners.get(key)
                    if run is not None:
                        out = run(a, None, args)
                        if out is not None:
                            return out
                    elif key not in runners:
                        return counted(key, a, kernel(*args, None))
                elif len(a._shape) == 1:
                    key = (a._dtype, a._ks, STRIDED)
                    out = strided(key, a, None, args)
                    if out is not None:
                        return out
                else:
                    out = layout_of(by_layout, args, a, None, None)
                    if out is not None:
                        return out
            return kernel(*args, None)
    else:
        p0, p1 = tensor_pos
        scalars = _PY_SCALAR_TYPES

        def functional(*args):
            a = args[p0]
            b = args[p1]
            if type(a) is Tensor:
                if type(b) is Tensor:
                    # (functionality bits such as Autograd's differ between operands that
                    # require grad and those that don't: below those keys only the backend
                    # counts)
                    if a._dtype is b._dtype and not (a._ks ^ b._ks) & BACKEND_MASK:
                        # (a fresh view, x[1:], has not worked out its flag yet)
                        if ((a._contiguous or a.is_contiguous())
                                and (b._contiguous or b.is_contiguous()) and a._shape == b._shape):
                            key = (a._dtype, a._ks)
                            run = runners.get(key)
                            if run is not None:
                                out = run(a, b, args)
                                if out is not None:
                                    return out
                            elif key not in runners:
                                return counted(key, a, kernel(*args, None))
                        elif ((b._numel == 1 or not any(b._strides))
                              and (a._contiguous or a.is_contiguous())):
                            # b is one element (0-d, or broadcast with stride 0: a reduction's
                            # gradient): served as a Python scalar of its value, like x * 2.0
                            out = one_element(a, b, 1, args)
                            if out is not None:
                                return out
                        elif ((a._numel == 1 or not any(a._strides))
                              and (b._contiguous or b.is_contiguous())):
                            out = one_element(b, a, 0, args)
                            if out is not None:
                                return out
                        elif len(a._shape) == 1 and a._shape == b._shape:
                            # (strided(key, a, b, args), spelled out: x[::2] * y[::2])
                            key = (a._dtype, a._ks, STRIDED)
                            run = runners.get(key)
                            if run is not None:
                                out = run(a, b, args)
                                if out is not None:
                                    return out
                            elif key not in runners:
                                return counted(key, a, kernel(*args, None))
                        else:
                            out = layout_of(by_layout, args, a, b, None)
                            if out is not None:
                                return out
                    else:  # mixed dtypes (float32 + float64): by layout too
                        out = layout_of(by_layout, args, a, b, None)
                        if out is not None:
                            return out
                elif type(b) in scalars and (a._contiguous or a.is_contiguous()):
                    # A Python-scalar operand: per (dtype, backend, scalar type, position).
                    key = (a._dtype, a._ks, type(b), 1)
                    run = runners.get(key)
                    if run is not None:
                        out = run(a, b, args)
                        if out is not None:
                            return out
                    elif key not in runners:
                        return counted_scalar(key, a, 1, kernel(*args, None))
                elif type(b) in scalars and len(a._shape) == 1:
                    key = (a._dtype, a._ks, type(b), 1, STRIDED)
                    out = strided(key, a, b, args, 1)
                    if out is not None:
                        return out
                elif type(b) in scalars:
                    out = layout_of(by_layout, args, a, b, None)
                    if out is not None:
                        return out
            elif type(b) is Tensor and type(a) in scalars:
                if b._contiguous or b.is_contiguous():
                    key = (b._dtype, b._ks, type(a), 0)
                    run = runners.get(key)
                    if run is not None:
                        out = run(b, a, args)
                        if out is not None:
                            return out
                    elif key not in runners:
                        return counted_scalar(key, b, 0, kernel(*args, None))
                elif len(b._shape) == 1:
                    key = (b._dtype, b._ks, type(a), 0, STRIDED)
                    out = strided(key, b, a, args, 0)
                    if out is not None:
                        return out
                else:
                    out = by_layout(args, (b._dtype, b._ks, b._shape, b._strides,
                                           type(a), 0), (b,), a)
                    if out is not None:
                        return out
            return kernel(*args, None)

    functional.__name__ = functional.__qualname__ = f"{info.name}_structured[out=None]"
    functional.layouts = by_layout.layouts  # (for inspection)
    return functional

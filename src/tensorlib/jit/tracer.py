"""The tracer: a boxed kernel at the ``Tracer`` dispatch key records every op a function runs.

``trace(fn, example_inputs)`` switches the key on for this thread and calls ``fn``. Every op
reaches the kernel through the dispatcher (so every op of ops.yaml traces with no per-op code):
it runs the op below itself with the key excluded (ops an op calls inside are its own business,
not recorded) and appends a ``tl::<op>`` node whose inputs are the Values of the tensor
arguments and ``prim::Constant`` nodes for everything else (Python scalars, int lists, dtypes,
devices). Views and in-place ops are recorded like any op; their schema's alias annotations
(``Tensor(a)``, ``Tensor(a!)``) tell the passes what aliases what. A tensor used by the function
but neither an input nor made by a traced op is a constant (its data is baked into the trace).

Meta tracing (``meta=True``, the default of ``trace``): a trace needs only each op's result
types, and running the eager kernels for them is most of a first call's cost (compiling or
loading one Numba / Triton kernel per op and dtype). So the functional form of every pointwise
op (ops.yaml ``pointwise:``) is not run: its TensorIterator is built as eager builds it (same
broadcasting, promotion, output layout and errors) and its output allocated but left unwritten.
Anything that would read such a tensor's data (an op other than a pointwise one or a view, a
conversion such as ``item()`` / ``numpy()`` / ``repr``) abandons the meta trace, and the
function is traced again running every op.
"""
from __future__ import annotations

import inspect
import threading
import warnings

from ..dispatch import dispatcher
from ..dispatch.keys import DispatchKey, exclude_keys, include_keys
from ..tensor import Tensor
from .ir import Graph, ScalarKind, TensorType, type_of_constant

__all__ = ["TracerWarning", "TracingCheckError", "trace_graph", "ensure_registered",
           "is_tracing", "meta_profile"]


class TracerWarning(UserWarning):
    """The trace may not generalise: a traced tensor's data became a Python value (so control
    flow or constants may depend on it)."""


class TracingCheckError(RuntimeError):
    """check_trace: running the trace did not reproduce the function's results."""


class _Tls(threading.local):
    def __init__(self):
        self.state = None


_tls = _Tls()
_reg_lock = threading.Lock()


def is_tracing() -> bool:
    return _tls.state is not None


class _NeedData(BaseException):
    """Raised inside a meta trace when something reads an unwritten tensor's data; a
    BaseException, so a function's ``except Exception`` does not swallow it."""


def _meta_pointwise(op, args):
    """The output of a functional pointwise op, built as eager builds it but not computed;
    None when the op is not one (or anything differs from eager's path: eager then runs)."""
    from ..dispatch.registration import POINTWISE
    info = POINTWISE.get(op.name)
    schema = op.schema
    if info is None or schema.is_out or any(a.is_write for a in schema.arguments):
        return None
    names = [a.name for a in schema.arguments]
    if len(names) != len(info.tensor_args) + len(info.scalar_args):
        return None
    vals = dict(zip(names, args))
    inputs = [vals.get(n) for n in info.tensor_args]
    if any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        return None  # autograd records below this key
    from .. import dtypes as _dt
    from ..iterator import TensorIterator, compute_dtype_for
    try:
        out_dtype = {"bool": _dt.bool_, "real": _dt.real_for}.get(info.output)
        it = TensorIterator.build(
            info.name, [None], inputs, int_to_float=info.int_to_float, output_dtype=out_dtype,
            promote_skip=tuple(info.tensor_args.index(n) for n in info.bool_args))
        common = it.common_dtype
        if common.kind not in info.kinds or (info.no_half and common.itemsize == 2
                                             and common.kind == "f"):
            return None  # eager raises its error
        compute = compute_dtype_for(common)
        for n in info.scalar_args:
            _dt.scalar_to_compute(vals[n], compute, info.name, n)
        return it.output()
    except Exception:  # noqa: BLE001 - eager runs and raises its own error
        return None


def _tracer_kernel(op, ks, args):
    st = _tls.state
    if st is None:  # another thread traces; this one does not
        return op.redispatch(ks, args)
    if st.meta and not st.depth:
        out = _meta_pointwise(op, args)
        if out is not None:
            st.unwritten[id(out._storage)] = out._storage
            st.record(op, args, out)
            return out
        st.check_written(op, args)
    st.depth += 1
    try:
        with exclude_keys(DispatchKey.Tracer):
            out = op.redispatch(ks, args)
    finally:
        st.depth -= 1
    st.record(op, args, out)
    return out


def ensure_registered() -> None:
    """Registers the tracer's kernel at the Tracer key for every op. Done at every trace
    (about 2 ms): other code may have replaced or removed the Tracer fallback since."""
    with _reg_lock:
        dispatcher.fallback(DispatchKey.Tracer, _tracer_kernel)


# ---- TracerWarning: a traced tensor converted to a Python value ------------------------------
_CONVERSIONS = ("item", "tolist", "__bool__", "__len__", "__int__", "__float__", "__index__",
                "__complex__", "numpy")
_patch_count = [0]
_originals: dict = {}


def _warning_wrapper(name, orig):
    def wrapper(self, *args, **kwargs):
        st = _tls.state
        if st is not None and st.meta and name != "__len__":
            st.check_tensor_written(self)
        if st is not None and not st.depth and st.is_traced(self):
            what = name.strip("_")
            warnings.warn(TracerWarning(
                f"trace({st.fn_name}): converting a traced tensor to a Python value "
                f"({what}()) may make the trace incorrect: the value is recorded as a "
                f"constant, and control flow that depends on it is not recorded (other "
                f"inputs may need another path)"), stacklevel=2)
        if st is None:
            return orig(self, *args, **kwargs)
        st.depth += 1  # bool() calls item(): one warning for the outermost conversion
        try:
            return orig(self, *args, **kwargs)
        finally:
            st.depth -= 1
    wrapper.__name__ = name
    wrapper.__qualname__ = f"Tensor.{name}"
    wrapper.__doc__ = orig.__doc__
    return wrapper


def _basic_index(t, idx):
    """``t[idx]`` for basic indices (ints, step-1 slices, None, Ellipsis) as dispatcher ops
    (select / narrow / unsqueeze), so the trace records them; None for anything else."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    for i in idx:
        if not (i is None or i is Ellipsis or isinstance(i, slice)
                or (isinstance(i, int) and not isinstance(i, bool))):
            return None
    real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if sum(1 for i in idx if i is Ellipsis) > 1 or real > t.ndim:
        return None
    full = []
    for i in idx:
        if i is Ellipsis:
            full += [slice(None)] * (t.ndim - real)
        else:
            full.append(i)
    out, dim = t, 0
    for i in full:
        if i is None:
            out = out.unsqueeze(dim)
            dim += 1
        elif isinstance(i, int):
            out = out.select(dim, i)
        else:
            start, stop, step = i.indices(out.shape[dim])
            if step != 1:
                return None
            if (start, stop) != (0, out.shape[dim]):
                out = out.narrow(dim, start, max(0, stop - start))
            dim += 1
    return out


def _gather_index(t, idx):
    """``t[idx]`` for one integer index array over dim 0 (a list of ints or a 1-D integer
    tensor) as ``take(t, idx, axis=0)``, which the trace records; None for anything else."""
    if isinstance(idx, list) and idx and all(
            isinstance(i, int) and not isinstance(i, bool) for i in idx):
        from ..ops.creation import asarray
        idx = asarray(idx)
    if (isinstance(idx, Tensor) and idx.ndim == 1 and idx.dtype.kind in "iu"
            and t.ndim >= 1):
        from ..dispatch import dispatcher as _d
        return _d.get_op("take").call(t, idx, 0)
    return None


# Tensor methods that read data without an op (besides _CONVERSIONS): a meta trace abandons
# itself when one reads an unwritten tensor.
_DATA_READERS = ("_to_host_numpy", "__array__", "__repr__", "__str__", "__format__",
                 "__dlpack__", "tobytes")


def _data_reader(name, orig):
    def reader(self, *args, **kwargs):
        st = _tls.state
        if st is not None and st.meta:
            st.check_tensor_written(self)
        return orig(self, *args, **kwargs)
    reader.__name__ = name
    reader.__qualname__ = f"Tensor.{name}"
    reader.__doc__ = orig.__doc__
    return reader


def _traced_getitem(orig):
    def __getitem__(self, idx):
        st = _tls.state
        if st is not None and not st.depth and st.is_traced(self):
            out = _basic_index(self, idx)
            if out is None:
                out = _gather_index(self, idx)
            if out is not None:
                return out
            # Other advanced indices (masks: a data-dependent shape; several index arrays)
            # are computed outside the dispatcher: the result would be baked in as a constant.
            what = (f"a {idx.dtype} tensor of shape {tuple(idx.shape)}"
                    if isinstance(idx, Tensor) else f"{type(idx).__name__} {idx!r:.60}")
            raise RuntimeError(
                f"trace({st.fn_name}): indexing a traced tensor with {what} has no trace "
                f"support (basic indices, and one integer index array over dim 0, trace as "
                f"ops); use tl.where / tl.take instead")
        return orig(self, idx)
    return __getitem__


def _traced_transfer(name, orig):
    """Tensor.to / .cuda / .cpu move data outside the dispatcher: while tracing, a traced
    tensor's move is redone as the ``astype(..., device=)`` op (recorded), or the result would
    be baked into the trace as a constant."""
    def transfer(self, *args, **kwargs):
        st = _tls.state
        res = orig(self, *args, **kwargs)
        if (st is None or st.depth or not st.is_traced(self) or res is self
                or not isinstance(res, Tensor) or st.is_traced(res)):
            return res
        from ..dispatch import dispatcher as _d
        return _d.get_op("astype").call(self, res.dtype, True, res.device)
    transfer.__name__ = name
    transfer.__qualname__ = f"Tensor.{name}"
    transfer.__doc__ = orig.__doc__
    return transfer


def _traced_detach(orig):
    """detach() makes a new tensor over the same memory without an op: while tracing, it is
    the same Value as its input (same data; autograd is not part of the graph)."""
    def detach(self):
        out = orig(self)
        st = _tls.state
        if st is not None and not st.depth and st.is_traced(self):
            st.bind(out, st.values[id(self)][1])
        return out
    detach.__name__ = "detach"
    detach.__qualname__ = "Tensor.detach"
    detach.__doc__ = orig.__doc__
    return detach


def _patch():
    with _reg_lock:
        if _patch_count[0] == 0:
            for name in ("to", "cuda", "cpu", "to_device"):
                orig = Tensor.__dict__.get(name)
                if orig is not None:
                    _originals[name] = orig
                    setattr(Tensor, name, _traced_transfer(name, orig))
            orig = Tensor.__dict__.get("detach")
            if orig is not None:
                _originals["detach"] = orig
                Tensor.detach = _traced_detach(orig)
            for name in _CONVERSIONS:
                orig = Tensor.__dict__.get(name)
                if orig is None:
                    continue
                _originals[name] = orig
                setattr(Tensor, name, _warning_wrapper(name, orig))
            for name in _DATA_READERS:
                orig = Tensor.__dict__.get(name)
                if orig is None or name in _originals:
                    continue
                _originals[name] = orig
                setattr(Tensor, name, _data_reader(name, orig))
            _originals["__getitem__"] = Tensor.__dict__["__getitem__"]
            Tensor.__getitem__ = _traced_getitem(_originals["__getitem__"])
        _patch_count[0] += 1


def _unpatch():
    with _reg_lock:
        _patch_count[0] -= 1
        if _patch_count[0] == 0:
            for name, orig in _originals.items():
                setattr(Tensor, name, orig)
            _originals.clear()


# ---- recording -------------------------------------------------------------------------------
class _State:
    def __init__(self, fn_name, meta=False):
        self.fn_name = fn_name
        self.graph = Graph()
        self.values = {}     # id(tensor) -> (tensor, Value): the tensor kept alive with its id
        self.storages = {}   # id(storage) -> storage of traced tensors
        self.depth = 0
        self.meta = meta
        self.unwritten = {}  # id(storage) -> storage of meta outputs (data never computed)
        self.abandoned = False

    def check_tensor_written(self, t):
        st = getattr(t, "_storage", None)
        if st is not None and self.unwritten.get(id(st)) is st:
            self.abandoned = True
            raise _NeedData()

    def check_written(self, op, args):
        """Before ``op`` runs for real: a view only re-indexes (its data is not read); any
        other op reading an unwritten tensor abandons the meta trace."""
        if not self.unwritten:
            return
        rets = op.schema.returns
        if (rets and all(r.alias is not None and not r.alias.is_write for r in rets)
                and not any(a.is_write for a in op.schema.arguments)):
            return
        for x in args:
            if isinstance(x, Tensor):
                self.check_tensor_written(x)
            elif isinstance(x, (list, tuple)):
                for t in x:
                    if isinstance(t, Tensor):
                        self.check_tensor_written(t)

    def is_traced(self, t) -> bool:
        e = self.values.get(id(t))
        return e is not None and e[0] is t

    def bind(self, t, v):
        self.values[id(t)] = (t, v)
        self.storages[id(t._storage)] = t._storage

    def tensor_value(self, t, where):
        e = self.values.get(id(t))
        if e is not None and e[0] is t:
            return e[1]
        if self.storages.get(id(t._storage)) is t._storage:
            raise RuntimeError(
                f"trace({self.fn_name}): {where} is a tensor that shares memory with traced "
                f"data but was not made by a traced op (code that builds tensors without the "
                f"dispatcher has no trace support); use tensorlib ops (view, select, ...) "
                f"instead")
        v = self.graph.constant(t)
        self.bind(t, v)
        return v

    def arg_value(self, x, arg, op):
        where = f"{op.name}(): argument '{arg.name}'"
        if isinstance(x, Tensor):
            return self.tensor_value(x, where)
        if arg.type.base == "Tensor" and arg.type.is_list and x is not None:
            items = [self.tensor_value(t, where) if isinstance(t, Tensor)
                     else self.graph.constant(t) for t in x]
            n = self.graph.create("prim::ListConstruct", items, (ScalarKind("Tensor[]"),))
            self.graph.append(n)
            return n.outputs[0]
        return self.graph.constant(x)

    def record(self, op, args, out):
        g = self.graph
        node = g.create("tl::" + op.name)
        for arg, x in zip(op.schema.arguments, args):
            node.add_input(self.arg_value(x, arg, op))
        g.append(node)
        rets = op.schema.returns
        outs = out if len(rets) > 1 else (out,)
        for ret, o in zip(rets, outs):
            if isinstance(o, Tensor):
                self.bind(o, node.add_output(TensorType.of(o)))
            elif ret.type.is_list and isinstance(o, (list, tuple)) and all(
                    isinstance(t, Tensor) for t in o):
                lst = node.add_output(ScalarKind("Tensor[]"))
                un = g.create("prim::ListUnpack", [lst], [TensorType.of(t) for t in o])
                g.append(un)
                for t, v in zip(o, un.outputs):
                    self.bind(t, v)
            else:
                node.add_output(type_of_constant(o))


def param_names(fn, n) -> list:
    """Names for the graph inputs: the function's positional parameter names when they fit."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:n]]
    if len(names) < n or len(set(names)) < n:
        return [f"x{i}" for i in range(n)]
    return names


def trace_graph(fn, inputs, fn_name, meta=False):
    """Runs ``fn(*inputs)`` with the Tracer key on; returns (graph, outputs, output_kind).
    ``meta``: pointwise ops are not computed (see the module docstring; the outputs' data is
    then undefined), unless something reads their data: then ``fn`` is traced again, running
    every op."""
    ensure_registered()
    if _tls.state is not None:
        raise RuntimeError(f"trace({fn_name}): already tracing on this thread (nested "
                           f"tl.jit.trace calls are not supported)")
    st = _State(fn_name, meta)
    try:
        result = _run(st, fn, inputs)
    except _NeedData:
        st = None
    if st is None or st.abandoned:  # (abandoned: an except clause in fn swallowed _NeedData)
        st = _State(fn_name, False)
        result = _run(st, fn, inputs)
    g = st.graph
    if isinstance(result, Tensor):
        kind, outs = "tensor", [result]
    elif isinstance(result, (tuple, list)) and result and all(
            isinstance(r, Tensor) for r in result):
        kind, outs = type(result).__name__, list(result)
    else:
        what = "nothing (None)" if result is None else f"a {type(result).__name__}"
        raise TypeError(f"trace({fn_name}): the function returned {what}; a traced function "
                        f"must return a Tensor or a non-empty tuple/list of Tensors")
    for t in outs:
        g.add_output(st.tensor_value(t, "an output"))
    return g, outs, kind


def meta_profile(graph, run, inputs):
    """``run(*inputs)`` (an Interpreter's ``profile`` over ``graph``, for its observed types)
    with pointwise ops not computed, as in a meta trace; None when it read an unwritten
    tensor's data, or when ``graph`` has an op with effects (writes, random numbers: the
    graph runs again for its results)."""
    if _tls.state is not None:
        return None
    for n in graph.nodes:
        if n.kind.startswith("tl::"):
            schema = dispatcher.get_op(n.op_name).schema
            if any(a.is_write or a.type.base == "Generator" for a in schema.arguments):
                return None
    ensure_registered()
    st = _State("meta profile", True)
    try:
        res = _run(st, run, inputs)
    except _NeedData:
        return None
    return None if st.abandoned else res


def _run(st, fn, inputs):
    for name, t in zip(param_names(fn, len(inputs)), inputs):
        st.bind(t, st.graph.add_input(TensorType.of(t), name))
    _patch()
    _tls.state = st
    try:
        with include_keys(DispatchKey.Tracer):
            return fn(*inputs)
    finally:
        _tls.state = None
        _unpatch()

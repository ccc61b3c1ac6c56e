"""The Autograd dispatch key's kernel: run the op below autograd, then record its backward node.

One boxed kernel serves every op (registered as the Autograd fallback). It runs only when an
argument requires grad (the Autograd bit is in such tensors' key set) and grad mode is on (no_grad
excludes the key). It redispatches with Autograd excluded, so the kernels of composite ops call
other ops without recording them, then builds a FormulaNode from the op's derivatives.yaml entry:
the edges of its differentiable inputs, the tensors its formulas read (with their versions), and
the outputs' grad_fn.
"""
from __future__ import annotations

import threading

from ..dispatch import dispatcher
from ..dispatch.registration import POINTWISE
from ..dispatch.keys import AUTOGRAD_BIT, TOP_KEY, DispatchKey, set_tls_keys, tls
from ..tensor import AutogradMeta, Tensor
from .derivatives import DerivativesError, compile_spec, load_derivatives
from ..dispatch.namespace import ops as _NS
from ..runtime.compile_lock import COMPILE_LOCK
from ..runtime.import_cache import compile_source
from .formulas import sum_to
from .grad_mode import no_grad
from .graph import (Node, SavedTensor, accumulator_edge_of, accumulator_of, attach_output,
                    edge_of, inference_error as _inference_error,
                    modified_error as _modified_error, requires_grad)
from .views import after_inplace, mark_view

__all__ = ["install", "FormulaNode", "SPECS"]

SPECS: dict = {}       # op name -> OpGrad (derivatives.yaml)
_NO_EDGE = (None, 0)
_BY_OP: dict = {}      # OperatorHandle -> _OpInfo


class _TensorMeta:
    """What a formula may read of an argument saved as metadata only (derivatives.py
    META_ATTRS): its shape, dtype, rank, device, and its place in its storage."""
    __slots__ = ("shape", "dtype", "ndim", "device", "strides", "offset", "storage_size")

    def __init__(self, t):
        self.shape = t._shape
        self.dtype = t._dtype
        self.ndim = len(t._shape)
        self.device = t.device
        self.strides = t._strides
        self.offset = t._offset
        self.storage_size = t._storage.nbytes // t._dtype.itemsize


class _OpInfo:
    __slots__ = ("op", "spec", "kind", "diff_args", "saved", "versioned", "is_view", "out_diff",
                 "node_name", "leaf_kernel", "no_lists", "node_cls")

    def __init__(self, op, spec):
        self.op = op
        self.spec = spec
        schema = op.schema
        if schema.is_out:
            self.kind = "out"
        elif schema.arguments and schema.arguments[0].is_write:
            self.kind = "inplace"
        else:
            self.kind = "functional"
        names = [a.name for a in schema.arguments]
        # (position, name, is_list) of each argument with a formula, in formula order
        self.diff_args = tuple((names.index(a), a, schema.arguments[names.index(a)].type.is_list)
                               for a in spec.formulas)
        self.no_lists = not any(is_list for _, _, is_list in self.diff_args)
        self.node_cls = None  # _prepare sets the op's FormulaNode subclass
        # (position, name, how, indices of the formulas reading it), in spec.fn's saved order
        self.saved = tuple((names.index(n), n, how, spec.saved_for.get(n, ()))
                           for n, how in spec.saved_args.items())
        # indices of the entries saved as tensors (their versions are checked in backward)
        self.versioned = tuple(i for i, s in enumerate(self.saved) if s[2] == "tensor")
        ret = schema.returns
        self.is_view = (self.kind == "functional" and len(ret) >= 1
                        and ret[0].alias is not None and not ret[0].alias.is_write)
        self.out_diff = spec.output_differentiability
        self.node_name = spec.node_name
        # Pointwise kernels call no other op on their inputs, so they run without excluding
        # Autograd (saves two thread-local key-set updates per recorded call).
        self.leaf_kernel = schema.name.rstrip("_") in POINTWISE


class FormulaNode(Node):
    """The backward of one recorded op: evaluates its derivatives.yaml formulas.

    Each op has its own subclass (``info`` is a class attribute), so a node is filled with few
    writes and no per-node containers beyond two tuples: ``saved``, the values of the op's
    saved entries (info.saved order; None where not kept) followed by the storage versions of
    the ones saved as tensors (None elsewhere), and ``input_meta``, the differentiable inputs'
    shape and dtype (flat: (shape0, dtype0, shape1, dtype1, ...) for ops without list
    arguments; else one (shape, dtype), list of them or None per argument). Whether input i
    needs a gradient is whether edge i leads anywhere (``needs`` is kept only for list ops).
    ``results``: SavedTensors of the outputs, for ops whose formulas read them."""

    __slots__ = ("saved", "input_meta", "needs", "out_meta", "results")
    info = None

    def name(self) -> str:
        return self.info.node_name

    def release(self) -> None:
        self.saved = None
        self.results = None

    def saved_names(self) -> list:
        """The names of the arguments whose tensors this node keeps alive."""
        saved = self.saved or ()
        return [s[1] for i, s in enumerate(self.info.saved)
                if s[2] == "tensor" and saved[len(self.info.saved) + i] is not None]

    def apply(self, grads):
        info = self.info
        saved = self.saved
        if saved is None:
            raise _freed_error(info)
        _check_versions(saved, info)
        results = None
        if info.spec.saves_result:
            # the saved outputs re-attach to this node when the backward itself is recorded
            record = not tls.excluded & AUTOGRAD_BIT
            results = [s.unpack(info.spec.name, record) for s in self.results]
        if self.num_outputs > 1:
            grads = [g if g is not None else _zeros(m) for g, m in zip(grads, self.out_meta)]
        if info.no_lists:
            raw = info.spec.fn(grads, saved, [e[0] is not None for e in self.next_functions],
                               results)
            out = list(raw)
            meta = self.input_meta
            for i, g in enumerate(out):
                if g is not None:
                    m = meta[2 * i:2 * i + 2]
                    if g.__class__ is not Tensor or g._shape != m[0] or g._dtype is not m[1]:
                        out[i] = _fit(g, m, info.spec.name, info.diff_args[i][1])
            return out
        raw = info.spec.fn(grads, saved, self.needs, results)
        op = info.spec.name
        out = []
        for (pos, name, is_list), g, need, meta in zip(info.diff_args, raw, self.needs,
                                                       self.input_meta):
            if not need:
                out.extend([None] * len(meta)) if is_list else out.append(None)
            elif not is_list:
                if g is not None and (g._shape != meta[0] or g._dtype is not meta[1]):
                    g = _fit(g, meta, op, name)
                out.append(g)
            else:
                n = len(meta)
                if g is None or len(g) != n:
                    raise RuntimeError(f"{info.node_name}: formula for '{name}' gave "
                                       f"{'no' if g is None else len(g)} gradients for {n} "
                                       f"tensors")
                out.extend(_fit(gi, m, op, name) for gi, m in zip(g, meta))
        return out


def _check_versions(saved, info):
    # a function of its own (and the tensors never in a local) so that nothing but the node's
    # tuple keeps a saved tensor referenced while the formula runs (formulas.unary_into_saved
    # counts the references)
    k = len(info.saved)
    for i in info.versioned:
        version = saved[k + i]
        if version is not None and saved[i]._storage.version != version:
            raise _modified_error(info.spec.name, info.saved[i][1], saved[i], version)


def _zeros(meta):
    shape, dtype, device = meta
    return _NS.zeros(shape, dtype=dtype, device=device)


def _fit(g, meta, op, name):
    """The gradient shaped and typed as the input it is for: broadcast dimensions summed away,
    the imaginary part dropped for a real input, cast back to the input's dtype."""
    if g is None or meta is None:
        return None
    if not isinstance(g, Tensor):
        raise RuntimeError(f"{op}: the formula for '{name}' returned {type(g).__name__}, "
                           f"not a Tensor")
    shape, dtype = meta
    if g._shape != shape:
        g = sum_to(g, shape)
    if g._dtype is not dtype:
        if g._dtype.kind == "c" and dtype.kind != "c":
            g = _NS.real(g)
        if g._dtype is not dtype:
            g = g.astype(dtype)
    return g




def _run_below(op, ks, args):
    """The op's kernel below Autograd, with Autograd excluded for everything it calls."""
    inc, exc = tls.included, tls.excluded
    set_tls_keys(inc, exc | AUTOGRAD_BIT)
    try:
        return op.redispatch(ks, args)
    finally:
        set_tls_keys(inc, exc)


def autograd_kernel(op, ks, args):
    info = _BY_OP.get(op)
    if info is None:
        if op not in _SPEC_OF:  # not differentiable
            return _run_below(op, ks, args)
        info = _prepare(op)
        own = op.kernels.get(DispatchKey.Autograd)
        if own is not None:
            return own(op, ks, args)
    schema_args = op.schema.arguments
    kind = info.kind
    if kind == "out":
        for i in op.tensor_arg_positions:
            a = args[i]
            if (any(requires_grad(t) for t in a) if isinstance(a, (list, tuple))
                    else requires_grad(a)):
                raise RuntimeError(
                    f"{op.schema.name}(): functions with out=... arguments don't support "
                    f"automatic differentiation, but argument '{schema_args[i].name}' requires "
                    f"grad; call it without out= (or inside tl.no_grad())")
        return _run_below(op, ks, args)
    # edges and metadata of the differentiable inputs
    edges, metas, needs = [], [], []
    any_need = False
    for pos, name, is_list in info.diff_args:
        a = args[pos]
        if is_list:
            group = []
            need = False
            for t in a:
                e = edge_of(t) if isinstance(t, Tensor) else _NO_EDGE
                edges.append(e)
                group.append((t._shape, t._dtype) if isinstance(t, Tensor) else None)
                need = need or e[0] is not None
            metas.append(group)
            needs.append(need)
            any_need = any_need or need
            continue
        if not isinstance(a, Tensor):
            edges.append(_NO_EDGE)
            metas += (None, None) if info.no_lists else (None,)
            needs.append(False)
            continue
        e = edge_of(a)
        edges.append(e)
        metas += (a._shape, a._dtype) if info.no_lists else ((a._shape, a._dtype),)
        need = e[0] is not None
        needs.append(need)
        any_need = any_need or need
    if not any_need:
        return _run_below(op, ks, args)
    if kind == "inplace":
        self_t = args[0]
        m = self_t._autograd
        if m is not None and m.grad_fn is None and m.requires_grad:
            raise RuntimeError(
                f"{op.schema.name}(): a leaf tensor that requires grad is being used in an "
                f"in-place operation; use an out-of-place op, or wrap the update in "
                f"tl.no_grad() (as optimizers do)")
        base = m.view_base if m is not None else None
        if base is not None and base._autograd.grad_fn is None and base._autograd.requires_grad:
            raise RuntimeError(
                f"{op.schema.name}(): a view of a leaf tensor that requires grad is being used "
                f"in an in-place operation; write into a copy, or wrap the update in "
                f"tl.no_grad()")
    values, versions = [], []  # FormulaNode.saved's two halves
    for pos, name, how, readers in info.saved:
        a = args[pos]
        version = None
        if how == "tensor" and a.__class__ is Tensor:
            if not any(needs[i] for i in readers):
                a = None  # only formulas that won't run read it: keep no memory alive
            else:
                if kind == "inplace" and pos == 0:
                    a = _clone_below(a)  # the op overwrites it; the formula needs the old value
                st = a._storage
                if st.inference:
                    raise _inference_error(op.schema.name, name)
                version = st.version
        elif how == "meta" and a.__class__ is Tensor:
            a = _TensorMeta(a)
        values.append(a)
        versions.append(version)
    out = op.redispatch(ks, args) if info.leaf_kernel else _run_below(op, ks, args)
    if kind == "inplace":
        # The dispatcher counted the write before the op ran; count it again after, so a tensor
        # saved above that shares the written storage (y.mul_(y)) is seen as modified.
        args[0]._storage.version += 1
    node = info.node_cls.__new__(info.node_cls)
    node.next_functions = tuple(edges)
    node.tensor_pre_hooks = None
    node.num_outputs = 1
    node.stream = None
    node.needs = needs
    node.saved = tuple(values + versions)
    node.input_meta = tuple(metas) if info.no_lists else metas
    if out.__class__ is Tensor:
        if out._storage.device.type == "cuda":
            node.stream = _current_stream(out)
        if kind == "inplace":
            after_inplace(out, node)
        elif out._autograd is None:
            out._autograd = AutogradMeta(node, 0)
            out._ks |= AUTOGRAD_BIT
            if info.is_view:
                mark_view(out, args[0])
        else:
            attach_output(out, node, 0)
            if info.is_view:
                mark_view(out, args[0])
        if info.spec.saves_result:
            node.results = [SavedTensor(out, "result", op.schema.name, node, 0)]
    else:
        outs = list(out)
        node.num_outputs = len(outs)
        node.out_meta = [(t._shape, t._dtype, t.device) for t in outs]
        od = info.out_diff
        src = args[0]
        for i, t in enumerate(outs):
            if od is None or (i < len(od) and od[i]):
                attach_output(t, node, i)
                if info.is_view:
                    # broadcast_arrays / meshgrid: output i views input i
                    mark_view(t, src[i] if isinstance(src, (list, tuple)) else src)
        if info.spec.saves_result:
            node.results = [SavedTensor(t, "result", op.schema.name, node, i)
                            for i, t in enumerate(outs)]
    return out


def _clone_below(t):
    with no_grad():  # the copy is the formula's saved input, not a recorded op
        return t.clone()


def _current_stream(t):
    from ..streams import current_stream
    return current_stream(t.device)


def _edge_lines(i, var):
    """Source computing edge e{i} of argument ``var`` and n{i}, whether it needs a gradient
    (inlined edge_of: no call for the usual leaf / non-view cases). grad_fn is read first: a
    view always has one, and a leaf (grad_fn None) then needs only its own two attributes
    (AutogradMeta's defaults are class attributes, slower to read than the instance's)."""
    return [
        f"    m{i} = {var}._autograd if {var}.__class__ is Tensor else "
        f"getattr({var}, '_autograd', None)",
        f"    if m{i} is None:",
        f"        e{i} = NO_EDGE",
        f"        n{i} = False",
        f"    elif m{i}.grad_fn is None:",
        f"        n{i} = m{i}.requires_grad",
        f"        e{i} = (m{i}.accumulator_edge or accumulator_edge_of({var})) if n{i} "
        "else NO_EDGE",
        f"    elif m{i}.view_base is None:",
        f"        e{i} = (m{i}.grad_fn, m{i}.output_nr)",
        f"        n{i} = True",
        "    else:",
        f"        e{i} = edge_of({var})  # a view: refreshed first when stale",
        f"        n{i} = e{i}[0] is not None",
    ]


def _generate_recorder(info):
    """A kernel specialized to one functional op with a single Tensor output and no list
    arguments: the generic kernel's loops unrolled into straight-line code (this runs on every
    recorded call, so its cost is most of autograd's per-op overhead). None when the op is not
    of that shape."""
    schema = info.op.schema
    if (info.kind != "functional" or any(lst for _, _, lst in info.diff_args)
            or len(schema.returns) != 1 or schema.returns[0].type.is_list
            or schema.returns[0].type.base != "Tensor"):
        return None
    n_args = len(schema.arguments)
    params = "".join(f"x{i}, " for i in range(n_args))
    lines = ["def record(op, ks, args):", f"    {params}= args"]
    n = len(info.diff_args)
    for i, (pos, name, _) in enumerate(info.diff_args):
        lines.append(f"    a{i} = x{pos}")
        lines += _edge_lines(i, f"a{i}")
    lines.append(f"    if not ({' or '.join(f'n{i}' for i in range(n))}):")
    lines.append("        return run_below(op, ks, args)")
    values, versions = [], []
    for i, (pos, name, how, readers) in enumerate(info.saved):
        values.append(f"s{i}")
        versions.append(f"v{i}" if how == "tensor" else "None")
        if how == "tensor":
            wanted = " or ".join(f"n{j}" for j in readers) or "False"
            lines += [
                f"    s{i} = x{pos}",
                f"    if s{i}.__class__ is not Tensor:",
                f"        v{i} = None",
                f"    elif {wanted}:  # saved only when a formula reading it will run",
                f"        st = s{i}._storage",
                "        if st.inference:",
                f"            raise inference_error({schema.name!r}, {name!r})",
                f"        v{i} = st.version",
                "    else:",
                f"        s{i} = v{i} = None",
            ]
        elif how == "meta":
            lines += [
                f"    s{i} = x{pos}",
                f"    if s{i}.__class__ is Tensor:",
                f"        s{i} = TensorMeta(s{i})",
            ]
        else:
            lines.append(f"    s{i} = x{pos}")
    # Below Autograd only backend keys remain: a pointwise kernel is called straight from the
    # op's table (op.redispatch's work, inlined)
    run = (f"table[top[ks & below]]({params})" if info.leaf_kernel
           else "run_below(op, ks, args)")
    lines.append(f"    out = {run}")
    metas = "".join(f"a{i}._shape if n{i} else None, a{i}._dtype if n{i} else None, "
                    for i in range(n))
    lines += [
        "    node = new(node_cls)",
        f"    node.next_functions = ({''.join(f'e{i}, ' for i in range(n))})",
        "    node.tensor_pre_hooks = None",
        "    node.num_outputs = 1",
        f"    node.saved = ({''.join(v + ', ' for v in values + versions)})",
        f"    node.input_meta = ({metas})",
        "    node.stream = current_stream(out) if out._ks & CUDA_BIT else None",
        "    if out._autograd is None:",
        "        m = new_meta(AutogradMeta)",
        "        m.grad_fn = node",
        "        out._autograd = m",
        "        out._ks |= AUTOGRAD_BIT",
        "    else:",
        "        attach_output(out, node, 0)",
    ]
    if info.is_view:
        lines.append("    mark_view(out, args[0])")
    if info.spec.saves_result:
        lines.append(f"    node.results = [SavedTensor(out, 'result', {schema.name!r}, node, 0)]")
    lines.append("    return out")
    scope = {"NO_EDGE": _NO_EDGE, "edge_of": edge_of, "accumulator_of": accumulator_of,
             "run_below": _run_below, "Tensor": Tensor, "inference_error": _inference_error,
             "TensorMeta": _TensorMeta, "new": FormulaNode.__new__, "node_cls": info.node_cls,
             "current_stream": _current_stream, "AutogradMeta": AutogradMeta,
             "AUTOGRAD_BIT": AUTOGRAD_BIT, "attach_output": attach_output,
             "mark_view": mark_view, "SavedTensor": SavedTensor, "table": info.op._table,
             "top": TOP_KEY, "below": AUTOGRAD_BIT - 1, "new_meta": object.__new__,
             "accumulator_edge_of": accumulator_edge_of, "CUDA_BIT": 1 << DispatchKey.CUDA}
    exec(compile_source("\n".join(lines) + "\n", f"<autograd {schema.full_name}>"), scope)
    record = scope["record"]
    record.__qualname__ = record.__name__ = f"autograd_kernel[{schema.full_name}]"
    record.__module__ = __name__
    return record


def _generate_node_class(info):
    """The op's FormulaNode subclass. For ops without list arguments and with one output its
    apply is the op's formulas in straight-line code (no formula call, no loops over
    arguments: this runs once per node of every backward; the node is ``_node``, as ``self``
    is usually an argument's name); the others use FormulaNode.apply."""
    spec = info.spec
    schema = info.op.schema
    attrs = {"__slots__": (), "info": info, "__module__": __name__}
    if (not info.no_lists or len(schema.returns) != 1
            or schema.returns[0].type.is_list or schema.returns[0].type.base != "Tensor"):
        return type(info.node_name, (FormulaNode,), attrs)
    op = spec.name
    lines = ["def apply(_node, grads):",
             "    _saved = _node.saved",
             "    if _saved is None:",
             "        raise freed()"]
    if info.versioned:
        lines.append("    check_versions(_saved, info)")
    lines += ["    _nf = _node.next_functions", "    grad = grads[0]"]
    for i, n in enumerate(spec.saved_args):
        lines.append(f"    {n} = _saved[{i}]")
    if spec.saves_result:
        # the saved output re-attaches to this node when the backward itself is recorded
        lines += [f"    results = [s.unpack({op!r}, not tls.excluded & AUTOGRAD_BIT) "
                  "for s in _node.results]",
                  "    result = results[0]"]
    outs = []
    for i, expr in enumerate(spec.exprs):
        lines.append(f"    g{i} = ({expr}) if _nf[{i}][0] is not None else None")
        outs.append(f"g{i}")
    lines.append("    _meta = _node.input_meta")
    for i, (_, name, _) in enumerate(info.diff_args):
        lines += [f"    if g{i} is not None and (g{i}.__class__ is not Tensor "
                  f"or g{i}._shape != _meta[{2 * i}] or g{i}._dtype is not _meta[{2 * i + 1}]):",
                  f"        g{i} = fit(g{i}, _meta[{2 * i}:{2 * i + 2}], {op!r}, {name!r})"]
    lines.append(f"    return [{', '.join(outs)}]")
    scope = dict(_NAMESPACE)
    scope.update(Tensor=Tensor, fit=_fit, check_versions=_check_versions, info=info, tls=tls,
                 AUTOGRAD_BIT=AUTOGRAD_BIT, freed=lambda: _freed_error(info))
    with COMPILE_LOCK:
        exec(compile_source("\n".join(lines) + "\n", f"<autograd backward {op}>"), scope)
    attrs["apply"] = scope["apply"]
    return type(info.node_name, (FormulaNode,), attrs)


def _freed_error(info):
    return RuntimeError(
        f"{info.node_name}: trying to backward through the graph a second time (or to read "
        f"its saved tensors after they were freed); pass retain_graph=True to the first "
        f"backward() or autograd.grad() call if you need to")


_SPEC_OF: dict = {}    # OperatorHandle -> OpGrad, for ops not prepared yet
# pointwise ops whose result has their input's dtype (a float input's memory can take it)
_SAME_DTYPE_POINTWISE = frozenset(n for n, i in POINTWISE.items()
                                  if i.output == "same" and len(i.tensor_args) == 1)
_NAMESPACE: dict = {}
_prepare_lock = threading.Lock()


def _prepare(op):
    """The op's _OpInfo, made on its first recorded call: compiles its formulas and registers a
    generated recording kernel at its Autograd key (done lazily: compiling ~200 formula sets and
    kernels at import would cost every `import tensorlib` about 0.1 s)."""
    with _prepare_lock, COMPILE_LOCK:
        info = _BY_OP.get(op)
        if info is not None:
            return info
        spec = _SPEC_OF[op]
        if spec.fn is None:
            args = op.schema.arguments
            compile_spec(spec, [a.name for a in args],
                         {a.name for a in args if a.type.base == "Tensor"}, _NAMESPACE,
                         POINTWISE, _SAME_DTYPE_POINTWISE)
        info = _OpInfo(op, spec)
        info.node_cls = _generate_node_class(info)
        record = _generate_recorder(info)
        if record is not None:
            dispatcher.impl(op.name, DispatchKey.Autograd, record)
        _BY_OP[op] = info
        return info


def prepare_all() -> None:
    """Compiles every op's formulas and recording kernel now (tests check them all)."""
    for op in list(_SPEC_OF):
        _prepare(op)


def install(functions: dict, helpers: dict) -> None:
    """Reads derivatives.yaml, checks that every defined op has an entry, and registers the
    Autograd kernel. ``functions``: the public op functions (what formulas call); ``helpers``:
    formulas/. Formulas compile on an op's first recorded call (_prepare)."""
    specs = load_derivatives()
    _NAMESPACE.update(functions)
    _NAMESPACE.update(helpers)
    SPECS.update(specs)
    missing = []
    for op in dispatcher.all_ops():
        base = op.schema.name
        spec = specs.get(base)
        if spec is None and base.endswith("_"):
            spec = specs.get(base[:-1])
        if spec is None:
            missing.append(op.name)
            continue
        if not spec.not_differentiable:
            _SPEC_OF[op] = spec
    if missing:
        raise DerivativesError(
            "derivatives.yaml: no entry (formulas or not_differentiable: true) for ops "
            + ", ".join(sorted(missing)))
    dispatcher.fallback(DispatchKey.Autograd, autograd_kernel)

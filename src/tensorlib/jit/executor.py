"""TracedFunction and the profiling executor.

A call computes a guard key from its tensor arguments (dtype, shape, contiguity, device,
requires_grad). A key seen for the first time runs the traced graph in the interpreter while
recording every value's observed type (the trace itself counts as that profiling run for the
example inputs' key); with ``config.meta_trace`` that run computes no pointwise op (see
jit/tracer.py) and the call specializes at once, unless the run had to read such an op's
result or the graph has ops with effects. The next call with a profiled key *specializes*: a
copy of the graph gets the observed types, the standard passes and the fuser run, fusion
groups compile, and the result is cached behind the key. At most
``config.max_specializations`` keys specialize per function; later new keys run the
unoptimized graph (the fallback). ``TENSORLIB_JIT_LOG=1`` logs each
decision with its reason to stderr.
"""
from __future__ import annotations

import os
import sys
import threading

from ..tensor import Tensor
from .interpreter import Interpreter, value_order

__all__ = ["TracedFunction", "config", "last_executed_optimized_graph"]


class _Config:
    """JIT settings: ``max_specializations`` (per traced function), ``profiling_runs`` (calls
    with a new key that run unoptimized before it specializes), ``fusion`` (on/off),
    ``meta_trace`` (trace without computing pointwise ops: see jit/tracer.py)."""

    def __init__(self):
        self.max_specializations = 8
        self.profiling_runs = 1
        self.fusion = True
        self.meta_trace = True


config = _Config()
_last = threading.local()


def last_executed_optimized_graph():
    """The graph the last traced call on this thread ran (optimized, or the fallback)."""
    return getattr(_last, "graph", None)


def log(msg: str) -> None:
    if os.environ.get("TENSORLIB_JIT_LOG", "") not in ("", "0"):
        print(f"[tensorlib.jit] {msg}", file=sys.stderr, flush=True)


def _guard_key(args):
    """The guard's key of a call's tensor arguments (AttributeError for a non-tensor)."""
    return tuple([(t._dtype, t._shape, t._contiguous or t.is_contiguous(),
                   t._storage.device.type, t._storage.device.index, t.requires_grad)
                  for t in args])


def _describe_key(key) -> str:
    parts = []
    for dtype, shape, contig, dtype_dev, index, rg in key:
        dev = dtype_dev if index is None else f"{dtype_dev}:{index}"
        parts.append(f"{dtype.name}{list(shape)} {dev}{'' if contig else ' non-contiguous'}"
                     f"{' requires_grad' if rg else ''}")
    return "(" + ", ".join(parts) + ")"


def _key_change(old, new) -> str:
    """Why ``new`` fails the guard of ``old``: every differing field."""
    names = ("dtype", "shape", "contiguity", "device type", "device index", "requires_grad")
    for i, (a, b) in enumerate(zip(old, new)):
        diffs = [f"new {name} {y} (was {x})" for name, x, y in zip(names, a, b) if x != y]
        if diffs:
            return f"argument {i}: " + ", ".join(diffs)
    return "new argument types"


class _Plan:
    __slots__ = ("graph", "run", "groups")

    def __init__(self, graph, run, groups=0):
        self.graph = graph
        self.run = run
        self.groups = groups


def _direct_runner(graph, runners):
    """The runner of a graph that is one fusion group reading the graph's inputs in order and
    returning its outputs: called directly, without the interpreter's register file."""
    nodes = [n for n in graph.nodes if n.kind != "prim::Constant"]
    if len(nodes) != 1 or nodes[0] not in runners:
        return None
    n = nodes[0]
    if list(n.inputs) != list(graph.inputs) or list(n.outputs) != list(graph.outputs):
        return None
    return runners[n]


class TracedFunction:
    """A traced function: ``.graph`` (as traced), ``.code`` (readable Python-like text),
    callable with tensors of any shape/dtype/device the recorded ops accept."""

    def __init__(self, graph, name, out_kind, arg_names, example_key=None, example_types=None):
        self.graph = graph
        self.__name__ = self.name = name
        self._out_kind = out_kind
        self._arg_names = tuple(arg_names)
        self._base = Interpreter(graph)
        self._plans = {}
        self._profiles = {}
        self._seen = {}
        self._lock = threading.Lock()
        self._last_key = None
        if example_key is not None:
            self._seen[example_key] = config.profiling_runs
            self._profiles[example_key] = example_types

    # ---- properties ----------------------------------------------------------------------
    @property
    def code(self) -> str:
        return graph_code(self.graph, self.name)

    def graph_for(self, *args):
        """The optimized graph that runs for these arguments (specializing if needed)."""
        self._check_args(args)
        key = _guard_key(args)
        plan = self._plans.get(key) or self._specialize(key, args)
        return plan.graph

    @property
    def specializations(self) -> int:
        return len(self._plans)

    # ---- calling -------------------------------------------------------------------------
    def _check_args(self, args):
        n = len(self._arg_names)
        if len(args) != n:
            raise TypeError(f"{self.name}() (traced) takes {n} tensor argument"
                            f"{'s' if n != 1 else ''} ({', '.join(self._arg_names)}), got "
                            f"{len(args)}")
        for name, a in zip(self._arg_names, args):
            if type(a) is not Tensor and not isinstance(a, Tensor):
                raise TypeError(f"{self.name}() (traced): argument '{name}' must be a Tensor, "
                                f"got {type(a).__name__}")

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{self.name}() (traced) takes positional tensor arguments only, "
                            f"got keyword(s) {sorted(kwargs)}")
        if len(args) != len(self._arg_names):
            self._check_args(args)  # raises
        try:
            key = _guard_key(args)
        except AttributeError:
            self._check_args(args)  # a non-tensor argument: the TypeError naming it
            raise
        plan = self._plans.get(key)
        if plan is None:
            plan = self._miss(key, args)
            if plan is None:
                return self._profile_run(key, args)
        _last.graph = plan.graph
        outs = plan.run(*args)
        return outs[0] if self._out_kind == "tensor" else self._wrap(outs)

    def _wrap(self, outs):
        if self._out_kind == "tensor":
            return outs[0]
        return tuple(outs) if self._out_kind == "tuple" else list(outs)

    def _miss(self, key, args):
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                return plan
            seen = self._seen.get(key, 0)
            if seen < config.profiling_runs:
                why = (_key_change(self._last_key, key) if self._last_key is not None
                       else "first call")
                if config.meta_trace and len(self._plans) < config.max_specializations:
                    # the types from a run that computes no pointwise op (jit/tracer.py):
                    # no eager kernel compiles for a profile the fused kernel replaces
                    from .tracer import meta_profile
                    res = meta_profile(self.graph, self._base.profile, args)
                    if res is not None:
                        log(f"{self.name}: guard miss ({why}); types from a meta run for "
                            f"{_describe_key(key)}")
                        self._profiles[key] = res[1]
                        self._seen[key] = config.profiling_runs
                        return self._specialize(key, args)
                log(f"{self.name}: guard miss ({why}); profiling run {seen + 1} for "
                    f"{_describe_key(key)}")
                return None
            if len(self._plans) >= config.max_specializations:
                log(f"{self.name}: {len(self._plans)} specializations reached "
                    f"(max_specializations); running the unoptimized graph for "
                    f"{_describe_key(key)}")
                return _Plan(self.graph, self._base)
            return self._specialize(key, args)

    def _profile_run(self, key, args):
        outs, types = self._base.profile(*args)
        self._profiles[key] = types
        self._seen[key] = self._seen.get(key, 0) + 1
        self._last_key = key
        _last.graph = self.graph
        return self._wrap(outs)

    def _specialize(self, key, args):
        from .fuser import fuse_and_compile
        from .passes import run_standard_passes
        g = self.graph.copy()
        types = self._profiles.get(key)
        if types is None:
            _, types = self._base.profile(*args)
        for v, t in zip(value_order(g), types):
            v.type = t
        run_standard_passes(g)
        runners = {}
        if config.fusion:
            runners = fuse_and_compile(g)
        g.lint()
        plan = _Plan(g, _direct_runner(g, runners) or Interpreter(g, runners), len(runners))
        self._plans[key] = plan
        self._last_key = key
        log(f"{self.name}: specialized #{len(self._plans)} for {_describe_key(key)}: "
            f"{len(g.nodes)} nodes, {len(runners)} fusion group(s)")
        return plan

    def __repr__(self):
        return f"<TracedFunction {self.name}({', '.join(self._arg_names)})>"


def graph_code(graph, name) -> str:
    """Python-like text of a graph: one line per node (constants inlined)."""
    def ref(v):
        n = v.node
        if n is not None and n.kind == "prim::Constant":
            c = n.attrs["value"]
            return "<tensor constant>" if isinstance(c, Tensor) else repr(c)
        return v.name if v.name.isidentifier() else f"_{v.name}"

    lines = [f"def {name}({', '.join(ref(v) for v in graph.inputs)}):"]
    for n in graph.nodes:
        if n.kind == "prim::Constant":
            continue
        lhs = ", ".join(ref(o) for o in n.outputs)
        args = ", ".join(ref(i) for i in n.inputs)
        fn = f"tl.{n.op_name}" if n.op_name else n.kind
        lines.append(f"    {lhs} = {fn}({args})" if lhs else f"    {fn}({args})")
    outs = ", ".join(ref(o) for o in graph.outputs)
    lines.append(f"    return {outs}")
    return "\n".join(lines) + "\n"


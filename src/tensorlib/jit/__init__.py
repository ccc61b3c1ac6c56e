"""tensorlib's JIT: trace a function into a Graph IR, optimize it, fuse pointwise and reduction
chains into generated kernels, run it through a profiling executor, save and load it.

``tl.jit.trace(fn, example_inputs)`` -> TracedFunction (``.graph``, ``.code``, callable);
``tl.jit.save(traced, path)`` / ``tl.jit.load(path)``;
``tl.jit.last_executed_optimized_graph()``; settings in ``tl.jit.config``.
See docs/ARCHITECTURE.md, "The path of a traced call".
"""
from __future__ import annotations

import warnings

import numpy as np

from ..tensor import Tensor
from .executor import TracedFunction, config, last_executed_optimized_graph
from .interpreter import value_order
from .ir import Graph, LintError, Node, ScalarKind, TensorType, Value
from .tracer import TracerWarning, TracingCheckError, trace_graph
from . import passes
from .serialization import load, save

__all__ = ["trace", "TracedFunction", "TracerWarning", "TracingCheckError", "Graph", "Node",
           "Value", "TensorType", "ScalarKind", "LintError", "passes", "config",
           "last_executed_optimized_graph", "save", "load"]


def _fn_name(fn) -> str:
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return name if name.isidentifier() else "traced_fn"


def _as_inputs(example_inputs, name):
    if isinstance(example_inputs, Tensor):
        return (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)):
        raise TypeError(f"trace({name}): argument 'example_inputs' must be a Tensor or a "
                        f"tuple of Tensors, got {type(example_inputs).__name__}")
    for i, x in enumerate(example_inputs):
        if not isinstance(x, Tensor):
            raise TypeError(f"trace({name}): argument 'example_inputs'[{i}] must be a Tensor, "
                            f"got {type(x).__name__} (Python values are traced as constants "
                            f"when the function captures them)")
    return tuple(example_inputs)


def trace(fn, example_inputs, check_trace: bool = True, check_inputs=None) -> TracedFunction:
    """Runs ``fn(*example_inputs)`` recording every tensorlib op into a Graph and returns a
    TracedFunction. Python scalars and captured tensors become constants; converting a traced
    tensor to a Python value warns (TracerWarning). ``check_trace``: rerun the recorded graph
    and ``fn`` on copies of the example inputs (and on each tuple of ``check_inputs``) and
    raise TracingCheckError when their results differ."""
    if not callable(fn):
        raise TypeError(f"trace(): argument 'fn' must be callable, got {type(fn).__name__}")
    name = _fn_name(fn)
    inputs = _as_inputs(example_inputs, name)
    checks = []
    if check_trace:
        checks.append(tuple(x.clone() for x in inputs))
        for ci in check_inputs or ():
            checks.append(tuple(x.clone() for x in _as_inputs(ci, name)))
    graph, outs, kind = trace_graph(fn, inputs, name, meta=config.meta_trace)
    graph.lint()
    from .executor import _guard_key
    types = [v.type for v in value_order(graph)]
    traced = TracedFunction(graph, name, kind, [v.name for v in graph.inputs],
                            _guard_key(inputs), types)
    for ci in checks:
        _check(fn, traced, ci, name)
    return traced


def _same(a, b) -> bool:
    if a._dtype is not b._dtype or a.shape != b.shape:
        return False
    x, y = a._to_host_numpy(), b._to_host_numpy()
    if x.dtype.kind in "fc":
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def _check(fn, traced, inputs, name):
    eager_in = tuple(x.clone() for x in inputs)
    graph_in = tuple(x.clone() for x in inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)
        expected = fn(*eager_in)
    got = traced._base(*graph_in)
    expected = [expected] if isinstance(expected, Tensor) else list(expected)
    if len(expected) != len(got):
        raise TracingCheckError(f"trace({name}): check_trace: the function returned "
                                f"{len(expected)} tensors, the trace {len(got)}")
    for i, (e, g) in enumerate(zip(expected, got)):
        if not _same(e, g):
            raise TracingCheckError(
                f"trace({name}): check_trace: output {i} of the trace differs from the "
                f"function's ({e.dtype}{list(e.shape)} vs {g.dtype}{list(g.shape)}); the "
                f"function may depend on data (see TracerWarnings) or be nondeterministic")
    for i, (e, g) in enumerate(zip(eager_in, graph_in)):
        if not _same(e, g):
            raise TracingCheckError(f"trace({name}): check_trace: input {i} after the trace "
                                    f"ran differs from after the function ran (in-place ops)")


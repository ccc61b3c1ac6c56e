"""Runs a Graph from a flat instruction list: one (callable, input slots, output slot) per node,
registers in a Python list, constants loaded once. A ``tl::`` node calls its dispatcher op's
generated entry point with the recorded arguments (what the binding had produced when the op
was traced), so a node costs what an eager call costs minus the argument parsing."""
from __future__ import annotations

from ..dispatch import dispatcher
from .ir import TensorType

__all__ = ["Interpreter", "op_entry", "value_order"]


def op_entry(name: str):
    """The dispatcher's generated entry point of op ``name`` (made now if still pending, so the
    instruction does not hold the one-shot first-call trampoline)."""
    op = dispatcher.get_op(name)
    fn = op.call
    if getattr(fn, "__func__", None) is dispatcher.OperatorHandle._first_call:
        fn = op.call = dispatcher._make_caller(op)
    return fn


def _list(*xs):
    return list(xs)


def _unpack(xs):
    return tuple(xs)


def value_order(graph) -> list:
    """Every Value of ``graph`` in definition order (inputs, then node outputs)."""
    vals = list(graph.inputs)
    for n in graph.nodes:
        vals += n.outputs
    return vals


class Interpreter:
    """``Interpreter(graph, runners)(*inputs)``; ``runners``: node -> callable for nodes that are
    not dispatcher ops (fusion groups)."""

    def __init__(self, graph, runners=None):
        runners = runners or {}
        slot = {}
        regs = []
        for v in graph.inputs:
            slot[v] = len(regs)
            regs.append(None)
        code = []
        for n in graph.nodes:
            if n.kind == "prim::Constant":
                slot[n.outputs[0]] = len(regs)
                regs.append(n.attrs["value"])
                continue
            for o in n.outputs:
                slot[o] = len(regs)
                regs.append(None)
            if n in runners:
                fn = runners[n]
            elif n.kind == "prim::ListConstruct":
                fn = _list
            elif n.kind == "prim::ListUnpack":
                fn = _unpack
            elif n.kind.startswith("tl::"):
                fn = op_entry(n.op_name)
            else:
                raise RuntimeError(f"jit interpreter: no way to run node kind {n.kind}")
            ins = tuple(slot[i] for i in n.inputs)
            if len(n.outputs) == 1 and n.kind != "prim::ListUnpack" and not (
                    n.kind == "prim::FusionGroup"):
                code.append((fn, ins, slot[n.outputs[0]], None))
            else:
                code.append((fn, ins, -1, tuple(slot[o] for o in n.outputs)))
        self.graph = graph
        self.nin = len(graph.inputs)
        self.regs = regs
        self.code = code
        self.out_slots = tuple(slot[o] for o in graph.outputs)
        self.slots = slot

    def _execute(self, inputs):
        """Runs the instruction list; returns the register file (every value's slot)."""
        regs = self.regs.copy()
        regs[:self.nin] = inputs
        for fn, ins, out, outs in self.code:
            r = fn(*[regs[i] for i in ins])
            if out >= 0:
                regs[out] = r
            elif len(outs) == 1:
                regs[outs[0]] = r[0] if isinstance(r, (tuple, list)) else r
            else:
                for i, x in zip(outs, r):
                    regs[i] = x
        return regs

    def __call__(self, *inputs):
        regs = self._execute(inputs)
        return [regs[i] for i in self.out_slots]

    def profile(self, *inputs):
        """Runs like ``__call__`` and also returns the observed type of every value (in
        ``value_order``), for the profiling executor."""
        regs = self._execute(inputs)
        types = []
        for v in value_order(self.graph):
            x = regs[self.slots[v]]
            types.append(TensorType.of(x) if hasattr(x, "_storage") else v.type)
        return [regs[i] for i in self.out_slots], types

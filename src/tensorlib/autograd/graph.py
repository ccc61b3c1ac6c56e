"""The backward graph: nodes, saved tensors, the leaves' gradient accumulators, and edges.

A Node is one recorded op seen backwards: ``apply(grads)`` takes the gradients of the op's outputs
(None where an output got no gradient) and returns one gradient per entry of
``next_functions``, the (node, output number) pairs the op's differentiable inputs came from
((None, 0) for an input that needs no gradient). A leaf that requires grad is reached through its
AccumulateGrad node, which adds the incoming gradient to ``leaf.grad``.
"""
from __future__ import annotations

import sys
import threading
import weakref

from ..dispatch.keys import AUTOGRAD_BIT
from ..tensor import AutogradMeta, Tensor

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "edge_of", "requires_grad", "attach_output"]

_accumulate_lock = threading.Lock()

# Per thread: True while a backward runs that keeps nothing for later (no retain_graph, no
# create_graph). A node's formula may then reuse the memory of a saved tensor only it holds
# (formulas.unary_into_saved).
donating = threading.local()


class Node:
    """Base of every backward node. Subclasses set ``next_functions`` and implement ``apply``."""

    __slots__ = ("next_functions", "tensor_pre_hooks", "num_outputs", "stream", "__weakref__")
    _name = "Node"

    def __init__(self, next_functions=(), num_outputs=1):
        self.next_functions = tuple(next_functions)
        self.tensor_pre_hooks = None  # {output number: [hook, ...]}
        self.num_outputs = num_outputs
        self.stream = None

    def name(self) -> str:
        return self._name

    def apply(self, grads):  # pragma: no cover - every subclass overrides it
        raise NotImplementedError(f"{type(self).__name__}.apply")

    def release(self) -> None:
        """Drops what was saved for backward (after a backward without retain_graph)."""

    def register_prehook(self, output_nr: int, hook) -> None:
        hooks = self.tensor_pre_hooks
        if hooks is None:
            hooks = self.tensor_pre_hooks = {}
        hooks.setdefault(output_nr, []).append(hook)

    def pre_hooks(self, output_nr: int):
        hooks = self.tensor_pre_hooks
        return None if hooks is None else hooks.get(output_nr)

    def __call__(self, *grads):
        return self.apply(list(grads))

    def __repr__(self):
        return f"<{self.name()} object at 0x{id(self):x}>"


class AccumulateGrad(Node):
    """Adds the gradient that reaches a leaf to ``leaf.grad`` (after the leaf's hooks ran).

    The leaf keeps its node (made once, reused by every op that reads the leaf); the node refers
    back to the leaf weakly, so the pair forms no reference cycle. A leaf that died before
    backward simply receives nothing (nobody could read its .grad)."""

    __slots__ = ("_variable",)
    _name = "AccumulateGrad"

    def __init__(self, variable: Tensor):
        super().__init__((), 1)
        self._variable = weakref.ref(variable)

    def pre_hooks(self, output_nr: int):
        t = self._variable()
        return None if t is None else t._autograd.hooks

    def register_prehook(self, output_nr, hook):
        m = self._variable()._autograd
        if m.hooks is None:
            m.hooks = []
        m.hooks.append(hook)

    def apply(self, grads):
        g = grads[0]
        t = self._variable()
        if g is None or t is None:
            return ()
        accumulate_into(t, g)
        return ()


def accumulate_into(t: Tensor, g: Tensor) -> None:
    """t.grad += g, without ever writing into a tensor the graph may still hand out: the first
    gradient is kept as it is only when nothing else can reach it (PyTorch's "steal" rule) or it
    has a history of its own (create_graph=True), else it is copied; later ones add."""
    m = t._autograd
    with _accumulate_lock:
        old = m.grad
        if old is None:
            m.grad = g if g.requires_grad or _unshared(g) else g.clone()
        elif g.requires_grad or old.requires_grad:
            m.grad = old + g
        else:
            old += g


# References to a gradient nobody else holds, seen from _unshared: the engine's list slot, the
# arguments of apply / accumulate_into / _unshared, and getrefcount's own.
_OWN_REFS = 5
_OWN_STORAGE_REFS = 2  # the tensor's _storage slot, getrefcount's argument


def _unshared(g: Tensor) -> bool:
    """True when ``g`` is a dense tensor that no other object (a user variable, another leaf's
    .grad, a second buffer slot) refers to, over memory no other tensor views: safe to keep as a
    leaf's .grad and to update in place later."""
    return (g._offset == 0 and g.is_contiguous()
            and g._numel * g._dtype.itemsize == g._storage.nbytes
            and sys.getrefcount(g) <= _OWN_REFS
            and sys.getrefcount(g._storage) <= _OWN_STORAGE_REFS)


def accumulator_of(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, made on first use and kept on the leaf."""
    m = t._autograd
    node = m.accumulator
    if node is None:
        node = m.accumulator = AccumulateGrad(t)
        m.accumulator_edge = (node, 0)
    return node


def accumulator_edge_of(t: Tensor):
    """The edge (the leaf's AccumulateGrad node, 0), made once and kept on the leaf."""
    accumulator_of(t)
    return t._autograd.accumulator_edge


def requires_grad(t) -> bool:
    m = getattr(t, "_autograd", None)
    return m is not None and (m.grad_fn is not None or m.requires_grad)


def edge_of(t):
    """The (node, output number) a gradient for tensor ``t`` flows into; (None, 0) when ``t``
    needs none."""
    m = getattr(t, "_autograd", None)
    if m is None:
        return (None, 0)
    if m.view_base is not None and m.view_version != t._storage.version:
        from .views import refresh_view_grad_fn  # a stale view: regenerate from its base
        refresh_view_grad_fn(t)
    if m.grad_fn is not None:
        return (m.grad_fn, m.output_nr)
    if m.requires_grad:
        return accumulator_edge_of(t)
    return (None, 0)


def attach_output(t: Tensor, node: Node, output_nr: int) -> None:
    """Makes ``t`` an output of ``node`` (so it requires grad and its gradient flows there)."""
    m = t._autograd
    if m is None:
        m = t._autograd = AutogradMeta(node, output_nr)
    else:
        m.grad_fn = node
        m.output_nr = output_nr
        m.requires_grad = False
    t._ks |= AUTOGRAD_BIT


def modified_error(op, name, t, version) -> RuntimeError:
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {op}() saved '{name}' (a tensor of shape {t.shape}, dtype {t.dtype}) at "
        f"version {version}; it is now at version {t._storage.version}. Clone it before the "
        f"in-place write, or write out of place")


def inference_error(op, name) -> RuntimeError:
    return RuntimeError(
        f"{op}(): argument '{name}' is an inference tensor (made inside inference_mode) and "
        f"can't be saved for backward; make it outside inference_mode or clone() it there")


class SavedTensor:
    """A tensor an op saved for its backward, with the storage version it had then.

    An output of the node itself is kept as a detached alias (no reference cycle through its
    grad_fn); unpacking it re-attaches the node when a graph of the backward is being recorded.
    """

    __slots__ = ("tensor", "version", "name", "node", "output_nr")

    def __init__(self, t: Tensor, name: str, op: str, node=None, output_nr=0):
        if t._storage.inference:
            raise inference_error(op, name)
        self.version = t._storage.version
        self.name = name
        if node is not None:
            self.tensor = t.detach()
            self.node = weakref.ref(node)
            self.output_nr = output_nr
        else:
            self.tensor = t
            self.node = None

    def unpack(self, op: str, record: bool):
        t = self.tensor
        if t._storage.version != self.version:
            raise modified_error(op, self.name, t, self.version)
        if self.node is not None and record:
            node = self.node()
            if node is not None:
                t = t.detach()
                attach_output(t, node, self.output_nr)
        return t

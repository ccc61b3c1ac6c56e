"""backward() and autograd.grad(): argument checks, then the engine."""
from __future__ import annotations

import weakref

from ..tensor import Tensor
from .engine import run_backward
from .graph import (AccumulateGrad, accumulate_into, accumulator_edge_of, accumulator_of,
                    edge_of, requires_grad)
from ..dispatch.namespace import ops as tl

__all__ = ["backward", "grad", "tensor_backward", "register_hook", "retain_grad"]


def _as_tuple(x, what, op):
    if isinstance(x, Tensor):
        return (x,)
    if isinstance(x, (list, tuple)):
        for t in x:
            if not isinstance(t, Tensor):
                raise TypeError(f"{op}(): '{what}' must be Tensors, got {type(t).__name__}")
        return tuple(x)
    raise TypeError(f"{op}(): '{what}' must be a Tensor or a sequence of Tensors, got "
                    f"{type(x).__name__}")


def _seed_grads(outputs, grad_outputs, op):
    seeds = []
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = (grad_outputs,)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{op}(): got {len(grad_outputs)} gradients for {len(outputs)} "
                           f"outputs")
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not requires_grad(out):
            raise RuntimeError(f"{op}(): output {i} (shape {out.shape}) does not require grad "
                               f"and has no grad_fn: nothing to differentiate")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(f"{op}(): grad can be implicitly created only for scalar "
                                   f"outputs; output {i} has shape {out.shape}: pass "
                                   f"'gradient' (or grad_outputs)")
            g = tl.ones_like(out)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"{op}(): gradient {i} must be a Tensor, got {type(g).__name__}")
            if g.shape != out.shape:
                raise RuntimeError(f"{op}(): gradient {i} has shape {g.shape}, but the output has "
                                   f"shape {out.shape}")
            if g.dtype is not out.dtype:
                raise RuntimeError(f"{op}(): gradient {i} has dtype {g.dtype}, but the output "
                                   f"has dtype {out.dtype}")
            if g.device != out.device:
                raise RuntimeError(f"{op}(): gradient {i} is on device {g.device}, but the "
                                   f"output is on {out.device}")
        seeds.append(g)
    return seeds


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradients of ``tensors`` w.r.t. the graph's leaves into their ``.grad``
    (only into ``inputs`` when given)."""
    outputs = _as_tuple(tensors, "tensors", "backward")
    seeds = _seed_grads(outputs, grad_tensors, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [edge_of(t) for t in outputs]
    capture = None
    if inputs is not None:
        inputs = _as_tuple(inputs, "inputs", "backward")
        if not inputs:
            raise RuntimeError("backward(): 'inputs' must not be empty")
        capture = {}
        for i, t in enumerate(inputs):
            if not requires_grad(t):
                raise RuntimeError(f"backward(): input {i} does not require grad")
            capture[_input_edge(t)] = i
    captured = run_backward(roots, seeds, retain_graph=retain_graph, create_graph=create_graph,
                            capture=capture, accumulate=False)
    if inputs is not None:
        for t, g in zip(inputs, captured):
            if g is not None:
                if t.grad_fn is not None:
                    m = t._autograd
                    m.grad = g if m.grad is None else m.grad + g
                else:
                    accumulate_into(t, g)


def _input_edge(t):
    m = t._autograd
    if m.grad_fn is None:
        return accumulator_edge_of(t)
    return edge_of(t)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """The gradients of ``outputs`` w.r.t. ``inputs`` (a tuple), without touching ``.grad``."""
    outputs = _as_tuple(outputs, "outputs", "autograd.grad")
    single = isinstance(inputs, Tensor)
    inputs = _as_tuple(inputs, "inputs", "autograd.grad")
    if not inputs:
        raise RuntimeError("autograd.grad(): 'inputs' must not be empty")
    seeds = _seed_grads(outputs, grad_outputs, "autograd.grad")
    if retain_graph is None:
        retain_graph = create_graph
    capture = {}
    for i, t in enumerate(inputs):
        if not requires_grad(t):
            raise RuntimeError(f"autograd.grad(): input {i} (shape {t.shape}) does not require "
                               f"grad")
        capture.setdefault(_input_edge(t), i)
    edge_index = {i: _input_edge(t) for i, t in enumerate(inputs)}
    captured = run_backward([edge_of(t) for t in outputs], seeds, retain_graph=retain_graph,
                            create_graph=create_graph, capture=capture, accumulate=False)
    result = []
    for i, t in enumerate(inputs):
        g = captured[capture[edge_index[i]]]
        if g is None and not allow_unused:
            raise RuntimeError(f"autograd.grad(): input {i} (shape {t.shape}) is not part of "
                               f"the graph of the outputs; pass allow_unused=True to get None "
                               f"for it")
        result.append(g)
    return tuple(result)


def tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Tensor.backward: the gradient of this tensor w.r.t. the graph's leaves, into their .grad."""
    backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph,
             inputs)


def register_hook(self, hook):
    """Calls ``hook(grad)`` whenever a gradient for this tensor is computed; a non-None return
    value replaces the gradient. Returns a handle with ``remove()``."""
    if not callable(hook):
        raise TypeError(f"register_hook(): hook must be callable, got {type(hook).__name__}")
    if not requires_grad(self):
        raise RuntimeError("register_hook(): cannot register a hook on a tensor that doesn't "
                           "require grad")
    m = self._autograd
    if m.grad_fn is None:
        node = accumulator_of(self)
        node.register_prehook(0, hook)
        hooks = m.hooks
    else:
        node, nr = edge_of(self)
        node.register_prehook(nr, hook)
        hooks = node.tensor_pre_hooks[nr]
    return _HookHandle(hooks, hook)


class _HookHandle:
    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook

    def remove(self):
        try:
            self._hooks.remove(self._hook)
        except ValueError:
            pass


def retain_grad(self):
    """Keeps the gradient of a non-leaf tensor in its ``.grad`` after backward."""
    if not requires_grad(self):
        raise RuntimeError("retain_grad(): can't retain_grad on a tensor that doesn't require "
                           "grad")
    m = self._autograd
    if m.grad_fn is None or m.retains_grad:
        return
    m.retains_grad = True
    ref = weakref.ref(self)

    def keep(g):
        t = ref()
        if t is not None:
            tm = t._autograd
            tm.grad = g.detach() if tm.grad is None else tm.grad + g.detach()
        return None

    node, nr = edge_of(self)
    node.register_prehook(nr, keep)

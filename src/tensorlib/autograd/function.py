"""tl.autograd.Function: ops whose forward and backward the user writes (PyTorch's API).

``apply`` runs ``forward`` with recording off, then, when grad mode is on and an argument
requires grad, makes one node whose backward calls the class's ``backward`` with the output
gradients (None ones materialized as zeros) and checks that it returns one gradient per forward
argument.
"""
from __future__ import annotations

from ..dispatch.keys import AUTOGRAD_BIT, set_tls_keys, tls
from ..tensor import Tensor
from .grad_mode import is_grad_enabled
from .graph import Node, SavedTensor, attach_output, edge_of, requires_grad
from ..dispatch.namespace import ops as tl
from .views import after_inplace

__all__ = ["Function", "FunctionCtx"]

_NO_EDGE = (None, 0)
_new = object.__new__


class FunctionCtx:
    """What ``forward`` hands to ``backward``: saved tensors and flags."""

    # defaults as class attributes: Function.apply makes a context per call and sets only
    # these two (forward may add its own attributes, so no __slots__)
    _saved = None
    _dirty = ()
    _released = False
    materialize_grads = True

    def __init__(self, name, needs):
        self._name = name
        self.needs_input_grad = needs

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and t.__class__ is not Tensor and not isinstance(t, Tensor):
                raise TypeError(f"{self._name}.save_for_backward(): only tensors (or None) can be "
                                f"saved, got {type(t).__name__}")
        self._saved = tuple(tensors)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(f"{self._name}: trying to backward through the graph a second time "
                               f"(its saved tensors were freed); pass retain_graph=True to the "
                               f"first backward()")
        saved = self._saved or ()
        record = is_grad_enabled()
        return tuple([s.unpack(self._name, record) if s.__class__ is SavedTensor else s
                      for s in saved])


class _FunctionNode(Node):
    __slots__ = ("cls", "ctx", "out_meta")

    def name(self):
        return self.cls.__name__ + "Backward"

    def release(self):
        self.ctx._released = True
        self.ctx._saved = None

    def apply(self, grads):
        ctx = self.ctx
        if ctx.materialize_grads:
            for g in grads:  # (not `None in grads`: that compares tensors with ==)
                if g is None:
                    grads = [g if g is not None else tl.zeros(m[0], dtype=m[1], device=m[2])
                             for g, m in zip(grads, self.out_meta)]
                    break
        res = self.cls.backward(ctx, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n = len(self.next_functions)
        if len(res) != n:
            raise RuntimeError(f"function {self.cls.__name__}.backward returned an incorrect "
                               f"number of gradients (expected {n}, got {len(res)})")
        return list(res)


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``MyFunction.apply(*args)``."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__}: autograd Functions are not instantiated; "
                           f"call {type(self).__name__}.apply(...)")

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("Function subclasses must define a static forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("Function subclasses must define a static backward(ctx, ...)")

    @classmethod
    def apply(cls, *args):
        # (this runs on every call of nn's Linear / ReLU / CrossEntropy: plain loops and one
        # switch of the exclude set instead of generators and a no_grad() context object)
        needs = tuple(map(requires_grad, args))
        ctx = _new(FunctionCtx)  # (FunctionCtx(...) minus a Python __init__ call)
        ctx._name = cls.__name__
        ctx.needs_input_grad = needs
        excluded = tls.excluded
        record = not excluded & AUTOGRAD_BIT and True in needs
        if excluded & AUTOGRAD_BIT:
            out = cls.forward(ctx, *args)
        else:
            set_tls_keys(tls.included, excluded | AUTOGRAD_BIT)  # no_grad
            try:
                out = cls.forward(ctx, *args)
            finally:
                set_tls_keys(tls.included, excluded)
        if not record:
            return out
        single = not isinstance(out, tuple)
        outs = [out] if single else list(out)
        node = _new(_FunctionNode)  # Node.__init__'s writes, inline
        node.next_functions = tuple([edge_of(a) if isinstance(a, Tensor) else _NO_EDGE
                                     for a in args])
        node.tensor_pre_hooks = None
        node.num_outputs = len(outs)
        node.stream = None
        node.cls = cls
        node.ctx = ctx
        node.out_meta = [(t._shape, t._dtype, t._storage.device) if isinstance(t, Tensor)
                         else None for t in outs]
        dirty = {id(t) for t in ctx._dirty} if ctx._dirty else ()
        for i, t in enumerate(outs):
            if not isinstance(t, Tensor):
                continue
            if dirty and id(t) in dirty:
                after_inplace(t, node) if i == 0 else attach_output(t, node, i)
                continue
            for a in args:
                if t is a:
                    # an input returned as is: the output is a new alias with its own history
                    t = outs[i] = t.detach()
                    break
            attach_output(t, node, i)
        if ctx._saved is not None:
            name = cls.__name__
            ctx._saved = tuple([_save(t, name, node, outs) for t in ctx._saved])
        return outs[0] if single else tuple(outs)


def _save(t, name, node, outs):
    if t is None:
        return None
    for i, o in enumerate(outs):
        if o is t:
            return SavedTensor(t, "saved tensor", name, node, i)
    return SavedTensor(t, "saved tensor", name)

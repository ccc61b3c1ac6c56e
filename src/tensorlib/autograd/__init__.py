"""Reverse-mode automatic differentiation on tensorlib's dispatcher (the Autograd key).

Tensors that require grad carry the Autograd key; its kernel (kernel.py) runs each op below
autograd and records a backward node built from the op's derivatives.yaml formulas
(derivatives.py, formulas.py). backward() / grad() run the recorded graph (engine.py). Grad modes
(grad_mode.py) switch recording off per thread; Function (function.py) lets users write their own
forward/backward; gradcheck (gradcheck.py) compares with finite differences.
"""
from __future__ import annotations

from .api import backward, grad
from .function import Function, FunctionCtx
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from .graph import Node

__all__ = ["backward", "grad", "Function", "FunctionCtx", "gradcheck", "gradgradcheck",
           "GradcheckError", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "Node", "install"]


def install(functions: dict, tensor_cls) -> None:
    """Called once by tensorlib's __init__ with the generated op functions: compiles
    derivatives.yaml, registers the Autograd kernel and attaches the Tensor methods."""
    from ..ops.creation import asarray
    from . import api, formulas, kernel
    kernel.install({**functions, "asarray": asarray}, formulas.HELPERS)
    from . import linalg_backward  # noqa: F401  (registers tl.linalg's differentiable versions)
    tensor_cls.backward = api.tensor_backward
    tensor_cls.register_hook = api.register_hook
    tensor_cls.retain_grad = api.retain_grad


# Factories that take requires_grad= (PyTorch's spelling): the tensor they make becomes a leaf.
_FACTORIES = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
              "full_like", "arange", "linspace", "eye", "rand", "randn", "asarray", "tensor")


def factories_with_requires_grad(functions: dict) -> dict:
    """The factory functions wrapped to accept ``requires_grad=`` (keyword only)."""
    import functools
    import inspect

    wrapped = {}
    for name in _FACTORIES:
        fn = functions.get(name)
        if fn is None:
            continue

        def factory(*args, requires_grad=False, _fn=fn, **kwargs):
            t = _fn(*args, **kwargs)
            if requires_grad:
                if not isinstance(requires_grad, bool):
                    raise TypeError(f"{_fn.__name__}(): argument 'requires_grad' must be a bool, "
                                    f"got {type(requires_grad).__name__}")
                if t.dtype.kind not in "fc":
                    raise RuntimeError(f"{_fn.__name__}(): requires_grad=True needs a float or "
                                       f"complex dtype, got {t.dtype}")
                t.requires_grad_()
            return t

        factory = functools.wraps(fn)(factory)
        try:
            sig = inspect.signature(fn)
            params = list(sig.parameters.values())
            params.append(inspect.Parameter("requires_grad", inspect.Parameter.KEYWORD_ONLY,
                                            default=False))
            params.sort(key=lambda p: p.kind)
            factory.__signature__ = sig.replace(parameters=params)
        except (TypeError, ValueError):
            pass
        wrapped[name] = factory
    return wrapped

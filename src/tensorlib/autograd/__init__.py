"""Reverse-mode automatic differentiation on tensorlib's dispatcher (the Autograd key).

Tensors that require grad carry the Autograd key; its kernel (kernel.py) runs each op below
autograd and records a backward node built from the op's derivatives.yaml formulas
(derivatives.py, formulas/). backward() / grad() run the recorded graph (engine.py). Grad modes
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


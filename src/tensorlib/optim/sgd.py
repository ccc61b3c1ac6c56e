"""SGD with momentum, dampening, Nesterov momentum and weight decay (PyTorch's update rule)."""
from __future__ import annotations

from .optimizer import Optimizer, check_float

__all__ = ["SGD"]


class SGD(Optimizer):
    """``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
    maximize=False)``. Per parameter: d = g + weight_decay * p; with momentum,
    buf = d on the first step, then momentum * buf + (1 - dampening) * d, and d = buf (or
    d + momentum * buf with nesterov); p -= lr * d."""

    _state_names = ("momentum_buffer",)

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _check_group(self, g):
        g["lr"] = check_float(g["lr"], "SGD", "lr")
        g["momentum"] = check_float(g["momentum"], "SGD", "momentum")
        g["dampening"] = check_float(g["dampening"], "SGD", "dampening")
        g["weight_decay"] = check_float(g["weight_decay"], "SGD", "weight_decay")
        for flag in ("nesterov", "maximize"):
            if not isinstance(g[flag], bool):
                raise TypeError(f"SGD(): argument '{flag}' must be a bool, got {g[flag]!r}")
        if g["nesterov"] and (g["momentum"] <= 0 or g["dampening"] != 0):
            raise ValueError("SGD(): nesterov momentum requires a momentum > 0 and zero "
                             f"dampening, got momentum={g['momentum']}, "
                             f"dampening={g['dampening']}")

    def _init_state(self, p, group):
        return {"step": 0}  # the momentum buffer is made by its first momentum step

    def _variant(self, g):
        return ("sgd_momentum", g["nesterov"]) if g["momentum"] != 0 else ("sgd", False)

    def _row(self, g, st, p):
        sign = -1.0 if g["maximize"] else 1.0
        if g["momentum"] == 0:
            return (g["lr"], g["weight_decay"], sign)
        first = "momentum_buffer" not in st
        if first:
            # zeros, not empty: the first step computes 0 * buf + 1 * d (PyTorch's clone of d)
            from ..ops.creation import zeros_like
            st["momentum_buffer"] = zeros_like(p)
        mom_old, damp = (0.0, 1.0) if first else (g["momentum"], 1.0 - g["dampening"])
        return (g["lr"], g["weight_decay"], sign, mom_old, damp, g["momentum"],
                1.0 if g["nesterov"] else 0.0)

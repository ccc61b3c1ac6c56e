"""Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight decay), with
amsgrad and maximize (PyTorch's update rules)."""
from __future__ import annotations

import math

from .optimizer import Optimizer, check_float

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
    maximize=False)``. Per parameter at step t: g += weight_decay * p;
    m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2 (vmax = max(vmax, v) with amsgrad);
    p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)."""

    _state_names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _check_group(self, g):
        name = type(self).__name__
        g["lr"] = check_float(g["lr"], name, "lr")
        g["eps"] = check_float(g["eps"], name, "eps")
        g["weight_decay"] = check_float(g["weight_decay"], name, "weight_decay")
        betas = g["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{name}(): argument 'betas' must be a pair (beta1, beta2), got "
                             f"{betas!r}")
        g["betas"] = (check_float(betas[0], name, "betas[0]", 0.0, 1.0, high_open=True),
                      check_float(betas[1], name, "betas[1]", 0.0, 1.0, high_open=True))
        for flag in ("amsgrad", "maximize"):
            if not isinstance(g[flag], bool):
                raise TypeError(f"{name}(): argument '{flag}' must be a bool, got {g[flag]!r}")

    def _variant(self, g):
        return ("adam", g["amsgrad"])

    def _row(self, g, st, p):
        if g["amsgrad"] and "max_exp_avg_sq" not in st:  # amsgrad turned on later
            from ..ops.creation import zeros_like
            st["max_exp_avg_sq"] = zeros_like(p)
        b1, b2 = g["betas"]
        t = st["step"]
        lr, wd = g["lr"], g["weight_decay"]
        bc1 = 1.0 - b1 ** t
        bc2 = 1.0 - b2 ** t
        if self._decoupled:
            decay, wd_l2 = 1.0 - lr * wd, 0.0
        else:
            decay, wd_l2 = 1.0, wd
        return (-(lr / bc1), wd_l2, decay, 1.0 - b1, b2, 1.0 - b2, g["eps"], math.sqrt(bc2),
                -1.0 if g["maximize"] else 1.0)


class AdamW(Adam):
    """``AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
    amsgrad=False, *, maximize=False)``: Adam with decoupled weight decay
    (p *= 1 - lr * weight_decay before the update; the gradient is not changed)."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize)

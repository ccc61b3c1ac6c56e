"""The optimizer base class: parameter groups, per-parameter state, ``zero_grad``,
``state_dict`` / ``load_state_dict`` (PyTorch's layout), and the fused step driver.

A step gathers, per (device, dtype, kernel variant), every parameter that has a gradient and
hands them to ONE fused kernel (optim/_fused.py): the kernel walks a table of raw addresses and
per-tensor coefficients, so a model with hundreds of parameters costs one launch per dtype, not
hundreds of small ops. Hyperparameters are per tensor in that table, so parameter groups with
different learning rates share the launch.
"""
from __future__ import annotations

import math
import numbers

from ..autograd.grad_mode import no_grad
from ..dispatch.dispatcher import check_writable
from ..tensor import Tensor
from . import _fused

__all__ = ["Optimizer"]


class _Required:
    def __repr__(self):
        return "<required parameter>"


required = _Required()


class Optimizer:
    """Base of SGD / Adam / AdamW. Subclasses set ``_state_names`` (the state buffers, in the
    kernel's order) and implement ``_check_group``, ``_variant`` (which kernel a group uses)
    and ``_row`` (a parameter's coefficient row for it, see optim/_fused.py)."""

    _state_names: tuple = ()

    def __init__(self, params, defaults: dict):
        name = type(self).__name__
        self.defaults = dict(defaults)
        self.state: dict = {}  # param -> {"step": int, name: Tensor}
        self.param_groups: list = []
        if isinstance(params, Tensor):
            raise TypeError(f"{name}(): argument 'params' must be an iterable of Tensors or of "
                            f"dicts, got a single Tensor (wrap it in a list)")
        if isinstance(params, (set, frozenset)):
            raise TypeError(f"{name}(): parameters must be an ordered collection (a set's "
                            f"order changes between runs, and state dicts index by position)")
        try:
            groups = list(params)
        except TypeError:
            raise TypeError(f"{name}(): argument 'params' must be an iterable of Tensors or of "
                            f"dicts, got {type(params).__name__}") from None
        if not groups:
            raise ValueError(f"{name}(): got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    # ------------------------------------------------------------ groups
    def add_param_group(self, group: dict) -> None:
        name = type(self).__name__
        if not isinstance(group, dict):
            raise TypeError(f"{name}.add_param_group(): a group must be a dict, got "
                            f"{type(group).__name__}")
        params = group.get("params")
        if isinstance(params, Tensor):
            params = [params]
        elif params is None:
            raise ValueError(f"{name}.add_param_group(): the group has no 'params'")
        elif isinstance(params, (set, frozenset)):
            raise TypeError(f"{name}(): parameters must be an ordered collection (a set's "
                            f"order changes between runs, and state dicts index by position)")
        params = list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}(): parameter {i} must be a Tensor, got "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError(f"{name}(): parameter {i} is not a leaf tensor (it has a "
                                 f"grad_fn); optimize leaves, e.g. x.detach().requires_grad_()")
            if p.dtype.kind not in "fc":
                raise TypeError(f"{name}(): parameter {i} must be floating point or complex, "
                                f"got {p.dtype}")
            if id(p) in seen:
                raise ValueError(f"{name}(): parameter {i} appears in more than one group "
                                 f"(or twice in one)")
            seen.add(id(p))
        full = {k: v for k, v in group.items() if k != "params"}
        for k, v in self.defaults.items():
            if v is required and k not in full:
                raise ValueError(f"{name}(): parameter group didn't specify a value of "
                                 f"required optimization parameter '{k}'")
            full.setdefault(k, v)
        self._check_group(full)
        full["params"] = params
        self.param_groups.append(full)

    def _check_group(self, group: dict) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    # ------------------------------------------------------------ gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forgets the parameters' gradients (``set_to_none``, the default: ``p.grad = None``,
        freeing the memory) or fills them with zeros in place."""
        for g in self.param_groups:
            for p in g["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    with no_grad():
                        if grad.grad_fn is not None:
                            p.grad = grad = grad.detach()
                        grad.fill_(0)

    # ------------------------------------------------------------ step
    def step(self, closure=None):
        """One update of every parameter with a gradient; ``closure`` (re-evaluates the
        model and returns the loss) is called first, with grad enabled, when given."""
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        with no_grad():
            batches: dict = {}
            for group in self.param_groups:
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    self._check_grad(p, grad)
                    # refuses a read-only parameter before any state changes; counts the write
                    check_writable(p, f"{type(self).__name__}.step", "params")
                    st = self.state.get(p)
                    if st is None:
                        st = self.state[p] = self._init_state(p, group)
                    st["step"] += 1
                    row = self._row(group, st, p)
                    key = (p.device, p.dtype, self._variant(group))
                    batches.setdefault(key, []).append((p, grad, st, row))
            for (device, dtype, variant), items in batches.items():
                _fused.run(type(self).__name__, variant, device, dtype, items,
                           self._state_names)
        return loss

    def _check_grad(self, p, grad):
        name = type(self).__name__
        if not isinstance(grad, Tensor):
            raise TypeError(f"{name}.step(): a parameter's .grad must be a Tensor, got "
                            f"{type(grad).__name__}")
        # (private fields, devices compared by identity first: this runs per parameter per step)
        gd, pd = grad._storage.device, p._storage.device
        if grad._shape != p._shape or grad._dtype is not p._dtype or (gd is not pd and gd != pd):
            raise ValueError(f"{name}.step(): a parameter's gradient must match it in shape, "
                             f"dtype and device: parameter {p.shape} {p.dtype} on {p.device}, "
                             f"gradient {grad.shape} {grad.dtype} on {grad.device}")

    def _init_state(self, p, group) -> dict:
        from ..ops.creation import zeros_like
        st = {"step": 0}
        # zeros (not empty): the kernels' first-step formulas multiply the old state by 0
        for n in self._state_names:
            if n != "max_exp_avg_sq" or group.get("amsgrad"):
                st[n] = zeros_like(p)
        return st

    def _variant(self, group) -> tuple:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def _row(self, group, st, p) -> tuple:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    # ------------------------------------------------------------ state dicts
    def state_dict(self) -> dict:
        """{"state": {index: {"step": int, <buffer>: Tensor}}, "param_groups": [{..., "params":
        [index, ...]}]}: parameters are numbered in group order (PyTorch's layout). The
        tensors are the live state (not copies)."""
        index = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            d = {k: v for k, v in g.items() if k != "params"}
            d["params"] = ids
            groups.append(d)
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                st = self.state.get(p)
                if st is not None:
                    state[index[id(p)]] = dict(st)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores hyperparameters and state saved by ``state_dict()`` from an optimizer of
        the same parameter layout; state tensors are copied onto each parameter's device and
        dtype."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or "state" not in state_dict \
                or "param_groups" not in state_dict:
            raise ValueError(f"{name}.load_state_dict(): expected a dict with 'state' and "
                             f"'param_groups' (from state_dict()), got {type(state_dict).__name__}")
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict(): the state dict has {len(saved_groups)} "
                             f"parameter groups, this optimizer {len(self.param_groups)}")
        for i, (sg, g) in enumerate(zip(saved_groups, self.param_groups)):
            if len(sg["params"]) != len(g["params"]):
                raise ValueError(f"{name}.load_state_dict(): group {i} has "
                                 f"{len(sg['params'])} parameters in the state dict, "
                                 f"{len(g['params'])} here")
        by_index = {}
        for sg, g in zip(saved_groups, self.param_groups):
            for idx, p in zip(sg["params"], g["params"]):
                by_index[idx] = p
        new_state = {}
        for idx, st in state_dict["state"].items():
            p = by_index.get(idx)
            if p is None:
                raise ValueError(f"{name}.load_state_dict(): state for parameter {idx}, which "
                                 f"no group holds")
            new_state[p] = self._load_param_state(p, st, idx)
        for sg, g in zip(saved_groups, self.param_groups):
            for k, v in sg.items():
                if k != "params":
                    g[k] = v
            self._check_group(g)
        self.state = new_state

    def _load_param_state(self, p, st, idx):
        name = type(self).__name__
        out = {}
        for k, v in st.items():
            if k == "step":
                step = float(v.item()) if isinstance(v, Tensor) else v
                if not isinstance(step, numbers.Real) or step < 0 or step != math.floor(step):
                    raise ValueError(f"{name}.load_state_dict(): parameter {idx}: 'step' must "
                                     f"be a non-negative integer, got {v!r}")
                out["step"] = int(step)
            elif isinstance(v, Tensor):
                if v.shape != p.shape:
                    raise ValueError(f"{name}.load_state_dict(): parameter {idx}: state "
                                     f"'{k}' has shape {v.shape}, the parameter {p.shape}")
                from ..allocation import empty_like
                t = empty_like(p)
                with no_grad():
                    t.copy_(v.detach())
                out[k] = t
            else:
                out[k] = v
        out.setdefault("step", 0)
        return out

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)


def check_float(value, opt, arg, low=0.0, high=None, low_open=False, high_open=False):
    """A real hyperparameter in [low, high] (open ends where asked); ValueError otherwise."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and \
        math.isfinite(value)
    if ok:
        v = float(value)
        ok = (v > low if low_open else v >= low) and (
            high is None or (v < high if high_open else v <= high))
    if not ok:
        lo = "(" if low_open else "["
        hi = "inf)" if high is None else f"{high}{')' if high_open else ']'}"
        raise ValueError(f"{opt}(): invalid '{arg}' value {value!r} (expected a real number in "
                         f"{lo}{low}, {hi})")
    return float(value)

"""gradcheck / gradgradcheck: autograd's gradients against central finite differences (float64).

For every output element and every (real or imaginary part of an) input element, the analytical
vector-Jacobian product from autograd.grad with a one-hot output gradient must match the
finite-difference derivative of L = Re(sum(conj(u) * f(x))), which under PyTorch's convention
for complex inputs is dL/d(re x) + i dL/d(im x).
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .api import grad as _grad
from .graph import requires_grad
from ..dispatch.namespace import ops as tl

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    pass


def _outputs(fn, args):
    out = fn(*args)
    outs = (out,) if isinstance(out, Tensor) else tuple(out)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"gradcheck(): fn must return Tensors, got {type(o).__name__}")
    return outs


def _rebuild(args, k, arr):
    out = list(args)
    t = args[k]
    out[k] = tl.asarray(arr, dtype=t.dtype, device=t.device).requires_grad_(requires_grad(t))
    return out


def _host(t):
    return np.array(t.detach().cpu().numpy() if t.device.type != "cpu" else t.detach().numpy())


def gradcheck(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0):
    """True when autograd's gradients of ``fn`` match finite differences for every input that
    requires grad; otherwise raises GradcheckError naming the first mismatch (or returns False
    with ``raise_exception=False``)."""
    args = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    diff = [i for i, a in enumerate(args) if isinstance(a, Tensor) and requires_grad(a)]
    if not diff:
        raise ValueError("gradcheck(): no input requires grad")
    for i in diff:
        if args[i].dtype.name not in ("float64", "complex128"):
            raise ValueError(f"gradcheck(): input {i} has dtype {args[i].dtype}; gradcheck needs "
                             f"float64 or complex128 inputs for accurate finite differences")
    outs = _outputs(fn, args)
    base_vals = [_host(o) for o in outs]
    try:
        for oi, (o, val) in enumerate(zip(outs, base_vals)):
            if o.dtype.kind not in "fc" or not requires_grad(o):
                continue
            n_out = val.size
            parts = (1.0, 1j) if o.dtype.kind == "c" else (1.0,)
            # analytical: one VJP per output element (and per real/imag part)
            analytic = {}
            for j in range(n_out):
                for part in parts:
                    u = np.zeros(val.shape, dtype=val.dtype)
                    u.reshape(-1)[j] = part
                    ut = tl.asarray(u, dtype=o.dtype, device=o.device)
                    outs2 = _outputs(fn, args)
                    gs = _grad(outs2[oi], [args[i] for i in diff], ut, retain_graph=False,
                               allow_unused=True)
                    analytic[(j, part)] = [None if g is None else _host(g) for g in gs]
            # numerical, per input element
            for di, i in enumerate(diff):
                x = np.array(_host(args[i]), order="C")  # flat[k] below must write into x
                flat = x.reshape(-1)
                xparts = (1.0, 1j) if np.iscomplexobj(x) else (1.0,)
                for k in range(flat.size):
                    for xp in xparts:
                        orig = flat[k]
                        flat[k] = orig + eps * xp
                        fp = _host(_outputs(fn, _rebuild(args, i, x.copy()))[oi])
                        flat[k] = orig - eps * xp
                        fm = _host(_outputs(fn, _rebuild(args, i, x.copy()))[oi])
                        flat[k] = orig
                        d = ((fp - fm) / (2 * eps)).reshape(-1)
                        for j in range(n_out):
                            for part in parts:
                                # dL/d(part of x_k) with L = Re(conj(u) * f_j)
                                num = np.real(np.conj(part) * d[j])
                                g = analytic[(j, part)][di]
                                ana = 0.0 if g is None else g.reshape(-1)[k]
                                ana = np.real(ana) if xp == 1.0 else np.imag(ana)
                                if not np.isclose(ana, num, rtol=rtol, atol=atol):
                                    raise GradcheckError(
                                        f"gradcheck(): Jacobian mismatch for output {oi} "
                                        f"element {j}{' (imag part)' if part == 1j else ''} "
                                        f"w.r.t. input {i} element {k}"
                                        f"{' (imag part)' if xp == 1j else ''}: numerical "
                                        f"{num:.8g}, analytical {ana:.8g}")
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True):
    """Checks second derivatives: gradcheck of (inputs, v) -> autograd.grad(fn(inputs), inputs,
    v, create_graph=True), with random output gradients v (or ``grad_outputs``)."""
    args = tuple(inputs) if isinstance(inputs, (list, tuple)) else (inputs,)
    diff = [i for i, a in enumerate(args) if isinstance(a, Tensor) and requires_grad(a)]
    outs = _outputs(fn, args)
    rng = np.random.default_rng(0)
    if grad_outputs is None:
        vs = []
        for o in outs:
            v = rng.standard_normal(o.shape)
            if o.dtype.kind == "c":
                v = v + 1j * rng.standard_normal(o.shape)
            vs.append(tl.asarray(v, dtype=o.dtype, device=o.device).requires_grad_())
    else:
        vs = list(grad_outputs)
    n = len(args)

    def first_grad(*xs_vs):
        xs, v = xs_vs[:n], xs_vs[n:]
        o = _outputs(fn, xs)
        gs = _grad(o, [xs[i] for i in diff], list(v), create_graph=True, allow_unused=True)
        return tuple(g if g is not None else tl.zeros_like(xs[i]) for g, i in zip(gs, diff))

    return gradcheck(first_grad, args + tuple(vs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)

"""What ``libdevice`` is inside kernels run by the Triton interpreter.

The interpreter cannot call CUDA's libdevice (extern_elementwise raises there), so in interpret
mode scalar_math binds the name ``libdevice`` to this object instead: each function applies the
NumPy ufunc of the same meaning to the operands' value arrays. On a GPU the real libdevice
functions (correctly rounded or within 1-2 ulp) run; the NumPy ufuncs are the test oracle, so
interpreted results match it exactly and the GPU's within those ulps.
"""
from __future__ import annotations

import numpy as np

__all__ = ["libdevice"]


def _wrap(ufunc):
    def fn(*args, _semantic=None):
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle
        tensors = [a for a in args if isinstance(a, tl.core.tensor)]
        like = max(tensors, key=lambda a: a.handle.data.size)  # the block operand, if any
        np_type = like.handle.data.dtype
        data = [a.handle.data if isinstance(a, tl.core.tensor) else np_type.type(a)
                for a in args]
        out = np.asarray(ufunc(*data)).astype(np_type, copy=False)
        return tl.core.tensor(TensorHandle(out, like.dtype), like.type)
    fn.__name__ = getattr(ufunc, "__name__", "fn")
    return fn


class _LibdeviceShim:
    tan = staticmethod(_wrap(np.tan))
    asin = staticmethod(_wrap(np.arcsin))
    acos = staticmethod(_wrap(np.arccos))
    atan = staticmethod(_wrap(np.arctan))
    atan2 = staticmethod(_wrap(np.arctan2))
    sinh = staticmethod(_wrap(np.sinh))
    cosh = staticmethod(_wrap(np.cosh))
    tanh = staticmethod(_wrap(np.tanh))
    asinh = staticmethod(_wrap(np.arcsinh))
    acosh = staticmethod(_wrap(np.arccosh))
    atanh = staticmethod(_wrap(np.arctanh))
    exp = staticmethod(_wrap(np.exp))
    exp2 = staticmethod(_wrap(np.exp2))
    expm1 = staticmethod(_wrap(np.expm1))
    log = staticmethod(_wrap(np.log))
    log2 = staticmethod(_wrap(np.log2))
    log10 = staticmethod(_wrap(np.log10))
    log1p = staticmethod(_wrap(np.log1p))
    sin = staticmethod(_wrap(np.sin))
    cos = staticmethod(_wrap(np.cos))
    sqrt = staticmethod(_wrap(np.sqrt))
    hypot = staticmethod(_wrap(np.hypot))
    pow = staticmethod(_wrap(np.power))
    fmod = staticmethod(_wrap(np.fmod))
    rint = staticmethod(_wrap(np.rint))
    trunc = staticmethod(_wrap(np.trunc))
    nextafter = staticmethod(_wrap(np.nextafter))
    copysign = staticmethod(_wrap(np.copysign))


libdevice = _LibdeviceShim()

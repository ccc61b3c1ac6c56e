"""Triton versions of the scalar helpers of ``kernels/cpu/scalar_math/``.

Generated CUDA kernels do ``from tensorlib.kernels.cuda.scalar_math import *`` and evaluate the
same ops.yaml expressions (``floordiv(self, other)``...) on blocks already converted to the op's
compute dtype. Every helper is a ``@jit`` function that branches on its operands' dtype
at compile time, so one name serves every dtype, as the Numba overloads do.

Semantics follow the NumPy 2 ufunc on the same dtype (the oracle): nan / +-inf / signed zeros,
wrapping integer overflow, integer division by zero giving 0, x86 float -> int conversions
(nan / out of range -> INT64_MIN). Gaps, and why:

* complex: Triton has no complex type; complex kernels carry (re, im) pairs of component
  blocks and call the ``c_*`` helpers of complex_math.py instead of these (pointwise.py).
* float32 ``/`` and ``sqrt`` are approximate in Triton; these helpers use ``div_rn`` /
  ``sqrt_rn`` (IEEE) instead, and the generated kernels disable FMA contraction, so
  arithmetic rounds as NumPy does.
* transcendental functions use CUDA libdevice (within 1-2 ulp of correctly rounded, as glibc);
  results can differ from NumPy's in the last bit or two. In interpret mode ``libdevice`` is a
  NumPy shim (``_interp_libdevice``), so interpreted results equal NumPy's.
* ``erf`` uses ``tl.erf`` (libdevice erff / erf on a GPU).

Only builtins of ``triton.language`` are used (not its ``@triton.jit`` library functions such
as ``tl.zeros_like``), so the files can be built in either mode (see launch.py).
"""
from tensorlib.kernels.cuda.launch import helper_mode, helper_part

# launch.helpers() loads this file once per mode. The helpers live in three parts, each built
# for the same mode (launch.helper_part): scalar_bits (conversions, IEEE division / sqrt, sign
# and class tests), scalar_arith (arithmetic, comparison, bitwise, logical), scalar_transcend
# (math).
_MODE, _ = helper_mode(globals())
_PARTS = tuple(helper_part(stem, _MODE)
               for stem in ("scalar_bits", "scalar_arith", "scalar_transcend"))

__all__ = [name for part in _PARTS for name in part.__all__]
globals().update({name: getattr(part, name) for part in _PARTS for name in part.__all__})

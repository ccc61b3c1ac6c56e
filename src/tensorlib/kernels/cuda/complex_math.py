"""Complex helpers for the generated CUDA pointwise kernels (Triton has no complex type).

A complex value is a pair of blocks (re, im) in its component dtype (float32 for complex64,
float64 for complex128). Every helper takes the components of its operands and returns a
tuple (re, im), or one block for real / bool results (abs, real, isnan...). Generated kernels
(kernels/cuda/pointwise.py) do ``from <this module> import *`` and call them on the pairs the
ops.yaml expression produces.

Each helper mirrors the CPU kernel's implementation of the same op (kernels/cpu/scalar_math/)
branch for branch, written as selects over all lanes:

* exp, exp2, sinh, cosh, tanh, sin, cos, tan, divide, reciprocal, power, sign, square: ports of
  the CPU helpers (_cexp, _csinh_ccosh, _ctanh, _cdiv, _crecip, _cpow, ...), themselves ports
  of glibc / NumPy with C99 Annex G special values.
* log, log2, log10, log1p, expm1, sqrt, asin, acos, asinh, atanh (and atan, acosh through
  them): the CPU calls Numba's versions (numba/cpython/cmathimpl.py, numba/np/npyfuncs.py),
  plus the CPU's own special-value patches; both are mirrored here. Numba evaluates sqrt,
  asinh, acos and atanh of complex64 largely in float64 (its float literals widen the
  intermediates), so these run in float64 for complex64 too and round once at the end; the
  CPU keeps a few intermediates in float32 (e.g. atan2f on huge arguments), so complex64
  results of these can differ from the CPU's in the last bit.
* Two deliberate departures from the CPU, where Numba's versions are wrong and NumPy (the
  oracle) is not: sqrt of parts near the largest finite value doubles both parts after its
  overflow-avoiding scaling (Numba doubles only the real part, halving the imaginary one), and
  log / log2 / log10 (and power's general path) of |z| > max halve the parts before hypot
  instead of returning inf.

Real building blocks: libdevice on a GPU, NumPy's libm in interpret mode (the shim in
_interp_libdevice), division and sqrt correctly rounded (scalar_math.fdiv_ieee / _sqrt_ieee),
FMA contraction off at launch. Only ``triton.language`` builtins are used, so the files build
in either mode (launch.complex_helpers loads them once per mode, as launch.helpers does
scalar_math).
"""
from tensorlib.kernels.cuda.launch import helper_mode, helper_part

# launch.complex_helpers() loads this file once per mode. The helpers live in parts, each built
# for the same mode (launch.helper_part): complex_base (constants, small pieces), complex_arith
# (arithmetic, parts, tests, logical), complex_glibc (exp / hyperbolic / trigonometric),
# complex_numba (log, sqrt, inverses, power).
_MODE, _ = helper_mode(globals())
_PARTS = tuple(helper_part(stem, _MODE)
               for stem in ("complex_arith", "complex_glibc", "complex_numba"))

__all__ = [name for part in _PARTS for name in part.__all__]
globals().update({name: getattr(part, name) for part in _PARTS for name in part.__all__})

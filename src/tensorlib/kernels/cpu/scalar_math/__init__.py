"""Scalar helpers for the generated Numba CPU kernels.

Generated kernel modules do ``from tensorlib.kernels.cpu.scalar_math import *``
and evaluate per-op expression strings such as ``"floordiv(a, b)"`` on operands
already converted to the op's compute type.  Every helper here is a plain Python
stub with a ``numba.extending.overload`` that picks a small implementation per
numba scalar type, so the helpers compile into (and are cached with) the
caller's ``@njit(cache=True, error_model='numpy')`` kernel.

Semantics follow the NumPy 2 ufunc on the same dtype (the test oracle),
including nan / +-inf / signed zeros, wrapping integer overflow and integer
division by zero giving 0.  No helper raises from inside a kernel.

Mixed operand types are promoted like NumPy (``np.result_type``); integer
literals are "weak" (NEP 50), so ``maximum(x_f32, 0)`` stays float32.

Calling a helper from plain Python works (it jit-compiles a wrapper on first
use) but is meant for debugging only: results come back as Python scalars.

The helpers live in parts: plumbing.py (promotion, the stub + overload each helper is, bit
casts, float16 / bfloat16 storage conversions), complex_math.py (complex pieces), arith.py
(arithmetic, comparison, complex parts), transcend.py (math: vector_math's kernels for real
floats) and bitwise.py (bitwise, logical); this module is the import point.

Note on caching: Numba's on-disk cache of a generated kernel is keyed on the
kernel's own source file, not on the helpers it imports and inlines.
``SOURCE_HASH`` (a digest of every file in ``HELPER_FILES``, and the CPU's choice of table
forms) is written into
generated sources (kernels/cpu/pointwise.py) so that an edit to any of them
invalidates stale cached kernels.
"""
import os

from ....dispatch.pointwise_helpers import BLOCK_HELPERS as _BLOCK_HELPERS
from ....dispatch.pointwise_helpers import HELPERS as _VOCABULARY
from ... import codegen as _codegen
from ..vector_math import base as _vm_base
from .plumbing import _bits, _from_bits, bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16
from .arith import (absolute, clip, conj, copysign, floordiv, fmod_, imag_part, isfinite, isinf,
    isnan, maximum, minimum, negative, nextafter, ordinary_pow, power, power_halves,
    power_ordinary, real_part, reciprocal, remainder, scale, sign, signbit, small_halves, square,
    true_div)
from .transcend import (acos, acosh, asin, asinh, atan, atan2, atanh, ceil, cos, cos_short, cosh,
    erf, exp, exp2, expm1, floor, hypot, log, log10, log10_ordinary, log1p, log2, log2_ordinary,
    log_ordinary, logaddexp, positive_normal, round_half_even, rsqrt, sigmoid, sin, sin_short,
    sinh, sqrt, tan, tan_short, tanh, trig_short, trunc)
from .bitwise import (bit_and, bit_not, bit_or, bit_xor, left_shift, logical_and, logical_not,
    logical_or, logical_xor, right_shift)

# the 16-bit storage conversions (generated code's own extras), the vocabulary of pointwise
# expressions that every backend implements, and the helpers of block fast forms (CPU loops
# only): dispatch/pointwise_helpers.py declares both
__all__ = ["f16_to_f32", "f32_to_f16", "bf16_to_f32", "f32_to_bf16",
           *(name for group in _VOCABULARY.values() for name in group),
           *sorted(_BLOCK_HELPERS)]

# Every file of kernels/cpu whose code a generated kernel imports or inlines (paths relative to
# kernels/cpu): their bytes key the kernels (tests/kernels/cpu/test_vector_math.py checks that
# the list covers every file the generated modules' imports reach).
HELPER_FILES = ("scalar_math/__init__.py", "scalar_math/plumbing.py",
                "scalar_math/complex_math.py", "scalar_math/arith.py", "scalar_math/transcend.py",
                "scalar_math/bitwise.py", "casting.py", "addresses.py", "vector_math/__init__.py",
                "vector_math/base.py", "vector_math/exp_log.py", "vector_math/hyperbolic.py",
                "vector_math/trig.py", "vector_math/inverse_trig.py", "vector_math/power.py",
                "vector_math/erf.py")
# (with the CPU's choice of table forms, vector_math.base.GATHERS: a kernel cache shared
# by machines that choose differently keeps both builds apart)
SOURCE_HASH = _codegen.files_digest(
    [os.path.join(os.path.dirname(os.path.dirname(__file__)), name) for name in HELPER_FILES],
    15) + _vm_base.GATHERS[0]

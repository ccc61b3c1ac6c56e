"""The vocabulary of ops.yaml ``pointwise:`` expressions: the scalar helpers an expression may
call, beside its argument names, Python operators and numeric literals. Each backend
implements every one with NumPy 2's semantics for the compute dtype: kernels/cpu/scalar_math/
as Numba overloads (its ``__all__`` is derived from this list), kernels/cuda/scalar_math.py as
Triton functions (both export them; they may export private extras for their own generated
code). The registration refuses an expression
calling anything else (dispatch/registration.py), and tests/dispatch/test_pointwise_helpers.py
holds both backends to this list. Data only."""
from __future__ import annotations

__all__ = ["HELPERS", "NAMES", "BLOCK_HELPERS"]

HELPERS = {
    "arithmetic": ("floordiv", "remainder", "fmod_", "power", "true_div", "reciprocal",
                   "square", "negative", "absolute", "sign", "scale"),
    "complex parts": ("conj", "real_part", "imag_part"),  # identity / zero on real types
    "comparison": ("maximum", "minimum", "clip", "copysign", "nextafter", "signbit", "isnan",
                   "isinf", "isfinite"),
    "math": ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
             "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
             "acosh", "atanh", "sigmoid", "erf", "floor", "ceil", "trunc", "round_half_even",
             "hypot", "logaddexp"),
    "bitwise": ("bit_and", "bit_or", "bit_xor", "bit_not", "left_shift", "right_shift"),
    "logical": ("logical_and", "logical_or", "logical_xor", "logical_not"),
}

NAMES = frozenset(name for group in HELPERS.values() for name in group)

# The helpers of ``block_fast`` forms (ops.yaml): a guard and cheaper twins of helpers above,
# as accurate (not always the same bits). Only the CPU loops run block forms
# (kernels/cpu/pointwise.py), so only kernels/cpu/scalar_math/ implements these.
BLOCK_HELPERS = frozenset(("trig_short", "sin_short", "cos_short", "tan_short", "small_halves",
                           "power_halves", "ordinary_pow", "power_ordinary", "positive_normal",
                           "log_ordinary", "log2_ordinary", "log10_ordinary"))

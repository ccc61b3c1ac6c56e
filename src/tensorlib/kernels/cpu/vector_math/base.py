"""What every vector_math kernel is built from: the ``_vjit`` compiler (each helper compiled
on its own, marked always-inline for LLVM), ``fma``, the float <-> bit-pattern casts, the shared
constants and the exact 2**k and sign steps."""
import math
import os

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import config as numba_config
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic

_JIT = {"error_model": "numpy", "fastmath": False}


_HELPER_OPT = type(numba_config.OPT)(1)


class _AlwaysInline(CPUDispatcher):
    """A Numba dispatcher whose compiled functions LLVM always inlines into their callers.

    Each helper compiles once per signature (and is cached on disk) on its own; a kernel that
    calls it links the helper's LLVM module, in which the function carries LLVM's
    ``alwaysinline`` attribute, so the caller's optimizer inlines it (LLVM's cost model would
    refuse bodies this large and leave a call that keeps the loop scalar) and vectorizes the
    loop. Numba's own ``inline='always'`` would splice the helper's IR into every caller and
    type it again there: seconds of compile time per kernel for sin/cos."""

    # The disk cache is set up at the first compile: a process whose kernels all load from
    # disk never compiles a helper, and ~100 cache set-ups at import cost ~6 ms of its first
    # call (measured 2026-12-05)
    _caching = False

    def compile(self, sig):
        # A helper's own machine code never runs: every kernel inlines its IR and optimizes it
        # again at full level. So its compile optimizes lightly (LLVM -O1; float64 sin's helper
        # cold: ~0.68 -> ~0.36 s). Numba's pass builders read config.OPT when they run; the
        # compiler lock (re-entrant) keeps other threads' compiles out of the window.
        with global_compiler_lock:
            if not self._caching:
                self.enable_caching()
                self._caching = True
            saved = numba_config.OPT
            numba_config.OPT = _HELPER_OPT
            try:
                return super().compile(sig)
            finally:
                numba_config.OPT = saved

    def __call__(self, *args, **kwargs):
        # compiled without the CPython wrapper (below): from Python there is nothing to call
        raise TypeError(f"vector_math.{self.py_func.__name__}() runs inside jitted kernels "
                        f"only; call it from an @njit function")

    def add_overload(self, cres):
        # Runs for fresh compiles (before the cache saves the library: the attribute is in the
        # cached linking module too) and for loads from the disk cache.
        if not cres.objectmode:
            mod = cres.library._get_module_for_linking()
            fn = mod.get_function(cres.fndesc.mangled_name)
            if not any(b"alwaysinline" in a for a in fn.attributes):
                fn.add_function_attribute("alwaysinline")
        super().add_overload(cres)


def _vjit(fn):
    # No CPython or cfunc wrapper: a helper is only ever inlined into kernels, and the two
    # wrappers were ~30% of a cold transcendental's first call (float64 sin 0.85-0.89 ->
    # 0.57-0.60 s, x ** 2.5 1.38-1.41 -> 0.87-0.90 s; measured 2026-12-05, empty caches)
    disp = _AlwaysInline(py_func=fn, locals={},
                         targetoptions={"nopython": True, "nogil": True, **_JIT,
                                        "no_cpython_wrapper": True, "no_cfunc_wrapper": True})
    return disp


# --------------------------------------------------------------------------
# primitives
# --------------------------------------------------------------------------

@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c with one rounding (llvm.fma: the FMA instruction on x86-64 with FMA3)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, sig, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [t], ir.FunctionType(t, [t, t, t]))
        return builder.call(fn, args)

    return a(a, b, c), codegen


def _bitcast(src, dst, lty):
    @intrinsic
    def cast(typingctx, x):
        if x != src:
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], lty)

        return dst(src), codegen

    return cast


f64_bits = _bitcast(types.float64, types.uint64, ir.IntType(64))
bits_f64 = _bitcast(types.uint64, types.float64, ir.DoubleType())
f32_bits = _bitcast(types.float32, types.uint32, ir.IntType(32))
bits_f32 = _bitcast(types.uint32, types.float32, ir.FloatType())

_SHIFT = 6755399441055744.0          # 1.5 * 2**52: x + SHIFT rounds x to an integer
_SHIFT_BITS = np.uint64(0x4338000000000000)
_F32_SHIFT = np.float32(12582912.0)  # 1.5 * 2**23: y + SHIFT rounds a float32 y to an integer
_SIGN = np.uint64(0x8000000000000000)
_F32_SIGN = np.uint32(0x80000000)
_TWO52 = 4503599627370496.0
_TWO52_BITS = np.uint64(0x4330000000000000)
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01   # fdlibm split: k * LN2_HI exact for |k| < 2**11
_LN2_LO = 1.90821492927058770002e-10
_LN2 = 0.6931471805599453
_LN2_LO53 = 2.3190468138462996e-17     # ln2 - float64(ln2)
_INF = math.inf
_NAN = math.nan


def _cpu_vendor() -> str:
    """The first ``vendor_id`` of /proc/cpuinfo (``""`` where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


def _gather_cost() -> str:
    """How dear per-lane table loads (vector gathers) are on this CPU, which decides where a
    helper trades polynomial terms or divisions for a small table:

    * ``"slow"``: the Gather Data Sampling mitigation microcodes them (~30 cycles each on Intel
      Skylake-SP to Ice Lake with the fix: every table form is slower), or the kernel does not
      say (the arithmetic forms are never far behind);
    * ``"medium"``: AMD. Measured on a Zen 4 (2026-12-05, 1e5 one thread): the table forms of
      float64 exp and log took 1.25x and 1.5x the arithmetic forms' time and float32 pow's
      1.25x, sinh / cosh / acosh / atanh the same; only float64 pow's, which replaces divisions,
      was faster (503 vs 605 us). So only such forms take tables (older AMD cores, whose
      gathers are no cheaper, are given the same rule unmeasured);
    * ``"fast"``: other CPUs the fix leaves unaffected (Intel Sapphire Rapids: every table form
      faster, up to 1.6x).

    ``TENSORLIB_CPU_GATHERS=fast|medium|slow`` decides instead (another value raises ValueError
    naming the variable). The choice is part of the generated kernels' key
    (scalar_math.SOURCE_HASH)."""
    choice = os.environ.get("TENSORLIB_CPU_GATHERS", "").strip().lower()
    if choice and choice not in ("fast", "medium", "slow"):
        raise ValueError(f"TENSORLIB_CPU_GATHERS must be fast, medium or slow, got {choice!r}")
    if choice:
        return choice
    try:
        with open("/sys/devices/system/cpu/vulnerabilities/gather_data_sampling") as f:
            status = f.read()
    except OSError:
        status = None
    return _gather_cost_of(status, _cpu_vendor())


def _gather_cost_of(gds_status, vendor: str) -> str:
    """The rule above, from the kernel's Gather Data Sampling line (None: not there)."""
    status = (gds_status or "").strip().lower()
    if not status.startswith(("not affected", "vulnerable")):
        return "slow"
    return "medium" if vendor == "AuthenticAMD" else "fast"


GATHERS = _gather_cost()
TABLE_LOOKUPS = GATHERS == "fast"           # every table form
TABLES_OVER_DIVISIONS = GATHERS != "slow"   # the forms whose tables replace double divisions


@_vjit
def _pow2(kd):
    """2**k for an integer-valued double k in [-1022, 1023] (no float->int conversion)."""
    u = f64_bits(kd + _SHIFT) + np.uint64(1023)
    return bits_f64(u << np.uint64(52))


@_vjit
def _copysign(mag, sgn):
    return bits_f64((f64_bits(mag) & ~_SIGN) | (f64_bits(sgn) & _SIGN))


@_vjit
def _copysign_f32(mag, sgn):
    """_copysign for float32 (the sign bit moved as an integer: no compare, no select)."""
    return bits_f32(np.uint32((f32_bits(mag) & ~_F32_SIGN) | (f32_bits(sgn) & _F32_SIGN)))


@_vjit
def _flipsign(v, flip):
    """v with its sign bit xor'ed by flip's lowest bit (flip: uint64)."""
    return bits_f64(f64_bits(v) ^ (flip << np.uint64(63)))


@_vjit
def _two_sum(a, b):
    """(s, err): a + b = s + err exactly, s = a + b rounded (Knuth's TwoSum: any order)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@_vjit
def _rcp_corr(x):
    """1/x to ~2**-46 relative, for a correction term's division (a float32 divide, ~3x cheaper
    per element than a double one on the divider the square roots share, refined by one Newton
    step); x within float32's normal range (beyond it: 0 or nan)."""
    r = np.float64(np.float32(1.0) / np.float32(x))
    return fma(r, fma(-x, r, 1.0), r)


@_vjit
def _rcp2(x):
    """1/x to ~1 ulp (_rcp_corr refined once more), for a quotient whose error is damped in
    the result; x within float32's normal range."""
    r = _rcp_corr(x)
    return fma(r, fma(-x, r, 1.0), r)


@_vjit
def _two_prod(a, b):
    """(p, err): a * b = p + err exactly, p = a * b rounded (fma residual)."""
    p = a * b
    return p, fma(a, b, -p)


@_vjit
def _dd_mul(ah, al, bh, bl):
    """(ah + al)(bh + bl) as an unevaluated pair (p, e), p = ah bh rounded: ~2**-104 relative
    for normalized pairs (the al bl term dropped)."""
    p = ah * bh
    return p, fma(ah, bl, fma(al, bh, fma(ah, bh, -p)))

"""ops.yaml ``value_forms``: where a Python-scalar value makes an op exactly a cheaper
expression (float32 ``x ** 2`` is ``x * x``), the CPU's flat loops run that expression's loop
alone (kernels/cpu/pointwise.py ``_guarded_entry``), bit for bit what the op gives."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlib as tl
from tensorlib.dispatch.registration import POINTWISE
from tensorlib.ops.pointwise import HOT_CALLS

SRC = os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__)))


def _bit_patterns(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38,
                        1.8446743e19, 1.8446744e19, -3.4028235e38, 2.180555e13], np.float32)
    return np.concatenate([x, special])


def test_pow_declares_its_square():
    assert ("exponent == 2", "self * self", ("float32", "float64")) in \
        POINTWISE["pow"].value_forms


def _bit_patterns64(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**63, n, dtype=np.uint64).view(np.float64)
    k = np.arange(1, n // 4, dtype=np.float64)
    halfway = np.concatenate([1 + k * 2.0**-27, 3 * (1 + k * 2.0**-27)])  # x * x a tie
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1.5e154,
                        -1.4e-154, 1.7976931348623157e308], np.float64)
    return np.concatenate([x, -x[: n // 2], halfway, special])


def _operands(dtype, exponent, layout):
    """(NumPy x, tensor x, exponent) over random bit patterns and special values, in one of
    four layouts: dense and strided take the flat / strided loops (the value form's own loop),
    a 2-D transposed view and a tensor exponent the general loop (pow itself)."""
    x = _bit_patterns(3000) if dtype == "float32" else _bit_patterns64(4000)
    x = x[: len(x) // 2 * 2]
    if layout == "strided":
        x = x[::2]
    t = tl.asarray(x)
    e = exponent
    if layout == "2-D transposed":
        x = x.reshape(2, -1).T
        t = tl.asarray(x.T.copy()).T
    elif layout == "tensor exponent":
        e = tl.full(t.shape, float(exponent), dtype=t.dtype)
    return x, t, e


def _same(got, want):
    """The same bits (any nan for nan), float32 or float64."""
    bits = np.uint32 if got.dtype == np.float32 else np.uint64
    return bool(np.all((got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))))


LAYOUTS = ["dense", "strided", "2-D transposed", "tensor exponent"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [2, 2.0])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_square_is_bit_for_bit_x_times_x(dtype, exponent, layout):
    # every loop: pow itself squares for y == 2 (float32 2.1805549e13 ** 2 and ~1% of float64
    # squares were an ulp off before)
    x, t, e = _operands(dtype, exponent, layout)
    with np.errstate(all="ignore"):
        want = np.square(x)  # correctly rounded
    assert _same((t ** e).numpy(), want)
    assert _same(tl.pow(t, e).numpy(), want)


def _sqrt_c99(x):
    """sqrt(x), but +0.0 and +inf for -0.0 and -inf (C99's pow(x, 0.5))."""
    return np.where((x == 0) | np.isinf(x), np.abs(x), np.sqrt(x))


def test_pow_declares_its_reciprocal_and_square_root():
    forms = {when: expr for when, expr, dts in POINTWISE["pow"].value_forms}
    assert forms["exponent == -1"] == "reciprocal(self)"
    assert "sqrt(self)" in forms["exponent == 0.5"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [-1, -1.0, 0.5])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reciprocal_and_square_root_are_bit_for_bit(dtype, exponent, layout):
    # as for the square (pow returns these forms for y = -1 and 1/2): NumPy's correctly
    # rounded 1 / x and sqrt(x), on the full path first and the fast paths once hot
    x, t, e = _operands(dtype, exponent, layout)
    with np.errstate(all="ignore"):
        want = np.reciprocal(x) if exponent == -1 else _sqrt_c99(x)
    for _ in range(HOT_CALLS + 2):
        assert _same((t ** e).numpy(), want)
    assert _same(tl.pow(t, e).numpy(), want)


def test_other_exponents_and_dtypes_keep_their_forms():
    with np.errstate(all="ignore"):
        x = np.nan_to_num(np.abs(_bit_patterns(3000)[:-12]) % np.float32(50))
    t = tl.asarray(x)
    for e in (2.5, 3, 0.5, -2):
        with np.errstate(all="ignore"):
            np.testing.assert_allclose((t ** e).numpy(), np.power(x, np.float32(e)), rtol=3e-7)
    d = tl.asarray(x.astype(np.float64))
    for e in (2.5, 3, 0.5, -2):
        with np.errstate(all="ignore"):
            want = x.astype(np.float64) ** e
        np.testing.assert_allclose((d ** e).numpy(), want, rtol=4.5e-16)
    i = tl.asarray(np.arange(-50, 50, dtype=np.int64))
    np.testing.assert_array_equal((i ** 2).numpy(), np.arange(-50, 50) ** 2)


_PROBE = r"""
import json, sys
import numpy as np
import tensorlib as tl
from numba.core.dispatcher import Dispatcher


def compiled():
    return sorted(f"{m}.{k}" for m in list(sys.modules) if m.startswith("tl_pow_")
                  for k, v in vars(sys.modules[m]).items()
                  if isinstance(v, Dispatcher) and v.signatures)


x = tl.asarray(np.linspace(-3, 3, 1000, dtype=np.float32))
x ** 2
after_square = compiled()
x ** 2.5
print(json.dumps([after_square, compiled()]))
"""


def test_a_square_compiles_neither_pow_form(tmp_path):
    env = dict(os.environ, TENSORLIB_CACHE_DIR=str(tmp_path / "tl"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    after_square, after_other = json.loads(r.stdout.strip().splitlines()[-1])
    assert after_square and all(m.startswith("tl_pow_flat_v_") for m in after_square), \
        after_square  # the square's loop alone
    assert set(after_other) - set(after_square)  # 2.5: one of pow's own forms

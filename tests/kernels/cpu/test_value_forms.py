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

SRC = os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__)))


def _bit_patterns(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38,
                        1.8446743e19, 1.8446744e19, -3.4028235e38, 2.180555e13], np.float32)
    return np.concatenate([x, special])


def _same_bits(got, want):
    return bool(np.all((got.view(np.uint32) == want.view(np.uint32))
                       | (np.isnan(got) & np.isnan(want))))


def test_pow_declares_its_square():
    assert ("exponent == 2", "self * self", ("float32",)) in POINTWISE["pow"].value_forms


@pytest.mark.parametrize("exponent", [2, 2.0])
@pytest.mark.parametrize("step", [1, 2])
def test_float32_square_is_bit_for_bit_x_times_x(exponent, step):
    # below the parallel grain, dense or 1-D strided: the flat / strided loops (other layouts
    # run the general loops' pow, within its 1 ulp: 2.1805549e13 ** 2 is one ulp off there)
    x = _bit_patterns(3000)
    t = tl.asarray(x)[::step]
    with np.errstate(all="ignore"):
        want = np.square(x[::step])  # correctly rounded, as x ** 2 is (pow_halves_f32)
    assert _same_bits((t ** exponent).numpy(), want)
    assert _same_bits(tl.pow(t, exponent).numpy(), want)


def test_other_exponents_and_dtypes_keep_their_forms():
    with np.errstate(all="ignore"):
        x = np.nan_to_num(np.abs(_bit_patterns(3000)[:-12]) % np.float32(50))
    t = tl.asarray(x)
    for e in (2.5, 3, 0.5, -2):
        with np.errstate(all="ignore"):
            np.testing.assert_allclose((t ** e).numpy(), np.power(x, np.float32(e)), rtol=3e-7)
    d = tl.asarray(x.astype(np.float64))
    np.testing.assert_allclose((d ** 2).numpy(), x.astype(np.float64) ** 2, rtol=2.3e-16)
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

"""The SIMD width tensorlib asks Numba for (runtime/cpu/vector_width.py): LLVM's default unless
TENSORLIB_CPU_VECTOR_BITS=512 on an AVX-512 CPU, where the user's own NUMBA_CPU_* settings win
and a Numba CPU target built before tensorlib's kernels loaded is left alone. Each case runs in a
fresh interpreter: the choice is made once per process."""
import os
import subprocess
import sys

import llvmlite.binding as ll
import pytest

import tensorlib as tl
from tensorlib.runtime.cpu import vector_width

SRC = os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__)))  # the tree under test
HAS_AVX512 = bool(ll.get_host_cpu_features().get("avx512f"))

_PROBE = """
import numpy as np, numba
{before}
import tensorlib as tl
x = tl.asarray(np.linspace(-2, 2, 5000, dtype=np.float32))
got = tl.tanh(x).numpy()
assert np.allclose(got, np.tanh(x.numpy()), rtol=2e-7, atol=0), "tanh differs"
print(repr(numba.core.config.CPU_FEATURES))
"""


def _features_after_import(env=None, before=""):
    e = dict(os.environ)
    for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", vector_width.ENV):
        e.pop(k, None)
    e.update(env or {})
    e["PYTHONPATH"] = SRC + os.pathsep + e.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", _PROBE.format(before=before)], env=e,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return eval(r.stdout.strip().splitlines()[-1])


def test_default_leaves_numba_alone():
    assert _features_after_import() is None
    assert _features_after_import({vector_width.ENV: "256"}) is None


def test_512_asks_for_wide_vectors_on_avx512_only():
    feats = _features_after_import({vector_width.ENV: "512"})
    if HAS_AVX512:
        assert feats.endswith("," + vector_width.WIDE_FEATURE) and "+avx512f" in feats
    else:
        assert feats is None


@pytest.mark.parametrize("env", [{"NUMBA_CPU_FEATURES": "+sse2"}, {"NUMBA_CPU_NAME": "generic"}])
def test_a_user_numba_choice_wins(env):
    feats = _features_after_import({vector_width.ENV: "512", **env})
    # untouched: what the user set (Numba reads an unset feature list beside a CPU name as "")
    assert feats == env.get("NUMBA_CPU_FEATURES", "" if "NUMBA_CPU_NAME" in env else None)


def test_a_numba_target_built_first_is_left_as_it_is():
    before = "numba.njit(lambda a: a + 1)(1)  # the user's own Numba code compiles first"
    assert _features_after_import({vector_width.ENV: "512"}, before=before) is None


def test_bad_setting_names_the_variable(monkeypatch):
    monkeypatch.setenv(vector_width.ENV, "1024")
    with pytest.raises(ValueError, match="TENSORLIB_CPU_VECTOR_BITS.*1024"):
        vector_width.configure()

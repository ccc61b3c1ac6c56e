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
    with pytest.raises(ValueError, match="TENSORLIB_CPU_VECTOR_BITS.*auto, 256 or 512.*1024"):
        vector_width.configure()


# ---------------------------------------------------------------- per-kernel width (auto mode)

_BITS_PROBE = """
import numpy as np
import tensorlib as tl
rng = np.random.default_rng(7)
out = {}
for dt in ("float32", "float64"):
    x = np.concatenate([rng.standard_normal(70_000) * 30,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, 700.0, -745.5]]).astype(dt)
    t = tl.asarray(x)
    for name in ("exp", "log", "sin", "cos", "tanh", "sigmoid", "expm1", "log1p", "erf", "tan",
                 "atan"):
        out[name + " " + dt] = getattr(tl, name)(t).numpy().tobytes().hex()
    out["atan2 " + dt] = tl.atan2(t, t[::-1]).numpy().tobytes().hex()
import json
print(json.dumps(out))
"""


def _run_probe(src, env):
    e = dict(os.environ)
    for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", vector_width.ENV):
        e.pop(k, None)
    e.update(env)
    e["PYTHONPATH"] = SRC + os.pathsep + e.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", src], env=e, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip().splitlines()[-1]


def test_wide_kernels_give_the_same_bits_as_narrow_ones():
    # the width changes how many lanes run at once, never the arithmetic (no fastmath, explicit
    # fma): every wide_vectors op, above the parallel grain, with special values
    import json
    wide = json.loads(_run_probe(_BITS_PROBE, {}))
    narrow = json.loads(_run_probe(_BITS_PROBE, {vector_width.ENV: "256"}))
    assert wide.keys() == narrow.keys()
    differ = [k for k in wide if wide[k] != narrow[k]]
    assert not differ, f"wide and narrow kernels differ for {differ}"


def test_tagged_ops_write_the_marker_and_others_do_not(monkeypatch):
    from tensorlib.dispatch.registration import POINTWISE
    from tensorlib.kernels.cpu.pointwise import combination_module
    f32, i32 = tl.float32, tl.int32
    monkeypatch.delenv(vector_width.ENV, raising=False)
    assert POINTWISE["tanh"].wide_vectors and not POINTWISE["add"].wide_vectors
    tanh = combination_module(POINTWISE["tanh"], "T", (f32,), f32, f32)
    add = combination_module(POINTWISE["add"], "TT", (f32, f32), f32, f32)
    assert getattr(tanh, vector_width.MARKER, None) == 512
    assert not hasattr(add, vector_width.MARKER)
    # integer compute has no float vectors to widen
    absolute = combination_module(POINTWISE["abs"], "T", (i32,), i32, i32)
    assert not hasattr(absolute, vector_width.MARKER)
    assert vector_width.source_marker(True) == f"{vector_width.MARKER} = 512\n"
    monkeypatch.setenv(vector_width.ENV, "256")
    assert vector_width.source_marker(True) == ""


_ASM_PROBE = """
import types, sys, numpy as np, numba
{hook}
src = '''
import numba, numpy as np
def body(x, out):
    for i in numba.prange(x.size):
        v = x[i]
        out[i] = v * (np.float32(1.5) + v * np.float32(0.25)) / (np.float32(1.0) + v * v)
'''
asm = {}
for name, marked in (("vw_probe_marked", True), ("vw_probe_plain", False)):
    m = types.ModuleType(name)
    if marked:
        m.TENSORLIB_VECTOR_BITS = 512
    sys.modules[name] = m
    exec(compile(src, "<" + name + ">", "exec"), m.__dict__)
    for par in (False, True):
        fn = numba.njit(parallel=par)(m.body)
        x = np.ones(64, np.float32)
        fn(x, x.copy())
        asm[name + str(par)] = "".join(fn.inspect_asm().values()).count("zmm")
print(asm)
"""


@pytest.mark.skipif(not HAS_AVX512, reason="needs an AVX-512 CPU")
def test_only_marked_modules_and_their_parallel_bodies_get_512_bit_vectors():
    hook = "import tensorlib.kernels.cpu  # installs the lowering hook"
    zmm = eval(_run_probe(_ASM_PROBE.replace("{hook}", hook), {}))
    # unmarked code keeps LLVM's own choice for this CPU (no zmm on Intel server cores, which it
    # tunes to prefer 256 bits; some in AMD Zen 4's parallel bodies)
    llvm = eval(_run_probe(_ASM_PROBE.replace("{hook}", ""), {}))
    assert zmm["vw_probe_plainFalse"] == llvm["vw_probe_plainFalse"]
    assert zmm["vw_probe_plainTrue"] == llvm["vw_probe_plainTrue"]
    assert zmm["vw_probe_markedTrue"] > 0  # the outlined parallel body is widened too
    off = eval(_run_probe(_ASM_PROBE.replace("{hook}", hook), {vector_width.ENV: "256"}))
    # the hook reads the marker
    assert off["vw_probe_markedTrue"] > 0  # a module that asks explicitly still gets it

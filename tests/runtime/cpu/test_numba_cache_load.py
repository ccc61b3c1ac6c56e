"""Loading kernels from Numba's disk cache without Numba's compiler registries
(runtime/cpu/numba_cache_load.py). Each case runs fresh interpreters over one private cache
directory: the first fills it, the second loads from it. Numba's runtime module is kept there
too (compiled once, then loaded as object code)."""
import json
import os
import subprocess
import sys

import tensorlib as tl

SRC = os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__)))  # the tree under test

_PROBE = r"""
import json, sys
from numba.core.runtime import nrtdynmod
runtime_builds = []
_create = nrtdynmod.create_nrt_module
def counted(ctx):  # the runtime module built from LLVM IR (not loaded) in this process
    runtime_builds.append(1)
    return _create(ctx)
nrtdynmod.create_nrt_module = counted
import numpy as np
import tensorlib as tl
x = tl.asarray(np.linspace(-3, 3, 4099, dtype=np.float32)[::2])  # strided: a general kernel
got = (tl.exp(x) * 2.0 + 1.0).numpy()
ok = bool(np.allclose(got, np.exp(x.numpy()) * 2 + 1, rtol=2e-6))
y = tl.asarray(np.linspace(-3, 3, 100_000, dtype=np.float32))  # dense: the flat loops
ok = ok and bool(np.allclose(tl.tanh(y * 0.5).numpy(), np.tanh(y.numpy() * 0.5), rtol=2e-6))
# the registries a full refresh imports (numba/core/cpu.py: load_additional_registries)
loaded_linalg = "numba.np.linalg" in sys.modules
loaded_arrayobj = "numba.np.arrayobj" in sys.modules
# a compile after cached loads in the same process: Numba refreshes for it (np.cumsum's
# lowering lives in one of those registries, numba.np.arraymath)
import numba
@numba.njit
def running(a):
    return np.cumsum(a)
print(json.dumps({"ok": ok, "loaded_linalg": loaded_linalg, "loaded_arrayobj": loaded_arrayobj,
                  "compiled": running(np.arange(5.0)).tolist() == [0.0, 1.0, 3.0, 6.0, 10.0],
                  "runtime_builds": len(runtime_builds)}))
"""


def _run(cache_dir):
    env = dict(os.environ, TENSORLIB_CACHE_DIR=os.path.join(cache_dir, "tl"),
               NUMBA_CACHE_DIR=os.path.join(cache_dir, "numba"))
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_cached_kernels_load_without_the_compiler_registries(tmp_path):
    first = _run(str(tmp_path))            # compiles: Numba's full refresh runs
    assert first == {"ok": True, "loaded_linalg": True, "loaded_arrayobj": True,
                     "compiled": True, "runtime_builds": 1}
    second = _run(str(tmp_path))           # every kernel from disk
    assert second["ok"] and second["compiled"]
    assert not second["loaded_linalg"], "a cache load refreshed Numba's whole target context"
    # no cached kernel's environment lives in numba.np.arrayobj (kernels/cpu/addresses.py)
    assert not second["loaded_arrayobj"]
    assert second["runtime_builds"] == 0, "the kept runtime module was not loaded"


def _runtime_files(cache_dir):
    kernels = os.path.join(cache_dir, "tl", "kernels")
    return [os.path.join(kernels, f) for f in os.listdir(kernels) if f.startswith("numba_runtime")]


def test_a_damaged_runtime_file_is_rebuilt(tmp_path):
    """A kept runtime module that is truncated, altered or not a pickle is not loaded: the
    process builds the module (its kernels and NRT-allocating code still run) and replaces
    the file."""
    assert _run(str(tmp_path))["runtime_builds"] == 1
    (path,) = _runtime_files(str(tmp_path))
    good = open(path, "rb").read()
    for damaged in (good[: len(good) // 2], good[:-40] + bytes(40), b"not a pickle"):
        with open(path, "wb") as f:
            f.write(damaged)
        res = _run(str(tmp_path))
        assert res["ok"] and res["compiled"] and res["runtime_builds"] == 1
        assert open(path, "rb").read() != damaged  # rewritten whole
        assert _run(str(tmp_path))["runtime_builds"] == 0

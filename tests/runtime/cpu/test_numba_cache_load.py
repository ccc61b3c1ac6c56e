"""Loading kernels from Numba's disk cache without Numba's compiler registries
(runtime/cpu/numba_cache_load.py). Each case runs fresh interpreters over one private cache
directory: the first fills it, the second loads from it."""
import json
import os
import subprocess
import sys

import tensorlib as tl

SRC = os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__)))  # the tree under test

_PROBE = r"""
import json, sys
import numpy as np
import tensorlib as tl
x = tl.asarray(np.linspace(-3, 3, 4099, dtype=np.float32)[::2])  # strided: a general kernel
got = (tl.exp(x) * 2.0 + 1.0).numpy()
ok = bool(np.allclose(got, np.exp(x.numpy()) * 2 + 1, rtol=2e-6))
# the registries a full refresh imports (numba/core/cpu.py: load_additional_registries)
loaded_linalg = "numba.np.linalg" in sys.modules
# a compile after cached loads in the same process: Numba refreshes for it (np.cumsum's
# lowering lives in one of those registries, numba.np.arraymath)
import numba
@numba.njit
def running(a):
    return np.cumsum(a)
print(json.dumps({"ok": ok, "loaded_linalg": loaded_linalg,
                  "compiled": running(np.arange(5.0)).tolist() == [0.0, 1.0, 3.0, 6.0, 10.0]}))
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
    assert first == {"ok": True, "loaded_linalg": True, "compiled": True}
    second = _run(str(tmp_path))           # every kernel from disk
    assert second["ok"] and second["compiled"]
    assert not second["loaded_linalg"], "a cache load refreshed Numba's whole target context"

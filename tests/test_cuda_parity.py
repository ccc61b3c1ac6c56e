"""scripts/cuda_parity.py in its quick form (one op of each kernel family, two dtypes) on the
interpret backend: every (op, dtype) the CPU runs gives the same result on CUDA. The full run
(every op, every dtype) is `python scripts/cuda_parity.py`; it takes minutes."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..")


def test_quick_parity_run_passes():
    env = dict(os.environ, TENSORLIB_CUDA_BACKEND="interpret",
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src")]
                                          + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    env.pop("TENSORLIB_CUDA_ALLOC_CONF", None)
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "cuda_parity.py"),
                          "--quick"], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith("0 problem(s)"), run.stdout

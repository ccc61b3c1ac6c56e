#!/usr/bin/env bash
# Creates .venv (if missing), installs tensorlib with its bench extra, runs the benchmark CLI
# (CPU, all suites against NumPy; table, bench-out/results.json and PNG plots).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[bench]"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$HOME/.cache/tensorlib/numba}"
# Compile the everyday kernels in parallel first (a no-op once the caches are warm).
.venv/bin/python -m tensorlib.warmup --dtypes float32,float64
exec .venv/bin/python -m tensorlib.bench "$@"

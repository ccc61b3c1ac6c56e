#!/usr/bin/env bash
# Creates .venv (if missing), installs tensorlib, runs the CPU benchmark against NumPy.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$HOME/.cache/tensorlib/numba}"
exec .venv/bin/python benchmarks/core_cpu.py "$@"

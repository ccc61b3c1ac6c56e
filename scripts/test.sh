#!/usr/bin/env bash
# Creates .venv (if missing), installs tensorlib with its test and dask extras, runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test,dask]"
# Numba compiles are cached on disk (NUMBA_CACHE_DIR) so later runs skip them.
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$HOME/.cache/tensorlib/numba}"
exec .venv/bin/python -m pytest -n 2 -q "$@"

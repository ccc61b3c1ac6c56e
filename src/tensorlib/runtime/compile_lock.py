"""One process-wide lock around Python code generation and Triton's interpreter.

On CPython 3.11 the compiler's AST state is shared by all threads: compiling generated source
(the dispatcher's entry points, autograd's recording kernels and formulas) while another thread
builds an AST (Triton's interpreter rewrites each kernel's AST on a CUDA interpret-backend
stream thread) can fail with "SystemError: AST constructor recursion depth mismatch". Both take
this lock. It is re-entrant, and on a CPU-only run nothing else ever holds it.
"""
from __future__ import annotations

import threading

__all__ = ["COMPILE_LOCK"]

COMPILE_LOCK = threading.RLock()

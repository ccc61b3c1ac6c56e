"""What every recording hook shares: the clock, the id counter and the per-thread state (the
innermost open op or range, the thread's id)."""
from __future__ import annotations

import itertools
import threading
import time

_ns = time.perf_counter_ns
_tid = threading.get_native_id
_ids = itertools.count(1)  # op, range and flow ids (next() is atomic under the GIL)


class _TLS(threading.local):
    def __init__(self):
        self.cur = 0         # id of the innermost op / range open on this thread (0: none)
        self.tid = _tid()
        self.suppress = 0    # >0 inside a CUDA host function: its CPU kernels belong to it


_tls = _TLS()

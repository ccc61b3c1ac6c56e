"""``--load N``: N busy-loop processes beside the benchmark, as on a laptop running other
programs, a CI runner sharing its cores, or a Dask worker pool.

Each process is a Python interpreter spinning ``while True: pass`` (checking every few
million iterations that its parent is still alive, so that even a benchmark killed with
SIGKILL leaves no spinning orphan behind for long). They are started before the cases and
killed when the ``with`` block ends, whatever ends it: normal completion, an exception,
Ctrl-C, or SIGTERM (turned into KeyboardInterrupt while the load runs, when installed from the
main thread).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

__all__ = ["BusyLoad", "MAX_LOAD"]

#: Upper bound for --load (a typo such as --load 1000 must not fork-bomb the machine).
MAX_LOAD = 64

# A plain busy loop; every ~2 million iterations it checks that its parent still exists (an
# orphan is re-parented, so getppid() changes) and exits if not.
_LOOP = ("import os, sys\n"
         "parent = os.getppid()\n"
         "sys.stdout.write('r'); sys.stdout.flush()\n"
         "while True:\n"
         "    for _ in range(2_000_000):\n"
         "        pass\n"
         "    if os.getppid() != parent:\n"
         "        sys.exit(0)\n")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class BusyLoad:
    """``with BusyLoad(n) as load: ...``; ``load.pids`` are the processes' ids."""

    def __init__(self, n: int):
        if not 0 <= n <= MAX_LOAD:
            raise ValueError(f"load must be between 0 and {MAX_LOAD}, got {n}")
        self.n = n
        self.procs = []
        self._old_sigterm = None

    @property
    def pids(self) -> list:
        return [p.pid for p in self.procs]

    def __enter__(self):
        if self.n == 0:
            return self
        if threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, _interrupt)
        try:
            for _ in range(self.n):
                p = subprocess.Popen([sys.executable, "-c", _LOOP], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     close_fds=True)
                self.procs.append(p)
            for p in self.procs:  # wait until each one spins (it writes one byte first)
                if p.stdout.read(1) != b"r":
                    raise RuntimeError(f"--load: busy-loop process {p.pid} failed to start "
                                       f"(exit status {p.poll()})")
                p.stdout.close()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def stop(self):
        """Kill and reap every process (idempotent)."""
        for p in self.procs:
            try:
                p.kill()
            except OSError:  # already gone
                pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not linger
                pass
            if p.stdout is not None and not p.stdout.closed:
                p.stdout.close()
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

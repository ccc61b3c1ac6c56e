"""One FIFO of work drained by one daemon thread: the queue behind a CPU stream
(runtime/cpu/streams.py ``CpuQueue``) and behind a stream of the CUDA interpret driver
(runtime/cuda/interpret.py ``_HostStream``). Standard library only.

Items run in submission order; ``_submitted`` / ``_completed`` count them, so "everything
enqueued before now has run" is ``_completed >= _submitted`` read in that order. The first
failure is kept (sticky) and raised, as the subclass words it, by the next ``query`` /
``synchronize`` that sees the queue drained. At interpreter exit no worker may start (a thread
started while the interpreter finalizes never runs): work submitted then runs at once.
"""
from __future__ import annotations

import sys
import threading
from collections import deque

__all__ = ["WorkQueue"]

_STOP = object()


class WorkQueue:
    """Subclasses say how an item runs (``_execute``: returns the error to keep, or None), how a
    kept error is raised (``_failure``), the worker thread's name, and set the class attribute
    ``exiting`` once no worker may start any more. ``_inline`` queues run every item at once
    on the submitting thread."""

    __slots__ = ("id", "priority", "_inline", "_lock", "_work", "_done", "_items", "_submitted",
                 "_completed", "_thread", "_error", "__weakref__")

    exiting = False

    def __init__(self, qid, priority=0):
        self.id = qid
        self.priority = priority
        self._inline = False
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._done = threading.Condition(self._lock)
        self._items = deque()
        self._submitted = 0
        self._completed = 0
        self._thread = None
        self._error = None

    # -- what subclasses define ---------------------------------------------------------------
    def _execute(self, item):
        raise NotImplementedError

    def _failure(self, err):
        """(exception to raise, its cause) for a kept error."""
        raise NotImplementedError

    def _thread_name(self) -> str:
        return f"tensorlib-queue{self.id}"

    def _run_now(self, item) -> int:
        """Runs ``item`` on the submitting thread (inline queue, or exiting)."""
        self._execute(item)
        return self._submitted

    def _worker_started(self) -> None:
        pass

    # -- submitting and draining --------------------------------------------------------------
    def submit(self, item) -> int:
        """Enqueue ``item``; returns its sequence number (it has run once ``_completed``
        reaches it)."""
        if self._inline or sys.is_finalizing() or (self.exiting and self._thread is None):
            return self._run_now(item)
        with self._lock:
            self._items.append(item)
            self._submitted = seq = self._submitted + 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name=self._thread_name())
                self._thread.start()
            else:
                self._work.notify()
        return seq

    def _run(self) -> None:
        self._worker_started()
        lock, items = self._lock, self._items
        while True:
            with lock:
                while not items:
                    self._work.wait()
                item = items.popleft()
            if item is _STOP:
                return
            err = self._execute(item)
            del item  # drop what the item holds (Storages) before it counts as complete
            with lock:
                if err is not None and self._error is None:
                    self._error = err
                self._completed += 1
                self._done.notify_all()

    # -- waiting ------------------------------------------------------------------------------
    def query(self) -> bool:
        # submitted is read before completed: equal values prove everything enqueued before
        # this call has finished.
        submitted = self._submitted
        done = self._completed >= submitted
        if done and self._error is not None:
            self._raise_error()
        return done

    def wait(self, seq, raise_error=True) -> None:
        if self._completed < seq:
            with self._lock:
                while self._completed < seq:
                    self._done.wait()
        if raise_error and self._error is not None:
            self._raise_error()

    def synchronize(self) -> None:
        self.wait(self._submitted)

    def synchronize_quiet(self) -> None:
        """Wait without raising (the error stays for the queue's owner)."""
        self.wait(self._submitted, raise_error=False)

    def _raise_error(self):
        with self._lock:
            err, self._error = self._error, None
        if err is not None:
            exc, cause = self._failure(err)
            raise exc from cause

    def close(self) -> None:
        """Stop the worker once the work queued so far has run."""
        with self._lock:
            if self._thread is not None:
                self._items.append(_STOP)
                self._work.notify()

"""CPU streams: a FIFO of kernel launches per stream, drained by one worker thread.

The default CPU stream (id 0) is the calling thread itself: its work runs inline and costs
nothing. A user stream (``tl.Stream(device="cpu")``) owns a queue from a pool of
``STREAMS_PER_POOL`` (handed out round robin, as CUDA stream pools are, so the number of worker
threads stays bounded); its worker starts on first use. Numba kernels release the GIL
(``nogil=True``), so two streams keep two cores busy.

``launch(fn, name, writes, reads, *args)`` is where a CPU kernel is called. With no user stream
ever used and no profiler running it is one global test and the call. On the default stream the
kernel runs inline (its arrays came from ``Storage.typed()``, which first waited for queued work
that still uses them). On a user stream it enqueues ``fn(*args)`` and records, per Storage, that
the stream uses it (``Storage._uses``), so host accesses (``Storage.data_ptr`` / ``typed``) wait
for it. A queued item holds the operands' Storages: their memory cannot be reused until the
stream has run it.

A kernel that cannot be queued (the host needs its result at once: counts, bounds checks)
calls ``host_sync()`` first: it waits for the current stream, so running inline keeps stream
order. A CPU kernel that calls neither runs inline unordered with the current user stream's
queued work (correct on the default stream, where Storage.typed() waits).

Ordering between user streams is explicit, as on CUDA: ``wait_event`` / ``wait_stream``.
A failure inside queued work is sticky: the next synchronize (or read-wait) of that stream
raises it as RuntimeError. Parallel kernels on a stream's worker share the cores with the other
busy streams (Numba's thread count is set per worker thread).

This module imports only the standard library (and the stdlib-only ``runtime/work_queue.py``).
"""
from __future__ import annotations

import atexit
import os
import threading
import time

from . import cores as _cores
from ..work_queue import WorkQueue

__all__ = ["CpuQueue", "DEFAULT", "launch", "host_sync", "current_queue", "inline_call",
           "set_current",
           "pool_queue", "synchronize_all", "all_queues", "sleep", "record_use", "Mark",
           "STREAMS_PER_POOL"]

STREAMS_PER_POOL = 32
_ns = time.perf_counter_ns


class Mark:
    """One record of an event: done once ``queue`` has completed item ``seq``; ``t`` (ns) is when
    the stream reached it (set before it counts as done)."""

    __slots__ = ("queue", "seq", "t")

    def __init__(self, queue, seq, t=0):
        self.queue = queue
        self.seq = seq
        self.t = t

    def done(self) -> bool:
        return self.queue._completed >= self.seq

    def wait(self) -> None:
        self.queue.wait(self.seq)

    def query(self) -> bool:  # the allocator's ``block.pending`` protocol
        return self.queue._completed >= self.seq


class CpuQueue(WorkQueue):
    """A stream's FIFO (runtime/work_queue.py). Items are ``(fn, args, keep, prof)``; ``keep``
    holds the operands' Storages until the item has run; ``prof`` is the profiler's record (or
    None). The default stream's queue (DEFAULT) is inline: the host runs its items."""

    __slots__ = ()

    @property
    def inline(self) -> bool:
        return self._inline

    def _execute(self, item):
        return _run_item(self, item)

    def _run_now(self, item) -> int:
        _run_item(self, item)
        return self._submitted

    def _worker_started(self) -> None:
        tls.worker = self  # host accesses from this stream's own kernels never wait on it

    def _thread_name(self) -> str:
        return f"tensorlib-cpu-stream{self.id}"

    def _failure(self, err):
        e, name = err
        return (RuntimeError(f"CPU stream {self.id}: work enqueued on the stream failed "
                             f"({name}): {type(e).__name__}: {e}"), e)

    def mark(self) -> Mark:
        """A Mark on the work queued so far (done at once when the queue is idle)."""
        seq = self._submitted
        if self._completed >= seq:
            return Mark(self, seq, _ns())
        m = Mark(self, 0)
        m.seq = self.submit((_fire, (m,), (), None))
        return m

    def __repr__(self):
        return f"<cpu stream queue {self.id}>"


def _fire(mark):
    mark.t = _ns()


def _run_item(q, item):
    """Runs one item (on its worker, or inline); returns (error, name) or None."""
    fn, args, keep, prof = item
    lock = _parallel_lock if _unsafe_parallel(fn) else None
    team = -1  # -1: not a parallel kernel
    if _cores.is_parallel(fn):
        team = _shared_team() if tls.worker is q else 0
    try:
        if lock is not None:
            lock.acquire()
        try:
            if prof is None:
                fn(*args) if team < 0 else _cores.call(fn, args, team)
            else:
                t0 = _ns()
                fn(*args) if team < 0 else _cores.call(fn, args, team)
                prof[0](q.id, t0, _ns(), prof)
        finally:
            if lock is not None:
                lock.release()
                _probe_layer()
    except BaseException as e:  # noqa: BLE001 - kept and re-raised at synchronize
        return e, getattr(fn, "__name__", repr(fn))
    return None


# ---- Numba's workqueue threading layer is not thread-safe ---------------------------------------
# Parallel kernels from two threads at once abort the process under it; OpenMP and TBB are fine.
# Until a parallel kernel has run the layer is unknown, so parallel kernels off the main path are
# serialized until then (and forever under workqueue).
_parallel_lock = threading.Lock()
_layer_safe = False


def _unsafe_parallel(fn) -> bool:
    if _layer_safe:
        return False
    opts = getattr(fn, "targetoptions", None)  # Numba dispatchers only
    return bool(opts) and bool(opts.get("parallel"))


def _shared_team() -> int:
    """The team of a parallel kernel on a stream's worker: the cores are shared among the
    streams busy now (Numba's thread count is per thread), so streams running side by side do
    not each start a team of all cores and oversubscribe them."""
    busy = sum(1 for q in _pool if q._completed < q._submitted)
    return max(1, _cores.team_size() // max(1, busy))




def _probe_layer():
    global _layer_safe
    try:
        import numba
        _layer_safe = numba.threading_layer() != "workqueue"
    except Exception:  # noqa: BLE001 - not initialized yet: stay serialized
        pass


# ---- the default stream, the pool, the current stream -------------------------------------------
DEFAULT = CpuQueue(0)
DEFAULT._inline = True
_pool: list = []
_pool_next = 0
_pool_lock = threading.Lock()


def pool_queue(priority=0) -> CpuQueue:
    """A queue for a new user stream (round robin over a pool of ``STREAMS_PER_POOL``)."""
    global _pool_next
    with _pool_lock:
        if len(_pool) < STREAMS_PER_POOL:
            q = CpuQueue(len(_pool) + 1, priority)
            _pool.append(q)
        else:
            q = _pool[_pool_next % STREAMS_PER_POOL]
        _pool_next += 1
    return q


def all_queues() -> list:
    with _pool_lock:
        return list(_pool)


class _TLS(threading.local):
    def __init__(self):
        self.queue = DEFAULT
        self.stream = None  # the public stream object (None: the default stream)
        self.worker = None  # on a stream's worker thread: that stream's queue


tls = _TLS()

# True once a user stream was made current or used, or while the profiler records kernels:
# launch() then takes the slow path. Sticky for streams: tensors may still have queued uses.
_slow = False
_streams_used = False
_prof = None  # the profiler's kernel sink while profiling


def _update_slow():
    global _slow
    _slow = _streams_used or _prof is not None


def note_streams_used():
    global _streams_used
    if not _streams_used:
        _streams_used = True
        _update_slow()


def set_profiler(sink) -> None:
    """The profiler's hooks (``None``: off). ``sink.tls`` is its thread-local state (``cur``: the
    innermost op id, ``tid``, ``suppress``); ``sink.inline(record)`` takes a kernel run on the
    default stream as ``(name, nbytes, t0, t1, op, tid, suppress)``; ``sink.launch(q, fn,
    name, nbytes)`` returns the record an enqueued item carries, whose first element the worker
    calls as ``rec[0](stream_id, t0, t1, rec)``."""
    global _prof
    _prof = sink
    _update_slow()


def current_queue() -> CpuQueue:
    return tls.queue


def runs_inline() -> bool:
    """Whether a kernel launched now runs at once on the calling thread, unrecorded: the
    default stream is current and the profiler is off (fast paths may then call kernels
    directly; operands with queued CPU-stream work still need ``wait_uses``)."""
    return not _slow or (tls.queue is DEFAULT and _prof is None)


def inline_call(fn, name):
    """For fast paths that call a serial kernel directly, once ``_slow`` is set: the callable
    to use instead of ``fn`` — ``fn`` itself, or a wrapper recording it for the profiler —
    or None while a user stream is current (the fast path must then launch instead)."""
    if tls.queue is not DEFAULT:
        return None
    if _prof is None:
        return fn
    return lambda *args: _run_inline(fn, name, None, args)


def set_current(queue, stream) -> tuple:
    """Makes ``queue`` (public object ``stream``) current on this thread; returns the previous
    (queue, stream) pair."""
    t = tls
    prev = (t.queue, t.stream)
    t.queue = queue
    t.stream = stream
    if queue is not DEFAULT:
        note_streams_used()
    return prev


# ---- the launch helper --------------------------------------------------------------------------
def launch(fn, name, writes, reads, *args, serial=None):
    """Calls CPU kernel ``fn(*args)`` on the current CPU stream. ``writes``: the Tensor (or
    sequence of Tensors) it writes; ``reads``: the operands it reads (non-Tensors are ignored);
    ``name``: the op, for the profiler; ``serial``: a parallel ``fn``'s serial twin, for
    cores.call. Returns what ``fn`` returns on the default stream, None when queued."""
    if not _slow:
        if _cores.is_parallel(fn):
            return _cores.call(fn, args, serial=serial)
        return fn(*args)
    return _launch(fn, name, writes, reads, args)


def launch_pair(pair, work, grain, name, writes, reads, *args):
    """:func:`launch` of a kernel pair (``pair.serial`` / ``pair.parallel``: a generated module,
    ``cores.twins``): the parallel kernel from ``grain`` of ``work`` elements when the team is
    ready for it (cores.team_ready), else the serial one; the serial twin goes along for a
    call after a pause (cores.call)."""
    fn = pair.serial
    if work >= grain and _cores.team_ready(pair, args, work):
        fn = pair.parallel
    return launch(fn, name, writes, reads, *args, serial=pair.serial)


def _storages(writes, reads):
    out = []
    st = getattr(writes, "_storage", None)
    if st is not None:
        out.append(st)
    elif writes:
        for t in writes:
            st = getattr(t, "_storage", None)
            if st is not None:
                out.append(st)
    if reads:
        for t in reads:
            st = getattr(t, "_storage", None)
            if st is not None and st not in out:
                out.append(st)
    return out


def _copy_bytes(name, writes) -> int:
    return getattr(writes, "nbytes", 0) if name == "copy" else 0


def _launch(fn, name, writes, reads, args):
    q = tls.queue
    if q is not DEFAULT:
        return _enqueue(q, fn, name, writes, reads, args)
    # The default stream: the kernel runs here. Its operands' arrays came from Storage.typed(),
    # which already waited for queued work that uses them.
    if _streams_used and not _layer_safe and _unsafe_parallel(fn):
        with _parallel_lock:
            try:
                return _run_inline(fn, name, writes, args)
            finally:
                _probe_layer()
    return _run_inline(fn, name, writes, args)


def _run_inline(fn, name, writes, args):
    sink = _prof
    if sink is None:
        return _cores.run(fn, args)
    t0 = _ns()
    r = _cores.run(fn, args)
    t1 = _ns()
    pt = sink.tls
    sink.inline((name, getattr(writes, "nbytes", 0) if name == "copy" else 0, t0, t1, pt.cur,
                 pt.tid, pt.suppress))
    return r


def _enqueue(q, fn, name, writes, reads, args):
    keep = _storages(writes, reads)
    sink = _prof
    rec = None if sink is None else sink.launch(q, fn, name, _copy_bytes(name, writes))
    seq = q.submit((fn, args, keep, rec))
    for st in keep:
        record_use(st, q, seq)
    return None


def record_use(st, q, seq) -> None:
    """Storage ``st`` is used by item ``seq`` of queue ``q`` (host accesses wait for it)."""
    uses = st._uses
    if uses is None:
        st._uses = {q: seq}
    else:
        uses[q] = seq


def wait_uses(st, raise_error=True) -> None:
    """Waits until no queued work uses Storage ``st``."""
    uses = st._uses
    if uses is None:
        return
    me = tls.worker
    for q, seq in list(uses.items()):
        if q is me:
            continue  # a kernel of q itself: everything before it on q has run
        q.wait(seq, raise_error)
        if uses.get(q) == seq:
            uses.pop(q, None)
    if not uses:
        st._uses = None


def host_access(st, kernel=False) -> None:
    """Storage hook: the host is about to touch ``st`` (a raw pointer, or arrays for a kernel).
    Kernel arrays fetched while a user stream is current are for a launch on that stream, which
    is stream-ordered already: no wait then."""
    if kernel and tls.queue is not DEFAULT:
        return
    wait_uses(st)


def host_sync(*tensors) -> None:
    """For CPU kernels that must run inline even when a user stream is current (their result is
    needed on the host at once): waits for the current stream and for queued uses of
    ``tensors`` so the inline run is ordered as if it had been enqueued."""
    if not _slow:
        return
    q = tls.queue
    if q is not DEFAULT:
        q.synchronize()
    for t in tensors:
        st = getattr(t, "_storage", None)
        if st is not None and st._uses is not None:
            wait_uses(st)


def sleep(seconds: float) -> None:
    """Keeps the current CPU stream busy for ``seconds`` (tests of ordering and overlap)."""
    try:
        seconds = float(seconds)
    except (TypeError, ValueError):
        raise TypeError(f"_sleep(): argument 'seconds' must be a number, got "
                        f"{seconds!r}") from None
    if not seconds >= 0:
        raise ValueError(f"_sleep(): argument 'seconds' must be >= 0, got {seconds!r}")
    launch(time.sleep, "sleep", (), (), seconds)


def synchronize_all(raise_error=True) -> None:
    """Waits for every CPU stream; raises the first sticky error after all have drained."""
    first = None
    for q in all_queues():
        try:
            q.synchronize() if raise_error else q.synchronize_quiet()
        except RuntimeError as e:
            first = first or e
    if first is not None:
        raise first


def _at_exit():
    # Finish queued kernels before the interpreter tears down what they use (bounded: a stream
    # blocked forever, e.g. on an event of a failed program, must not hang the exit); work
    # submitted afterwards runs inline.
    deadline = time.monotonic() + _EXIT_WAIT_S
    try:
        for q in all_queues():
            target = q._submitted
            with q._lock:
                while q._completed < target:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    q._done.wait(left)
    finally:
        CpuQueue.exiting = True


_EXIT_WAIT_S = 30.0


atexit.register(_at_exit)


def _after_fork():
    # Worker threads do not survive fork: the child starts with empty, thread-less queues.
    global _pool_lock, _parallel_lock
    for q in [DEFAULT] + _pool:
        q.__init__(q.id, q.priority)
    DEFAULT._inline = True
    _pool_lock = threading.Lock()
    _parallel_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)

"""The CUDA driver tap: while profiling, the driver's work-enqueueing methods are shadowed on the
driver instance so that every copy / memset / host function / sleep on a CUDA stream is timed."""
from __future__ import annotations

import threading
from functools import partial

from ._common import _ns, _tls

_MEMCPY_NAMES = {"h2d": "Memcpy HtoD", "d2h": "Memcpy DtoH", "d2d": "Memcpy DtoD",
                 "h2h": "Memcpy HtoH", "p2p": "Memcpy PtoP"}


class _DriverTap:
    """Times every copy / memset / host function / sleep enqueued on a CUDA stream. Host-visible
    drivers (interpret): marker host functions just before and after the work, timestamped by
    the stream's worker. A real GPU: timing events around it, read when profiling stops."""

    METHODS = ("memcpy_async", "memcpy_peer_async", "memset_async", "launch_host_func", "sleep")

    def __init__(self, p, driver):
        self.p = p
        self.driver = driver
        self.orig = {m: getattr(driver, m) for m in self.METHODS}
        self.markers = bool(getattr(driver, "host_visible", False))
        self.refs = {}  # device -> (ref event, host ns) for a real GPU
        self.pending = []  # real GPU: (record, start event, end event)
        self.streams = set()  # driver streams that got timed work

    def install(self):
        d = self.driver
        d.memcpy_async = self._memcpy
        d.memcpy_peer_async = self._memcpy_peer
        d.memset_async = self._memset
        d.launch_host_func = self._host_func
        d.sleep = self._sleep

    def uninstall(self):
        for m in self.METHODS:
            self.driver.__dict__.pop(m, None)

    # -- wrappers ---------------------------------------------------------------------------
    def _memcpy(self, dst, src, nbytes, stream, kind):
        if not nbytes:
            return self.orig["memcpy_async"](dst, src, nbytes, stream, kind)
        self._timed(stream, _MEMCPY_NAMES.get(kind, "Memcpy"), "memcpy", nbytes, kind,
                    "cudaMemcpyAsync", self.orig["memcpy_async"],
                    (dst, src, nbytes, stream, kind))

    def _memcpy_peer(self, dst, dst_device, src, src_device, nbytes, stream):
        if not nbytes:
            return self.orig["memcpy_peer_async"](dst, dst_device, src, src_device, nbytes,
                                                  stream)
        self._timed(stream, "Memcpy PtoP", "memcpy", nbytes, "p2p", "cudaMemcpyPeerAsync",
                    self.orig["memcpy_peer_async"],
                    (dst, dst_device, src, src_device, nbytes, stream))

    def _memset(self, ptr, value, nbytes, stream):
        if not nbytes:
            return self.orig["memset_async"](ptr, value, nbytes, stream)
        self._timed(stream, "Memset", "memset", nbytes, "", "cudaMemsetAsync",
                    self.orig["memset_async"], (ptr, value, nbytes, stream))

    def _sleep(self, stream, seconds):
        self._timed(stream, "sleep", "kernel", 0, "", "cudaLaunchKernel", self.orig["sleep"],
                    (stream, seconds))

    def _host_func(self, stream, fn):
        # A host function is a host-memory kernel (interpret): time it where it runs, and keep
        # the CPU kernels inside it from being counted a second time on the CPU's stream 0.
        if getattr(fn, "_tl_wait", False):  # a stream waiting for a CPU event: not work
            return self.orig["launch_host_func"](stream, fn)
        t = _tls
        rec = [None, _host_func_name(fn), "kernel", 0, "", t.cur, t.tid, "cudaLaunchHostFunc",
               0, 0]
        dev = f"cuda:{getattr(stream, 'device', 0)}"
        sid = getattr(stream, "id", 0)
        self.streams.add(stream)

        def timed():
            _tls.suppress += 1
            t0 = _ns()
            try:
                fn()
            finally:
                self.p._device_kernel((dev, sid, t0, _ns(), rec))
                _tls.suppress -= 1

        rec[8] = _ns()
        self.orig["launch_host_func"](stream, timed)
        rec[9] = _ns()

    def _timed(self, stream, name, cat, nbytes, kind, api, fn, args):
        t = _tls
        dev = f"cuda:{getattr(stream, 'device', 0)}"
        sid = getattr(stream, "id", 0)
        rec = [None, name, cat, nbytes, kind, t.cur, t.tid, api, _ns(), 0]
        self.streams.add(stream)
        if self.markers:
            times = [0, 0]
            launch = self.orig["launch_host_func"]
            launch(stream, partial(_stamp, times, 0))
            fn(*args)
            launch(stream, partial(self._marker_done, times, dev, sid, rec))
        else:
            d = self.driver
            ev0 = d.event_create(stream.device, True, False)
            ev1 = d.event_create(stream.device, True, False)
            self._ref(stream)
            d.event_record(ev0, stream)
            fn(*args)
            d.event_record(ev1, stream)
            self.pending.append((dev, sid, rec, ev0, ev1))
        rec[9] = _ns()

    def _marker_done(self, times, dev, sid, rec):
        self.p._device_kernel((dev, sid, times[0], _ns(), rec))

    def _ref(self, stream):
        dev = stream.device
        if dev not in self.refs:
            d = self.driver
            ref = d.event_create(dev, True, False)
            d.event_record(ref, stream)
            d.event_synchronize(ref)  # once per device: pins GPU time to host time
            self.refs[dev] = (ref, _ns())

    def collect(self):
        """Real GPU: wait for the timing events and convert them to host time."""
        d = self.driver
        for dev, sid, rec, ev0, ev1 in self.pending:
            d.event_synchronize(ev1)
            ref, host = self.refs[int(dev.split(":")[1])]
            t0 = host + int(d.event_elapsed_ms(ref, ev0) * 1e6)
            t1 = host + int(d.event_elapsed_ms(ref, ev1) * 1e6)
            self.p._device_kernel((dev, sid, t0, t1, rec))
        self.pending = []

    def drain(self):
        """Wait until the timed work on every stream used has run (host-visible drivers),
        without consuming the streams' errors."""
        if not self.markers:
            return
        for s in list(self.streams):
            ev = threading.Event()
            self.orig["launch_host_func"](s, ev.set)
            ev.wait()


def _stamp(times, i):
    times[i] = _ns()


def _host_func_name(fn) -> str:
    f = getattr(fn, "func", fn)
    name = getattr(f, "__name__", "host_func")
    args = getattr(fn, "args", ())
    if name == "_run_interpreted" and args:  # kernels/cuda/launch.py: an interpreted kernel
        k = args[0]
        name = getattr(k, "__name__", None) or getattr(getattr(k, "fn", None), "__name__",
                                                       None) or "triton_kernel"
    return name.lstrip("_") or "host_func"

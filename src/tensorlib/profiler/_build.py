"""Raw recorded tuples -> ``Trace``: CPU kernels named, flow ids numbered (nothing is numbered
while recording), device kernels and their launches paired."""
from __future__ import annotations

import threading

from ._trace import Trace

_KERNEL_NAMES = {"sleep": "sleep"}


def _kernel_info(name):
    """(kernel name, category) for a CPU kernel launched by op ``name``."""
    return (_KERNEL_NAMES.get(name) or f"{name}_kernel",
            "memcpy" if name == "copy" else "kernel")


def build_trace(p):
    """The ``Trace`` of the stopped profile ``p``."""
    ops = []
    for kind, oid, parent, name, tid, t0, t1, place, extra in p._ops:
        if type(place) is tuple:
            dev, sid = place
        else:
            dev, sid = "cpu", place
        shapes, where = extra if extra is not None else (None, None)
        ops.append((kind, oid, parent, name, tid, t0, t1, dev, sid, shapes, where))
    kernels, launches, flows = [], [], []
    flow = 0
    for name, nbytes, t0, t1, op, tid, suppress in p._inline:
        if suppress:
            continue  # ran inside a timed CUDA host function
        flow += 1
        kname, cat = _kernel_info(name)
        kernels.append(("cpu", 0, kname, cat, t0, t1, nbytes, "h2h" if nbytes else "",
                        flow, op))
        flows.append((tid, t0, flow))
    for sid, t0, t1, name, nbytes, op, tid, l0, l1 in p._cpu_async:
        flow += 1
        kname, cat = _kernel_info(name)
        kernels.append(("cpu", sid, kname, cat, t0, t1, nbytes, "h2h" if nbytes else "",
                        flow, op))
        launches.append((tid, "enqueue " + kname, l0, l1, flow))
    for dev, sid, t0, t1, rec in p._dev_kernels:
        _, name, cat, nbytes, kind, op, tid, api, l0, l1 = rec
        l1 = max(l0, l1)  # a marker may fire before the host noted the launch's end
        flow += 1
        kernels.append((dev, sid, name, cat, t0, t1, nbytes, kind, flow, op))
        launches.append((tid, api, l0, l1, flow))
    names = dict(p._thread_names)
    for th in threading.enumerate():
        if th.native_id is not None:
            names.setdefault(th.native_id, th.name)
    return Trace.from_records(
        start_ns=p._start_ns, end_ns=p._end_ns, ops=ops, kernels=kernels,
        launches=launches, flows=flows, memory=[
            (t, dt if di is None else f"{dt}:{di}", delta, op, tid)
            for t, dt, di, delta, op, tid in p._memory],
        memory_base=p._mem_base,
        thread_names=names,
        options={"record_shapes": p.record_shapes,
                 "profile_memory": p.profile_memory, "with_stack": p.with_stack})

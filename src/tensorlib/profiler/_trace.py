"""The recorded trace: normalized events, Chrome trace JSON export and loading, PNG timeline.

Times are integer nanoseconds from the start of profiling. A trace exported by
``export_chrome_trace`` and loaded back with ``load_trace`` gives the same ``overlap()`` report
(the CLI ``python -m tensorlib.profiler summary trace.json`` relies on it).

Chrome trace layout (Perfetto and chrome://tracing load it): process "host" holds one thread
track per Python thread with the ops (cat ``cpu_op``), user ranges (``user_annotation``) and
launches (``runtime``); one process per device ("cpu", "cuda:0", ...) holds one track per stream
named ``stream N`` with the kernels (``kernel``), copies (``memcpy``) and memsets (``memset``);
flow arrows (cat ``ac2g``) go from each launch to its kernel; ``Memory`` counters per device
(``profile_memory``).
"""
from __future__ import annotations

import json
import os

__all__ = ["Trace", "OpEvent", "KernelEvent", "MemoryEvent", "TraceFormatError", "load_trace"]

FORMAT = "tensorlib.profiler trace"
VERSION = 1
HOST_PID = 1
KERNEL_CATS = {"kernel": "kernel", "memcpy": "memcpy", "memset": "memset",
               "gpu_memcpy": "memcpy", "gpu_memset": "memset"}  # PyTorch's names too
OP_CATS = {"cpu_op": "op", "user_annotation": "range", "operator": "op"}


class TraceFormatError(ValueError):
    """A trace file that is not a readable Chrome trace."""


class OpEvent:
    """An op (``kind == "op"``) or a ``record_function`` range (``"range"``) on a host
    thread."""

    __slots__ = ("kind", "id", "parent", "name", "tid", "start_ns", "end_ns", "device", "stream",
                 "input_shapes", "input_dtypes", "stack")

    def __init__(self, kind, id, parent, name, tid, start_ns, end_ns, device="cpu", stream=0,
                 input_shapes=None, input_dtypes=None, stack=None):
        self.kind = kind
        self.id = id
        self.parent = parent
        self.name = name
        self.tid = tid
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.device = device
        self.stream = stream
        self.input_shapes = input_shapes
        self.input_dtypes = input_dtypes
        self.stack = stack

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns

    def __repr__(self):
        return (f"<{self.kind} {self.name!r} on {self.device} stream {self.stream}, "
                f"{self.duration_ns / 1e3:.3f} us>")


class KernelEvent:
    """Work that ran on a stream: a kernel, a copy (``cat == "memcpy"``; ``kind`` h2d / d2h /
    d2d / h2h / p2p) or a memset."""

    __slots__ = ("device", "stream", "name", "cat", "start_ns", "end_ns", "bytes", "kind", "flow",
                 "op_id")

    def __init__(self, device, stream, name, cat, start_ns, end_ns, bytes=0, kind="", flow=0,
                 op_id=0):
        self.device = device
        self.stream = stream
        self.name = name
        self.cat = cat
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.bytes = bytes
        self.kind = kind
        self.flow = flow
        self.op_id = op_id

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def is_copy(self) -> bool:
        return self.cat == "memcpy"

    @property
    def gbps(self):
        """Bytes per nanosecond = GB/s (None without bytes or duration)."""
        d = self.duration_ns
        return self.bytes / d if self.bytes and d > 0 else None

    def __repr__(self):
        return (f"<{self.cat} {self.name!r} on {self.device} stream {self.stream}, "
                f"{self.duration_ns / 1e3:.3f} us>")


class MemoryEvent:
    __slots__ = ("t_ns", "device", "delta", "total", "op_id", "tid")

    def __init__(self, t_ns, device, delta, total, op_id=0, tid=0):
        self.t_ns = t_ns
        self.device = device
        self.delta = delta
        self.total = total
        self.op_id = op_id
        self.tid = tid

    def __repr__(self):
        kind = "alloc" if self.delta >= 0 else "free"
        return f"<{kind} {abs(self.delta)} B on {self.device}, allocated {self.total} B>"


def _device_order(name: str):
    if name == "cpu":
        return (0, 0)
    head, _, idx = name.partition(":")
    return (1, int(idx)) if idx.isdigit() else (2, name)


class Trace:
    """Ops, kernels, launches and memory events of one profiling run."""

    def __init__(self, ops, kernels, launches=(), flows=(), memory=(), thread_names=None,
                 duration_ns=0, options=None):
        self.ops = sorted(ops, key=lambda e: (e.start_ns, -e.end_ns))
        self.kernels = sorted(kernels, key=lambda k: (k.start_ns, k.end_ns))
        self.launches = list(launches)   # (tid, name, start_ns, end_ns, flow)
        self.flows = list(flows)         # inline kernels: (tid, t_ns, flow)
        self.memory = sorted(memory, key=lambda m: m.t_ns)
        self.thread_names = dict(thread_names or {})
        self.duration_ns = duration_ns
        self.options = dict(options or {})

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_records(cls, start_ns, end_ns, ops, kernels, launches, flows, memory, memory_base,
                     thread_names, options):
        s = start_ns
        op_events = []
        for kind, oid, parent, name, tid, t0, t1, dev, sid, shapes, where in ops:
            op_events.append(OpEvent(kind, oid, parent, name, tid, t0 - s, t1 - s, dev, sid,
                                     shapes[0] if shapes else None,
                                     shapes[1] if shapes else None, where))
        k_events = [KernelEvent(dev, sid, name, cat, t0 - s, t1 - s, nbytes, kind, flow, op)
                    for dev, sid, name, cat, t0, t1, nbytes, kind, flow, op in kernels]
        totals = dict(memory_base)
        m_events = []
        for t, dev, delta, op, tid in sorted(memory, key=lambda m: m[0]):
            totals[dev] = totals.get(dev, 0) + delta
            m_events.append(MemoryEvent(t - s, dev, delta, totals[dev], op, tid))
        return cls(op_events, k_events,
                   [(tid, name, t0 - s, t1 - s, flow) for tid, name, t0, t1, flow in launches],
                   [(tid, t - s, flow) for tid, t, flow in flows], m_events, thread_names,
                   end_ns - s, options)

    @property
    def devices(self) -> list:
        names = {k.device for k in self.kernels} | {o.device for o in self.ops
                                                    if o.kind == "op"}
        names |= {m.device for m in self.memory}
        return sorted(names, key=_device_order)

    # -- analysis (see _analysis.py) ------------------------------------------------------------
    def key_averages(self, group_by_input_shape=False):
        from ._analysis import key_averages
        return key_averages(self, group_by_input_shape)

    def overlap(self):
        from ._analysis import overlap_report
        return overlap_report(self)

    # -- Chrome trace --------------------------------------------------------------------------
    def to_chrome(self) -> dict:
        us = _us
        devices = self.devices
        pids = {d: HOST_PID + 1 + i for i, d in enumerate(devices)}
        ev = [{"ph": "M", "name": "process_name", "pid": HOST_PID, "tid": 0,
               "args": {"name": f"host (pid {os.getpid()})"}},
              {"ph": "M", "name": "process_sort_index", "pid": HOST_PID, "tid": 0,
               "args": {"sort_index": 0}}]
        for d, pid in pids.items():
            ev.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": d}})
            ev.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                       "args": {"sort_index": pid}})
        tids = {o.tid for o in self.ops} | {l[0] for l in self.launches} | \
            {f[0] for f in self.flows} | {m.tid for m in self.memory if m.tid}
        for tid in sorted(tids):
            name = self.thread_names.get(tid, "thread")
            ev.append({"ph": "M", "name": "thread_name", "pid": HOST_PID, "tid": tid,
                       "args": {"name": f"{name} ({tid})"}})
        streams = sorted({(k.device, k.stream) for k in self.kernels},
                         key=lambda x: (_device_order(x[0]), x[1]))
        for d, sid in streams:
            ev.append({"ph": "M", "name": "thread_name", "pid": pids[d], "tid": sid,
                       "args": {"name": f"stream {sid}"}})
            ev.append({"ph": "M", "name": "thread_sort_index", "pid": pids[d], "tid": sid,
                       "args": {"sort_index": sid}})
        for o in self.ops:
            args = {"id": o.id, "parent": o.parent, "device": o.device, "stream": o.stream}
            if o.input_shapes is not None:
                args["Input Dims"] = o.input_shapes
                args["Input type"] = o.input_dtypes
            if o.stack:
                args["Call stack"] = o.stack
            ev.append({"ph": "X", "cat": "cpu_op" if o.kind == "op" else "user_annotation",
                       "name": o.name, "pid": HOST_PID, "tid": o.tid, "ts": us(o.start_ns),
                       "dur": us(o.duration_ns), "args": args})
        starts = {}
        for tid, name, t0, t1, flow in self.launches:
            ev.append({"ph": "X", "cat": "runtime", "name": name, "pid": HOST_PID, "tid": tid,
                       "ts": us(t0), "dur": us(t1 - t0), "args": {"correlation": flow}})
            starts[flow] = (tid, t0)
        for tid, t, flow in self.flows:
            starts[flow] = (tid, t)
        for k in self.kernels:
            args = {"device": k.device, "stream": k.stream, "correlation": k.flow,
                    "op_id": k.op_id}
            if k.bytes:
                args["bytes"] = k.bytes
                g = k.gbps
                if g is not None:
                    args["GB/s"] = round(g, 3)
            if k.kind:
                args["kind"] = k.kind
            pid = pids[k.device]
            ev.append({"ph": "X", "cat": k.cat, "name": k.name, "pid": pid, "tid": k.stream,
                       "ts": us(k.start_ns), "dur": us(k.duration_ns), "args": args})
            src = starts.get(k.flow)
            if src is not None:
                ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": k.flow,
                           "pid": HOST_PID, "tid": src[0], "ts": us(src[1])})
                ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": k.flow, "bp": "e",
                           "pid": pid, "tid": k.stream, "ts": us(k.start_ns)})
        for m in self.memory:
            pid = pids.get(m.device)
            if pid is None:
                continue
            ev.append({"ph": "C", "name": "Memory", "pid": pid, "tid": 0, "ts": us(m.t_ns),
                       "args": {"allocated": m.total}})
            ev.append({"ph": "i", "s": "t", "cat": "memory", "name": "[memory]",
                       "pid": HOST_PID, "tid": m.tid, "ts": us(m.t_ns),
                       "args": {"device": m.device, "bytes": m.delta, "total": m.total,
                                "op_id": m.op_id}})
        return {"traceEvents": ev, "displayTimeUnit": "ms",
                "tensorlib": {"format": FORMAT, "version": VERSION,
                              "duration_us": us(self.duration_ns),
                              "devices": {str(pid): d for d, pid in pids.items()},
                              "options": self.options}}

    def export_chrome_trace(self, path) -> None:
        path = os.fspath(path)
        data = self.to_chrome()
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(data, f, separators=(",", ":"))
        os.replace(tmp, path)  # a reader never sees half a file

    @classmethod
    def from_chrome(cls, data, source="trace") -> "Trace":
        return _parse_chrome(data, source)

    # -- PNG timeline ----------------------------------------------------------------------------
    def plot_timeline(self, path) -> None:
        """One row per stream (and per host thread with ops), bars coloured by category."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise RuntimeError("plot_timeline(): matplotlib is not installed (pip install "
                               "matplotlib); the Chrome trace has the same timeline") from None
        rows = []
        for tid in sorted({o.tid for o in self.ops}):
            spans = [(o.start_ns, o.duration_ns) for o in self.ops
                     if o.tid == tid and o.parent == 0]
            rows.append((f"host {self.thread_names.get(tid, tid)}", spans, "tab:gray"))
        colours = {"kernel": "tab:blue", "memcpy": "tab:orange", "memset": "tab:green"}
        streams = sorted({(k.device, k.stream) for k in self.kernels},
                         key=lambda x: (_device_order(x[0]), x[1]))
        for d, sid in streams:
            for cat, colour in colours.items():
                spans = [(k.start_ns, k.duration_ns) for k in self.kernels
                         if k.device == d and k.stream == sid and k.cat == cat]
                if spans:
                    rows.append((f"{d} stream {sid}", spans, colour))
        labels = list(dict.fromkeys(r[0] for r in rows))
        fig, ax = plt.subplots(figsize=(12, 1 + 0.5 * max(1, len(labels))))
        for label, spans, colour in rows:
            y = labels.index(label)
            ax.broken_barh([(s / 1e6, max(d, 1) / 1e6) for s, d in spans], (y - 0.4, 0.8),
                           facecolors=colour)
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.set_xlabel("ms since profiling started")
        handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
        ax.legend(handles, list(colours), loc="upper right", fontsize="small")
        fig.tight_layout()
        fig.savefig(os.fspath(path), dpi=100)
        plt.close(fig)


def _us(ns) -> float:
    return round(ns / 1000.0, 3)


# ---- loading ------------------------------------------------------------------------------------
def load_trace(path) -> Trace:
    """Reads a Chrome trace JSON file (ours, or another tool's with stream tracks)."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise TraceFormatError(f"load_trace(): cannot read {path!r}: {e.strerror or e}") from None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise TraceFormatError(f"load_trace(): {path!r} is not valid JSON: {e}") from None
    return _parse_chrome(data, repr(path))


def _num(e, key, i, source):
    v = e.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        raise TraceFormatError(f"load_trace(): {source}: event {i} has a non-numeric "
                               f"{key!r}: {v!r}")
    return v


def _parse_chrome(data, source) -> Trace:
    if isinstance(data, dict):
        events = data.get("traceEvents")
        if not isinstance(events, list):
            raise TraceFormatError(f"load_trace(): {source} has no 'traceEvents' list; not a "
                                   f"Chrome trace")
        meta = data.get("tensorlib") if isinstance(data.get("tensorlib"), dict) else {}
    elif isinstance(data, list):
        events, meta = data, {}
    else:
        raise TraceFormatError(f"load_trace(): {source} holds a JSON {type(data).__name__}, "
                               f"not a Chrome trace (an object with 'traceEvents')")
    procs, threads = {}, {}
    for i, e in enumerate(events):
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            raise TraceFormatError(f"load_trace(): {source}: event {i} is not an object with "
                                   f"a 'ph' field: {str(e)[:80]}")
        if e["ph"] == "M":
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            if e.get("name") == "process_name":
                procs[e.get("pid")] = str(args.get("name", ""))
            elif e.get("name") == "thread_name":
                threads[(e.get("pid"), e.get("tid"))] = str(args.get("name", ""))
    dev_of_pid = {}
    for pid, name in procs.items():
        if name == "cpu" or name.startswith("cuda"):
            dev_of_pid[pid] = name
    for pid, name in (meta.get("devices") or {}).items():
        try:
            dev_of_pid[int(pid)] = str(name)
        except (TypeError, ValueError):
            pass
    ops, kernels, launches, flow_src, memory = [], [], [], {}, []
    next_id = [1 << 40]
    t_min = None
    for i, e in enumerate(events):
        ph = e["ph"]
        if ph not in ("X", "s", "i", "I"):
            continue
        ts = _num(e, "ts", i, source)
        t_min = ts if t_min is None else min(t_min, ts)
    t_min = t_min or 0
    for i, e in enumerate(events):
        ph = e["ph"]
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if ph == "X":
            t0 = int(round((_num(e, "ts", i, source) - t_min) * 1000))
            dur = _num(e, "dur", i, source)
            if dur < 0:
                raise TraceFormatError(f"load_trace(): {source}: event {i} has a negative "
                                       f"duration {dur!r}")
            t1 = t0 + int(round(dur * 1000))
            cat = str(e.get("cat", ""))
            name = str(e.get("name", ""))
            pid, tid = e.get("pid"), e.get("tid")
            if cat in KERNEL_CATS and (pid in dev_of_pid or "device" in args):
                dev = str(args.get("device", dev_of_pid.get(pid, "device")))
                sid = args.get("stream", tid)
                if not isinstance(sid, int):
                    label = threads.get((pid, tid), "")
                    sid = int(label[7:]) if label.startswith("stream ") and \
                        label[7:].isdigit() else tid
                kernels.append(KernelEvent(dev, sid, name, KERNEL_CATS[cat], t0, t1,
                                           int(args.get("bytes", 0) or 0),
                                           str(args.get("kind", "")),
                                           args.get("correlation", 0) or 0,
                                           args.get("op_id", 0) or 0))
            elif cat in OP_CATS:
                oid = args.get("id")
                if not isinstance(oid, int):
                    next_id[0] += 1
                    oid = next_id[0]
                shapes = args.get("Input Dims")
                ops.append(OpEvent(OP_CATS[cat], oid, args.get("parent"), name, tid, t0, t1,
                                   str(args.get("device", "cpu")), args.get("stream", 0),
                                   shapes, args.get("Input type"), args.get("Call stack")))
            elif cat == "runtime":
                launches.append((tid, name, t0, t1, args.get("correlation", 0)))
        elif ph == "i" and e.get("cat") == "memory":
            t = int(round((_num(e, "ts", i, source) - t_min) * 1000))
            memory.append(MemoryEvent(t, str(args.get("device", "cpu")),
                                      int(args.get("bytes", 0) or 0),
                                      int(args.get("total", 0) or 0),
                                      args.get("op_id", 0) or 0, e.get("tid", 0)))
        elif ph == "s":
            flow_src[e.get("id")] = (e.get("tid"), int(round((e["ts"] - t_min) * 1000)))
    _fill_parents(ops)
    launch_flows = {l[4] for l in launches}
    flows = [(tid, t, fid) for fid, (tid, t) in flow_src.items() if fid not in launch_flows]
    end = max([o.end_ns for o in ops] + [k.end_ns for k in kernels] + [0])
    duration = meta.get("duration_us")
    duration = int(duration * 1000) if isinstance(duration, (int, float)) else end
    names = {}
    for (pid, tid), label in threads.items():
        if pid not in dev_of_pid:
            names[tid] = label.rsplit(" (", 1)[0]
    return Trace(ops, kernels, launches, flows, memory, names, duration,
                 meta.get("options") if isinstance(meta.get("options"), dict) else {})


def _fill_parents(ops):
    """Parents from nesting on each thread where the file did not give them."""
    if all(isinstance(o.parent, int) for o in ops):
        return
    by_tid = {}
    for o in sorted(ops, key=lambda o: (o.start_ns, -o.end_ns)):
        by_tid.setdefault(o.tid, []).append(o)
    for evs in by_tid.values():
        open_ = []
        for o in evs:
            while open_ and open_[-1].end_ns <= o.start_ns:
                open_.pop()
            if not isinstance(o.parent, int):
                o.parent = open_[-1].id if open_ else 0
            open_.append(o)

"""Summaries of a Trace: per-op averages (``key_averages().table()``) and the stream-overlap
report (``overlap()``)."""
from __future__ import annotations

from itertools import combinations

__all__ = ["key_averages", "KeyAverages", "FunctionEventAvg", "overlap_report", "OverlapReport",
           "DeviceOverlap", "StreamStats", "PairOverlap", "SORT_KEYS"]

# sort key -> attribute; PyTorch's CUDA spellings are accepted for the device columns.
SORT_KEYS = {
    "cpu_time": "cpu_time", "cpu_time_total": "cpu_time_total",
    "self_cpu_time_total": "self_cpu_time_total",
    "device_time": "device_time", "device_time_total": "device_time_total",
    "self_device_time_total": "self_device_time_total",
    "cuda_time": "device_time", "cuda_time_total": "device_time_total",
    "self_cuda_time_total": "self_device_time_total",
    "cpu_memory_usage": "cpu_memory_usage", "self_cpu_memory_usage": "self_cpu_memory_usage",
    "device_memory_usage": "device_memory_usage",
    "self_device_memory_usage": "self_device_memory_usage",
    "cuda_memory_usage": "device_memory_usage",
    "self_cuda_memory_usage": "self_device_memory_usage",
    "count": "count",
}


# ---- key averages -------------------------------------------------------------------------------
class FunctionEventAvg:
    """One row: every op / range / kernel with the same name (and input shapes when grouped).
    Times are microseconds, memory bytes."""

    __slots__ = ("key", "kind", "input_shapes", "count", "cpu_time_total", "self_cpu_time_total",
                 "device_time_total", "self_device_time_total", "cpu_memory_usage",
                 "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage")

    def __init__(self, key, kind, input_shapes=None):
        self.key = key
        self.kind = kind
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        return self.device_time_total / self.count if self.count else 0.0

    # PyTorch's names
    cuda_time = device_time

    @property
    def cuda_time_total(self) -> float:
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        return self.self_device_time_total

    def __repr__(self):
        return (f"<FunctionEventAvg {self.key!r} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us>")


class KeyAverages(list):
    """A list of FunctionEventAvg rows with ``table()``."""

    def __init__(self, rows, grouped_by_shape=False, has_memory=False):
        super().__init__(rows)
        self.grouped_by_shape = grouped_by_shape
        self.has_memory = has_memory

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False) -> str:
        rows = list(self)
        if top_level_events_only:
            rows = [r for r in rows if r.kind != "child"]
        if sort_by is not None:
            if not isinstance(sort_by, str) or sort_by not in SORT_KEYS:
                raise ValueError(f"table(): unknown sort_by {sort_by!r}; expected one of "
                                 f"{sorted(SORT_KEYS)}")
            attr = SORT_KEYS[sort_by]
            rows.sort(key=lambda r: getattr(r, attr), reverse=True)
        if row_limit is not None:
            if isinstance(row_limit, bool) or not isinstance(row_limit, int):
                raise TypeError(f"table(): argument 'row_limit' must be an int, got "
                                f"{row_limit!r}")
            if row_limit >= 0:
                rows = rows[:row_limit]
        return _format_table(self, rows, max_name_column_width, max_shapes_column_width, header)

    def __str__(self):
        return self.table()


def key_averages(trace, group_by_input_shape=False) -> KeyAverages:
    ops = trace.ops
    children = {}
    for o in ops:
        children.setdefault(o.parent, []).append(o)
    self_dev = {}
    for k in trace.kernels:
        self_dev[k.op_id] = self_dev.get(k.op_id, 0) + k.duration_ns
    self_mem = {}
    for m in trace.memory:
        key = (m.op_id, m.device == "cpu")
        self_mem[key] = self_mem.get(key, 0) + m.delta
    total_dev, total_mem = {}, {}

    # Totals over the tree, children before parents (ids grow with start time per thread,
    # but go by explicit post-order to be safe).
    def totals(o):
        stack = [(o, False)]
        while stack:
            e, seen = stack.pop()
            if e.id in total_dev:
                continue
            kids = children.get(e.id, ())
            if not seen:
                stack.append((e, True))
                stack.extend((c, False) for c in kids if c.id not in total_dev)
                continue
            total_dev[e.id] = self_dev.get(e.id, 0) + sum(total_dev.get(c.id, 0) for c in kids)
            total_mem[e.id] = tuple(
                self_mem.get((e.id, is_cpu), 0) + sum(total_mem.get(c.id, (0, 0))[j]
                                                     for c in kids)
                for j, is_cpu in enumerate((True, False)))

    rows = {}
    for o in ops:
        totals(o)
        shapes = _shape_str(o.input_shapes) if group_by_input_shape else None
        key = (o.name, shapes)
        r = rows.get(key)
        if r is None:
            r = rows[key] = FunctionEventAvg(o.name, o.kind if o.parent == 0 else "child",
                                             shapes)
        elif o.parent == 0:
            r.kind = o.kind
        kids = children.get(o.id, ())
        dur = o.duration_ns
        r.count += 1
        r.cpu_time_total += dur / 1e3
        r.self_cpu_time_total += (dur - sum(c.duration_ns for c in kids)) / 1e3
        r.device_time_total += total_dev[o.id] / 1e3
        r.self_device_time_total += self_dev.get(o.id, 0) / 1e3
        cpu_tot, dev_tot = total_mem[o.id]
        r.cpu_memory_usage += cpu_tot
        r.device_memory_usage += dev_tot
        r.self_cpu_memory_usage += self_mem.get((o.id, True), 0)
        r.self_device_memory_usage += self_mem.get((o.id, False), 0)
    for k in trace.kernels:
        key = (k.name, "kernel")
        r = rows.get(key)
        if r is None:
            r = rows[key] = FunctionEventAvg(k.name, k.cat)
        r.count += 1
        r.device_time_total += k.duration_ns / 1e3
        r.self_device_time_total += k.duration_ns / 1e3
    return KeyAverages(list(rows.values()), group_by_input_shape,
                       bool(trace.options.get("profile_memory")) or bool(trace.memory))


def _lists(x):
    return [_lists(v) for v in x] if isinstance(x, (list, tuple)) else x


def _shape_str(shapes) -> str:
    return "" if shapes is None else str(_lists(shapes))


def _fmt_us(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_mem(n: int) -> str:
    for unit, scale in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} b"


def _format_table(ka, rows, name_w, shapes_w, header):
    self_cpu_sum = sum(r.self_cpu_time_total for r in ka if r.kind not in _DEVICE_KINDS)
    self_dev_sum = sum(r.self_device_time_total for r in ka if r.kind in _DEVICE_KINDS)
    has_dev = any(r.device_time_total for r in ka)
    name_w = max(4, min(name_w, max([len(r.key) for r in rows] + [4]) + 2))
    cols = [("Name", name_w, lambda r: _clip(r.key, name_w - 2))]

    def pct(v, tot):
        return f"{100.0 * v / tot:.2f}%" if tot else "0.00%"

    def cpu(fn):
        return lambda r: "--" if r.kind in _DEVICE_KINDS else fn(r)

    cols += [("Self CPU %", 11, cpu(lambda r: pct(r.self_cpu_time_total, self_cpu_sum))),
             ("Self CPU", 12, cpu(lambda r: _fmt_us(r.self_cpu_time_total))),
             ("CPU total %", 12, cpu(lambda r: pct(r.cpu_time_total, self_cpu_sum))),
             ("CPU total", 12, cpu(lambda r: _fmt_us(r.cpu_time_total))),
             ("CPU time avg", 13, cpu(lambda r: _fmt_us(r.cpu_time)))]
    if has_dev:
        cols += [("Self Device", 12, lambda r: _fmt_us(r.self_device_time_total)),
                 ("Self Device %", 14, lambda r: pct(r.self_device_time_total, self_dev_sum)),
                 ("Device total", 13, lambda r: _fmt_us(r.device_time_total)),
                 ("Device time avg", 16, lambda r: _fmt_us(r.device_time))]
    if ka.has_memory:
        cols += [("CPU Mem", 11, lambda r: _fmt_mem(r.cpu_memory_usage)),
                 ("Self CPU Mem", 13, lambda r: _fmt_mem(r.self_cpu_memory_usage))]
        if any(r.device_memory_usage for r in ka):
            cols += [("Device Mem", 11, lambda r: _fmt_mem(r.device_memory_usage)),
                     ("Self Device Mem", 16, lambda r: _fmt_mem(r.self_device_memory_usage))]
    cols.append(("# of Calls", 11, lambda r: str(r.count)))
    if ka.grouped_by_shape:
        shapes_w = max(12, min(shapes_w, max([len(r.input_shapes or "") for r in rows] + [12])))
        cols.append(("Input Shapes", shapes_w, lambda r: _clip(r.input_shapes or "", shapes_w)))
    line = "-" * (sum(w for _, w, _ in cols) + 2 * (len(cols) - 1))
    out = []
    if header:
        out.append(str(header))
    out.append(line)
    out.append(_row([(n, w) for n, w, _ in cols]))
    out.append(line)
    for r in rows:
        out.append(_row([(fn(r), w) for _, w, fn in cols]))
    out.append(line)
    out.append(f"Self CPU time total: {_fmt_us(self_cpu_sum)}")
    if has_dev:
        out.append(f"Self Device time total: {_fmt_us(self_dev_sum)}")
    return "\n".join(out) + "\n"


_DEVICE_KINDS = {"kernel", "memcpy", "memset"}


def _clip(s, w):
    return s if len(s) <= w else s[:max(0, w - 3)] + "..."


def _row(cells):
    first, rest = cells[0], cells[1:]
    return "  ".join([first[0].ljust(first[1])] + [c.rjust(w) for c, w in rest])


# ---- interval arithmetic ------------------------------------------------------------------------
def _union(spans):
    """Sorted disjoint [start, end) list covering ``spans``."""
    out = []
    for a, b in sorted(spans):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return out


def _measure(u) -> int:
    return sum(b - a for a, b in u)


def _intersect(u, v):
    out, i, j = [], 0, 0
    while i < len(u) and j < len(v):
        a = max(u[i][0], v[j][0])
        b = min(u[i][1], v[j][1])
        if a < b:
            out.append([a, b])
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return out


def _at_least_two(unions) -> int:
    """Time during which two or more of the (disjoint-per-stream) unions are busy."""
    points = []
    for u in unions:
        for a, b in u:
            points.append((a, 1))
            points.append((b, -1))
    points.sort()
    total, active, last = 0, 0, None
    for t, d in points:
        if active >= 2 and last is not None:
            total += t - last
        active += d
        last = t
    return total


def _gaps(u, lo, hi):
    gaps, cur = [], lo
    for a, b in u:
        if a > cur:
            gaps.append((cur, a))
        cur = max(cur, b)
    if hi > cur:
        gaps.append((cur, hi))
    return gaps


# ---- the overlap report -------------------------------------------------------------------------
def _ms(ns) -> float:
    return ns / 1e6


class StreamStats:
    """One stream: busy time (union of its work), copy and compute parts, idle time inside the
    device's active window."""

    __slots__ = ("device", "stream", "kernels", "copies", "busy_ms", "copy_ms", "compute_ms",
                 "idle_ms", "copy_bytes")

    def __init__(self, device, stream):
        self.device = device
        self.stream = stream
        self.kernels = self.copies = self.copy_bytes = 0
        self.busy_ms = self.copy_ms = self.compute_ms = self.idle_ms = 0.0

    @property
    def copy_gbps(self):
        return self.copy_bytes / (self.copy_ms * 1e6) if self.copy_bytes and self.copy_ms else None

    def to_dict(self):
        d = {k: getattr(self, k) for k in self.__slots__}
        d["copy_gbps"] = self.copy_gbps
        return d


class PairOverlap:
    """Two streams of one device: time both were busy, and how much of their copies ran under
    the other's compute."""

    __slots__ = ("device", "streams", "overlap_ms", "copy_ms", "copy_hidden_ms")

    def __init__(self, device, streams, overlap_ms, copy_ms, copy_hidden_ms):
        self.device = device
        self.streams = streams
        self.overlap_ms = overlap_ms
        self.copy_ms = copy_ms
        self.copy_hidden_ms = copy_hidden_ms

    @property
    def copy_hidden_share(self):
        return self.copy_hidden_ms / self.copy_ms if self.copy_ms else None

    def to_dict(self):
        d = {k: getattr(self, k) for k in self.__slots__}
        d["streams"] = list(self.streams)
        d["copy_hidden_share"] = self.copy_hidden_share
        return d


class DeviceOverlap:
    """One device: its window (first start to last end of its work), busy and overlapped time,
    copy time hidden under compute, idle gaps, per-stream and per-pair figures."""

    __slots__ = ("device", "window_ms", "busy_ms", "overlap_ms", "copy_ms", "compute_ms",
                 "copy_hidden_ms", "copy_bytes", "idle_ms", "gaps", "streams", "pairs")

    def __init__(self, device):
        self.device = device
        self.window_ms = self.busy_ms = self.overlap_ms = self.copy_ms = 0.0
        self.compute_ms = self.copy_hidden_ms = self.idle_ms = 0.0
        self.copy_bytes = 0
        self.gaps = []      # (start ms, length ms), longest first
        self.streams = []   # StreamStats
        self.pairs = []     # PairOverlap

    @property
    def copy_hidden_share(self):
        """Share of copy time that ran while compute ran on another stream (None: no copies)."""
        return self.copy_hidden_ms / self.copy_ms if self.copy_ms else None

    @property
    def copy_gbps(self):
        return self.copy_bytes / (self.copy_ms * 1e6) if self.copy_bytes and self.copy_ms else None

    def to_dict(self):
        d = {k: getattr(self, k) for k in self.__slots__ if k not in ("streams", "pairs")}
        d["gaps"] = [list(g) for g in self.gaps]
        d["streams"] = [s.to_dict() for s in self.streams]
        d["pairs"] = [p.to_dict() for p in self.pairs]
        d["copy_hidden_share"] = self.copy_hidden_share
        d["copy_gbps"] = self.copy_gbps
        return d


class OverlapReport:
    """``prof.overlap()``: ``overlap_ms`` is the time during which two or more streams (of any
    devices) were busy at once; ``devices`` maps a device name to its DeviceOverlap. Printing it
    gives the text report."""

    def __init__(self, overlap_ms, wall_ms, devices, copies):
        self.overlap_ms = overlap_ms
        self.wall_ms = wall_ms
        self.devices = devices
        self.copies = copies  # kind -> (count, bytes, ms)

    @property
    def streams(self) -> list:
        return [s for d in self.devices.values() for s in d.streams]

    def to_dict(self):
        return {"overlap_ms": self.overlap_ms, "wall_ms": self.wall_ms,
                "devices": {k: d.to_dict() for k, d in self.devices.items()},
                "copies": {k: {"count": c, "bytes": b, "ms": ms,
                               "gbps": (b / (ms * 1e6) if ms else None)}
                           for k, (c, b, ms) in self.copies.items()}}

    def __str__(self):
        return _format_overlap(self)

    def __repr__(self):
        return (f"<OverlapReport overlap_ms={self.overlap_ms:.3f} devices="
                f"{list(self.devices)}>")


def overlap_report(trace) -> OverlapReport:
    from ._trace import _device_order
    by_stream = {}
    for k in trace.kernels:
        by_stream.setdefault((k.device, k.stream), []).append(k)
    devices = {}
    all_unions = []
    copies = {}
    for dev in sorted({d for d, _ in by_stream}, key=_device_order):
        keys = sorted(s for d, s in by_stream if d == dev)
        D = DeviceOverlap(dev)
        unions, copy_u, compute_u = {}, {}, {}
        for sid in keys:
            ks = by_stream[(dev, sid)]
            S = StreamStats(dev, sid)
            unions[sid] = _union([(k.start_ns, k.end_ns) for k in ks])
            copy_u[sid] = _union([(k.start_ns, k.end_ns) for k in ks if k.is_copy])
            compute_u[sid] = _union([(k.start_ns, k.end_ns) for k in ks if k.cat == "kernel"])
            S.kernels = sum(1 for k in ks if not k.is_copy)
            S.copies = sum(1 for k in ks if k.is_copy)
            S.copy_bytes = sum(k.bytes for k in ks if k.is_copy)
            S.busy_ms = _ms(_measure(unions[sid]))
            S.copy_ms = _ms(_measure(copy_u[sid]))
            S.compute_ms = _ms(_measure(compute_u[sid]))
            for k in ks:
                if k.is_copy:
                    c = copies.setdefault(k.kind or "copy", [0, 0, 0.0])
                    c[0] += 1
                    c[1] += k.bytes
                    c[2] += _ms(k.duration_ns)
            D.streams.append(S)
        busy = _union([tuple(x) for u in unions.values() for x in u])
        lo, hi = busy[0][0], busy[-1][1]
        D.window_ms = _ms(hi - lo)
        D.busy_ms = _ms(_measure(busy))
        D.overlap_ms = _ms(_at_least_two(list(unions.values())))
        all_copy = _union([tuple(x) for u in copy_u.values() for x in u])
        D.copy_ms = _ms(_measure(all_copy))
        D.compute_ms = _ms(_measure(_union([tuple(x) for u in compute_u.values() for x in u])))
        # A stream's copy hides under compute on the *other* streams.
        hidden = 0
        for sid in keys:
            others = _union([tuple(x) for s2, u in compute_u.items() if s2 != sid for x in u])
            hidden += _measure(_intersect(copy_u[sid], others))
        D.copy_hidden_ms = min(_ms(hidden), D.copy_ms)
        D.copy_bytes = sum(S.copy_bytes for S in D.streams)
        gaps = _gaps(busy, lo, hi)
        D.idle_ms = _ms(sum(b - a for a, b in gaps))
        D.gaps = sorted(((_ms(a), _ms(b - a)) for a, b in gaps), key=lambda g: -g[1])
        for S in D.streams:
            S.idle_ms = _ms(sum(b - a for a, b in _gaps(unions[S.stream], lo, hi)))
        for a, b in combinations(keys, 2):
            both = _measure(_intersect(unions[a], unions[b]))
            cp = _measure(copy_u[a]) + _measure(copy_u[b])
            hid = _measure(_intersect(copy_u[a], compute_u[b])) + \
                _measure(_intersect(copy_u[b], compute_u[a]))
            D.pairs.append(PairOverlap(dev, (a, b), _ms(both), _ms(cp), _ms(hid)))
        devices[dev] = D
        all_unions.extend(unions.values())
    overlap = _ms(_at_least_two(all_unions))
    copies = {k: tuple(v) for k, v in copies.items()}
    return OverlapReport(overlap, _ms(trace.duration_ns), devices, copies)


def _pct(x):
    return "n/a" if x is None else f"{100.0 * x:.1f} %"


def _gbps(x):
    return "" if x is None else f"{x:.2f} GB/s"


def _format_overlap(r: OverlapReport) -> str:
    n_streams = sum(len(d.streams) for d in r.devices.values())
    out = [f"Stream overlap report: {len(r.devices)} device(s), {n_streams} stream(s), "
           f"profiled {r.wall_ms:.3f} ms",
           f"overlap_ms = {r.overlap_ms:.3f}  (time with two or more streams busy at once)"]
    if not r.devices:
        out.append("no kernels or copies ran on any stream")
        return "\n".join(out) + "\n"
    for kind, (count, nbytes, ms) in sorted(r.copies.items()):
        rate = _gbps(nbytes / (ms * 1e6) if ms else None)
        out.append(f"copies {kind}: {count} x, {nbytes} bytes, {ms:.3f} ms"
                   + (f", {rate}" if rate else ""))
    for d in r.devices.values():
        out.append("")
        out.append(f"device {d.device}: window {d.window_ms:.3f} ms, busy {d.busy_ms:.3f} ms, "
                   f"overlapped {d.overlap_ms:.3f} ms")
        out.append(f"  compute {d.compute_ms:.3f} ms, copy {d.copy_ms:.3f} ms"
                   + (f" ({_gbps(d.copy_gbps)})" if d.copy_gbps else "")
                   + f", copy hidden under compute {d.copy_hidden_ms:.3f} ms "
                   f"({_pct(d.copy_hidden_share)})")
        big = ", ".join(f"{ln:.3f} ms at +{st:.3f} ms" for st, ln in d.gaps[:3])
        out.append(f"  idle {d.idle_ms:.3f} ms in {len(d.gaps)} gap(s)"
                   + (f"; longest: {big}" if big else ""))
        out.append(f"  {'stream':<10}{'kernels':>8}{'copies':>8}{'busy ms':>12}"
                   f"{'compute ms':>12}{'copy ms':>10}{'idle ms':>10}")
        for s in d.streams:
            out.append(f"  {'stream ' + str(s.stream):<10}{s.kernels:>8}{s.copies:>8}"
                       f"{s.busy_ms:>12.3f}{s.compute_ms:>12.3f}{s.copy_ms:>10.3f}"
                       f"{s.idle_ms:>10.3f}")
        if d.pairs:
            out.append(f"  {'pair':<22}{'overlap ms':>12}{'copy hidden':>26}")
            for p in d.pairs:
                label = f"stream {p.streams[0]} | stream {p.streams[1]}"
                hidden = f"{p.copy_hidden_ms:.3f} ms ({_pct(p.copy_hidden_share)})"
                out.append(f"  {label:<22}{p.overlap_ms:>12.3f}{hidden:>26}")
    return "\n".join(out) + "\n"

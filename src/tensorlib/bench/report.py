"""Console output (live progress bar, results table, summary) and the results.json file.

rich draws the progress bar and the table when it is installed (``pip install
'tensorlib[bench]'``); without it the same information is printed as plain text. The progress
bar goes to stderr and the table to stdout, so ``tensorlib-bench > table.txt`` keeps a clean
table. When stderr is not a terminal (CI logs, ``2> log``, a pipe) the progress is one plain
``[i/N] ...`` line per step instead of a bar, so a log shows how far a run got.

Rows flagged ``noisy`` (an implementation's interquartile range above 25 % of its median,
``timing.NOISY_IQR``) get a ``!`` after their iqr and a note naming the noisy side.
"""
from __future__ import annotations

import json
import math
import os
import sys

__all__ = ["Progress", "print_table", "write_json", "SCHEMA", "fmt_time", "fmt_shape",
           "geomean", "summarize", "noisy_note"]

SCHEMA = "tensorlib-bench/1"


def _rich() -> bool:
    import importlib.util
    return importlib.util.find_spec("rich") is not None


# ---- formatting ----------------------------------------------------------------------------------
def fmt_time(ms) -> str:
    if ms is None or not math.isfinite(ms):
        return ""
    if ms < 1e-3:
        return f"{ms * 1e6:.0f} ns"
    if ms < 1:
        return f"{ms * 1e3:.3g} µs"
    if ms < 1000:
        return f"{ms:.3g} ms"
    return f"{ms / 1e3:.3g} s"


def _fmt_n(n: int) -> str:
    return size_label(n) if n >= 10_000 else str(n)  # 1e5, 2e6; 4000 stays 4000


def size_label(n: int) -> str:
    """1000 -> '1e3', 2000000 -> '2e6'; other numbers as they are."""
    n = int(n)
    if n >= 1000:
        e = len(str(n)) - 1
        d, r = divmod(n, 10 ** e)
        if r == 0:
            return f"{d}e{e}"
    return str(n)


def fmt_shape(shape) -> str:
    shape = list(shape)
    if not shape:
        return "-"
    return "x".join(_fmt_n(int(d)) for d in shape)


def fmt_rate(v, unit) -> str:
    if v is None:
        return ""
    return f"{v:.3g} {unit}" if v < 1000 else f"{v:,.0f} {unit}"


def fmt_ratio(r) -> str:
    return "" if r is None else f"{r:.2f}"


def geomean(values):
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def _short(label: str) -> str:
    return label.split(" ")[0] if label else "baseline"


# ---- progress ------------------------------------------------------------------------------------
def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """``with Progress(total) as p: p.step("description"); ...; p.advance()``.

    On a terminal: rich's bar (plain lines without rich). Elsewhere: plain ``[i/N] ...`` lines,
    flushed at once, so logs and pipes show progress (rich would draw nothing there)."""

    def __init__(self, total: int, enabled: bool = True, stream=None):
        self.total = total
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self._rich = enabled and _isatty(self.stream) and _rich()
        self._done = 0

    def __enter__(self):
        if self._rich:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress as _P,
                                       SpinnerColumn, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)
            self._p = _P(SpinnerColumn(), TextColumn("{task.description:<48}"), BarColumn(),
                         MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                         console=Console(stderr=True), transient=True)
            self._p.__enter__()
            self._task = self._p.add_task("starting", total=self.total)
        return self

    def __exit__(self, *exc):
        if self._rich:
            self._p.__exit__(*exc)
        return False

    def step(self, description: str):
        if not self.enabled:
            return
        if self._rich:
            self._p.update(self._task, description=description[:48])
        else:
            print(f"[{self._done + 1}/{self.total}] {description}", file=self.stream,
                  flush=True)

    def advance(self):
        self._done += 1
        if self._rich:
            self._p.advance(self._task)


# ---- the table -----------------------------------------------------------------------------------
def _rows(results):
    extra_names = []
    for r in results:
        for e in r.get("extra_baselines") or []:
            if e["name"] not in extra_names:
                extra_names.append(e["name"])
    rows = []
    for r in results:
        status = r["status"]
        note = r.get("note") or ""
        if status != "ok":
            prefix = {"skipped": "skipped", "failed": "FAILED", "error": "ERROR"}[status]
            note = f"{prefix}: {r['reason']}"
        iqr = ""
        if r["ours_ms"]:
            iqr = f"{100 * r['ours_iqr_ms'] / r['ours_ms']:.0f}%"
        if r.get("noisy"):
            iqr += "!"
            note = "; ".join(x for x in (noisy_note(r), note) if x)
        roof = ""
        if r.get("ours_roofline_pct") is not None:
            roof = f"{r['ours_roofline_pct']:.0f}%"
        extras = []
        by_name = {e["name"]: e for e in r.get("extra_baselines") or []}
        for name in extra_names:
            e = by_name.get(name)
            extras.append(fmt_time(e["ms"]) if e and e["ms"] is not None else
                          ("" if not e else e["status"]))
        if extra_names:
            extras.append(fmt_ratio(r.get("best_peer_ratio")))
        rows.append({"suite": r["suite"], "case": r["name"], "shape": fmt_shape(r["shape"]),
                     "dtype": r["dtype"], "ours": fmt_time(r["ours_ms"]), "iqr": iqr,
                     "base": fmt_time(r["baseline_ms"]), "ratio": r["ratio"],
                     "rate": fmt_rate(r["ours_rate"], r["unit"]), "roof": roof,
                     "extras": extras, "note": note, "status": status})
    return rows, extra_names


def _ratio_style(r):
    if r is None:
        return ""
    return "green" if r <= 1.0 else ("yellow" if r <= 1.5 else "red")


def print_table(results, meta, rooflines, file=None):
    """The results table, then rooflines and a per-suite geometric mean of the ratios."""
    rows, extra_names = _rows(results)
    base = results[0]["baseline"] if results else "baseline"
    summary = _summary_lines(results, meta, rooflines)
    if _rich():
        from rich.console import Console
        from rich.table import Table
        out = file or sys.stdout
        console = Console(file=out, width=None if out.isatty() else 170,
                          highlight=False)
        t = Table(title=f"tensorlib vs {base} on {meta['device']}"
                        f" ({meta.get('gpu') or meta.get('cpu')})", title_justify="left")
        for col, kw in (("case", {}), ("shape", {}), ("dtype", {}),
                        ("ours", {"justify": "right"}), ("iqr", {"justify": "right"}),
                        (_short(base), {"justify": "right"}),
                        ("ratio", {"justify": "right"}), ("ours rate", {"justify": "right"}),
                        ("% roof", {"justify": "right"})):
            t.add_column(col, no_wrap=col != "note", **kw)
        for name in extra_names:
            t.add_column(_short(name), justify="right")
        if extra_names:
            t.add_column("vs best", justify="right")
        t.add_column("note", overflow="fold")
        prev = None
        for row in rows:
            if prev is not None and row["suite"] != prev:
                t.add_section()
            prev = row["suite"]
            r = row["ratio"]
            note = row["note"]
            if row["status"] in ("failed", "error"):
                note = f"[bold red]{note}[/]"
            elif row["status"] == "skipped":
                note = f"[dim]{note}[/]"
            ratio = f"[{_ratio_style(r)}]{fmt_ratio(r)}[/]" if r is not None else ""
            t.add_row(f"{row['suite']}: {row['case']}", row["shape"], row["dtype"], row["ours"],
                      row["iqr"], row["base"], ratio, row["rate"], row["roof"], *row["extras"],
                      note)
        console.print(t)
        for line in summary:
            console.print(line)
        return
    out = file or sys.stdout
    head = ["case", "shape", "dtype", "ours", "iqr", _short(base), "ratio", "ours rate",
            "% roof"] + [_short(n) for n in extra_names] + (["vs best"] if extra_names else []) \
        + ["note"]
    table = [head]
    for row in rows:
        table.append([f"{row['suite']}: {row['case']}", row["shape"], row["dtype"],
                      row["ours"], row["iqr"], row["base"], fmt_ratio(row["ratio"]),
                      row["rate"], row["roof"], *row["extras"], row["note"]])
    widths = [max(len(r[i]) for r in table) for i in range(len(head) - 1)]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1], file=out)
    for line in summary:
        print(line, file=out)


def _summary_lines(results, meta, rooflines):
    lines = []
    ok = [r for r in results if r["status"] == "ok"]
    n_skip = sum(r["status"] == "skipped" for r in results)
    n_bad = sum(r["status"] in ("failed", "error") for r in results)
    lines.append(f"ratio = tensorlib time / {results[0]['baseline'] if results else 'baseline'}"
                 f" time (below 1: tensorlib is faster); times are medians, iqr = interquartile"
                 f" range / median; % roof = tensorlib's rate / the roofline.")
    roof = []
    for key in ("memory", "pcie"):
        r = rooflines.get(key)
        if r and r.get("value"):
            roof.append(f"{key} {r['value']:.1f} {r['unit']} ({r['method']})")
    for dt, r in rooflines.get("gemm", {}).items():
        roof.append(f"GEMM {dt} {r['value']:.1f} {r['unit']} ({r['method']})")
    if roof:
        lines.append("rooflines: " + "; ".join(roof))
    by_suite = {}
    for r in ok:
        by_suite.setdefault(r["suite"], []).append(r["ratio"])
    if by_suite:
        parts = [f"{s} {geomean(v):.2f}" for s, v in by_suite.items() if geomean(v)]
        lines.append("geometric mean ratio per suite: " + ", ".join(parts))
    summary = summarize(results)
    ev = summary["suites"].get("everyday")
    if ev and ev["cases"]:
        lines.extend(_everyday_lines(ev, meta))
    lines.append(f"{len(ok)} timed, {n_skip} skipped, {n_bad} failed")
    if summary["noisy_rows"]:
        lines.append(f"{summary['noisy_rows']} of {len(ok)} timed rows are noisy (marked !: an "
                     f"implementation's interquartile range above {_noisy_pct()}% of its "
                     f"median): rerun those on a quieter machine before trusting them")
    if meta.get("load_processes"):
        lines.append(f"run with --load {meta['load_processes']}: that many busy-loop processes "
                     f"ran beside the benchmark")
    if meta.get("busy_warning"):
        lines.append(meta["busy_warning"])
    return lines


def _noisy_pct() -> str:
    from .timing import NOISY_IQR
    return f"{100 * NOISY_IQR:g}"


def noisy_note(r) -> str:
    """'noisy: iqr tensorlib 31%, numpy 8%' for a record (every timed side's IQR / median)."""
    parts = []
    for label, med, iqr in [("tensorlib", r.get("ours_ms"), r.get("ours_iqr_ms")),
                            (_short(r.get("baseline")), r.get("baseline_ms"),
                             r.get("baseline_iqr_ms"))] + \
            [(_short(e["name"]), e.get("ms"), e.get("iqr_ms"))
             for e in r.get("extra_baselines") or []]:
        if med and iqr is not None:
            parts.append(f"{label} {100 * iqr / med:.0f}%")
    return "noisy: iqr " + ", ".join(parts)


# ---- summary figures (printed and stored in results.json) ----------------------------------------
def _case_ref(r) -> dict:
    return {"name": r["name"], "size": r["size"], "size_label": size_label(r["size"]),
            "shape": list(r["shape"]), "dtype": r["dtype"],
            "ratio": r.get("best_peer_ratio") or r["ratio"],
            "peer": r.get("best_peer") or r["baseline"], "noisy": bool(r.get("noisy"))}


def _group(rows) -> dict:
    ratios = [r.get("best_peer_ratio") or r["ratio"] for r in rows]
    worst = max(rows, key=lambda r: r.get("best_peer_ratio") or r["ratio"], default=None)
    return {"cases": len(rows), "geomean": geomean(ratios),
            "noisy": sum(bool(r.get("noisy")) for r in rows),
            "worst": _case_ref(worst) if worst else None}


def summarize(results, top: int = 10) -> dict:
    """The figures stored under ``summary`` in results.json: per suite, the geometric mean of
    tensorlib's time over the faster peer's (NumPy or, when installed, PyTorch-CPU) and the
    worst case; for the everyday survey also per size (and dtype) and its ``top`` slowest
    cases."""
    ok = [r for r in results if r["status"] == "ok" and (r.get("best_peer_ratio") or r["ratio"])]
    out = {"ratio": "tensorlib median time / the faster peer's median time (best_peer_ratio)",
           "noisy_rows": sum(bool(r.get("noisy")) for r in ok), "suites": {}}
    for suite in dict.fromkeys(r["suite"] for r in results):
        rows = [r for r in ok if r["suite"] == suite]
        entry = _group(rows)
        if suite == "everyday":
            groups = {}
            for r in rows:
                groups.setdefault((r["dtype"], r["size"]), []).append(r)
            entry["by_size"] = [dict(_group(g), size=size, size_label=size_label(size), dtype=dt)
                                for (dt, size), g in sorted(groups.items())]
            slow = sorted(rows, key=lambda r: -(r.get("best_peer_ratio") or r["ratio"]))
            entry["slowest"] = [_case_ref(r) for r in slow[:top]]
        out["suites"][suite] = entry
    return out


def _everyday_lines(ev, meta):
    peers = [meta.get("baseline") or "baseline"] + list(meta.get("extra_baselines") or [])
    who = ("the faster of " + " and ".join(peers)) if len(peers) > 1 else \
        f"{peers[0]} (PyTorch-CPU not in this run)"
    multi = len({g["dtype"] for g in ev["by_size"]}) > 1
    parts = [f"{g['size_label']}{' ' + g['dtype'] if multi else ''} {g['geomean']:.2f} "
             f"({g['cases']} cases)" for g in ev["by_size"] if g["geomean"]]
    w = ev["worst"]
    lines = [f"everyday survey, tensorlib time / {who}, geometric mean per size: "
             + ", ".join(parts) + f"; overall {ev['geomean']:.2f} ({ev['cases']} cases)",
             f"everyday worst: {w['name']} {w['size_label']} {w['dtype']} {w['ratio']:.2f}x "
             f"(vs {_short(w['peer'])})"]
    slow = ", ".join(f"{c['name']} {c['size_label']} {c['ratio']:.2f}"
                     for c in ev["slowest"][:5])
    lines.append(f"everyday slowest 5: {slow}")
    return lines


# ---- results.json ---------------------------------------------------------------------------------
def write_json(path, meta, config, rooflines, results, summary=None):
    doc = {"schema": SCHEMA, "meta": meta, "config": config, "rooflines": rooflines,
           "summary": summary if summary is not None else summarize(results),
           "results": results}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, default=_jsonable)
        f.write("\n")
    os.replace(tmp, path)  # a reader never sees a half-written file


def _jsonable(o):
    if hasattr(o, "item"):  # NumPy scalars
        return o.item()
    if isinstance(o, tuple):
        return list(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")

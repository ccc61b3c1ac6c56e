"""Console output (live progress bar, results table, summary) and the results.json file.

rich draws the progress bar and the table when it is installed (``pip install
'tensorlib[bench]'``); without it the same information is printed as plain text. The progress
bar goes to stderr and the table to stdout, so ``tensorlib-bench > table.txt`` keeps a clean
table.
"""
from __future__ import annotations

import json
import math
import os
import sys

__all__ = ["Progress", "print_table", "write_json", "SCHEMA", "fmt_time", "fmt_shape",
           "geomean"]

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
    if n >= 10_000:
        e = round(math.log10(n))
        if 10 ** e == n:
            return f"1e{e}"
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
class Progress:
    """``with Progress(total) as p: p.step("description"); ...; p.advance()``."""

    def __init__(self, total: int, enabled: bool = True):
        self.total = total
        self.enabled = enabled
        self._rich = enabled and _rich()
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
            print(f"[{self._done + 1}/{self.total}] {description}", file=sys.stderr, flush=True)

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
        roof = ""
        if r.get("ours_roofline_pct") is not None:
            roof = f"{r['ours_roofline_pct']:.0f}%"
        extras = []
        by_name = {e["name"]: e for e in r.get("extra_baselines") or []}
        for name in extra_names:
            e = by_name.get(name)
            extras.append(fmt_time(e["ms"]) if e and e["ms"] is not None else
                          ("" if not e else e["status"]))
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
            "% roof"] + [_short(n) for n in extra_names] + ["note"]
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
    lines.append(f"{len(ok)} timed, {n_skip} skipped, {n_bad} failed")
    if meta.get("busy_warning"):
        lines.append(meta["busy_warning"])
    return lines


# ---- results.json ---------------------------------------------------------------------------------
def write_json(path, meta, config, rooflines, results):
    doc = {"schema": SCHEMA, "meta": meta, "config": config, "rooflines": rooflines,
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

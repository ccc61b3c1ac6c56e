"""``--compare OLD.json NEW.json``: per-case change of tensorlib's time between two runs.

Cases are matched by (suite, name, dtype, shape); both files must come from the same device.
change = new / old - 1 of tensorlib's median time (positive: slower). A case is a regression
when its change exceeds the threshold (percent); the exit status is 1 when any is.
"""
from __future__ import annotations

import json
import sys

from .report import SCHEMA, fmt_shape, fmt_time, geomean

__all__ = ["load_results", "compare", "CompareError"]

_REQUIRED = ("suite", "name", "device", "dtype", "shape", "status", "ours_ms")


class CompareError(Exception):
    """A results file that cannot be compared (the message is one line for the user)."""


def load_results(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise CompareError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise CompareError(f"cannot read {path}: it is a directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CompareError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise CompareError(f"{path} is not valid JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise CompareError(f"{path} is not a tensorlib-bench results file (no 'results' list)")
    if doc.get("schema") not in (None, SCHEMA):
        raise CompareError(f"{path} has schema {doc.get('schema')!r}; this version reads "
                           f"{SCHEMA!r}")
    for i, r in enumerate(doc["results"]):
        missing = [k for k in _REQUIRED if not isinstance(r, dict) or k not in r]
        if missing:
            raise CompareError(f"{path}: result {i} lacks {', '.join(missing)}")
        if r["status"] == "ok" and not _positive(r["ours_ms"]):
            raise CompareError(f"{path}: result {i} ({r['suite']}: {r['name']}) has no valid "
                               f"ours_ms")
    return doc


def _positive(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def _key(r):
    return (r["suite"], r["name"], r["dtype"], tuple(r["shape"]))


def _device(doc, path):
    devs = {r["device"] for r in doc["results"]}
    if len(devs) > 1:
        raise CompareError(f"{path} mixes devices {sorted(devs)}")
    return devs.pop() if devs else (doc.get("meta") or {}).get("device")


def compare(old_path, new_path, threshold_pct: float, file=None) -> int:
    """Prints the comparison; returns 0, or 1 when a case regressed past the threshold.
    Raises CompareError for unreadable or mismatched files."""
    out = file or sys.stdout
    old, new = load_results(old_path), load_results(new_path)
    d_old, d_new = _device(old, old_path), _device(new, new_path)
    if d_old and d_new and d_old != d_new:
        raise CompareError(f"mismatched results: {old_path} is from device {d_old!r}, "
                           f"{new_path} from {d_new!r}")
    o = {_key(r): r for r in old["results"] if r["status"] == "ok"}
    n = {_key(r): r for r in new["results"] if r["status"] == "ok"}
    common = [k for k in n if k in o]
    if not common:
        raise CompareError(f"mismatched results: {old_path} and {new_path} have no timed case "
                           f"in common")
    rows = []
    for k in common:
        a, b = o[k]["ours_ms"], n[k]["ours_ms"]
        change = 100.0 * (b / a - 1.0)
        verdict = ("REGRESSION" if change > threshold_pct else
                   "faster" if change < -threshold_pct else "~")
        rows.append((f"{k[0]}: {k[1]}", fmt_shape(k[3]), k[2], fmt_time(a), fmt_time(b),
                     f"{change:+.1f}%", f"{a / b:.2f}x", verdict))
    _print(rows, out)
    only_old = [k for k in o if k not in n]
    only_new = [k for k in n if k not in o]
    regressions = sum(r[-1] == "REGRESSION" for r in rows)
    faster = sum(r[-1] == "faster" for r in rows)
    speed = geomean([o[k]["ours_ms"] / n[k]["ours_ms"] for k in common])
    print(f"{len(common)} cases compared (threshold {threshold_pct:g}%): {regressions} "
          f"regressed, {faster} faster; geometric-mean speedup {speed:.3f}x"
          + (f"; {len(only_old)} only in {old_path}" if only_old else "")
          + (f"; {len(only_new)} only in {new_path}" if only_new else ""), file=out)
    return 1 if regressions else 0


def _print(rows, out):
    head = ("case", "shape", "dtype", "old", "new", "change", "speedup", "")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        table = [head] + rows
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        for r in table:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip(), file=out)
        return
    t = Table(title="tensorlib time, old -> new (change > 0: slower)", title_justify="left")
    for i, h in enumerate(head):
        t.add_column(h, justify="right" if 3 <= i <= 6 else "left", no_wrap=True)
    for r in rows:
        style = {"REGRESSION": "bold red", "faster": "green"}.get(r[-1], "")
        t.add_row(*r[:-1], f"[{style}]{r[-1]}[/]" if style else r[-1])
    Console(file=out, width=None if out.isatty() else 140, highlight=False).print(t)

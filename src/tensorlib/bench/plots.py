"""PNG plots of a run (matplotlib, Agg backend): per suite, throughput against size for tensorlib
(solid) and the baseline (dashed), one colour per case and dtype; and a summary of all ratios.
Latency suites (alloc, dispatch) plot time per call instead of a rate. The everyday survey plots
each operation's ratio to the faster peer, one bar per size."""
from __future__ import annotations

import math
import os

from .report import size_label

__all__ = ["write_plots"]


def _plt():
    import matplotlib
    matplotlib.use("Agg")  # files only: never needs a display
    import matplotlib.pyplot as plt
    return plt


def write_plots(results, rooflines, out_dir) -> list:
    """Writes ``<suite>.png`` for each suite with timed cases and ``summary.png``; returns the
    paths written."""
    plt = _plt()
    ok = [r for r in results if r["status"] == "ok"]
    paths = []
    suites = []
    for r in ok:
        if r["suite"] not in suites:
            suites.append(r["suite"])
    for suite in suites:
        rows = [r for r in ok if r["suite"] == suite]
        path = os.path.join(out_dir, f"{suite}.png")
        if suite == "everyday":
            _everyday_plot(plt, rows, path)
        else:
            _suite_plot(plt, suite, rows, rooflines, path)
        paths.append(path)
    if ok:
        path = os.path.join(out_dir, "summary.png")
        _summary_plot(plt, ok, path)
        paths.append(path)
    return paths


def _suite_plot(plt, suite, rows, rooflines, path):
    latency = all(r["unit"] is None for r in rows)
    series = {}
    for r in rows:
        series.setdefault((r["name"], r["dtype"]), []).append(r)
    if latency and all(len(v) == 1 for v in series.values()):
        return _bar_plot(plt, suite, rows, path)  # one size per case: nothing to sweep
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    unit = None
    for i, ((name, dtype), rs) in enumerate(series.items()):
        rs = sorted(rs, key=lambda r: r["size"])
        x = [max(r["size"], 1) for r in rs]
        if latency:
            y_o = [r["ours_ms"] * 1e3 for r in rs]
            y_b = [r["baseline_ms"] * 1e3 for r in rs]
        else:
            unit = rs[0]["unit"]
            y_o = [r["ours_rate"] for r in rs]
            y_b = [r["baseline_rate"] for r in rs]
        c = colors[i % len(colors)]
        label = name if len({d for _, d in series}) == 1 else f"{name} {dtype}"
        ax.plot(x, y_o, "-o", color=c, label=f"{label} (tensorlib)", ms=4)
        ax.plot(x, y_b, "--s", color=c, alpha=0.7, label=f"{label} ({_short(rs[0])})", ms=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    roof = _roof_line(rows, rooflines)
    if roof and not latency:
        ax.axhline(roof[0], color="grey", lw=1, ls=":")
        # x in axes fraction, y in data units: the label sits at the left end of the line
        ax.text(0.01, roof[0], roof[1], transform=ax.get_yaxis_transform(), va="bottom",
                fontsize=8, color="grey")
    ax.set_xlabel(_xlabel(suite))
    ax.set_ylabel("µs per call (lower is better)" if latency else
                  f"{unit} (higher is better)")
    dev = rows[0]["device"]
    ax.set_title(f"{suite} on {dev}: tensorlib (solid) vs {_short(rows[0])} (dashed)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _bar_plot(plt, suite, rows, path):
    """µs per call, tensorlib and the baseline side by side for each case."""
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    dtypes = {r["dtype"] for r in rows}
    labels = [r["name"] if len(dtypes) == 1 else f"{r['name']} {r['dtype']}" for r in rows]
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], [r["ours_ms"] * 1e3 for r in rows], 0.4, label="tensorlib")
    ax.bar([i + 0.2 for i in x], [r["baseline_ms"] * 1e3 for r in rows], 0.4,
           label=_short(rows[0]))
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("µs per call (lower is better)")
    ax.set_title(f"{suite} on {rows[0]['device']}: tensorlib vs {_short(rows[0])}")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _everyday_plot(plt, rows, path):
    """Ratio tensorlib / faster peer per operation (rows), one bar per size (and dtype)."""
    names = list(dict.fromkeys(r["name"] for r in rows))
    groups = list(dict.fromkeys((r["size"], r["dtype"]) for r in rows))
    multi = len({d for _, d in groups}) > 1
    by = {(r["name"], r["size"], r["dtype"]): r.get("best_peer_ratio") or r["ratio"]
          for r in rows}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    h = max(3.0, 0.12 * len(names) * len(groups) + 1.5)
    fig, ax = plt.subplots(figsize=(9, h), dpi=110)
    width = 0.8 / len(groups)
    vals = []
    for gi, (size, dt) in enumerate(groups):
        ys, xs = [], []
        for ni, name in enumerate(names):
            v = by.get((name, size, dt))
            if v:
                ys.append(len(names) - 1 - ni + (gi - (len(groups) - 1) / 2) * width)
                xs.append(v)
        vals += xs
        label = size_label(size) + (f" {dt}" if multi else "")
        ax.barh(ys, [v - 1.0 for v in xs], height=width, left=1.0,
                color=colors[gi % len(colors)], label=label)
    ax.axvline(1.0, color="black", lw=1)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names[::-1], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlim(min(min(vals), 0.5) / 1.3, max(max(vals), 2.0) * 1.3)
    peer = "faster peer" if any(r.get("extra_baselines") for r in rows) else _short(rows[0])
    ax.set_xlabel(f"time ratio tensorlib / {peer} (left of 1: tensorlib faster)")
    ax.set_title(f"everyday ops on {rows[0]['device']}: tensorlib vs {peer}")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend(fontsize=8, title="elements")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _roof_line(rows, rooflines):
    kinds = {(r["roofline"], r["dtype"]) for r in rows if r.get("roofline")}
    if len(kinds) != 1:
        return None
    roof, dtype = next(iter(kinds))
    vals = {r["roofline_value"] for r in rows if r.get("roofline_value")}
    if len(vals) != 1:
        return None
    v = vals.pop()
    unit = rows[0]["unit"]
    return v, f"{roof} roofline {v:.3g} {unit}"


def _xlabel(suite):
    return {"matmul": "n (matrices n x n; batched: b x n x n)",
            "alloc": "bytes per allocation", "dispatch": "elements"}.get(suite,
                                                                           "elements")


def _short(r):
    return (r.get("baseline") or "baseline").split(" ")[0]


def _summary_plot(plt, ok, path):
    labels = [f"{r['suite']}: {r['name']} {'x'.join(map(str, r['shape']))} {r['dtype']}"
              for r in ok]
    ratios = [r["ratio"] for r in ok]
    suites = list(dict.fromkeys(r["suite"] for r in ok))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    cmap = {s: colors[i % len(colors)] for i, s in enumerate(suites)}
    h = max(3.0, 0.22 * len(ok) + 1.2)
    fig, ax = plt.subplots(figsize=(9, h), dpi=110)
    y = list(range(len(ok)))[::-1]
    # Bars grow from 1 (parity) towards the ratio, so faster and slower read left and right.
    ax.barh(y, [v - 1.0 for v in ratios], left=1.0, color=[cmap[r["suite"]] for r in ok])
    ax.axvline(1.0, color="black", lw=1)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=6)
    ax.set_xscale("log")
    lo = min(min(ratios), 0.5)
    hi = max(max(ratios), 2.0)
    ax.set_xlim(lo / 1.3, hi * 1.3)
    if all(math.isfinite(v) for v in ratios):
        for yi, v in zip(y, ratios):
            ax.text(v, yi, f" {v:.2f}", va="center", fontsize=6)
    ax.set_xlabel(f"time ratio tensorlib / {_short(ok[0])} (left of 1: tensorlib faster)")
    ax.set_title(f"tensorlib vs {_short(ok[0])} on {ok[0]['device']}")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)

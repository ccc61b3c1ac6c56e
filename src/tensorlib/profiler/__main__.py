"""``python -m tensorlib.profiler summary trace.json [--ops N] [--json]`` prints the overlap
report (and the top ops) of a saved Chrome trace; ``plot trace.json out.png`` draws its timeline
(needs matplotlib)."""
from __future__ import annotations

import argparse
import json
import sys

from ._trace import TraceFormatError, load_trace


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tensorlib.profiler",
                                     description="Summaries of tensorlib profiler traces.")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("summary", help="print the stream-overlap report of a trace")
    s.add_argument("trace", help="Chrome trace JSON written by prof.export_chrome_trace()")
    s.add_argument("--ops", type=int, default=0, metavar="N",
                   help="also print the N ops with the most CPU time")
    s.add_argument("--json", action="store_true", help="print the report as JSON")
    p = sub.add_parser("plot", help="draw the timeline of a trace as a PNG (matplotlib)")
    p.add_argument("trace")
    p.add_argument("out", help="PNG path to write")
    args = parser.parse_args(argv)
    try:
        trace = load_trace(args.trace)
        if args.command == "plot":
            trace.plot_timeline(args.out)
            print(f"wrote {args.out}")
            return 0
        report = trace.overlap()
        if args.json:
            print(json.dumps(report.to_dict(), indent=2))
        else:
            print(report, end="")
            if args.ops > 0:
                print()
                print(trace.key_averages().table(sort_by="cpu_time_total", row_limit=args.ops),
                      end="")
        return 0
    except TraceFormatError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # matplotlib missing
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

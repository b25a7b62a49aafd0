"""`yarnctl trace`: what a container usage trace says (allocation efficiency, [FEEDBACK] Sec. III-B)."""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from yarnctl import jsonout
from yarnctl.cli import argtypes
from yarnctl.errors import ConfigError

WIDE = 140  # columns when not printing to a terminal

EPILOG = """\
examples:
  yarnctl simulate --workload feedback-day --policy fifo --out /tmp/x
  yarnctl trace efficiency /tmp/x/containers-fifo.csv --out /tmp/eff
  yarnctl trace efficiency my-cluster.csv --json

The trace is a CSV with a header naming at least
  container,job,user,memory_mb,vcores,start_s,end_s,used_memory_mb,used_vcores
one row per container with its mean use, or, with an extra t_s column, one row per usage sample
(time-weighted). An is_am column (0/1) marks ApplicationMasters (see --tasks-only); other columns
are ignored. See yarnctl/trace/usage.py or docs/reproduction.md.

E = used / allocated resource-seconds: per container; per job and per user over all their
containers. The table gives percentiles of E and the share of each level below 50% and 100% of
its allocation (other thresholds with --below).
"""


def add_parsers(sub: Any) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add `trace` and its subcommands to `sub`; return the handler."""
    t = sub.add_parser("trace", help="analyse a container usage trace (allocation efficiency)",
                       description="Analyse a container usage trace: what each container, job and user "
                                   "used of what it was allocated.")
    ts = t.add_subparsers(dest="trace_command", metavar="SUBCOMMAND")
    e = ts.add_parser("efficiency", help="allocation efficiency E per container, job and user (Fig. 1 CDFs)",
                      description="Allocation efficiency ([FEEDBACK] Sec. III-B): used over "
                                  "allocated memory and cpu over each container's life, aggregated per job and per "
                                  "user; a table of percentiles and, with --out, CDF plots like [FEEDBACK] Fig. 1.",
                      epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("trace", type=argtypes.path, metavar="TRACE.csv", help="container usage trace (CSV)")
    e.add_argument("--out", type=argtypes.path, metavar="DIR",
                   help="write efficiency.png (CDFs), efficiency.csv (E of every container, job and user) "
                        "and efficiency-summary.csv (the table) into DIR")
    e.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    e.add_argument("--below", type=_thresholds, default=None, metavar="E[,E...]",
                   help="report the share of containers/jobs/users with E below each of these "
                        "(default 0.5,1; e.g. 0.24,0.35,0.5,1 for [FEEDBACK] Sec. III-B's statements)")
    e.add_argument("--tasks-only", action="store_true",
                   help="leave out ApplicationMaster containers (rows with is_am = 1)")
    t.set_defaults(trace_parser=t)
    return {"trace": _cmd_trace}


def _thresholds(text: str) -> list[float]:
    out = []
    for item in text.split(","):
        try:
            x = float(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {item!r}") from None
        if not (x > 0 and math.isfinite(x)):
            raise argparse.ArgumentTypeError(f"thresholds must be > 0, got {item}")
        out.append(x)
    return sorted(set(out))


def _cmd_trace(args: argparse.Namespace) -> int:
    if args.trace_command is None:
        args.trace_parser.print_help(sys.stderr)
        return 2
    return _cmd_efficiency(args)


def _cmd_efficiency(args: argparse.Namespace) -> int:
    from yarnctl.trace.efficiency import LEVELS, RESOURCES, THRESHOLDS, distribution, efficiencies
    from yarnctl.trace.usage import read_trace

    trace = read_trace(args.trace)
    if args.tasks_only:
        trace = [c for c in trace if not c.is_am]
        if not trace:
            raise ConfigError(f"{args.trace}: --tasks-only leaves no container (every row has is_am = 1)")
    by_level = {level: efficiencies(trace, level) for level in LEVELS}
    if not by_level["container"]:
        raise ConfigError(f"{args.trace}: every container has end_s == start_s; no allocation efficiency to measure")
    below = args.below or list(THRESHOLDS)
    dists = [distribution(by_level[level], res, thresholds=below) for level in LEVELS for res in RESOURCES]
    skipped = len(trace) - len(by_level["container"])
    if args.json:
        doc = {"trace": str(args.trace), "containers": len(trace), "zero_duration": skipped,
               "distributions": [_dist_json(d) for d in dists]}
        jsonout.dump(doc)
    else:
        _print_table(dists, args.trace, len(trace), skipped)
    if args.out is not None:
        written = _write(args.out, by_level, dists, args.trace)
        if not args.json:
            from yarnctl.cli import output
            output.print_written(written)
    return 0


def _dist_json(d: Any) -> dict[str, Any]:
    def num(x: float) -> float | None:
        return None if math.isnan(x) else round(x, 6)
    return {"level": d.level, "resource": d.resource, "count": d.count, "mean": num(d.mean),
            "percentiles": {f"p{p}": num(v) for p, v in d.percentiles}, "max": num(d.max),
            "below": {f"{t:g}": num(v) for t, v in d.below}}


def _print_table(dists: Sequence[Any], source: Path, containers: int, skipped: int) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from yarnctl.cli import output

    out = output.out
    if not out.is_terminal:  # piped or redirected: rich would squeeze the 13 columns into 80
        out = Console(highlight=False, soft_wrap=False, width=WIDE)
    t = Table(title=f"allocation efficiency E = used / allocated ({source}, {containers:,} containers)",
              box=box.SIMPLE_HEAD)
    t.add_column("level")
    t.add_column("resource")
    t.add_column("n", justify="right")
    t.add_column("mean", justify="right")
    for p, _ in dists[0].percentiles:
        t.add_column(f"p{p}", justify="right")
    t.add_column("max", justify="right")
    for x, _ in dists[0].below:
        t.add_column(f"E < {_pct(x, 0)}", justify="right")
    for d in dists:
        t.add_row(d.level, d.resource, f"{d.count:,}", _pct(d.mean), *[_pct(v) for _, v in d.percentiles],
                  _pct(d.max), *[_pct(v) for _, v in d.below])
    out.print(t)
    note = f"; {skipped} container(s) with end_s == start_s left out" if skipped else ""
    out.print("[dim]E per job/user = their containers' used / allocated resource-seconds; "
                     f"'E < x' = share of the containers/jobs/users whose E is below x{note}[/dim]")


def _pct(x: float, digits: int = 1) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.{digits}f}%"


def _write(out: Path, by_level: dict[str, Any], dists: Sequence[Any], source: Path) -> list[Path]:
    from yarnctl.trace.plots import efficiency_cdf

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--out {out}: cannot create: {e.strerror or e}") from None
    per_entity = out / "efficiency.csv"
    with per_entity.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["level", "name", "containers", "used_memory_mb_s", "allocated_memory_mb_s", "used_vcore_s",
                    "allocated_vcore_s", "memory", "cpu"])
        for level, effs in by_level.items():
            for x in effs:
                w.writerow([level, x.name, x.containers, round(x.used_memory_mb_s, 1), round(x.allocated_memory_mb_s, 1),
                            round(x.used_vcore_s, 3), round(x.allocated_vcore_s, 3), round(x.memory, 6),
                            round(x.cpu, 6)])
    summary = out / "efficiency-summary.csv"
    with summary.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["level", "resource", "count", "mean", *[f"p{p}" for p, _ in dists[0].percentiles], "max",
                    *[f"below_{t:g}" for t, _ in dists[0].below]])
        for d in dists:
            w.writerow([d.level, d.resource, d.count, round(d.mean, 6), *[round(v, 6) for _, v in d.percentiles],
                        round(d.max, 6), *[round(v, 6) for _, v in d.below]])
    png = efficiency_cdf(by_level, out / "efficiency.png",
                         f"{source.name}: allocation efficiency (CDF, as [FEEDBACK] Fig. 1)")
    return [per_entity, summary, png]

"""OPERA's Sec. IV-B/IV-C measures in the simulator: Fair against OPERA with each relief policy.

    python -m yarnctl.sim.opera_compare --workload opera-mr6 [--reservation multi-chance] [--seed 0]

Per policy: the average job execution time (submit to last task end) of all MapReduce jobs and of
each application, its reduction against Fair, the average number of busy vCores (the simulator's
CPU demand served, at most the physical cores, time-averaged over the makespan: Fig. 5(a)/8(a)),
the opportunistic tasks killed by relief, tasks OOM-killed by the simulator, reduce preemptions
by the MR AM, failed jobs, and the wasted work (seconds run by killed containers: Fig. 9).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from yarnctl.errors import script_exit
from yarnctl.sim.runner import simulate
from yarnctl.sim.workload import load_workload

RELIEFS = ("aggressive", "neutral", "preserve")


@dataclass(frozen=True, slots=True)
class Row:
    """One policy's measures on the workload."""

    label: str
    mr_avg_s: float
    by_app: dict[str, float]
    busy_vcores: float
    busy_share: float
    relief_kills: int
    oom_kills: int
    preemptions: int
    wasted_s: float
    failed: int


def compare(workload: str, seed: int = 0, reservation: str = "multi-chance") -> list[Row]:
    """Fair, then OPERA with each relief policy, on `workload`."""
    w = load_workload(workload, seed)
    runs = [("fair", "fair", {})] + [(f"opera-{r}", "opera", {"relief": r, "reservation": reservation})
                                     for r in RELIEFS]
    rows = []
    for label, name, params in runs:
        (res, run), = simulate(w, [name], {name: params})
        by: dict[str, list[float]] = {}
        for j in res.jobs:
            by.setdefault(j.name, []).append(j.completion_s if j.completion_s is not None else float("nan"))
        mr = [j.completion_s if j.completion_s is not None else float("nan")
              for j in res.jobs if j.type.lower() == "mapreduce"]
        killed = [c for c in run.containers if c.outcome in ("killed", "oom")]
        rows.append(Row(label, statistics.fmean(mr), {k: statistics.fmean(v) for k, v in sorted(by.items())},
                        res.actual_utilization["cpu"] * run.physical.vcores, res.actual_utilization["cpu"],
                        int(run.stats.get("kills", 0)), int(run.stats.get("oom_kills", 0)),
                        int(run.stats.get("reduce_preemptions", 0)), sum(c.end_s - c.start_s for c in killed),
                        res.failed))
    return rows


def _pct(base: float, x: float) -> str:
    return f"{(base - x) / base:+.1%}" if base == base and x == x else "n/a"  # NaN: a job failed


def main(argv: Sequence[str] | None = None) -> int:
    """Print the comparison."""
    ap = argparse.ArgumentParser(prog="python -m yarnctl.sim.opera_compare", description=__doc__.split("\n")[0])
    ap.add_argument("--workload", default="opera-mr6")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reservation", default="multi-chance")
    args = ap.parse_args(argv)
    rows = compare(args.workload, args.seed, args.reservation)
    base = rows[0]
    print(f"{args.workload}, seed {args.seed}, reservation={args.reservation}")
    print(f"{'policy':17} {'MR avg (s)':>10} {'vs fair':>8} {'busy vCores':>12} {'relief kills':>12} "
          f"{'OOM':>4} {'preempt':>7} {'wasted (s)':>10} {'failed':>6}")
    for r in rows:
        print(f"{r.label:17} {r.mr_avg_s:10.1f} {_pct(base.mr_avg_s, r.mr_avg_s):>8} "
              f"{r.busy_vcores:6.1f} ({r.busy_share:3.0%}) {r.relief_kills:12d} {r.oom_kills:4d} {r.preemptions:7d} "
              f"{r.wasted_s:10.0f} {r.failed:6d}")
    print("per application, average job execution time (s) and reduction against fair:")
    for r in rows:
        print(f"{r.label:17} " + "  ".join(f"{k} {v:7.1f} ({_pct(base.by_app[k], v)})" for k, v in r.by_app.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(script_exit(main))

"""One cell of a sweep simulated into one row of metrics (plain floats, so every executor returns the same row)."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np

from yarnctl.sweep.spec import Cell, RunOptions

if TYPE_CHECKING:
    from yarnctl.sim.sharing import SharingProbe

# the metrics of a row, in table order (per job type and per tag ones follow as NAME.TYPE and NAME.tag=TAG)
METRICS = ("makespan_s", "avg_completion_s", "median_completion_s", "p90_completion_s", "avg_wait_s",
           "median_wait_s", "p90_wait_s", "jain_user_completion", "util_cpu", "util_memory", "used_cpu",
           "used_memory", "tasks", "oom_kills", "oom_kill_fraction", "unfinished", "failed",
           "beta_end_min", "beta_min", "sharing_loss_fraction")  # the last three with `sharing:` only


def run_cell(cell: Cell, options: RunOptions = RunOptions()) -> dict[str, Any]:
    """Simulate the cell and summarise it: times, utilisation, fairness across users, OOM kills, sharing degrees if asked; `cell_s` is the wall time."""
    from yarnctl.sim.report import summarize
    from yarnctl.sim.runner import simulate
    from yarnctl.sim.sharing import run_with_probe
    from yarnctl.sim.workload import load_workload

    t0 = time.perf_counter()
    workload = load_workload(cell.workload, seed=cell.seed)
    sharing: dict[str, Any] = {}
    if options.sharing_settle_s is None:
        ((result, _run),) = simulate(workload, [cell.policy], {cell.policy: dict(cell.params)},
                                     max_time_s=options.max_time_s)
    else:
        run, probe = run_with_probe(workload, cell.policy, dict(cell.params), max_time_s=options.max_time_s)
        result = summarize(run)
        sharing = sharing_metrics(probe, options.sharing_settle_s)
    comps = [j.completion_s for j in result.jobs if j.completion_s is not None]
    waits = [j.wait_s for j in result.jobs if j.wait_s is not None]
    row: dict[str, Any] = {
        "makespan_s": result.makespan_s, "avg_completion_s": result.avg_completion_s,
        "median_completion_s": result.median_completion_s, "p90_completion_s": _quantile(comps, 0.9),
        "avg_wait_s": result.avg_wait_s, "median_wait_s": result.median_wait_s, "p90_wait_s": _quantile(waits, 0.9),
        "jain_user_completion": jain([sum(v) / len(v) for v in _by(result.jobs, "user").values() if v]),
        "util_cpu": result.utilization.get("cpu"), "util_memory": result.utilization.get("memory"),
        "used_cpu": result.actual_utilization.get("cpu"), "used_memory": result.actual_utilization.get("memory"),
        "tasks": workload.tasks, "oom_kills": int(result.stats.get("oom_kills", 0)),
        # [FEEDBACK] Sec. V-C's "fraction of crashed tasks": OOM-killed attempts over submitted tasks
        "oom_kill_fraction": result.stats.get("oom_kills", 0) / workload.tasks if workload.tasks else 0.0,
        "unfinished": result.unfinished, "failed": result.failed,
    }
    by_type = _by(result.jobs, "type")
    if len(by_type) > 1:  # per job class only when there is more than one
        for kind, values in sorted(by_type.items()):
            row[f"avg_completion_s.{kind}"] = _mean(values)
            row[f"avg_wait_s.{kind}"] = _mean([j.wait_s for j in result.jobs if j.type == kind and j.wait_s is not None])
    # per tag when a tag splits the workload's jobs ([DRESS]'s small-demand / large-demand), decided by
    # the workload so that every seed has the column; over the tagged jobs that finished
    tags = {spec.id: spec.tags for spec in workload.jobs}
    for tag in sorted({t for ts in tags.values() for t in ts}):
        if 0 < sum(tag in ts for ts in tags.values()) < len(tags):
            mine = [j for j in result.jobs if tag in tags.get(j.id, ())]
            row[f"avg_completion_s.tag={tag}"] = _mean([j.completion_s for j in mine if j.completion_s is not None])
            row[f"avg_wait_s.tag={tag}"] = _mean([j.wait_s for j in mine if j.wait_s is not None])
    row.update(sharing)
    row["cell_s"] = round(time.perf_counter() - t0, 4)
    return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()}


def sharing_metrics(probe: SharingProbe, settle_s: float) -> dict[str, float]:
    """[H-MRF]'s measures of a run (Sec. 4 Eq. 2-3, Fig. 8): every queue's β at the end and its least from `settle_s` on, the least of each over queues, and the share of that time with some queue below β = 1."""
    _, final = probe.samples[-1]
    low = probe.lowest(settle_s)
    row: dict[str, float] = {}
    for q, (beta, _) in sorted(final.items()):
        row[f"beta_end.queue={q}"] = beta
        row[f"beta_min.queue={q}"] = low.get(q, beta)
    row["beta_end_min"] = min((b for b, _ in final.values()), default=math.nan)
    row["beta_min"] = min((row[f"beta_min.queue={q}"] for q in final), default=math.nan)
    row["sharing_loss_fraction"] = probe.loss_fraction(settle_s)
    return row


def jain(xs: list[float]) -> float | None:
    """Jain's fairness index (Σx)² / (n Σx²): 1 when all are equal, 1/n when one has everything; None for no values."""
    if not xs:
        return None
    sq = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if sq > 0 else 1.0


def _by(jobs: Any, attr: str) -> dict[str, list[float]]:
    """Completion times of the finished jobs grouped by a JobResult attribute."""
    out: dict[str, list[float]] = defaultdict(list)
    for j in jobs:
        if j.completion_s is not None:
            out[str(getattr(j, attr))].append(j.completion_s)
    return dict(out)


def _mean(xs: list[Any]) -> float | None:
    return float(np.mean(xs)) if xs else None


def _quantile(xs: list[float], q: float) -> float | None:
    return float(np.quantile(xs, q)) if xs else None

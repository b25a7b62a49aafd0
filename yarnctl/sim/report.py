"""Reports: per-job times, makespan, utilisation and accumulated usage, as tables, JSON and CSV."""

from __future__ import annotations

import csv
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from yarnctl.sim.cluster import ContainerRecord, SimRun
from yarnctl.trace.usage import ContainerUsage, write_trace

# Two results closer than this (relative to the smaller) are not ranked, real or simulated: against the
# real cluster, the simulator's gaps wider than 5% were the real order in 61 of 76 pairs that the real
# runs also separated, its narrower ones in 24 of 43 (docs/fidelity.md, "The simulator's calls")
SAME_RANK_MARGIN = 0.05


def close(x: float, y: float, margin: float = SAME_RANK_MARGIN) -> bool:
    """Whether two averages are within `margin` of the smaller: too close to be ranked."""
    return abs(x - y) <= margin * min(x, y)


@dataclass(frozen=True, slots=True)
class JobResult:
    """One job's times: waiting is submit -> first task start, completion is submit -> last task end."""

    id: str
    name: str
    user: str
    queue: str
    type: str
    tasks: int
    submit_s: float
    start_s: float | None
    finish_s: float | None
    wait_s: float | None
    completion_s: float | None
    kills: int
    state: str


@dataclass(frozen=True, slots=True)
class PolicyResult:
    """The summary of one policy's run on a workload."""

    policy: str
    makespan_s: float | None
    avg_wait_s: float | None
    median_wait_s: float | None
    avg_completion_s: float | None
    median_completion_s: float | None
    utilization: dict[str, float]  # allocated / capacity, time-averaged over the makespan
    actual_utilization: dict[str, float]  # actually used / physical, likewise
    jobs: tuple[JobResult, ...]
    unfinished: int
    failed: int
    stats: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The `--json` form of this result."""
        d = asdict(self)
        d.pop("policy")
        d["jobs"] = [asdict(j) for j in self.jobs]
        d["stats"] = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.stats.items()}
        return d


def _mean(xs: Sequence[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def _median(xs: Sequence[float]) -> float | None:
    return statistics.median(xs) if xs else None


def summarize(run: SimRun) -> PolicyResult:
    """Per-job times and the run's makespan, averages, medians and utilisation."""
    jobs = []
    for j in run.jobs:
        wait = None if j.start_s is None else j.start_s - j.submit_s
        comp = None if j.finish_s is None or j.state != "succeeded" else j.finish_s - j.submit_s
        jobs.append(JobResult(j.id, j.name, j.user, j.queue, j.type, j.tasks, j.submit_s, j.start_s,
                              j.finish_s, wait, comp, j.kills, j.state))
    done = [j for j in jobs if j.finish_s is not None]
    waits = [j.wait_s for j in jobs if j.wait_s is not None]
    comps = [j.completion_s for j in done if j.completion_s is not None]
    first = min((j.submit_s for j in jobs), default=0.0)
    ends = [j.finish_s for j in done if j.finish_s is not None]
    makespan = max(ends) - first if ends and len(ends) == len(jobs) else None
    horizon = (first, first + makespan) if makespan else (first, run.end_s)
    alloc, used = utilization(run, *horizon)
    return PolicyResult(run.policy, makespan, _mean(waits), _median(waits), _mean(comps), _median(comps),
                        alloc, used, tuple(jobs), len(jobs) - len(done),
                        sum(j.state == "failed" for j in jobs), dict(run.stats))


def _usage_arrays(run: SimRun) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(run.usage, dtype=float)
    return arr[:, 0], arr[:, 1:]


def utilization(run: SimRun, t0: float, t1: float) -> tuple[dict[str, float], dict[str, float]]:
    """Time-averaged allocated/capacity and used/physical cpu and memory over [t0, t1]."""
    if t1 <= t0:
        zero = {"cpu": 0.0, "memory": 0.0}
        return zero, dict(zero)
    t, v = _usage_arrays(run)
    # step function: value v[i] holds from t[i] until t[i+1]
    edges = np.clip(np.append(t, max(t1, t[-1])), t0, t1)
    widths = np.diff(edges)
    integral = (v * widths[:, None]).sum(axis=0) / (t1 - t0)
    cap, phys = run.capacity, run.physical
    alloc = {"cpu": integral[1] / cap.vcores if cap.vcores else 0.0,
             "memory": integral[0] / cap.memory_mb if cap.memory_mb else 0.0}
    used = {"cpu": integral[2] / phys.vcores if phys.vcores else 0.0,
            "memory": integral[3] / phys.memory_mb if phys.memory_mb else 0.0}
    return {k: round(float(x), 6) for k, x in alloc.items()}, {k: round(float(x), 6) for k, x in used.items()}


def sample_times(run: SimRun, points: int = 400) -> np.ndarray:
    """Evenly spaced sample times over the run."""
    return np.linspace(0.0, max(run.end_s, 1e-9), points)


def utilization_series(run: SimRun, times: np.ndarray) -> dict[str, np.ndarray]:
    """Allocated and used cpu/memory fractions at `times` (step function of the usage log)."""
    t, v = _usage_arrays(run)
    idx = np.clip(np.searchsorted(t, times, side="right") - 1, 0, len(t) - 1)
    cap, phys = run.capacity, run.physical
    return {
        "alloc_cpu": v[idx, 1] / max(cap.vcores, 1),
        "alloc_memory": v[idx, 0] / max(cap.memory_mb, 1),
        "used_cpu": v[idx, 2] / max(phys.vcores, 1),
        "used_memory": v[idx, 3] / max(phys.memory_mb, 1),
    }


def _steps(records: Iterable[ContainerRecord], key: str, resource: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per group: event times and the allocation level from each event on (a step function)."""
    events: dict[str, list[tuple[float, float]]] = {}
    for r in records:
        amount = float(getattr(r, resource))
        ev = events.setdefault(getattr(r, key), [])
        ev.append((r.start_s, amount))
        ev.append((r.released_s, -amount))  # held until the RM frees it, as utilisation counts it
    out = {}
    for name in sorted(events):
        ev = sorted(events[name])
        out[name] = (np.array([e[0] for e in ev]), np.cumsum([e[1] for e in ev]))
    return out


def allocation_by(records: Iterable[ContainerRecord], times: np.ndarray, key: str,
                  resource: str = "memory_mb") -> dict[str, np.ndarray]:
    """Allocation of `resource` at `times`, grouped by a record attribute (job, user, queue)."""
    out = {}
    for name, (t, level) in _steps(records, key, resource).items():
        idx = np.searchsorted(t, times, side="right") - 1
        out[name] = np.where(idx >= 0, level[np.clip(idx, 0, None)], 0.0)
    return out


def accumulated_by(records: Iterable[ContainerRecord], times: np.ndarray, key: str,
                   resource: str = "memory_mb") -> dict[str, np.ndarray]:
    """Accumulated `resource`-seconds up to each of `times`, grouped by user or queue."""
    out = {}
    for name, (t, level) in _steps(records, key, resource).items():
        # the integral of a step function is piecewise linear between events: exact by interpolation
        integral = np.concatenate(([0.0], np.cumsum(level[:-1] * np.diff(t))))
        out[name] = np.interp(times, t, integral, left=0.0, right=float(integral[-1]))
    return out


# ---------------------------------------------------------------- output


def to_json(workload: str, seed: int, results: Sequence[PolicyResult]) -> dict[str, Any]:
    """The `--json` document: one object with every policy's result."""
    return {"workload": workload, "seed": seed, "results": {r.policy: r.to_json() for r in results}}


def write_results_csv(out: Path, results: Sequence[PolicyResult]) -> list[Path]:
    """summary.csv and jobs.csv in `out` (simulated or measured runs alike); returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    summary, jobs = out / "summary.csv", out / "jobs.csv"
    with summary.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy", "makespan_s", "avg_wait_s", "median_wait_s", "avg_completion_s",
                    "median_completion_s", "alloc_cpu", "alloc_memory", "used_cpu", "used_memory", "unfinished",
                    "failed"])
        for r in results:
            w.writerow([r.policy, r.makespan_s, r.avg_wait_s, r.median_wait_s, r.avg_completion_s,
                        r.median_completion_s, r.utilization["cpu"], r.utilization["memory"],
                        r.actual_utilization["cpu"], r.actual_utilization["memory"], r.unfinished, r.failed])
    with jobs.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy", "id", "name", "user", "queue", "type", "tasks", "submit_s", "start_s", "finish_s",
                    "wait_s", "completion_s", "kills", "state"])
        for r in results:
            for j in r.jobs:
                w.writerow([r.policy, j.id, j.name, j.user, j.queue, j.type, j.tasks, j.submit_s, j.start_s,
                            j.finish_s, j.wait_s, j.completion_s, j.kills, j.state])
    return [summary, jobs]


def container_usage(records: Iterable[ContainerRecord]) -> list[ContainerUsage]:
    """Each container's allocation and its mean actual use over [start_s, end_s], as a usage trace (yarnctl/trace/usage.py)."""
    out = []
    for r in sorted(records, key=lambda r: (r.start_s, r.id)):
        d = r.end_s - r.start_s
        out.append(ContainerUsage(r.id, r.job, r.user, float(r.memory_mb), float(r.vcores), r.start_s, r.end_s,
                                  r.used_memory_mb_s / d if d > 0 else 0.0, r.used_vcore_s / d if d > 0 else 0.0,
                                  r.is_am))
    return out


def write_containers(path: Path, run: SimRun) -> Path:
    """The run's container usage trace (means layout) with queue, node and outcome as extra columns."""
    records = sorted(run.containers, key=lambda r: (r.start_s, r.id))
    return write_trace(path, container_usage(records), ("queue", "node", "outcome"),
                       [(r.queue, r.node, r.outcome) for r in records])


def write_csv(out: Path, results: Sequence[PolicyResult], runs: Sequence[SimRun]) -> list[Path]:
    """summary.csv, jobs.csv, utilization.csv, accumulated.csv, containers-<policy>.csv and (for tunable policies) tuning.csv in `out`; returns the paths written."""
    summary, jobs = write_results_csv(out, results)
    util = out / "utilization.csv"
    with util.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy", "t_s", "alloc_cpu", "alloc_memory", "used_cpu", "used_memory"])
        for run in runs:
            times = sample_times(run)
            s = utilization_series(run, times)
            for i, t in enumerate(times):
                w.writerow([run.policy, round(float(t), 3)] + [round(float(s[k][i]), 5) for k in
                                                               ("alloc_cpu", "alloc_memory", "used_cpu", "used_memory")])
    accumulated = out / "accumulated.csv"
    with accumulated.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy", "by", "name", "t_s", "memory_mb_s", "vcore_s"])
        for run in runs:
            times = sample_times(run, 100)
            for by in ("user", "queue"):
                mem = accumulated_by(run.containers, times, by, "memory_mb")
                vc = accumulated_by(run.containers, times, by, "vcores")
                for name in mem:
                    for i, t in enumerate(times):
                        w.writerow([run.policy, by, name, round(float(t), 3), round(float(mem[name][i]), 1),
                                    round(float(vc[name][i]), 1)])
    written = [summary, jobs, util, accumulated]
    for run in runs:
        slug = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in run.policy)
        written.append(write_containers(out / f"containers-{slug}.csv", run))
    if any(run.tuning for run in runs):
        tuning = out / "tuning.csv"
        with tuning.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["policy", "t_s", "key", "value"])  # one row per value each time the policy's values changed
            for run in runs:
                for t, values in run.tuning:
                    for key in sorted(values):
                        w.writerow([run.policy, round(t, 3), key, values[key]])
        written.append(tuning)
    return written

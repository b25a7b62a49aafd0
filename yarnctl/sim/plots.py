"""PNG figures like the papers': per-job waiting/completion bars, allocation per job, utilisation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display on servers or in CI
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402
import numpy as np  # noqa: E402

from yarnctl.sim.cluster import SimRun  # noqa: E402
from yarnctl.sim.report import (  # noqa: E402
    PolicyResult,
    accumulated_by,
    allocation_by,
    sample_times,
    utilization_series,
)

_MAX_BARS = 40  # beyond this many jobs, bars are unreadable: plot distributions instead
_MAX_PANELS = 8  # tuning values plotted (H-MRF has one per queue and resource)


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)


def job_times(results: Sequence[PolicyResult], path: Path, title: str) -> Path:
    """Waiting and completion time per job and policy: grouped bars, or CDFs for many jobs."""
    fig, axes = plt.subplots(2, 1, figsize=(11, 7), constrained_layout=True)
    jobs = [j.id for j in results[0].jobs]
    for ax, metric, label in ((axes[0], "wait_s", "waiting time (s)"),
                              (axes[1], "completion_s", "completion time (s)")):
        if len(jobs) <= _MAX_BARS:
            width = 0.8 / len(results)
            x = np.arange(len(jobs))
            for i, r in enumerate(results):
                vals = [getattr(j, metric) or 0.0 for j in r.jobs]
                ax.bar(x + i * width - 0.4 + width / 2, vals, width, label=r.policy)
            ax.set_xticks(x, jobs, rotation=60 if len(jobs) > 12 else 0, fontsize=8)
            ax.set_xlabel("job")
        else:
            for r in results:
                ends = np.sort([getattr(j, metric) for j in r.jobs if getattr(j, metric) is not None])
                ax.plot(ends, np.arange(1, len(ends) + 1) / max(len(ends), 1), label=r.policy)
            ax.set_xlabel(label)
            ax.set_ylabel("fraction of jobs")
            label = f"CDF of {label}"
        ax.set_ylabel(label if len(jobs) <= _MAX_BARS else "fraction of jobs")
        ax.set_title(label)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def utilization(runs: Sequence[SimRun], path: Path, title: str) -> Path:
    """Allocated (solid) and actually used (dashed) cpu and memory over time, per policy."""
    fig, axes = plt.subplots(2, 1, figsize=(11, 7), sharex=False, constrained_layout=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, run in enumerate(runs):
        t = sample_times(run)
        s = utilization_series(run, t)
        c = colors[i % len(colors)]
        for ax, res in ((axes[0], "cpu"), (axes[1], "memory")):
            ax.plot(t, 100 * s[f"alloc_{res}"], color=c, label=f"{run.policy} allocated")
            ax.plot(t, 100 * s[f"used_{res}"], color=c, linestyle="--", alpha=0.7, label=f"{run.policy} used")
    for ax, res in ((axes[0], "cpu (vcores)"), (axes[1], "memory")):
        ax.set_ylabel(f"{res} %")
        ax.set_xlabel("time (s)")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def allocation_per_job(run: SimRun, path: Path, title: str, top: int = 15) -> Path:
    """Memory allocated to each job over time, stacked (the largest `top` jobs, the rest summed)."""
    t = sample_times(run)
    per_job = allocation_by(run.containers, t, "job")
    order = sorted(per_job, key=lambda j: (-float(per_job[j].sum()), j))
    shown = [j for j in sorted(order[:top], key=lambda j: (next((r.submit_s for r in run.jobs if r.id == j), 0), j))]
    layers = [per_job[j] / 1024 for j in shown]
    labels = list(shown)
    rest = [j for j in order[top:]]
    if rest:
        layers.append(np.sum([per_job[j] for j in rest], axis=0) / 1024)
        labels.append(f"{len(rest)} other jobs")
    fig, ax = plt.subplots(figsize=(11, 5), constrained_layout=True)
    if layers:
        ax.stackplot(t, *layers, labels=labels, step="post")
    ax.axhline(run.capacity.memory_mb / 1024, color="black", linewidth=0.8, linestyle=":", label="capacity")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("memory allocated (GB)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2, loc="upper right")
    ax.grid(alpha=0.3)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def accumulated(runs: Sequence[SimRun], path: Path, title: str, key: str = "user") -> Path:
    """Accumulated memory (GB x s) per user or queue over time, one panel per policy."""
    fig, axes = plt.subplots(len(runs), 1, figsize=(11, 2.6 * len(runs) + 1), squeeze=False,
                             constrained_layout=True)
    for ax, run in zip(axes[:, 0], runs):
        t = sample_times(run)
        for name, values in accumulated_by(run.containers, t, key).items():
            ax.plot(t, values / 1024, label=name)
        ax.set_title(run.policy, fontsize=9)
        ax.set_ylabel("GB x s")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=4)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def sharing_degree(series: Sequence[tuple[str, Sequence[tuple[float, dict[str, tuple[float, float]]]]]],
                   path: Path, title: str) -> Path:
    """β_i(t) per user, one panel per policy, with the β = 1 line ([H-MRF] Fig. 8)."""
    fig, axes = plt.subplots(len(series), 1, figsize=(10, 2.4 * len(series) + 1), squeeze=False,
                             constrained_layout=True)
    for ax, (policy, samples) in zip(axes[:, 0], series):
        users = sorted({u for _, v in samples for u in v})
        for u in users:
            ax.plot([t for t, v in samples if u in v], [v[u][0] for _, v in samples if u in v], label=u)
        ax.axhline(1.0, color="k", lw=0.6)
        ax.set_ylim(0, 3)
        ax.set_title(policy, fontsize=9)
        ax.set_ylabel("β_i(t)")
        ax.legend(fontsize=7, ncol=4)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(title)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def tuning(runs: Sequence[SimRun], path: Path, title: str) -> Path | None:
    """Each tunable policy's tuning values over time as steps (e.g. DRESS's δ(t)), one panel per value."""
    series: dict[str, list[tuple[str, list[float], list[float]]]] = {}
    for run in runs:
        if not run.tuning:
            continue
        end = run.end_s if run.end_s > run.tuning[-1][0] else run.tuning[-1][0]
        for key in sorted({k for _, vals in run.tuning for k in vals}):
            pts = [(t, vals[key]) for t, vals in run.tuning if key in vals]
            xs, ys = [t for t, _ in pts] + [end], [v for _, v in pts] + [pts[-1][1]]
            series.setdefault(key, []).append((run.policy, xs, ys))
    if not series:
        return None  # no tunable policy in this comparison
    keys = sorted(series)[:_MAX_PANELS]
    fig, axes = plt.subplots(len(keys), 1, figsize=(11, 2.2 * len(keys) + 1), squeeze=False,
                             constrained_layout=True)
    for ax, key in zip(axes[:, 0], keys):
        for policy, xs, ys in series[key]:
            ax.step(xs, ys, where="post", label=policy)
        ax.set_title(key, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(title)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def backlog_throughput(report: Mapping[str, Any], path: Path) -> Path:
    """`python -m yarnctl.sim.bench --backlog`: tasks per second and wall clock per decision against jobs in the system."""
    fig, (rate, cost) = plt.subplots(1, 2, figsize=(13, 5), constrained_layout=True)
    colours = [plt.get_cmap("tab20")(k / 20) for k in range(20)]  # 14 built-in policies: the default cycle repeats after 10
    for i, policy in enumerate(dict.fromkeys(c["policy"] for c in report["cases"])):
        rows = [c for c in report["cases"] if c["policy"] == policy]
        style = {"label": policy, "color": colours[i % len(colours)], "marker": "os^v"[i % 4],
                 "linestyle": "-" if i < 10 else "--"}
        jobs = [c["mean_jobs_in_system"] for c in rows]
        rate.plot(jobs, [c["tasks_per_s"] for c in rows], **style)
        cost.plot(jobs, [c["us_per_decision"] for c in rows], **style)
    for ax, label in ((rate, "simulated tasks per second (wall clock)"), (cost, "wall clock per decision (µs)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers at 1, 2, 5 x 10^k: the range spans one decade or two
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
            axis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("jobs in the system, time-averaged")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    rate.legend(ncol=2, fontsize="small")
    machine = report["machine"]
    fig.suptitle(f"Simulator throughput as the backlog grows ({machine['cpus']} CPUs, Python {machine['python']})")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_all(out: Path, workload: str, results: Sequence[PolicyResult], runs: Sequence[SimRun]) -> list[Path]:
    """Every figure for a comparison run, into `out`; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [
        job_times(results, out / "jobs.png", f"{workload}: per-job waiting and completion time"),
        utilization(runs, out / "utilization.png", f"{workload}: cluster utilisation"),
        accumulated(runs, out / "accumulated-users.png", f"{workload}: accumulated memory per user"),
    ]
    if len({r.queue for r in runs[0].jobs}) > 1:
        paths.append(accumulated(runs, out / "accumulated-queues.png",
                                 f"{workload}: accumulated memory per queue", key="queue"))
    tuned = tuning(runs, out / "tuning.png", f"{workload}: tuning values over time (control-loop ticks)")
    if tuned is not None:
        paths.append(tuned)
    for run in runs:
        paths.append(allocation_per_job(run, out / f"allocation-{_slug(run.policy)}.png",
                                        f"{workload} under {run.policy}: memory allocated per job"))
    return paths

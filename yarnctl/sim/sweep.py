"""The damping-factor sweep ([FEEDBACK] Sec. V-C, Fig. 4): failures and completion time against α.

    python -m yarnctl.sim.sweep                          # feedback-day, both scenarios, α = 0.05 .. 0.5
    python -m yarnctl.sim.sweep --scenario rru --alpha 0.1,0.125,0.2 --seed 1 --out out/sweep

Each α is one run of `feedback` (its `alpha` parameter, everything else at its defaults) beside
one `fifo` run, the reservation model, per scenario:

- rru ("Resource Requested by Users"): the workload as it is, requests far above use.
- efr ("Extreme Fit Reservation", Sec. V-B): every task requests exactly its peak use (memory in
  MB, vcores rounded up, at least 1; its usage profile rescaled so that what it uses is unchanged),
  on the Sec. V-B cluster: nodes of 32 GB / 64 cores with 28 GB / 58 cores allowed, so memory is
  the constraint. The minimum allocation becomes 1 MB / 1 vcore so the fit stays exact.

A failure is an OOM-killed attempt (the simulator kills the youngest container when a node's
memory use passes its physical memory, Sec. V); the paper's fraction is failures over submitted tasks.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from yarnctl.engine import Engine
from yarnctl.errors import YarnctlError
from yarnctl.model import Resources
from yarnctl.policies import make_policy
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.report import summarize
from yarnctl.sim.workload import NodeSpec, StageSpec, Usage, Workload, load_workload

ALPHAS = (0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.4, 0.5)
SCENARIOS = ("rru", "efr")
EFR_NODE = Resources(28 * 1024, 58)  # Sec. V-B: "allow the utilization of memory to go up to 28 GBs, and of CPU to 58 cores"
EFR_PHYSICAL = Resources(32 * 1024, 64)  # Sec. V-B: "Each node has 32 GBs of memory and 64 cores"
EFR_MIN_ALLOCATION = Resources(1, 1)


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One run of the sweep: a scenario, a policy (feedback with its α, or fifo), its failures and times."""

    scenario: str
    policy: str
    alpha: float | None
    tasks: int
    oom_kills: int
    failed_jobs: int
    unfinished_jobs: int
    avg_completion_s: float | None
    median_completion_s: float | None
    makespan_s: float | None
    wall_s: float

    @property
    def failure_fraction(self) -> float:
        """OOM-killed attempts over submitted tasks (the paper's "fraction of crashed tasks")."""
        return self.oom_kills / self.tasks if self.tasks else 0.0


def extreme_fit(w: Workload) -> Workload:
    """The EFR variant of `w`: requests = peak use, on Sec. V-B's memory-bound nodes (see the module docstring)."""
    nodes = tuple(NodeSpec(n.id, n.rack, EFR_NODE, EFR_PHYSICAL) for n in w.cluster.nodes)
    cluster = replace(w.cluster, nodes=nodes, min_allocation=EFR_MIN_ALLOCATION)
    jobs = tuple(replace(j, stages=tuple(_fit(s) for s in j.stages)) for j in w.jobs)
    return replace(w, name=f"{w.name}-efr", cluster=cluster, jobs=jobs)


def _fit(s: StageSpec) -> StageSpec:
    peak_cpu = max(cpu for _, cpu, _ in s.usage.steps)
    peak_mem = max(mem for _, _, mem in s.usage.steps)
    mb = max(1, math.ceil(peak_mem * s.resource.memory_mb - 1e-9))
    vc = max(1, math.ceil(peak_cpu * s.resource.vcores - 1e-9))
    # the same absolute use, as fractions of the new request
    kc, km = s.resource.vcores / vc, s.resource.memory_mb / mb
    steps = tuple((at, cpu * kc, mem * km) for at, cpu, mem in s.usage.steps)
    return replace(s, resource=Resources(mb, vc), usage=Usage(steps))


def scenario_workload(name: str, scenario: str, seed: int) -> Workload:
    """The workload `name` as the scenario runs it."""
    w = load_workload(name, seed=seed)
    return extreme_fit(w) if scenario == "efr" else w


def run_point(workload: str, scenario: str, seed: int, alpha: float | None) -> SweepPoint:
    """One simulation: fifo when `alpha` is None, else feedback with that damping factor."""
    w = scenario_workload(workload, scenario, seed)
    policy = make_policy("fifo") if alpha is None else make_policy("feedback", {"alpha": alpha})
    started = time.perf_counter()
    run = SimCluster(w, Engine(policy)).run()
    r = summarize(run)
    return SweepPoint(scenario, policy.name, alpha, w.tasks, int(run.stats.get("oom_kills", 0)), r.failed,
                      r.unfinished, r.avg_completion_s, r.median_completion_s, r.makespan_s,
                      time.perf_counter() - started)


def sweep(workload: str, scenarios: Sequence[str], alphas: Sequence[float], seed: int = 0,
          processes: int = 1, done: Callable[[SweepPoint], None] | None = None) -> list[SweepPoint]:
    """fifo and feedback at each α, per scenario, in that order whatever the number of processes; `done` sees each run."""
    todo: list[tuple[str, str, int, float | None]] = []
    for sc in scenarios:
        todo.append((workload, sc, seed, None))
        todo.extend((workload, sc, seed, a) for a in alphas)
    out = []
    if processes <= 1:
        for t in todo:
            out.append(run_point(*t))
            if done is not None:
                done(out[-1])
        return out
    with ProcessPoolExecutor(processes) as pool:
        for point in pool.map(run_point, *zip(*todo)):  # map keeps the order of `todo`
            out.append(point)
            if done is not None:
                done(point)
    return out


# ---------------------------------------------------------------- output


def _num(x: float | None, fmt: str = ".1f") -> str:
    return "-" if x is None else format(x, fmt)


def table(points: Sequence[SweepPoint]) -> str:
    """The sweep as a Markdown table: failures and completion per scenario and α, fifo first."""
    lines = ["| scenario | policy | α | OOM-killed attempts | of submitted tasks | failed jobs | "
             "avg completion (s) | median completion (s) | makespan (s) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p in points:
        lines.append(f"| {p.scenario} | {p.policy} | {'-' if p.alpha is None else f'{p.alpha:g}'} | {p.oom_kills} | "
                     f"{100 * p.failure_fraction:.3f}% | {p.failed_jobs}"
                     f"{f' (+{p.unfinished_jobs} unfinished)' if p.unfinished_jobs else ''} | "
                     f"{_num(p.avg_completion_s)} | {_num(p.median_completion_s)} | {_num(p.makespan_s)} |")
    return "\n".join(lines)


def write_csv(path: Path, points: Sequence[SweepPoint]) -> Path:
    """sweep.csv: one row per run."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "policy", "alpha", "tasks", "oom_kills", "failure_fraction", "failed_jobs",
                    "unfinished_jobs", "avg_completion_s", "median_completion_s", "makespan_s", "wall_s"])
        for p in points:
            w.writerow([p.scenario, p.policy, "" if p.alpha is None else p.alpha, p.tasks, p.oom_kills,
                        round(p.failure_fraction, 6), p.failed_jobs, p.unfinished_jobs,
                        _round(p.avg_completion_s), _round(p.median_completion_s), _round(p.makespan_s),
                        round(p.wall_s, 2)])
    return path


def _round(x: float | None) -> float | str:
    return "" if x is None else round(x, 3)


def plot(path: Path, points: Sequence[SweepPoint], title: str) -> Path:
    """Fig. 4's two panels: failed attempts over submitted tasks, and average completion, against α (fifo dashed)."""
    import matplotlib

    matplotlib.use("Agg")  # files only
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True, constrained_layout=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, sc in enumerate(dict.fromkeys(p.scenario for p in points)):
        fb = sorted((p for p in points if p.scenario == sc and p.alpha is not None), key=lambda p: p.alpha or 0.0)
        base = next((p for p in points if p.scenario == sc and p.alpha is None), None)
        c = colors[i % len(colors)]
        xs = [p.alpha for p in fb]
        axes[0].plot(xs, [100 * p.failure_fraction for p in fb], "o-", color=c, label=f"{sc.upper()} feedback")
        axes[1].plot(xs, [p.avg_completion_s or math.nan for p in fb], "o-", color=c, label=f"{sc.upper()} feedback")
        if base is not None:
            axes[0].axhline(100 * base.failure_fraction, color=c, linestyle="--", linewidth=0.9,
                            label=f"{sc.upper()} fifo")
            if base.avg_completion_s is not None:
                axes[1].axhline(base.avg_completion_s, color=c, linestyle="--", linewidth=0.9,
                                label=f"{sc.upper()} fifo")
    axes[0].set_ylabel("OOM-killed attempts / submitted tasks (%)")
    axes[1].set_ylabel("average job completion (s)")
    axes[1].set_xlabel("damping factor α")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _alphas(text: str) -> list[float]:
    out = []
    for item in text.split(","):
        try:
            a = float(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {item!r}") from None
        if not 0.0 <= a <= 1.0:
            raise argparse.ArgumentTypeError(f"α must be in [0, 1], got {item}")
        out.append(a)
    return out


def _scenarios(text: str) -> list[str]:
    out = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in out if s not in SCENARIOS]
    if bad or not out:
        raise argparse.ArgumentTypeError(f"unknown scenario {bad[0] if bad else text!r}; valid: {', '.join(SCENARIOS)}")
    return out


def _progress(p: SweepPoint) -> None:
    # a feedback run of feedback-day takes ~30 s: say what is done, on stderr so stdout stays the table
    what = "fifo" if p.alpha is None else f"feedback α={p.alpha:g}"
    print(f"{p.scenario} {what}: {p.oom_kills} OOM kills, avg completion {_num(p.avg_completion_s)} s "
          f"({p.wall_s:.0f} s)", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep, print its table, and with --out write sweep.csv and sweep.png."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.sim.sweep",
                                description="Damping-factor sweep of the usage-feedback policy ([FEEDBACK] "
                                            "Sec. V-C, Fig. 4): OOM-killed attempts and job completion time for each α, "
                                            "beside fifo (the reservation model), with the workload's own requests (rru) "
                                            "and with requests equal to peak use (efr).")
    p.add_argument("--workload", "-w", default="feedback-day", help="built-in name or YAML file (default %(default)s)")
    p.add_argument("--alpha", type=_alphas, default=list(ALPHAS), metavar="A[,A...]",
                   help="damping factors (default %s)" % ",".join(f"{a:g}" for a in ALPHAS))
    p.add_argument("--scenario", type=_scenarios, default=list(SCENARIOS), metavar="rru,efr",
                   help="request scenarios (default rru,efr)")
    p.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    p.add_argument("--processes", "-j", type=int, default=1, help="simulations run in parallel (default 1)")
    p.add_argument("--out", type=Path, metavar="DIR", help="write sweep.csv and sweep.png into DIR")
    args = p.parse_args(argv)
    try:
        if args.out is not None:
            args.out.mkdir(parents=True, exist_ok=True)
        scenario_workload(args.workload, args.scenario[0], args.seed)  # a bad workload fails before any run
        points = sweep(args.workload, args.scenario, args.alpha, args.seed, max(args.processes, 1), _progress)
    except YarnctlError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: --out {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(table(points))
    if args.out is not None:
        written: list[Any] = [write_csv(args.out / "sweep.csv", points),
                              plot(args.out / "sweep.png", points,
                                   f"{args.workload} (seed {args.seed}): damping-factor sweep, as [FEEDBACK] Fig. 4")]
        print("wrote " + ", ".join(str(x) for x in written))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

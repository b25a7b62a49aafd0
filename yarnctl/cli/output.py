"""Terminal output for the CLI: tables, the progress bar and lists (the only place that prints)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from yarnctl.sim.records import SimRun
from yarnctl.sim.report import SAME_RANK_MARGIN, PolicyResult
from yarnctl.sim.workload import Workload

if TYPE_CHECKING:  # the simulator's runner is imported only by the commands that run it
    from yarnctl.sim.noise import NoiseReport, Spread

out = Console(highlight=False, soft_wrap=False)
err = Console(stderr=True, highlight=False)

_SHOW_AFTER_S = 2.0  # runs shorter than this get no progress bar


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}"


def _short(x: float | None) -> str:
    """Compact seconds for wide per-job tables: one decimal only below 100."""
    return "-" if x is None else (f"{x:.1f}" if x < 100 else f"{x:,.0f}")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def print_header(w: Workload) -> None:
    """One line saying what is being simulated."""
    cap = w.cluster.nodes[0].capacity
    same = all(n.capacity == cap for n in w.cluster.nodes)
    nodes = f"{len(w.cluster.nodes)} x {cap}" if same else f"{len(w.cluster.nodes)} nodes"
    out.print(f"[bold]{w.name}[/bold]: {nodes}, {len(w.jobs)} jobs, {w.tasks:,} tasks, "
              f"heartbeat {w.cluster.heartbeat_s:g} s, seed {w.seed}")
    if w.description:
        out.print(f"[dim]{w.description}[/dim]")


def best_marks(values: Sequence[float | None], lower_better: bool, margin: float = SAME_RANK_MARGIN) -> list[str]:
    """Each value's mark in a comparison: "call" for a best more than `margin` ahead of every other, "close" for
    the values within `margin` of a best that is not, "" for the rest (and for a single value)."""
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return ["" for _ in values]
    best = min(known) if lower_better else max(known)
    # within the margin of the best itself, higher or lower ("within 5% of it", as the legend says); a best of
    # zero has no relative margin, so only other zeros are close to it (sweep's margin_side says the same)
    near = [v is not None and abs(v - best) <= margin * abs(best) for v in values]
    if sum(near) == 1:
        return ["call" if n else "" for n in near]
    return ["close" if n else "" for n in near]


def print_summary(results: Sequence[PolicyResult], wall_s: float, measured: bool = False) -> None:
    """One column per policy, a row's best green only when it is a call (`best_marks`); `measured`: a real cluster."""
    t = Table(title=None, show_lines=False)
    t.add_column("metric")
    for r in results:
        t.add_column(r.policy, justify="right")
    rows: list[tuple[str, list[Any], bool]] = [
        ("makespan (s)", [r.makespan_s for r in results], True),
        ("avg wait (s)", [r.avg_wait_s for r in results], True),
        ("median wait (s)", [r.median_wait_s for r in results], True),
        ("avg completion (s)", [r.avg_completion_s for r in results], True),
        ("median completion (s)", [r.median_completion_s for r in results], True),
        ("cpu allocated", [r.utilization["cpu"] for r in results], False),
        ("memory allocated", [r.utilization["memory"] for r in results], False),
    ]
    if not measured:  # a real run knows what was allocated (MB-seconds), not what was used
        rows += [("cpu used", [r.actual_utilization["cpu"] for r in results], False),
                 ("memory used", [r.actual_utilization["memory"] for r in results], False)]
    for label, vals, lower_better in rows:
        # a real run's best is measured; a simulated one is the model's call only beyond its margin
        marks = best_marks(vals, lower_better, 0.0 if measured else SAME_RANK_MARGIN)
        cells = []
        for v, mark in zip(vals, marks):
            text = _s(v) if lower_better else _pct(v)
            cells.append(f"[bold green]{text}[/bold green]" if mark == "call" else
                         f"[bold]{text}[/bold]" if mark == "close" else text)
        t.add_row(label, *cells)
    if measured:
        t.add_row("failed / unfinished jobs", *[f"{r.failed} / {r.unfinished}" for r in results])
        t.add_row("wall time (s)", *[f"{r.stats.get('wall_s', 0):.0f}" for r in results])
        out.print(t)
        out.print("[dim]measured on a real cluster: waiting = submit to first task start (JobHistoryServer), "
                  "completion = submit to finish (RM); allocated = MB-/vcore-seconds over the makespan[/dim]")
        return
    t.add_row("tasks killed / preempted", *[
        str(int(r.stats.get("kills", 0) + r.stats.get("oom_kills", 0) + r.stats.get("reduce_preemptions", 0)))
        for r in results])
    t.add_row("failed / unfinished jobs", *[f"{r.failed} / {r.unfinished}" for r in results])
    t.add_row("policy decisions", *[f"{int(r.stats.get('decisions', 0)):,}" for r in results])
    t.add_row("simulation wall time (s)", *[f"{r.stats.get('wall_s', 0):.2f}" for r in results])
    out.print(t)
    out.print(f"[dim]simulated in {wall_s:.2f} s; waiting = submit to first task start, completion = submit "
              f"to last task end; allocated/used are time averages over the makespan[/dim]")
    if len(results) > 1:
        out.print(f"[dim][green]green[/green]: best by more than {100 * SAME_RANK_MARGIN:.0f}%; [bold]bold[/bold]: "
                  f"the best and the others within {100 * SAME_RANK_MARGIN:.0f}% of it, closer than the simulator "
                  f"ranks reliably (docs/fidelity.md)[/dim]")


def print_model_noise(noise: NoiseReport) -> None:
    """Each policy's metrics over the drawn orders, and how often the ranking held."""
    t = Table(title=f"model noise: {noise.orders} runs of each policy, the one above and {noise.orders - 1} with "
                    f"the heartbeat phases and the order of simultaneous events drawn again: lowest - highest")
    for col in ("policy", "avg completion (s)", "spread", "makespan (s)", "avg wait (s)"):
        t.add_column(col, justify="left" if col == "policy" else "right", no_wrap=True)

    def span(s: Spread, metric: str) -> str:
        r = s.range(metric)
        return "-" if r is None else f"{_short(r[0])} - {_short(r[1])}"

    for s in noise.spreads:
        first, r = s.values["avg_completion_s"][0], s.range("avg_completion_s")
        spread = "-" if r is None or not first else f"{100 * (r[1] - r[0]) / first:.1f}%"
        t.add_row(s.policy, span(s, "avg_completion_s"), spread, span(s, "makespan_s"), span(s, "avg_wait_s"))
    out.print(t)
    for metric, label in (("avg_completion_s", "avg completion"), ("makespan_s", "makespan")):
        ranking = noise.ranking(0, metric)
        if len(ranking) < 2:
            break

        def pair(a: str, b: str) -> str:
            below, equal = noise.ahead(a, b, metric)
            return f"{a} below {b} in {below}" + (f" (equal in {equal})" if equal else "")

        out.print(f"ranking by {label}, {' < '.join(ranking)}: held in {noise.ranking_held(metric)} of "
                  f"{noise.orders} runs; " + ", ".join(pair(a, b) for a, b in zip(ranking, ranking[1:])))
    for s in noise.spreads:
        if s.incomplete:
            err.print(f"warning: {s.incomplete} of the {noise.orders} runs of {s.policy} left jobs unfinished or "
                      f"failed: their averages cover the finished jobs only")
    out.print("[dim]spread: (highest - lowest) / the run above; a difference between policies inside it comes "
              "from the model's arbitrary choices, not from the policies[/dim]")


def print_jobs(results: Sequence[PolicyResult]) -> None:
    """Per-job waiting and completion time under each policy."""
    t = Table(title="per job: wait / completion (s)")
    t.add_column("job")
    t.add_column("user")
    t.add_column("tasks", justify="right")
    t.add_column("submit", justify="right")
    for r in results:
        t.add_column(r.policy, justify="right")
    for i, j in enumerate(results[0].jobs):
        t.add_row(j.id, j.user, str(j.tasks), _short(j.submit_s),
                  *[f"{_short(r.jobs[i].wait_s)} / {_short(r.jobs[i].completion_s)}" for r in results])
    out.print(t)


def print_queue_shares(runs: Sequence[dict[str, Any]]) -> None:
    """Each queue's share of the cluster while every queue had demand: configured, measured and simulated."""
    t = Table(title="queue shares of memory while every queue had demand (real: sampled from the RM's REST API; "
                    "sim: the same jobs replayed in the simulator; sim-real in points; busy s: real/sim)")
    for col in ("scheduler", "queue", "configured", "real", "sim", "sim-real", "busy s"):
        t.add_column(col, justify="left" if col in ("scheduler", "queue") else "right", no_wrap=True)

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    for run in runs:
        for row in run.get("queue_shares") or []:
            real, sim = row["real"], row["simulated"]
            diff = f"{100 * (sim - real):+.1f}" if real is not None and sim is not None else "-"
            t.add_row(str(run["label"]), row["queue"], pct(row["configured"]), pct(real), pct(sim), diff,
                      f"{row['real_busy_s']:.0f}/{row['simulated_busy_s']:.0f}")
    out.print(t)


def print_map_locality(runs: Sequence[dict[str, Any]]) -> None:
    """Per job and scheduler: its maps launched data-local / rack-local / off-switch (Hadoop's JobCounter)."""
    t = Table(title="maps data-local / rack-local / off-switch (data-local share)",
              caption="the jobs' own DATA_LOCAL_MAPS / RACK_LOCAL_MAPS / OTHER_LOCAL_MAPS; a job without input "
                      "blocks (SleepJob, pi) has only off-switch maps; all: the jobs with input blocks")
    for col in ("job", *(str(r["label"]) for r in runs)):
        t.add_column(col, justify="left" if col == "job" else "right", no_wrap=True)

    def cell(local: Sequence[int]) -> str:
        return f"{local[0]}/{local[1]}/{local[2]} ({100 * local[0] / max(1, sum(local)):.0f}%)"

    by_job = [{rec["job_id"]: tuple(rec.get("maps_local") or ()) for rec in r["records"]} for r in runs]
    for job in dict.fromkeys(j for jobs in by_job for j in jobs):
        t.add_row(job, *("-" if not jobs.get(job) else cell(jobs[job]) for jobs in by_job))
    totals = [[sum(x) for x in zip(*(v for v in jobs.values() if len(v) == 3 and v[0] + v[1]))] or [0, 0, 0]
              for jobs in by_job]
    t.add_row("all", *(cell(x) for x in totals))
    out.print(t)


def print_waits(runs: Sequence[SimRun], jobs: Sequence[str], last: int) -> None:
    """Per watched job and policy: the last `last` reasons it got nothing at a heartbeat, and all of them by code."""
    for job in jobs:
        for run in runs:
            waits = [w for w in run.waits if w.job == job]
            counts = Counter(w.wait.code.value for w in waits)
            every = ", ".join(f"{code} {n}" for code, n in counts.most_common())
            title = (f"why {escape(job)} waited under {escape(run.policy)}: the last {min(last, len(waits))} of "
                     f"{len(waits)} heartbeats that left it waiting" + (f" (all: {every})" if every else ""))
            t = Table(title=title)
            for col in ("t (s)", "node", "reason", "in words"):
                t.add_column(col, justify="right" if col == "t (s)" else "left", no_wrap=col != "in words")
            for w in waits[-last:] if last > 0 else []:
                t.add_row(_short(w.t), escape(w.node), w.wait.code.value, escape(w.wait.text))
            out.print(t)


def print_written(paths: Sequence[Path]) -> None:
    """The files a run wrote: named relative to their common directory when they share one."""
    parents = {p.parent for p in paths}
    if len(parents) == 1 and len(paths) > 1:
        out.print(f"wrote {len(paths)} files into {parents.pop()}/: " + ", ".join(p.name for p in paths))
    else:
        out.print("wrote " + ", ".join(str(p) for p in paths))


def print_workloads(rows: Sequence[dict[str, Any]]) -> None:
    """The built-in workloads."""
    t = Table()
    for col in ("name", "nodes", "jobs", "tasks", "source (docs/papers.md)", "description"):
        t.add_column(col, justify="right" if col in ("nodes", "jobs", "tasks") else "left", overflow="fold")
    for r in rows:
        t.add_row(r["name"], str(r["nodes"]), str(r["jobs"]), f"{r['tasks']:,}", escape(r["source"]),
                  escape(r["description"]))
    out.print(t)


def print_policies(rows: Sequence[dict[str, Any]]) -> None:
    """The registered policies and their parameters with defaults."""
    t = Table()
    t.add_column("policy")
    t.add_column("what it does", overflow="fold")
    t.add_column("parameters (defaults)", overflow="fold")
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in r["parameters"].items()) or "-"
        t.add_row(r["name"], r["summary"], params)
    out.print(t)


class ProgressReporter:
    """A progress bar on stderr that appears only once a run has taken a couple of seconds."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.progress: Progress | None = None

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def for_policy(self, policy: str) -> Callable[[int, int, float], None] | None:
        """A callback for one policy's run."""
        if not self.enabled:
            return None
        started = time.perf_counter()
        task_id: list[Any] = []

        def report(done: int, total: int, now_s: float) -> None:
            if not task_id:
                if time.perf_counter() - started < _SHOW_AFTER_S:
                    return
                if self.progress is None:
                    self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                             TextColumn("tasks, sim t={task.fields[now]}"), TimeElapsedColumn(),
                                             console=err, transient=True)
                    self.progress.start()
                task_id.append(self.progress.add_task(policy, total=total, now="0"))
            assert self.progress is not None
            self.progress.update(task_id[0], completed=done, now=f"{now_s:,.0f}s")

        return report

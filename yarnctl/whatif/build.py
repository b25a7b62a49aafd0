"""A simulator workload from the live cluster: each running MapReduce job's remaining tasks, where they run.

Each running MapReduce job becomes a job submitted at t = 0 whose ApplicationMaster and running
tasks already hold their containers on their nodes (`JobSpec.placed`), with the tasks still to run
after them. A task's run time is estimated, in this order, from the job's own finished tasks of its
type (their median), from the latest finished job of the same name at the JobHistoryServer (its
average map time; a reduce's shuffle, merge and reduce), from a running task's progress, else
DEFAULT_TASK_S; a running reduce has its merge and reduce left while it shuffles (its elapsed time is
mostly waiting for the maps), then what its progress has not reached; that history job also gives the AM's teardown (job commit, history, unregister: from
its last task's end to its own, `JobSpec.teardown_s`); a running task has what is left of that (at least MIN_LEFT of it, when it already
ran longer). Task run times as the AM reports them include the container's start-up, so the
simulated cluster adds no start-up cost of its own. Other applications keep their containers for
the whole horizon: their nodes are that much smaller; applications still waiting for their
ApplicationMaster are left out.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from yarnctl.model import Resources
from yarnctl.rm.models import HistoryJob, TaskReport
from yarnctl.sim.workload.types import ClusterSpec, JobSpec, NodeSpec, Placed, StageSpec, Workload
from yarnctl.whatif.live import LiveApp, LiveContainer, LiveState, TaskTimes

MAP_PRIORITY, REDUCE_PRIORITY = 20, 10  # RMContainerAllocator's PRIORITY_MAP and PRIORITY_REDUCE
SLOWSTART = 0.05  # mapreduce.job.reduce.slowstart.completedmaps' default
DEFAULT_TASK_S = 60.0  # a task type nothing is known of
MIN_LEFT = 0.1  # a running task past its estimate has this share of the estimate left


@dataclass(frozen=True, slots=True)
class Estimate:
    """A task type's run time in seconds and where it came from (finished tasks, history, progress, default)."""

    seconds: float
    source: str


@dataclass(frozen=True, slots=True)
class JobPlan:
    """One running MapReduce job as the simulation starts it: tasks done, running and still to run, per type."""

    app: str
    name: str
    maps: tuple[int, int, int]  # done, running, to run
    reduces: tuple[int, int, int]
    map_s: Estimate
    reduce_s: Estimate


@dataclass(frozen=True, slots=True)
class Start:
    """The workload and how it was read from the cluster."""

    workload: Workload
    plans: tuple[JobPlan, ...]
    held: tuple[str, ...] = ()  # other apps: their containers make their nodes smaller for the horizon
    waiting: tuple[str, ...] = ()  # apps waiting for their AM: left out
    finishing: tuple[str, ...] = ()  # MapReduce jobs with no task left (committing): left out
    age_s: float = 0.0  # how old the server's view of the cluster was


def estimate(times: TaskTimes, history_s: float | None) -> Estimate:
    """A task type's run time: its finished tasks', the job history's, a running task's progress, or the default."""
    if times.done_s:
        return Estimate(statistics.median(times.done_s), "finished tasks")
    if history_s:
        return Estimate(history_s, "job history")
    advanced = [(e, p) for e, p in times.running if p >= 0.05]
    if advanced:
        e, p = max(advanced, key=lambda x: x[1])
        return Estimate(e / p, "progress")
    return Estimate(DEFAULT_TASK_S, "default")


def left(elapsed_s: float, est: Estimate) -> float:
    """What is left of a task that has run `elapsed_s` of an estimated run."""
    return max(est.seconds - elapsed_s, MIN_LEFT * est.seconds, 0.1)


@dataclass(frozen=True, slots=True)
class Past:
    """The latest finished job of a name: its task run times, and its AM's time from the last task to the job's end."""

    map_s: float | None
    reduce_s: float | None
    teardown_s: float
    reduce_work_s: float | None = None  # a reduce's merge and reduce: what is left once it has shuffled


def past(job: HistoryJob, tasks: tuple[TaskReport, ...]) -> Past:
    """From the JobHistoryServer: average map time, a reduce's shuffle, merge and reduce, and the AM's teardown."""
    reduce_ms = job.avg_shuffle_ms + job.avg_merge_ms + job.avg_reduce_ms
    last = max((t.finish_time_ms for t in tasks if t.finish_time_ms > 0), default=job.finish_time_ms)
    return Past(job.avg_map_ms / 1000 or None, reduce_ms / 1000 or None, max(job.finish_time_ms - last, 0) / 1000,
                (job.avg_merge_ms + job.avg_reduce_ms) / 1000 or None)


def reduce_left(progress: float, work_s: float) -> float:
    """What is left of a running reduce: its merge and reduce (`work_s`) while it shuffles (progress up to 1/3:
    the maps' outputs come in as they end), then the part of them its progress has not reached."""
    done = min(max((progress - 1 / 3) * 1.5, 0.0), 1.0)
    return max(work_s * (1 - done), 0.1)


def _stage(name: str, kind: str, priority: int, resource: Resources, times: TaskTimes, est: Estimate,
           running: list[LiveContainer], after: int | None, left_of: Callable[[float, float], float]
           ) -> tuple[StageSpec | None, list[tuple[str, float]], tuple[int, int, int]]:
    """The stage of a task type: running tasks' remaining times first (oldest container, longest-running task), then
    the tasks still to run; with the (node, remaining s) of each running one and the (done, running, to run) counts."""
    by_age = sorted(running, key=lambda c: -c.elapsed_s)
    tasks = sorted(times.running, key=lambda t: -t[0])
    lefts = [left_of(*tasks[i]) if i < len(tasks) else est.seconds for i in range(len(by_age))]
    # the AM's count and the scheduler's containers may differ by a task starting or ending right now
    to_run = max(len(times.running) + times.waiting - len(by_age), 0)
    durations = tuple(lefts) + (est.seconds,) * to_run
    counts = (len(times.done_s), len(by_age), to_run)
    if not durations:
        return None, [], counts
    return (StageSpec(name, kind, priority, resource, durations, after=after, slowstart=SLOWSTART,
                      done_before=len(times.done_s)), [(c.node, r) for c, r in zip(by_age, lefts)], counts)


def _resource(state: LiveState, app: str, priority: int, containers: list[LiveContainer]) -> Resources:
    if containers:
        return containers[0].resource
    for a in state.asks:
        if a.app == app and a.priority == priority:
            return a.resource
    return state.min_allocation


def _mapreduce(state: LiveState, app: LiveApp, tasks: tuple[TaskReport, ...],
               history: Past | None) -> tuple[JobSpec | None, JobPlan]:
    containers, _ = state.of(app.id)
    am = next(c for c in containers if c.is_am)
    hist_map, hist_reduce = (history.map_s, history.reduce_s) if history else (None, None)
    maps, reduces = TaskTimes.of(tasks, "MAP"), TaskTimes.of(tasks, "REDUCE")
    map_est, reduce_est = estimate(maps, hist_map), estimate(reduces, hist_reduce)
    # a running reduce's elapsed time is mostly waiting for maps: what is left is its merge and reduce
    work = (history.reduce_work_s if history and history.reduce_work_s else None) or reduce_est.seconds * 2 / 3
    run_m = [c for c in containers if not c.is_am and c.priority != REDUCE_PRIORITY]
    run_r = [c for c in containers if not c.is_am and c.priority == REDUCE_PRIORITY]
    m_stage, m_placed, m_counts = _stage("map", "map", MAP_PRIORITY, _resource(state, app.id, MAP_PRIORITY, run_m),
                                         maps, map_est, run_m, None, lambda e, _: left(e, map_est))
    # with no map left, the reduces follow nothing: they are all asked for at once
    r_stage, r_placed, r_counts = _stage("reduce", "reduce", REDUCE_PRIORITY,
                                         _resource(state, app.id, REDUCE_PRIORITY, run_r), reduces, reduce_est, run_r,
                                         0 if m_stage is not None else None, lambda _, p: reduce_left(p, work))
    plan = JobPlan(app.id, app.name, m_counts, r_counts, map_est, reduce_est)
    stages = [s for s in (m_stage, r_stage) if s is not None]
    if not stages:
        return None, plan
    placed = [Placed(am.node, None)]
    placed += [Placed(node, 0) for node, _ in m_placed]
    placed += [Placed(node, len(stages) - 1) for node, _ in r_placed]
    return JobSpec(app.id, 0.0, app.user, app.queue, "mapreduce", app.name, (), am.resource, tuple(stages),
                   placed=tuple(placed), teardown_s=history.teardown_s if history else 0.0), plan


def build(state: LiveState, tasks: Mapping[str, tuple[TaskReport, ...]], history: Mapping[str, Past]) -> Start:
    """The workload starting from `state`: MapReduce jobs whose AM answered (`tasks`), the rest held or left out."""
    jobs: list[JobSpec] = []
    plans: list[JobPlan] = []
    held: list[str] = []
    waiting: list[str] = []
    finishing: list[str] = []
    for app in state.apps:
        containers, _ = state.of(app.id)
        if not containers:
            waiting.append(app.id)
            continue
        if app.id in tasks and any(c.is_am for c in containers):
            spec, plan = _mapreduce(state, app, tasks[app.id], history.get(app.name))
            plans.append(plan)
            if spec is None:
                finishing.append(app.id)
            else:
                jobs.append(spec)
            continue
        held.append(app.id)
    # what the other apps hold stays held for the horizon: their nodes are that much smaller
    taken: dict[str, Resources] = {}
    for c in state.containers:
        if c.app in held:
            taken[c.node] = taken.get(c.node, Resources(0, 0)) + c.resource
    nodes = tuple(NodeSpec(n.id, n.rack, n.capacity - taken.get(n.id, Resources(0, 0)),
                           n.capacity - taken.get(n.id, Resources(0, 0))) for n in state.nodes)
    workload = Workload("live", f"the cluster as {state.policy} serves it", "yarnctl whatif",
                        ClusterSpec(nodes, min_allocation=state.min_allocation), tuple(jobs))
    return Start(workload, tuple(plans), tuple(held), tuple(waiting), tuple(finishing), state.age_s)

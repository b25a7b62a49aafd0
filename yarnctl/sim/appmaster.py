"""Application masters in the simulator: MapReduce, Spark and generic stage graphs as Hadoop 2.7's AMs drive them.

Jobs are submitted, ask for their AM, then for each stage's tasks (reduces after the slow-start
fraction of maps), learn of finished tasks, preempt waiting reduces that starve their maps
(RMContainerAllocator.preemptReducesIfNeeded), retry killed tasks and fail after too many attempts.
A part of SimCluster: it works on the cluster's state through the same methods.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from yarnctl.model import AM_PRIORITY, App, Ask, Resources
from yarnctl.model.cluster import ITERATIONS_TAG, STAGE_TAG
from yarnctl.sim.kernel import AM
from yarnctl.sim.parts import SimParts
from yarnctl.sim.records import JobRecord
from yarnctl.sim.workload import JobSpec, StageSpec, normalize

if TYPE_CHECKING:  # runtime: the cluster wires the parts together
    from yarnctl.sim.physics import _Container

_AM = None  # marker for the AM in an app's pending queue
MAX_TASK_FAILURES = 4  # mapreduce.map.maxattempts / mapreduce.reduce.maxattempts
MAX_AM_FAILURES = 2  # yarn.resourcemanager.am.max-attempts


class _Stage:
    __slots__ = ("spec", "index", "job", "requested", "done", "done_at", "dependents", "waiting",
                 "running", "held")

    def __init__(self, spec: StageSpec, index: int, job: _Job) -> None:
        self.spec, self.index, self.job = spec, index, job
        self.requested = False
        self.done = 0
        self.done_at: float | None = None
        self.dependents: list[_Stage] = []
        self.waiting: list[_Container] = []  # containers started before this stage finished
        self.running = 0  # live containers of this stage
        self.held: list[_Task] = []  # tasks the AM withdrew after preempting them (see _am_tick)


class _Job:
    __slots__ = ("spec", "app", "stages", "pending", "capability", "remaining", "first_start",
                 "last_finish", "am", "finished_at", "kills", "asks", "state", "am_failures",
                 "memory_s", "vcore_s")

    def __init__(self, spec: JobSpec, min_alloc: Resources) -> None:
        self.spec = spec
        self.app = _app(spec)
        self.stages = [_Stage(s, i, self) for i, s in enumerate(spec.stages)]
        for st in self.stages:
            if st.spec.after is not None:
                self.stages[st.spec.after].dependents.append(st)
        self.pending: dict[int, deque[_Task | None]] = {}  # None: the AM
        self.capability: dict[int, Resources] = {s.priority: normalize(s.resource, min_alloc) for s in spec.stages}
        if spec.am is not None:
            self.capability[AM_PRIORITY] = normalize(spec.am, min_alloc)
        self.remaining = spec.tasks
        self.first_start: float | None = None
        self.last_finish = 0.0
        self.am: _Container | None = None
        self.finished_at: float | None = None
        self.kills = 0
        self.asks: tuple[Ask, ...] = ()
        self.state = "running"
        self.am_failures = 0
        self.memory_s = 0.0  # MB x seconds of released containers, as the RM's memorySeconds
        self.vcore_s = 0.0


def _app(spec: JobSpec, iteration: int = 1) -> App:
    """The RM's record of a job; an iterative one is tagged with its iteration count and the iteration running."""
    tags = spec.tags
    if spec.iterations > 1:
        tags += (f"{ITERATIONS_TAG}={spec.iterations}", f"{STAGE_TAG}={iteration}")
    return App(spec.id, spec.queue, spec.user, spec.type, spec.name, tags, spec.submit_s)


class _Task:
    __slots__ = ("stage", "index", "duration", "attempts", "failures")

    def __init__(self, stage: _Stage, index: int, duration: float) -> None:
        self.stage, self.index, self.duration, self.attempts, self.failures = stage, index, duration, 0, 0


class AppMasters(SimParts):
    """The application masters' side of SimCluster: submissions, asks, finished tasks, reduce preemption."""

    def _submit(self, spec: JobSpec) -> None:
        self.future -= 1
        job = _Job(spec, self.min_alloc)
        self.jobs[spec.id] = job
        self.state.add_app(job.app)
        self.version += 1
        if spec.am is not None:
            self._request(job, AM_PRIORITY, [_AM])
        else:
            self._start_job(job)

    def _start_job(self, job: _Job) -> None:
        for st in job.stages:
            if st.spec.after is None:
                self._request_stage(st)

    def _request_stage(self, st: _Stage) -> None:
        if st.requested:
            return
        st.requested = True
        job = st.job
        per_iteration = len(job.stages) // job.spec.iterations
        if st.index and st.index % per_iteration == 0:
            # the first stage of a later iteration: live, the chain's next app, tagged with its stage
            job.app = _app(job.spec, st.index // per_iteration + 1)
            self.state.add_app(job.app)
        self._request(st.job, st.spec.priority,
                      [_Task(st, i, d) for i, d in enumerate(st.spec.durations)])
        for dep in st.dependents:
            if dep.spec.slowstart <= 0:
                self._request_stage(dep)

    def _request(self, job: _Job, priority: int, items: Sequence[_Task | None], front: bool = False) -> None:
        q = job.pending.get(priority)
        if q is None:
            q = job.pending[priority] = deque()
        if front:
            q.extendleft(reversed(items))
        else:
            q.extend(items)
        self.pending_total += len(items)
        self._refresh_asks(job)
        if self.idle:
            self._wake_all()

    def _refresh_asks(self, job: _Job) -> None:
        app_id = job.spec.id
        self.state.set_any_asks(app_id, tuple([Ask(app_id, p, job.capability[p], len(q))
                                               for p, q in sorted(job.pending.items()) if q]))
        self.version += 1

    def _report(self, c: _Container) -> None:
        """The NodeManager reports a finished container: release it and tell its job."""
        self._release(c, "done")
        job = c.job
        if c.task is None or job.state != "running":
            return
        st = c.task.stage
        st.done += 1
        job.remaining -= 1
        job.last_finish = max(job.last_finish, c.end or self.k.now)
        self.tasks_done += 1
        if self.progress is not None and self.tasks_done % 2000 == 0:
            self.progress(self.tasks_done, self.tasks_total, self.k.now)
        for dep in st.dependents:
            if not dep.requested and st.done >= dep.spec.slowstart * st.spec.tasks:
                self._request_stage(dep)
        self._release_held(job, st)
        if st.done == st.spec.tasks:
            st.done_at = self.k.now
            for w in st.waiting:
                w.waiting = False
                self._run(w)
            st.waiting.clear()
        if job.remaining == 0:
            self._finish(job)

    def _am_tick(self) -> None:
        """Each AM's reduce preemption (RMContainerAllocator.preemptReducesIfNeeded), once a second.

        Reduces that started early wait for their maps; if they fill the space the maps need,
        nothing moves. Like the MR AM, a job with maps still pending, none running, and waiting
        reduces kills its youngest waiting reduce and withholds its reduce asks until every
        map has been scheduled.
        """
        self.ticking = False
        waiting_any = False
        for app_id in self.state.app_ids():
            job = self.jobs[app_id]
            for st in job.stages:
                if not st.waiting:
                    continue
                waiting_any = True
                if st.running == 0 and job.pending.get(st.spec.priority):
                    for dep in {w.task.stage for w in st.waiting if w.task is not None}:
                        q = job.pending.get(dep.spec.priority)
                        if q:
                            dep.held.extend(q)  # type: ignore[arg-type]  # a stage's queue holds tasks, not the AM
                            self.pending_total -= len(q)
                            q.clear()
                            self._refresh_asks(job)
                    victim = max(st.waiting, key=lambda c: (c.start, c.seq))
                    self.stats["reduce_preemptions"] = self.stats.get("reduce_preemptions", 0) + 1
                    self._kill(victim, "preempted", requeue=False)
        if waiting_any and not self.ticking:
            self.ticking = True
            self.k.schedule(self.k.now + self.interval, AM, self._am_tick)

    def _release_held(self, job: _Job, st: _Stage) -> None:
        """Re-request withheld tasks of stages following `st` once all of `st` is scheduled."""
        if job.pending.get(st.spec.priority) and st.done < st.spec.tasks:
            return
        for dep in st.dependents:
            if dep.held:
                tasks, dep.held = dep.held, []
                self._request(job, dep.spec.priority, tasks, front=True)

    def _fail(self, job: _Job) -> None:
        """A task failed too often: the job fails, its containers are killed and its asks dropped."""
        job.state = "failed"
        for node in self.nodes:
            for c in [x for x in node.running.values() if x.job is job and not x.done]:
                self._kill(c, "killed")
        for q in job.pending.values():
            self.pending_total -= len(q)
        job.pending.clear()
        for st in job.stages:
            st.held.clear()
            st.waiting.clear()
        job.last_finish = self.k.now
        self._finish(job, "failed")

    def _finish(self, job: _Job, state: str = "succeeded") -> None:
        job.state = state
        for q in job.pending.values():  # e.g. an AM re-requested after its tasks all finished
            self.pending_total -= len(q)
        job.pending.clear()
        job.finished_at = job.last_finish
        if job.am is not None:
            am, job.am = job.am, None
            am.end = self.k.now
            self._release(am, "done")
        self.state.remove_app(job.spec.id)
        self.version += 1
        self.jobs_left -= 1
        self.job_records.append(self._job_record(job))
        if self.jobs_left == 0:
            self.k.stop()

    def _job_record(self, job: _Job) -> JobRecord:
        s = job.spec
        return JobRecord(s.id, s.name, s.user, s.queue, s.type, s.submit_s, job.first_start,
                         job.finished_at, s.tasks, job.kills, job.state)

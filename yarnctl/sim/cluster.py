"""A simulated YARN cluster: the ground truth that builds snapshots and applies decisions like the RM.

It never decides anything itself. Nodes heartbeat on a fixed grid (node i at offset
i/N of the interval); a container that finishes is reported, and its resources released, at
its node's next heartbeat, as a NodeManager does. Heartbeats that could change nothing are
skipped: a full node sleeps until one of its containers finishes, a node with room polls only
while there is demand, and a policy is not asked again while nothing it can see has changed.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from yarnctl.engine import Engine
from yarnctl.model import (
    AM_PRIORITY,
    ANY,
    App,
    AppUsage,
    ClusterSnapshot,
    Container,
    ContainerKind,
    ContainerLoad,
    Decision,
    NodeLoad,
    Observation,
    Request,
    Resources,
)
from yarnctl.model.cluster import ITERATIONS_TAG, STAGE_TAG
from yarnctl.sim.kernel import AM, END, HEARTBEAT, SUBMIT, TICK_DIGITS, TUNE, Kernel
from yarnctl.sim.workload import JobSpec, StageSpec, Usage, Workload, normalize
from yarnctl.state import ClusterState

log = logging.getLogger(__name__)

_AM = None  # marker for the AM in an app's pending queue
MAX_TASK_FAILURES = 4  # mapreduce.map.maxattempts / mapreduce.reduce.maxattempts
MAX_AM_FAILURES = 2  # yarn.resourcemanager.am.max-attempts
TUNE_INTERVAL_S = 5.0  # as `yarnctl serve --tune-interval`: the control loop's default tick


class _Node:
    __slots__ = ("id", "rack", "capacity", "physical", "allocated", "running", "finished", "offset",
                 "hb_at", "hb_k", "last_k", "seen_version", "used_cpu", "used_mem", "rate", "eff_cpu", "index")

    def __init__(self, index: int, spec, offset: float) -> None:
        self.index = index
        self.id, self.rack = spec.id, spec.rack
        self.capacity: Resources = spec.capacity
        self.physical: Resources = spec.physical
        self.allocated = Resources(0, 0)
        self.running: dict[str, _Container] = {}
        self.finished: list[_Container] = []
        self.offset = offset
        self.hb_at: float | None = None
        self.hb_k = -1
        self.last_k = -1
        self.seen_version = -1
        self.used_cpu = 0.0
        self.used_mem = 0.0
        self.rate = 1.0
        self.eff_cpu = 0.0


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
                 "last_finish", "am", "finished_at", "kills", "requests", "state", "am_failures",
                 "memory_s", "vcore_s")

    def __init__(self, spec: JobSpec, min_alloc: Resources) -> None:
        self.spec = spec
        self.app = _app(spec)
        self.stages = [_Stage(s, i, self) for i, s in enumerate(spec.stages)]
        for st in self.stages:
            if st.spec.after is not None:
                self.stages[st.spec.after].dependents.append(st)
        self.pending: dict[int, deque] = {}
        self.capability: dict[int, Resources] = {s.priority: normalize(s.resource, min_alloc) for s in spec.stages}
        if spec.am is not None:
            self.capability[AM_PRIORITY] = normalize(spec.am, min_alloc)
        self.remaining = spec.tasks
        self.first_start: float | None = None
        self.last_finish = 0.0
        self.am: _Container | None = None
        self.finished_at: float | None = None
        self.kills = 0
        self.requests: tuple[Request, ...] = ()
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


class _Container:
    __slots__ = ("id", "job", "task", "node", "resource", "start", "frozen", "work", "since",
                 "token", "waiting", "cpu", "mem", "usage", "step", "end", "done", "seq",
                 "cpu_s", "mem_s", "acc_at")

    def __init__(self, cid: str, job: _Job, task: _Task | None, node: _Node, resource: Resources,
                 start: float, kind: ContainerKind = ContainerKind.NORMAL) -> None:
        self.id, self.job, self.task, self.node, self.resource, self.start = cid, job, task, node, resource, start
        self.frozen = Container(cid, job.spec.id, node.id, task.stage.spec.priority if task else AM_PRIORITY,
                                resource, start, kind, is_am=task is None)
        self.work = task.duration if task else 0.0  # nominal seconds of work left
        self.since = start
        self.token = 0
        self.waiting = False
        self.cpu = 0.0
        self.mem = 0.0
        self.usage: Usage | None = task.stage.spec.usage if task else None
        self.step = 0
        self.end: float | None = None
        self.done = False  # finished, waiting for its node to report it
        self.cpu_s = 0.0  # vcore-seconds actually served (demand x its node's rate) until acc_at
        self.mem_s = 0.0  # MB-seconds actually used until acc_at
        self.acc_at = start


@dataclass(frozen=True, slots=True)
class ContainerRecord:
    """One container's life, for reports: who, where, what, from when until when, and how it ended."""

    id: str
    job: str
    user: str
    queue: str
    node: str
    is_am: bool
    start_s: float
    end_s: float
    memory_mb: int
    vcores: int
    outcome: str  # done | killed | oom | preempted
    released_s: float  # when the RM freed it (a finished container: its node's next heartbeat)
    used_memory_mb_s: float = 0.0  # MB-seconds actually used over [start_s, end_s], from its usage profile
    used_vcore_s: float = 0.0  # vcore-seconds actually served (slowed down with its node's cpu)


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One job's timeline."""

    id: str
    name: str
    user: str
    queue: str
    type: str
    submit_s: float
    start_s: float | None
    finish_s: float | None
    tasks: int
    kills: int
    state: str = "succeeded"  # succeeded | failed | running | pending


@dataclass
class SimRun:
    """Everything one simulation produced, for the reports."""

    workload: Workload
    policy: str
    jobs: list[JobRecord]
    containers: list[ContainerRecord]
    # step series of cluster totals: (t, allocated MB, allocated vcores, used cpu, used MB)
    usage: list[tuple[float, float, float, float, float]]
    capacity: Resources  # the configured capacity (the workload's nodes), whatever a policy resized them to
    physical: Resources
    end_s: float
    stats: dict[str, float] = field(default_factory=dict)
    stuck: bool = False
    # (t, values) each time a tunable policy's tuning values changed
    tuning: list[tuple[float, dict[str, float]]] = field(default_factory=list)


ProgressFn = Callable[[int, int, float], None]


class SimCluster:
    """Ground truth for one run of one policy on one workload."""

    def __init__(self, workload: Workload, engine: Engine, *, skip_idle: bool = True,
                 max_time_s: float = math.inf, progress: ProgressFn | None = None,
                 tune_interval_s: float = TUNE_INTERVAL_S) -> None:
        self.w = workload
        self.engine = engine
        self.tunable = engine.tunable
        self.tune_interval_s = tune_interval_s
        self.tuning: list[tuple[float, dict[str, float]]] = []
        # a time-dependent policy (long-term accounting) learns from every heartbeat it is asked, as it
        # is live: skipping idle ones would change what it knows, so it is asked at every one
        self.time_dependent = engine.policy.time_dependent
        self.skip_idle = skip_idle and not self.time_dependent
        self.max_time_s = max_time_s
        self.progress = progress
        self.k = Kernel()
        spec = workload.cluster
        self.interval = spec.heartbeat_s
        self.min_alloc = spec.min_allocation
        n = len(spec.nodes)
        self.nodes = [_Node(i, s, self.interval * i / n) for i, s in enumerate(spec.nodes)]
        self.by_id = {nd.id: nd for nd in self.nodes}
        # the RM's view (what policies see) lives in the one store the live mirror also drives
        self.state = ClusterState(self.min_alloc)
        for nd in self.nodes:
            self.state.put_node(nd.id, nd.rack, nd.capacity, nd.capacity)
        self.configured = self.state.capacity  # what utilisation is measured against; resizes change the store's
        self.physical = sum((nd.physical for nd in self.nodes), Resources(0, 0))
        self.jobs: dict[str, _Job] = {}
        self.pending_total = 0
        self.version = 0
        self.idle: set[_Node] = set(self.nodes)  # nodes with no heartbeat scheduled
        self.running_count = 0
        self.future = 0  # submissions and task ends still to come
        self.seq = 0
        self.alloc_mem = 0
        self.alloc_vc = 0
        self.used_cpu_eff = 0.0
        self.used_mem = 0.0
        self.usage: list[tuple[float, float, float, float, float]] = [(0.0, 0, 0, 0.0, 0.0)]
        self.records: list[ContainerRecord] = []
        self.job_records: list[JobRecord] = []
        self.jobs_left = len(workload.jobs)
        self.tasks_total = workload.tasks
        self.tasks_done = 0
        self.empty_streak = 0
        self.quiet_version = -1
        self.stall_heartbeats = max(10 * len(self.nodes), 100)
        self.ticking = False
        self.stats = {"heartbeats": 0, "decisions": 0, "skipped": 0, "assigned": 0, "kills": 0, "oom_kills": 0}

    # ------------------------------------------------------------ running

    def run(self) -> SimRun:
        """Simulate until every job has finished (or nothing more can happen)."""
        started = time.perf_counter()
        for spec in self.w.jobs:
            self.future += 1
            self.k.schedule(spec.submit_s, SUBMIT, self._submit, spec)
        if self.tunable:
            self.k.schedule(0.0, TUNE, self._tune)
        self.k.run(self.max_time_s)
        for node in self.nodes:
            # containers that finished after the last job ended (a failed job's) are still reported
            for c in node.finished:
                self._release(c, "done")
            node.finished.clear()
        stuck = self.jobs_left > 0
        for job in self.jobs.values():
            if job.finished_at is None:
                self.job_records.append(self._job_record(job))
        for spec in self.w.jobs:
            if spec.id not in self.jobs:
                self.job_records.append(JobRecord(spec.id, spec.name, spec.user, spec.queue, spec.type,
                                                  spec.submit_s, None, None, spec.tasks, 0, "pending"))
        self.job_records.sort(key=lambda j: (j.submit_s, j.id))
        self.stats.update({f"engine_{k}": v for k, v in self.engine.stats.items()})
        self.stats["wall_s"] = time.perf_counter() - started
        self.stats["tasks"] = self.tasks_done
        if self.progress:
            self.progress(self.tasks_done, self.tasks_total, self.k.now)
        return SimRun(self.w, self.engine.policy.name, self.job_records, self.records, self.usage,
                      self.configured, self.physical, self.k.now, self.stats, stuck, self.tuning)

    def snapshot(self) -> ClusterSnapshot:
        """A read-only copy of the state the RM would hand a policy now."""
        return self.state.snapshot(self.k.now)

    def observe(self) -> Observation:
        """The control loop's view of the simulated cluster now: what `yarnctl serve` reads from the RM and NMs."""
        now = self.k.now
        loads: list[ContainerLoad] = []
        running_s: dict[str, list[float]] = {}
        for node in self.nodes:
            for c in node.running.values():
                app_id = c.job.spec.id
                loads.append(ContainerLoad(c.id, app_id, node.id, c.mem, c.cpu))
                acc = running_s.setdefault(app_id, [0.0, 0.0])
                acc[0] += c.resource.memory_mb * (now - c.start)
                acc[1] += c.resource.vcores * (now - c.start)
        apps = []
        for app_id in self.state.app_ids():
            job = self.jobs[app_id]
            app = job.app
            asks = [r for r in self.state.asks(app_id) if r.resource_name == ANY]
            mem_s, vc_s = running_s.get(app_id, (0.0, 0.0))
            apps.append(AppUsage(app_id, app.queue, app.user, self.state.allocated(app_id),
                                 sum((r.capability * r.count for r in asks), Resources(0, 0)),
                                 sum(r.count for r in asks),
                                 int(job.memory_s + mem_s), int(job.vcore_s + vc_s)))
        nodes = [NodeLoad(nd.id, nd.capacity, nd.allocated) for nd in self.nodes]
        return Observation.build(now, nodes, apps, loads, usage_measured=True, snapshot=self.snapshot())

    def _tune(self) -> None:
        """The control loop's tick: on its own clock, so how often heartbeats are skipped cannot change it."""
        if self.jobs_left == 0:
            return
        changed = self.engine.tune(self.observe())
        if changed:
            self.version += 1  # the policy may now accept what it refused at this state
            self._wake_all()
        if changed or not self.tuning:
            self.tuning.append((self.k.now, self.engine.tuning()))
        if self.k.pending():  # something else will happen; alone, ticks would keep a stalled run alive
            self.k.schedule(self.k.now + self.tune_interval_s, TUNE, self._tune)

    # ------------------------------------------------------------ heartbeats

    def _wake(self, node: _Node) -> None:
        """Make sure `node` heartbeats at its next grid time."""
        if node.hb_at is not None:
            return
        now = self.k.now
        # the tolerance covers the microsecond rounding of `now`; the check below settles it exactly
        k = max(math.ceil((now - node.offset - 1e-6) / self.interval), node.last_k + 1, 0)
        at = round(node.offset + k * self.interval, TICK_DIGITS)
        if at < now:  # rounding put grid slot k just before now: it has passed
            k += 1
            at = round(node.offset + k * self.interval, TICK_DIGITS)
        node.hb_at = at
        node.hb_k = k  # a node heartbeats at most once per grid slot
        self.idle.discard(node)
        self.k.schedule(at, HEARTBEAT, self._heartbeat, node)

    def _wake_all(self) -> None:
        for node in sorted(self.idle, key=lambda n: n.index):
            if self.min_alloc.fits_in(node.capacity - node.allocated):
                self._wake(node)

    def _heartbeat(self, node: _Node) -> None:
        node.hb_at = None
        node.last_k = node.hb_k
        self.stats["heartbeats"] += 1
        if node.finished:
            for c in node.finished:
                self._report(c)
            node.finished.clear()
        room = self.min_alloc.fits_in(node.capacity - node.allocated)
        if not (room and self.pending_total > 0) and self.skip_idle:
            self.idle.add(node)  # sleeps until a container ends here or new demand arrives
            return
        if self.skip_idle and not self.time_dependent and node.seen_version == self.version:
            self.stats["skipped"] += 1  # the policy already said no to exactly this state
        else:
            self.stats["decisions"] += 1
            version = self.version
            result = self.engine.decide(self.snapshot(), node.id)
            self._apply(result.accepted)
            node.seen_version = version if self.version == version else -1
        if self.jobs_left == 0:
            self.k.stop()
            return
        if self.future == 0 and self.version == self.quiet_version:
            # no task will end and no job arrive, and nothing changed since the last heartbeat:
            # if that lasts for several rounds of every node, nothing ever will
            self.empty_streak += 1
            if self.empty_streak > self.stall_heartbeats:
                log.warning("stalled at t=%.1f: %d jobs left whose requests no node accepts",
                            self.k.now, self.jobs_left)
                self.k.stop()
                return
        else:
            self.empty_streak = 0
            self.quiet_version = self.version
        self._wake(node)

    # ------------------------------------------------------------ jobs and requests

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

    def _request(self, job: _Job, priority: int, items: list, front: bool = False) -> None:
        q = job.pending.get(priority)
        if q is None:
            q = job.pending[priority] = deque()
        if front:
            q.extendleft(reversed(items))
        else:
            q.extend(items)
        self.pending_total += len(items)
        self._refresh_requests(job)
        if self.idle:
            self._wake_all()

    def _refresh_requests(self, job: _Job) -> None:
        app_id = job.spec.id
        self.state.set_app_asks(app_id, [Request(app_id, p, job.capability[p], len(q))
                                         for p, q in sorted(job.pending.items()) if q])
        self.version += 1

    # ------------------------------------------------------------ applying decisions

    def _apply(self, d: Decision) -> None:
        for r in d.resizes:
            node = self.by_id[r.node_id]
            node.capacity = r.capacity
            self.state.resize_node(node.id, r.capacity)
            self.version += 1
        for kl in d.kills:
            c = self._find(kl.container_id)
            if c is not None:
                self.stats["kills"] += 1
                self._kill(c, "killed")
        for a in d.assignments:
            job = self.jobs[a.app_id]
            node = self.by_id[a.node_id]
            cap = job.capability[a.priority]
            for _ in range(a.count):
                # a launch can fail its own job (an OOM kill of a task's last attempt)
                q = job.pending.get(a.priority)
                if job.state != "running" or not q:
                    break
                self.pending_total -= 1
                self.stats["assigned"] += 1
                self._launch(job, q.popleft(), node, cap, a.kind)
            if job.state == "running":
                self._refresh_requests(job)

    def _find(self, cid: str) -> _Container | None:
        c = self.state.container(cid)
        return None if c is None else self.by_id[c.node_id].running.get(cid)

    def _launch(self, job: _Job, task: _Task | None, node: _Node, cap: Resources,
                kind: ContainerKind = ContainerKind.NORMAL) -> None:
        now = self.k.now
        self.seq += 1
        c = _Container(f"{job.spec.id}_{self.seq:06d}", job, task, node, cap, now, kind)
        c.seq = self.seq
        node.running[c.id] = c
        node.allocated = node.allocated + cap
        self.state.allocate(c.frozen)
        self.alloc_mem += cap.memory_mb
        self.alloc_vc += cap.vcores
        self.running_count += 1
        self.version += 1
        if task is None:
            job.am = c
            self._set_usage(c, float(cap.vcores), float(cap.memory_mb))
            if job.am is c:  # not killed at once for want of physical memory
                self._start_job(job)
            return
        if job.first_start is None:
            job.first_start = now
        task.stage.running += 1
        after = task.stage.spec.after
        if task.stage.spec.slowstart < 1 and after is not None and job.stages[after].done_at is None:
            c.waiting = True  # holds its container until the stage it follows has finished
            job.stages[after].waiting.append(c)
            if not self.ticking:
                self.ticking = True
                self.k.schedule(now + self.interval, AM, self._am_tick)
        u = c.usage.steps[0] if c.usage else (0.0, 1.0, 1.0)
        self._set_usage(c, cap.vcores * u[1], cap.memory_mb * u[2])
        if c.id not in node.running:
            return  # it did not fit in physical memory and was killed at once
        if not c.waiting:
            self._run(c)

    def _run(self, c: _Container) -> None:
        """Start (or re-time) the countdown of a container's task at its node's current rate."""
        now = self.k.now
        c.since = now
        c.token += 1
        c.end = now + c.work / c.node.rate
        self.future += 1
        self.k.schedule(c.end, END, self._end, c, c.token)
        if c.usage is not None and len(c.usage.steps) > 1:
            self._schedule_step(c)

    def _schedule_step(self, c: _Container) -> None:
        steps = c.usage.steps
        if c.step + 1 < len(steps):
            done = c.task.duration - c.work  # nominal seconds already worked
            at = c.since + max(steps[c.step + 1][0] * c.task.duration - done, 0.0) / c.node.rate
            self.k.schedule(at, END, self._profile_step, c, c.token)

    def _profile_step(self, c: _Container, token: int) -> None:
        if token != c.token or c.end is None:
            return
        self._progress(c)
        c.step += 1
        _, cpu, mem = c.usage.steps[c.step]
        self._set_usage(c, c.resource.vcores * cpu, c.resource.memory_mb * mem)
        if c.token == token:
            self._schedule_step(c)

    def _progress(self, c: _Container) -> None:
        now = self.k.now
        c.work = max(c.work - (now - c.since) * c.node.rate, 0.0)
        c.since = now

    def _end(self, c: _Container, token: int) -> None:
        if token != c.token:
            return  # re-timed or killed since this was scheduled
        self.future -= 1
        c.end = self.k.now
        c.done = True
        c.work = 0.0
        c.token += 1
        self._set_usage(c, 0.0, 0.0)
        c.node.finished.append(c)
        self._wake(c.node)

    def _accrue(self, c: _Container) -> None:
        """Add a container's use since its last change to its totals (for the container usage trace)."""
        now = self.k.now
        c.cpu_s += c.cpu * c.node.rate * (now - c.acc_at)
        c.mem_s += c.mem * (now - c.acc_at)
        c.acc_at = now

    def _set_usage(self, c: _Container, cpu: float, mem: float) -> None:
        """Change a container's actual use; enforce its node's physical limits."""
        node = c.node
        self._accrue(c)
        node.used_cpu += cpu - c.cpu
        node.used_mem += mem - c.mem
        self.used_mem += mem - c.mem
        c.cpu, c.mem = cpu, mem
        eff = min(node.used_cpu, node.physical.vcores)
        self.used_cpu_eff += eff - node.eff_cpu
        node.eff_cpu = eff
        self._log_usage()
        if node.used_mem > node.physical.memory_mb + 1e-6:
            # memory is not compressible: the youngest container goes, as an OOM killer would
            victim = max((x for x in node.running.values() if x.mem > 0 and not x.done),
                         key=lambda x: (x.start, x.seq), default=None)
            if victim is not None:
                self.stats["oom_kills"] += 1
                self._kill(victim, "oom")
                return
        rate = 1.0 if node.used_cpu <= node.physical.vcores else node.physical.vcores / node.used_cpu
        if abs(rate - node.rate) > 1e-12:
            # cpu is compressible: every running task on the node slows down proportionally
            ticking = [x for x in node.running.values()
                       if x.task is not None and not x.waiting and not x.done and x.end is not None]
            for x in ticking:
                self._progress(x)
            for x in node.running.values():
                self._accrue(x)  # each was served at the old rate until now
            node.rate = rate
            for x in ticking:
                self.future -= 1  # _run re-times it; the old END event becomes stale
                self._run(x)

    def _log_usage(self) -> None:
        self.usage.append((self.k.now, self.alloc_mem, self.alloc_vc, self.used_cpu_eff, self.used_mem))

    # ------------------------------------------------------------ releasing

    def _release(self, c: _Container, outcome: str) -> None:
        node, job = c.node, c.job
        if c.task is not None:
            c.task.stage.running -= 1
        del node.running[c.id]
        node.allocated = node.allocated - c.resource
        self.state.release(c.id)  # None for a failed job's last containers: they went with the app
        job.memory_s += c.resource.memory_mb * (self.k.now - c.start)
        job.vcore_s += c.resource.vcores * (self.k.now - c.start)
        self.alloc_mem -= c.resource.memory_mb
        self.alloc_vc -= c.resource.vcores
        self.running_count -= 1
        self.version += 1
        if node.hb_at is None and self.pending_total > 0:
            self._wake(node)  # room freed outside its heartbeat (a kill): offer it at the next one
        if c.cpu or c.mem:
            self._set_usage(c, 0.0, 0.0)
        else:
            self._log_usage()
        end = c.end if outcome == "done" and c.end is not None else self.k.now
        self.records.append(ContainerRecord(c.id, job.spec.id, job.spec.user, job.spec.queue, node.id, c.task is None,
                                            c.start, end, c.resource.memory_mb, c.resource.vcores, outcome,
                                            self.k.now, c.mem_s, c.cpu_s))

    def _kill(self, c: _Container, outcome: str, requeue: bool = True) -> None:
        """Kill a live container now; its task goes back to the front of its request (or is held)."""
        if c.done or c.id not in c.node.running:
            return
        if c.task is not None and not c.waiting and c.end is not None:
            self.future -= 1  # its END event will be ignored (a container killed at launch has none)
        c.token += 1
        self._release(c, outcome)
        c.end = None
        job = c.job
        job.kills += 1
        if c.task is None:
            job.am = None
        if job.state != "running":
            return  # the job is being torn down
        if c.task is None:
            job.am_failures += outcome == "oom"
            if job.am_failures >= MAX_AM_FAILURES:
                self._fail(job)
            else:
                self._request(job, AM_PRIORITY, [_AM], front=True)
            return
        if c.waiting:
            job.stages[c.task.stage.spec.after].waiting.remove(c)
            c.waiting = False
        c.task.attempts += 1
        # an OOM kill is a failed attempt; a kill or preemption is not (MR re-runs those freely)
        c.task.failures += outcome == "oom"
        if c.task.failures >= MAX_TASK_FAILURES:
            self._fail(job)
        elif requeue:
            self._request(job, c.task.stage.spec.priority, [c.task], front=True)
        else:
            c.task.stage.held.append(c.task)

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
        reduces kills its youngest waiting reduce and withholds its reduce requests until every
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
                    for dep in {w.task.stage for w in st.waiting}:
                        q = job.pending.get(dep.spec.priority)
                        if q:
                            dep.held.extend(q)
                            self.pending_total -= len(q)
                            q.clear()
                            self._refresh_requests(job)
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

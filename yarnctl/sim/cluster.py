"""A simulated YARN cluster: the ground truth that builds snapshots and applies decisions like the RM.

It never decides anything itself. Nodes heartbeat on a fixed grid (node i at offset i/N of
the interval, or at the phases the workload gives); a container that finishes is reported, and
its resources released, at its node's next heartbeat, as a NodeManager does. Heartbeats that
could change nothing are skipped: a full node sleeps until one of its containers finishes, a node with room polls only
while there is demand, and a policy is not asked again while nothing it can see has changed.
"""

from __future__ import annotations

import logging
import math
import time

from yarnctl.collector import fewer_collections
from yarnctl.engine import Engine
from yarnctl.model import TUNE_INTERVAL_S, AM_PRIORITY, EMPTY_DECISION, ClusterSnapshot, ContainerKind, Decision, Resources
from yarnctl.sim.appmaster import _AM, MAX_AM_FAILURES, MAX_TASK_FAILURES, AppMasters, _Job, _Task, midway
from yarnctl.sim.jvmstart import JvmStarts, _Pool
from yarnctl.sim.kernel import AM, HEARTBEAT, SAMPLE, SUBMIT, TICK_DIGITS, TUNE, Kernel, SeededKernel
from yarnctl.sim.observe import Observations
from yarnctl.sim.parts import ProgressFn
from yarnctl.sim.physics import NodePhysics, _Container, _Node
from yarnctl.sim.records import ContainerRecord, JobRecord, QueueSample, SimRun, WaitRecord
from yarnctl.sim.workload import Workload
from yarnctl.sim.workload.queues import rescaled
from yarnctl.state import ClusterState

__all__ = ["MAX_AM_FAILURES", "MAX_TASK_FAILURES", "TUNE_INTERVAL_S", "ContainerRecord", "JobRecord", "ProgressFn",
           "SimCluster", "SimRun"]

log = logging.getLogger(__name__)

class SimCluster(AppMasters, NodePhysics, JvmStarts, Observations):
    """Ground truth for one run of one policy on one workload."""

    def __init__(self, workload: Workload, engine: Engine, *, skip_idle: bool = True,
                 max_time_s: float = math.inf, progress: ProgressFn | None = None,
                 tune_interval_s: float = TUNE_INTERVAL_S, sample_queues_s: float = 0.0,
                 explain: frozenset[str] = frozenset(), order_seed: int | None = None) -> None:
        self.w = workload
        # jobs whose every decided heartbeat that leaves them waiting is explained (Engine.explain): it only reads
        self.explain = explain
        self.waits: list[WaitRecord] = []
        self.engine = engine
        self.tunable = engine.tunable
        self.tune_interval_s = tune_interval_s
        self.tuning: list[tuple[float, dict[str, float]]] = []
        # every `sample_queues_s` (0: never), each leaf queue's allocated and pending MB, as a real run samples the RM
        self.sample_queues_s = sample_queues_s if workload.cluster.queues else 0.0
        self.queue_samples: list[QueueSample] = []
        # a time-dependent policy (long-term accounting) learns from every heartbeat it is asked, as it
        # is live: skipping idle ones would change what it knows, so it is asked at every one
        self.time_dependent = engine.policy.time_dependent
        self.skip_idle = skip_idle and not self.time_dependent
        # FairScheduler asks its policy at every heartbeat, a full node's too, which it may reserve; the others
        # place new containers only where the minimum allocation fits (CapacityScheduler also retries a node's
        # reservation at every heartbeat, so one whose app stopped asking lapses there, here at its next decision)
        self.full_nodes_asked = engine.policy.reserves_full_nodes
        self.max_time_s = max_time_s
        self.progress = progress
        # a seed draws the order of simultaneous events (sim/noise.py)
        self.k = Kernel() if order_seed is None else SeededKernel(order_seed)
        spec = workload.cluster
        self.interval = spec.heartbeat_s
        self.min_alloc = spec.min_allocation
        self.startup = spec.startup
        self.pools: dict[str, _Pool] = {}  # containers whose JVM is starting (Startup.launch_cpu_s)
        n = len(spec.nodes)
        if spec.phases and len(spec.phases) != n:
            raise ValueError(f"{len(spec.phases)} heartbeat phases for {n} nodes")
        self.nodes = [_Node(i, s, self.interval * spec.phases[i] if spec.phases else self.interval * i / n)
                      for i, s in enumerate(spec.nodes)]
        self.am_midway = midway([nd.offset for nd in self.nodes], self.interval)  # where MR AMs call (take_up)
        self.by_id = {nd.id: nd for nd in self.nodes}
        # the RM's view (what policies see) lives in the one store the live mirror also drives
        self.state = ClusterState(self.min_alloc)
        for nd in self.nodes:
            self.state.put_node(nd.id, nd.rack, nd.capacity, nd.capacity)
        if spec.queues:
            self.state.set_queues(spec.queues)
        self.registered = self.state.capacity  # what utilisation is measured against; resizes change the store's
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
        self.am_beating = 0  # MR AMs with a heartbeat scheduled: they may still change things
        self.dozers: dict[Resources, dict[int, _Job]] = {}  # dozing MR AMs by the map size whose room they wait to lose
        self.progress_at = 0.0  # when a task last finished or a job arrived
        longest = max((d for j in workload.jobs for st in j.stages for d in st.durations), default=0.0)
        self.stall_s = 2 * longest + 900.0  # beyond any task's (slowed) life and the AM's 300 s preemption wait
        self.stats = {"heartbeats": 0, "decisions": 0, "skipped": 0, "assigned": 0, "kills": 0, "oom_kills": 0}

    # ------------------------------------------------------------ running

    def run(self) -> SimRun:
        """Simulate until every job has finished (or nothing more can happen)."""
        started = time.perf_counter()
        for spec in self.w.jobs:
            self.future += 1
            self.k.schedule(spec.submit_s, SUBMIT, self._submit, spec)
        if self.tunable:
            # live, the control loop's phase against arrivals is arbitrary; ticking mid-interval keeps
            # arrivals on round seconds (a bench every 5 s) from each landing just before a tick, which
            # showed a tunable policy only the newest job's AM pending at every tick
            self.k.schedule(self.tune_interval_s / 2, TUNE, self._tune)
        if self.sample_queues_s > 0:
            self.k.schedule(0.0, SAMPLE, self._sample_queues)
        with fewer_collections():
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
        self.stats.update({f"engine_rejected_{k}": v for k, v in self.engine.rejected_by.items()})
        self.stats["wall_s"] = time.perf_counter() - started
        self.stats["tasks"] = self.tasks_done
        if self.progress:
            self.progress(self.tasks_done, self.tasks_total, self.k.now)
        return SimRun(self.w, self.engine.policy.name, self.job_records, self.records, self.usage,
                      self.registered, self.physical, self.k.now, self.stats, stuck, self.tuning, self.queue_samples,
                      self.waits)

    def snapshot(self) -> ClusterSnapshot:
        """A read-only copy of the state the RM would hand a policy now."""
        return self.state.snapshot(self.k.now)


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
            if self.full_nodes_asked or self._has_room(node):
                self._wake(node)

    def _has_room(self, node: _Node) -> bool:
        """Whether the smallest container still fits on `node` (the store holds what is allocated)."""
        held, m = self.state.node_allocated(node.id), self.min_alloc
        return (m.memory_mb <= node.capacity.memory_mb - held.memory_mb
                and m.vcores <= node.capacity.vcores - held.vcores)

    def _heartbeat(self, node: _Node) -> None:
        node.hb_at = None
        node.last_k = node.hb_k
        self.stats["heartbeats"] += 1
        if node.finished:
            for c in node.finished:
                self._report(c)
            node.finished.clear()
        if not ((self.full_nodes_asked or self._has_room(node)) and self.pending_total > 0) and self.skip_idle:
            if self.explain and self.pending_total > 0:  # not asked (as the shim does not): it has no room
                self._explain(self.snapshot(), node.id, EMPTY_DECISION)
            self.idle.add(node)  # sleeps until a container ends here or new demand arrives
            return
        if self.skip_idle and not self.time_dependent and node.seen_version == self.version:
            self.stats["skipped"] += 1  # the policy already said no to exactly this state
        else:
            self.stats["decisions"] += 1
            version = self.version
            snap = self.snapshot()
            result = self.engine.decide(snap, node.id)
            if self.explain:
                self._explain(snap, node.id, result.accepted)
            del snap  # read by nobody now: the store writes its maps in place, not copies (ClusterState._own)
            self._apply(result.accepted)
            node.seen_version = version if self.version == version else -1
        if self.jobs_left == 0:
            self.k.stop()
            return
        if self.future == 0 and self.am_beating == 0 and (
                self.version == self.quiet_version or self.k.now - self.progress_at > self.stall_s):
            # no task will end and no job arrive, and nothing changed since the last heartbeat (or what
            # changed, e.g. a node resized back and forth, moved nothing for the no-progress bound, stall_s):
            # if that lasts for several rounds of every node, nothing ever will
            self.empty_streak += 1
            if self.empty_streak > self.stall_heartbeats:
                log.warning("stalled at t=%.1f: %d jobs left whose asks no node accepts",
                            self.k.now, self.jobs_left)
                self.k.stop()
                return
        else:
            self.empty_streak = 0
            self.quiet_version = self.version
        self._wake(node)

    def _explain(self, snap: ClusterSnapshot, node_id: str, decision: Decision) -> None:
        try:
            for job in sorted(self.explain):
                why = self.engine.explain(snap, node_id, job, decision)
                if why is not None:
                    self.waits.append(WaitRecord(self.k.now, job, node_id, why))
        finally:
            self.engine.end_explaining()

    # ------------------------------------------------------------ applying decisions

    def _apply(self, d: Decision) -> None:
        for r in d.resizes:
            node = self.by_id[r.node_id]
            node.capacity = r.capacity
            self.state.resize_node(node.id, r.capacity)
            self.version += 1
        if d.resizes and self.dozers:
            self._room_taken()
        if d.resizes and self.w.cluster.queues:
            # a resize changes the cluster's size, and CapacityScheduler every queue's maximum with it
            self.state.set_queues(rescaled(self.w.cluster.queues, self.state.capacity, self.min_alloc))
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
                self._refresh_asks(job)

    def _launches_cost(self) -> bool:
        return bool(self.startup.launch_s or self.startup.launch_per_concurrent_s)

    def _launch_cost(self, c: _Container) -> float:
        """Seconds of start-up work before a task's own: the base cost plus more per container still starting."""
        now = self.k.now
        # the NodeManagers of one machine (launch_shared) start their JVMs on the same cores
        nodes = self.nodes if self.startup.launch_shared else (c.node,)
        starting = sum(1 for n in nodes for x in n.running.values() if x is not c and x.ready_at > now)
        cost = self.startup.launch_s + self.startup.launch_per_concurrent_s * starting
        c.ready_at = now + cost
        return cost

    def _am_started(self, job: _Job, am: _Container) -> None:
        """The AM has initialised (Startup.am_s after its container): it asks for its tasks."""
        self.future -= 1
        if job.am is am and job.state == "running":
            self._start_job(job)

    def _find(self, cid: str) -> _Container | None:
        c = self.state.container(cid)
        return None if c is None else self.by_id[c.node_id].running.get(cid)

    def _launch(self, job: _Job, task: _Task | None, node: _Node, cap: Resources,
                kind: ContainerKind = ContainerKind.NORMAL, placed: bool = False) -> None:
        """Start a container of `job` on `node`; a `placed` one was already running (JobSpec.placed): no start-up."""
        now = self.k.now
        self.seq += 1
        c = _Container(f"{job.spec.id}_{self.seq:06d}", job, task, node, cap, now, kind)
        c.seq = self.seq
        node.running[c.id] = c
        self.state.launch(c.frozen)  # placed by the simulator itself: no need to check it again
        self.alloc_mem += cap.memory_mb
        self.alloc_vc += cap.vcores
        self.running_count += 1
        self.version += 1
        if self.dozers:  # else no AM dozes
            self._changed(job)
            self._room_taken()
        if task is None:
            job.am = c
            self._set_usage(c, float(cap.vcores), float(cap.memory_mb))
            if job.am is c and placed:
                self._start_job(job)
            elif job.am is c:  # not killed at once for want of physical memory
                if self._jvm_starts():
                    self._start_jvm(c, lambda: self._am_jvm_started(job, c))
                else:
                    self._am_jvm_started(job, c)
            return
        task.stage.running += 1
        if job.takes_up and not placed:
            # allocated now, launched when its AM takes it up at its next allocate call (its heartbeat)
            job.untaken.append(c)
            self._mr_wake(job)
            return
        self._start_task(c, placed)

    def _take_up(self, job: _Job) -> None:
        """The AM's allocate call: it launches the task containers the RM allocated it since its last one."""
        untaken, job.untaken = job.untaken, []
        for c in untaken:
            if c.node.running.get(c.id) is c and job.state == "running":  # not killed meanwhile
                self._start_task(c, False)

    def _start_task(self, c: _Container, placed: bool) -> None:
        """Launch a task's container: its JVM starts, or it holds its container until the stage it follows ends."""
        job, task, node, now = c.job, c.task, c.node, self.k.now
        assert task is not None  # an AM's container starts in _launch
        if job.first_start is None:
            job.first_start = now
        after = task.stage.spec.after
        if task.stage.spec.slowstart < 1 and after is not None and job.stages[after].done_at is None:
            c.waiting = True  # holds its container until the stage it follows has finished
            job.stages[after].waiting.append(c)
            if self._launches_cost() and not placed:  # a placed one was already running: its start is over
                self._launch_cost(c)  # its JVM starts now, beside the others starting: ready then
            if not self.ticking and not job.stages[after].feeds_mr:  # MR AMs preempt on their own heartbeat
                self.ticking = True
                self.k.schedule(now + self.interval, AM, self._am_tick)
        u = c.usage.steps[0] if c.usage else (0.0, 1.0, 1.0)
        self._set_usage(c, c.resource.vcores * u[1], c.resource.memory_mb * u[2])
        if c.id not in node.running:
            return  # it did not fit in physical memory and was killed at once
        if not c.waiting and placed:
            self._run(c)  # its remaining work (duration) includes what is left of its shuffle
        elif not c.waiting:
            c.work += task.stage.spec.shuffle_s  # started after the stage it follows: fetches all its output
            if self._jvm_starts():
                self._start_jvm(c, lambda: self._task_jvm_started(c))
            else:
                self._task_jvm_started(c)

    def _task_jvm_started(self, c: _Container) -> None:
        """A task's JVM has had its CPU (if modelled): its launch cost, then its work, run on the node's clock."""
        if self._launches_cost():
            c.work += self._launch_cost(c)
        self._run(c)

    def _am_jvm_started(self, job: _Job, c: _Container) -> None:
        """An AM's JVM has had its CPU (if modelled): its own start-up's CPU next (if modelled)."""
        if job.am is not c:
            return
        if self._am_cpu():
            self._start_jvm(c, lambda: self._am_initialised(job, c), self.startup.am_cpu_s)
        else:
            self._am_initialised(job, c)

    def _am_initialised(self, job: _Job, c: _Container) -> None:
        """An AM's start-up CPU is served (if modelled): its launch cost and start-up delay, then it asks for tasks."""
        if job.am is not c:
            return
        # an AM is a JVM like a task's: it pays the same launch cost before its own start-up
        delay = self.startup.am_s + (self._launch_cost(c) if self._launches_cost() else 0.0)
        if delay > 0:
            self.future += 1  # the AM's first ask is still to come: a run that waits for it is not stalled
            self.k.schedule(self.k.now + delay, AM, self._am_started, job, c)
        else:
            self._start_job(job)


    # ------------------------------------------------------------ releasing

    def _release(self, c: _Container, outcome: str) -> None:
        node, job = c.node, c.job
        if self.pools:  # killed, or its job ended, while its JVM or its AM's start-up had CPU to go (jvmstart.py)
            self._abort_jvm(c)
        if c.task is not None:
            c.task.stage.running -= 1
        del node.running[c.id]
        self.state.release(c.id)  # None for a failed job's last containers: they went with the app
        self._changed(job)
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
            job.am_up = False
            job.am_failures += outcome == "oom"
            if job.am_failures >= MAX_AM_FAILURES:
                self._fail(job)
                return
            self._request(job, AM_PRIORITY, [_AM], front=True)
            # the containers the attempt had not taken up go with it (the RM kills a failed attempt's), and their
            # tasks are asked for again; its running tasks live on (not modelled)
            untaken, job.untaken = job.untaken, []
            for u in reversed(untaken):  # each goes to the front of its queue: the first allocated ends up first
                self._kill(u, "killed")
            return
        if c.waiting:
            after = c.task.stage.spec.after
            assert after is not None  # a task waits only for the stage it follows
            job.stages[after].waiting.remove(c)
            c.waiting = False
        # an OOM kill is a failed attempt; a kill or preemption is not (MR re-runs those freely)
        c.task.failures += outcome == "oom"
        if c.task.failures >= MAX_TASK_FAILURES:
            self._fail(job)
        elif requeue:
            self._request(job, c.task.stage.spec.priority, [c.task], front=True)
        else:
            c.task.stage.held.append(c.task)



"""Application masters in the simulator: MapReduce, Spark and generic stage graphs as Hadoop 2.7's AMs drive them.

Jobs are submitted, ask for their AM, then for each stage's tasks, learn of finished tasks, retry
killed tasks and fail after too many attempts. A MapReduce job's reduces are asked for as its AM's
RMContainerAllocator does on each AM heartbeat (`mr_am.py`): after slow start, ramped up by map
progress within the ramp-up limit, ramped down, and preempted for maps that cannot run. Reduces
that start before the last map hold their container and shuffle; their reduce time runs once the
maps are done. Stages of generic jobs that follow another start after its slow-start fraction.
A Spark job with stages runs them in executors its driver keeps (`spark_drivers.py`); here it asks
YARN for them. A part of SimCluster: it works on the cluster's state through the same methods.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from yarnctl.model import AM_PRIORITY, App, Ask, Locality, Resources
from yarnctl.model.cluster import ITERATIONS_TAG, STAGE_TAG
from yarnctl.sim.kernel import AM, AM_BEAT, TICK_DIGITS
from yarnctl.sim.mr_am import JobState, reduces_to_preempt, room_for_a_map, schedule_reduces, slowstart_reached
from yarnctl.sim.parts import SimParts
from yarnctl.sim.records import JobRecord
from yarnctl.sim.spark_am import Driver
from yarnctl.sim.spark_drivers import SparkDrivers
from yarnctl.sim.workload import JobSpec, StageSpec, normalize

if TYPE_CHECKING:  # runtime: the cluster wires the parts together
    from yarnctl.sim.physics import _Container

_AM = None  # marker for the AM in an app's pending queue
MAX_TASK_FAILURES = 4  # mapreduce.map.maxattempts / mapreduce.reduce.maxattempts
MAX_AM_FAILURES = 2  # yarn.resourcemanager.am.max-attempts


class _Stage:
    __slots__ = ("spec", "index", "job", "requested", "done", "done_at", "dependents", "waiting",
                 "running", "held", "ramping", "feeds_mr", "asked_floor")

    def __init__(self, spec: StageSpec, index: int, job: _Job) -> None:
        self.spec, self.index, self.job = spec, index, job
        self.requested = False
        self.done = 0
        self.done_at: float | None = None
        self.dependents: list[_Stage] = []
        self.waiting: list[_Container] = []  # containers started before this stage finished
        self.running = 0  # live containers of this stage
        self.held: list[_Task] = []  # tasks the AM has not asked for (an MR job's pending reduces; see _mr_allocate)
        self.ramping = False  # an MR reduce stage past slow start (RMContainerAllocator.reduceStarted)
        self.feeds_mr = False  # a map stage that MR reduces follow: the MR AM model handles its waiting reduces
        # at most the earliest `asked_at` among its priority's pending tasks: they only leave, or come asked now
        self.asked_floor = -math.inf

    @property
    def mr_reduce(self) -> bool:
        """The reduces of a MapReduce job, scheduled by the MR AM's allocator."""
        return self.spec.kind == "reduce" and self.spec.after is not None


class _Job:
    __slots__ = ("spec", "app", "stages", "pending", "capability", "remaining", "first_start",
                 "last_finish", "am", "finished_at", "kills", "asks", "state", "am_failures",
                 "memory_s", "vcore_s", "mr_pairs", "am_phase", "am_beat", "am_seen", "driver", "ordinal", "located",
                 "untaken", "am_up", "takes_up", "am_next", "am_doze", "am_stale")

    def __init__(self, spec: JobSpec, min_alloc: Resources, ordinal: int) -> None:
        self.spec = spec
        self.ordinal = ordinal  # its place in submission order: its AM's heartbeats' among those at one instant
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
        # (maps, reduces) stage pairs the MR AM's allocator schedules, and its heartbeat grid
        self.mr_pairs = [(self.stages[st.spec.after], st) for st in self.stages
                         if st.mr_reduce and st.spec.after is not None]
        for up, _ in self.mr_pairs:
            up.feeds_mr = True
        self.am_phase = spec.submit_s
        self.am_beat = False  # an AM heartbeat is scheduled
        self.am_next = -1.0  # the instant of its one live heartbeat event, while am_beat (AppMasters._beat_at)
        self.am_doze: tuple[Resources, ...] = ()  # dozing: the map sizes whose room it waits to lose
        self.am_stale: list[float] = []  # instants of heartbeat events a doze cut short left in the kernel
        self.am_seen = (-1, 0.0)  # the cluster's version at a heartbeat, and since when it has not changed
        # a Spark job with stages: its driver, which runs the stages' tasks in executors (spark_drivers.py)
        self.driver = None if spec.spark is None else Driver(spec.spark, tuple(s.durations for s in spec.stages))
        # priority -> the hosts and racks its asks name, with their level (StageSpec.hosts)
        self.located: dict[int, tuple[tuple[str, Locality], ...]] = {}
        self.untaken: list[_Container] = []  # allocated, not yet taken up by the AM (Startup.take_up)
        self.am_up = False  # its AM has started (initialised) and not died since
        self.takes_up = False  # its AM takes up containers on its allocate heartbeat (Startup.take_up: MR AMs)


def _app(spec: JobSpec, iteration: int = 1) -> App:
    """The RM's record of a job; an iterative one is tagged with its iteration count and the iteration running."""
    tags = spec.tags
    if spec.iterations > 1:
        tags += (f"{ITERATIONS_TAG}={spec.iterations}", f"{STAGE_TAG}={iteration}")
    return App(spec.id, spec.queue, spec.user, spec.type, spec.name, tags, spec.submit_s)


class _Task:
    __slots__ = ("stage", "index", "duration", "failures", "asked_at")

    def __init__(self, stage: _Stage, index: int, duration: float) -> None:
        self.stage, self.index, self.duration, self.failures = stage, index, duration, 0  # failures: OOM kills
        self.asked_at = 0.0  # when its current attempt was asked of the RM (ContainerRequest.requestTimeMs)


class Quiet(NamedTuple):
    """An MR AM's allocator that can do nothing before `until` unless its job changes or the room for a map goes."""

    until: float
    map_size: Resources


class AppMasters(SparkDrivers, SimParts):
    """The application masters' side of SimCluster: submissions, asks, finished tasks, reduce preemption."""

    def _submit(self, spec: JobSpec) -> None:
        self.future -= 1
        self.progress_at = self.k.now
        job = _Job(spec, self.min_alloc, len(self.jobs))  # jobs are never dropped: each has its own ordinal
        job.takes_up = self.startup.take_up and spec.type == "MAPREDUCE" and spec.am is not None
        for st in spec.stages:
            if st.hosts:
                racks = sorted({self.by_id[h].rack for h in st.hosts})
                job.located[st.priority] = (tuple((h, Locality.NODE) for h in st.hosts)
                                            + tuple((rack, Locality.RACK) for rack in racks))
        self.jobs[spec.id] = job
        self.state.add_app(job.app)
        self.version += 1
        if spec.placed:  # submitted before the run: its client is done
            self._start_placed(job)
            return
        self._start_client(job.ordinal)
        if spec.am is not None:
            self._request(job, AM_PRIORITY, [_AM])
        else:
            self._start_job(job)

    def _start_placed(self, job: _Job) -> None:
        """A job already running when the simulation starts: its AM and running tasks hold their containers now."""
        spec = job.spec
        if spec.am is not None and any(p.stage is None for p in spec.placed):
            am = next(p for p in spec.placed if p.stage is None)
            self._launch(job, None, self.by_id[am.node], job.capability[AM_PRIORITY], placed=True)
        else:
            self._start_job(job)
        for p in spec.placed:
            if p.stage is None:
                continue
            st = job.stages[p.stage]
            if not st.requested:  # live past its slow start already: its tasks are asked for
                self._request_stage(st)
            q = job.pending.get(st.spec.priority)
            if q and q[0] is not None:
                task = q.popleft()
                self.pending_total -= 1
            elif st.held:  # an MR job's reduces the AM has not asked for yet
                task = st.held.pop(0)
            else:
                raise ValueError(f"job {spec.id}: more placed tasks in stage {p.stage} than it has")
            assert task is not None
            self._launch(job, task, self.by_id[p.node], job.capability[st.spec.priority], placed=True)
        self._refresh_asks(job)

    def _start_job(self, job: _Job) -> None:
        self._changed(job)  # a new attempt moves its grid: a beating AM beats once more on the old one
        job.am_phase = self.k.now  # the AM heartbeats from its start
        job.am_up = True
        if job.takes_up:
            # its calls fall midway between node heartbeats (SimCluster.am_midway): real AMs beat at phases of
            # their own, and one that started at a node's heartbeat (its costs are whole seconds) would beat at that
            # node's instants, where a tie costs a container a full interval. Its first call is within an interval
            job.am_phase = self.k.now - (self.k.now - self.am_midway) % self.interval
            if job.untaken:  # allocated while no AM ran: the new one takes them up at its first call
                self._mr_wake(job)
        if job.driver is not None:
            self._spark_start(job)
            return
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
            if dep.mr_reduce:
                # the MR AM creates every reduce request at job start and keeps it until it ramps up
                dep.requested = True
                dep.held = [_Task(dep, i, d) for i, d in enumerate(dep.spec.durations)]
                self._mr_wake(job)
            elif dep.spec.slowstart <= 0:
                self._request_stage(dep)

    def _request(self, job: _Job, priority: int, items: Sequence[_Task | None], front: bool = False) -> None:
        if job.driver is not None and front and items:
            # `_kill` asks again for what it killed: a Spark executor goes back to its driver instead
            if items[0] is not None:
                self._executor_lost(job, items[0])
                return
            if job.driver.running:
                self._driver_lost(job)  # the AM, and the driver in it, died: a new attempt starts over
        q = job.pending.get(priority)
        if q is None:
            q = job.pending[priority] = deque()
        now = self.k.now
        for t in items:
            if t is not None:
                t.asked_at = now
        if front:
            q.extendleft(reversed(items))
        else:
            q.extend(items)
        self.pending_total += len(items)
        self._refresh_asks(job)
        first = items[0] if items else None
        if first is not None and first.stage.feeds_mr:
            self._mr_wake(job)  # maps asked (again): the allocator may have to make room for them
        if self.idle:
            self._wake_all()

    def _ask_executors(self, job: _Job, n: int) -> None:
        """Ask YARN for `n` more executor containers (at the Spark stages' priority and resource)."""
        st = job.stages[0]
        self._request(job, st.spec.priority, [_Task(st, i, 0.0) for i in range(n)])

    def _refresh_asks(self, job: _Job) -> None:
        app_id = job.spec.id
        rows = tuple([Ask(app_id, p, job.capability[p], len(q)) for p, q in sorted(job.pending.items()) if q])
        if job.located:
            # every pending task of a located stage names the same hosts: each host and rack asks for all of them
            named = [Ask(app_id, r.priority, r.capability, r.count, name, level)
                     for r in rows for name, level in job.located.get(r.priority, ())]
            self.state.set_app_asks(app_id, rows + tuple(named))
        else:
            self.state.set_any_asks(app_id, rows)
        self.version += 1
        self._changed(job)

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
        self.progress_at = self.k.now
        if self.progress is not None and self.tasks_done % 2000 == 0:
            self.progress(self.tasks_done, self.tasks_total, self.k.now)
        for dep in st.dependents:
            if not dep.requested and st.done >= dep.spec.slowstart * st.spec.tasks:
                self._request_stage(dep)
        if st.feeds_mr:
            self._mr_wake(job)  # a completed map moves the ramp-up
        self._release_held(job, st)
        if st.done == st.spec.tasks:
            st.done_at = self.k.now
            for w in st.waiting:
                w.waiting = False
                w.work += max(0.0, w.ready_at - self.k.now)  # its JVM, started at launch, may still be starting
                if w.task is not None and w.task.stage.spec.shuffle_s:
                    # it has fetched outputs since its JVM was up; at least the last map's is left
                    shuffle = w.task.stage.spec.shuffle_s
                    w.work += max(shuffle - max(0.0, self.k.now - w.ready_at), shuffle / st.spec.tasks)
                self._run(w)
            st.waiting.clear()
        if job.remaining == 0:
            if job.spec.teardown_s > 0:  # the AM commits the job and unregisters, holding its container meanwhile
                self.future += 1  # an event still to come: the run is not stalled while it waits
                self.k.schedule(self.k.now + job.spec.teardown_s, AM, self._torn_down, job)
            else:
                self._finish(job)

    def _torn_down(self, job: _Job) -> None:
        """The AM's work after the last task (JobSpec.teardown_s) is done: the job ends.

        An AM lost during its teardown is asked for again, but the job still ends now (not modelled).
        """
        self.future -= 1
        if job.state == "running":
            job.last_finish = self.k.now
            self._finish(job)

    def _am_tick(self) -> None:
        """Preemption of waiting tasks in generic stage graphs, once a node heartbeat interval.

        Tasks of a stage that started early wait for the stage they follow; if they fill the space
        it needs, nothing moves. As the MR AM would, a job with tasks of that stage pending, none
        running, and waiting followers kills its youngest waiting follower and withholds the
        followers' asks until every task of the stage has been scheduled. (MapReduce jobs are
        scheduled by `_mr_allocate`.)
        """
        self.ticking = False
        waiting_any = False
        for app_id in self.state.app_ids():
            job = self.jobs[app_id]
            for st in job.stages:
                if not st.waiting or st.feeds_mr:
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

    def _on_grid(self, job: _Job) -> bool:
        """Whether now is one of the job's AM heartbeats (not a beat scheduled by an attempt since replaced)."""
        hb, now = job.spec.mapreduce.heartbeat_s, self.k.now
        k = round((now - job.am_phase) / hb)
        return k >= 1 and round(job.am_phase + k * hb, TICK_DIGITS) == now

    def _next_slot(self, job: _Job, not_before: float = -math.inf) -> float:
        """The instant of the job's next AM heartbeat on its grid (every heartbeat interval from am_phase), beating on.

        With `not_before`, its first slot at or after that instant, if later.
        """
        hb = job.spec.mapreduce.heartbeat_s
        now = self.k.now
        k = math.floor((now - job.am_phase) / hb + 1e-9)  # the AM's last slot at or before now
        if not (k >= 1 and round(job.am_phase + k * hb, TICK_DIGITS) == now and self.k.stage < AM_BEAT):
            k += 1  # unless a beat at now has yet to come, as it would had the AM beaten on (its first is a beat in)
        if not_before > now:
            k = max(k, math.ceil((not_before - job.am_phase) / hb - 1e-9))
        return round(job.am_phase + k * hb, TICK_DIGITS)

    def _beat_at(self, job: _Job, at: float) -> None:
        """Schedule the job's next AM heartbeat at `at`, its one live heartbeat event (the caller checked it has none)."""
        job.am_next = at
        if at in job.am_stale:
            job.am_stale.remove(at)  # a doze cut short left an event there: it is this beat (one event per instant)
            return
        # ranked by the job's ordinal: the AMs beating at one instant go in submission order, whether each
        # beat on or slept and woke since its last heartbeat
        self.k.schedule_ranked(at, AM_BEAT, job.ordinal, self._mr_heartbeat, job)

    def _mr_wake(self, job: _Job) -> None:
        """Make sure the job's MR AM heartbeats next on its grid (a dozing one: at its next slot, not later)."""
        if job.state != "running":
            return
        if job.am_beat:
            self._changed(job)
            return
        job.am_beat = True
        self.am_beating += 1
        self._beat_at(job, self._next_slot(job))

    def _doze(self, job: _Job, until: float, sizes: tuple[Resources, ...]) -> None:
        """Skip the AM's heartbeats up to `until`: each would find what this one found, and do nothing.

        An AM whose maps all wait, with every reduce asked and room for a map in its headroom, beats on
        (`Quiet`) until a map has waited the unconditional preemption delay, or its job changes, or the
        room for a map goes. The first is `until`; the others rouse it (`_rouse`) at its next slot, as
        the beating AM would act. In a long backlog most MR AM heartbeats are such (docs/performance.md).
        The rule that stops an AM whose cluster has not changed for the delay and a second (`am_seen`)
        cannot come first: the cluster changed when the oldest waiting map was asked.
        """
        assert not job.am_beat  # one live heartbeat event per AM: a second would share its instant and rank
        assert self.k.stage >= AM_BEAT  # in its own beat, so `_next_slot` counts from the slot after this one
        job.am_beat = True
        self.am_beating += 1  # it beats on, in effect: a run with it is not stalled
        job.am_doze = sizes
        for size in sizes:
            self.dozers.setdefault(size, {})[job.ordinal] = job
        self._beat_at(job, self._next_slot(job, until))

    def _undoze(self, job: _Job) -> None:
        """The AM no longer dozes: no launch needs to check the headroom for its map."""
        for size in job.am_doze:
            dozing = self.dozers[size]
            del dozing[job.ordinal]
            if not dozing:
                del self.dozers[size]
        job.am_doze = ()

    def _changed(self, job: _Job) -> None:
        """The job changed (a container, its asks, its AM attempt, its end): a dozing AM beats at its next slot."""
        if job.am_doze:
            self._rouse(job)

    def _rouse(self, job: _Job) -> None:
        """A dozing AM heartbeats at its next slot instead, as it would have beating on."""
        self._undoze(job)
        at = self._next_slot(job)
        if at < job.am_next:
            job.am_stale.append(job.am_next)  # left in the kernel: it is skipped when it comes (_mr_heartbeat)
            self._beat_at(job, at)

    def _headroom(self) -> Resources:
        """What the cluster has not allocated: the headroom FifoScheduler gives every app."""
        cap = self.state.capacity
        return Resources(cap.memory_mb - self.alloc_mem, cap.vcores - self.alloc_vc)

    def _room_taken(self) -> None:
        """Rouse the dozing AMs whose map no longer fits in the cluster's headroom (a container launched, a node shrunk)."""
        headroom = self._headroom()
        for size in [size for size in self.dozers if not room_for_a_map(headroom, size)]:
            for job in list(self.dozers.get(size, {}).values()):
                self._rouse(job)

    def _drop_stale(self, job: _Job) -> None:
        """Take the events a cut-short doze left out of the kernel: an AM that stops or a job that ends has none to come."""
        self.k.cancel(set(job.am_stale), self._mr_heartbeat, job)
        job.am_stale.clear()

    def _mr_heartbeat(self, job: _Job) -> None:
        """RMContainerAllocator.heartbeat: preempt or ramp each reduce stage; keep beating while it may act."""
        now = self.k.now
        if now != job.am_next:
            job.am_stale.remove(now)  # the AM was roused before this beat of its doze, and beat on since
            return
        job.am_beat = False
        self.am_beating -= 1
        if job.am_doze:
            self._undoze(job)  # the beat it dozed until
        if job.state != "running":
            return
        if job.takes_up and not self._on_grid(job):
            self._mr_wake(job)  # a beat of an attempt that died: the new one calls on its own grid
            return
        if job.untaken and job.am_up:
            self._take_up(job)  # the allocate call's answer is taken up before the reduces are scheduled
        busy = False
        quiet: list[Quiet] = []
        for up, down in job.mr_pairs:
            acts = self._mr_allocate(job, up, down)
            if acts is True:
                busy = True
            elif isinstance(acts, Quiet):
                quiet.append(acts)
        stop = False
        if job.am_seen[0] != self.version:
            job.am_seen = (self.version, now)
        elif now - job.am_seen[1] > job.spec.mapreduce.unconditional_preempt_delay_s + 1:
            # nothing has changed for longer than any wait the AM acts on: it can change nothing by itself
            # (a policy that never places this job's maps); the next event that touches the job wakes it
            stop = True
        if now - self.progress_at > self.stall_s:
            # no task has finished and no job arrived for longer than any task lasts: the AMs only preempt
            # and re-ask in a loop (maps no policy places); stop, so the run can end as stuck
            stop = True
        if stop or not (busy or quiet):
            if job.am_stale:
                self._drop_stale(job)
        elif busy or len(quiet) < len(job.mr_pairs) or job.am_beat:
            self._mr_wake(job)  # (am_beat: woken during this beat, by a map its take-up started and OOM killed)
        else:
            # the stall rule above could stop it at any slot from the stall bound on: the doze ends no later
            until = min(min(q.until for q in quiet), self.progress_at + self.stall_s)
            self._doze(job, until, tuple({q.map_size: None for q in quiet}))

    def _mr_allocate(self, job: _Job, up: _Stage, down: _Stage) -> bool | Quiet:
        """One heartbeat's reduce scheduling for (maps, reduces); False when nothing can change before an event.

        Quiet when it did nothing and will do nothing before a known instant, or an event, or the room for a map goes.
        """
        if not down.requested:
            return False
        maps_q = job.pending.get(up.spec.priority)
        reduces_q = job.pending.get(down.spec.priority)
        scheduled_maps = len(maps_q) if maps_q else 0
        scheduled_reduces = len(reduces_q) if reduces_q else 0
        if not down.held:  # every reduce asked for
            if scheduled_maps == 0 or down.running + scheduled_reduces == 0:
                return False  # and no map waits that reduces could be holding up
            if up.running and down.ramping:
                # and a map running (no preemption while one does): nothing to do until that changes, and the
                # AM sleeps. Its job's events wake it: a completed map, maps asked again; other changes leave
                # nothing to do either (no map waiting, no reduce left). Ranked beats keep its place at an instant
                return False
        cfg = job.spec.mapreduce
        before = up.spec.done_before  # a live job's maps done before the simulation started count as done
        s = JobState(up.spec.tasks + before, up.done + before, scheduled_maps, scheduled_reduces, up.running, down.running,
                     len(down.held), job.capability[up.spec.priority], job.capability[down.spec.priority],
                     self._headroom())
        if maps_q and up.running == 0:
            hang_u = _hanging(up, maps_q, self.k.now, cfg.unconditional_preempt_delay_s)
            hang_h = scheduled_maps if cfg.preempt_delay_s <= 0 else _hanging(up, maps_q, self.k.now, cfg.preempt_delay_s)
            n = reduces_to_preempt(s, hang_u, hang_h, cfg)
            if n > 0:
                self._ramp_down(job, down, scheduled_reduces)  # clearAllPendingReduceRequests
                # AssignedRequests.preemptReduce: least progress first; a waiting reduce has only shuffled
                victims = sorted((c for c in up.waiting if c.task is not None and c.task.stage is down),
                                 key=lambda c: (-c.start, -c.seq))[:n]
                for c in victims:
                    self.stats["reduce_preemptions"] = self.stats.get("reduce_preemptions", 0) + 1
                    self._kill(c, "preempted", requeue=False)  # its next attempt waits among the pending reduces
                return True
            if (not down.held and down.ramping and hang_u == 0 and cfg.unconditional_preempt_delay_s >= 0
                    and not s.reduce_size.is_zero() and room_for_a_map(s.headroom, s.map_size)):
                # every reduce asked (scheduleReduces has nothing to ramp) and room for a waiting map: nothing to
                # do until a map has waited the unconditional delay (the floor is the oldest ask's, or earlier)
                return Quiet(max(up.asked_floor + cfg.unconditional_preempt_delay_s, self.k.now), s.map_size)
        if not down.ramping:
            if not slowstart_reached(up.done + before, up.spec.tasks + before, down.spec.slowstart):
                return False  # the next completed map wakes the AM again
            down.ramping = True
        ramp = schedule_reduces(s, cfg)
        if ramp > 0:
            tasks, down.held = down.held[:ramp], down.held[ramp:]
            self._request(job, down.spec.priority, tasks)
        elif ramp < 0:
            self._ramp_down(job, down, -ramp)
        return True

    def _ramp_down(self, job: _Job, down: _Stage, n: int) -> None:
        """rampDownReduces: the `n` oldest reduce asks go back to the AM's pending reduces."""
        q = job.pending.get(down.spec.priority)
        if not q or n <= 0:
            return
        for _ in range(min(n, len(q))):
            t = q.popleft()
            assert t is not None  # a reduce stage's queue holds tasks
            down.held.append(t)
            self.pending_total -= 1
        self._refresh_asks(job)

    def _release_held(self, job: _Job, st: _Stage) -> None:
        """Re-request withheld tasks of stages following `st` once all of `st` is scheduled."""
        if job.pending.get(st.spec.priority) and st.done < st.spec.tasks:
            return
        for dep in st.dependents:
            if dep.held and not dep.mr_reduce:
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
        self._changed(job)  # a beating AM's last heartbeat is its next slot's, not the end of a doze
        if job.am_stale:
            self._drop_stale(job)
        job.state = state
        for q in job.pending.values():  # e.g. an AM re-requested after its tasks all finished
            self.pending_total -= len(q)
        job.pending.clear()
        job.finished_at = job.last_finish
        if job.driver is not None:
            self._release_executors(job)
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


def midway(offsets: Sequence[float], interval: float) -> float:
    """The instant of the interval farthest from the node heartbeats at `offsets`: the middle of the longest gap."""
    phases = sorted({round(o % interval, TICK_DIGITS) for o in offsets})
    gap, start = max(((phases[(i + 1) % len(phases)] - p) % interval or interval, p) for i, p in enumerate(phases))
    return round((start + gap / 2) % interval, TICK_DIGITS)


def _hanging(up: _Stage, maps_q: deque[_Task | None], now: float, delay: float) -> int:
    """The pending maps asked more than `delay` ago; counted only when the stage's floor says some may be."""
    if now - up.asked_floor <= delay:
        return 0  # every one was asked at the floor or later (the AM heartbeats of a long backlog stop here)
    n, low = 0, now
    for t in maps_q:
        if t is not None:
            if now - t.asked_at > delay:
                n += 1
            low = min(low, t.asked_at)
    up.asked_floor = low
    return n

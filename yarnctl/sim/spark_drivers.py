"""The Spark drivers in the simulator: executors as containers, their tasks, dynamic allocation (spark_am.py).

An executor is a container whose work is the tasks the driver runs in it: its `work` is what is
left until its next event (registration, or its first running task's end), so NodePhysics slows
it with its node's CPU like any task; `_run` is the hook where it re-times it. The driver learns
of a task's end at once; YARN hears of executors through the job's asks (AppMasters), and a
killed executor comes back to the driver as the re-ask `_kill` makes. A part of SimCluster.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from yarnctl.sim.kernel import AM, END
from yarnctl.sim.parts import SimParts
from yarnctl.sim.spark_am import EPS, Driver, ExecutorAllocation, _Executor, _SparkTask

if TYPE_CHECKING:  # runtime: the cluster wires the parts together
    from yarnctl.sim.appmaster import _Job, _Task
    from yarnctl.sim.physics import _Container


class SparkDrivers(SimParts):
    """The Spark drivers' side of SimCluster: executors, their tasks, and dynamic allocation."""

    if TYPE_CHECKING:
        def _ask_executors(self, job: _Job, n: int) -> None: ...

        def _refresh_asks(self, job: _Job) -> None: ...

        def _finish(self, job: _Job, state: str = "succeeded") -> None: ...

        def _fail(self, job: _Job) -> None: ...

    def _cancel_executor_asks(self, job: _Job, n: int) -> None:
        """Withdraw up to `n` executor asks not yet granted (AMRMClient.removeContainerRequest), newest first."""
        q = job.pending.get(job.stages[0].spec.priority)
        if q and n > 0:
            k = min(n, len(q))
            for _ in range(k):
                q.pop()
            self.pending_total -= k
            self._refresh_asks(job)

    def _executor_asks(self, job: _Job) -> int:
        """Executor asks not yet granted."""
        return len(job.pending.get(job.stages[0].spec.priority, ()))

    def _spark_start(self, job: _Job) -> None:
        """The AM has started: SparkContext asks for the initial executors and submits the first stage."""
        d = job.driver
        assert d is not None
        d.reset()
        d.running = True
        d.attempt += 1
        job.remaining = job.spec.tasks
        self._submit_stage(job, d, 0)
        self._settle(job, [], [])

    def _submit_stage(self, job: _Job, d: Driver, i: int) -> None:
        """DAGScheduler.submitMissingTasks: the stage's tasks join the queue (it starts when the one before ends)."""
        d.stage = i
        d.pending.extend(_SparkTask(i, k, t) for k, t in enumerate(d.stages[i]))
        d.left = len(d.stages[i])
        if d.eam is not None:
            d.eam.on_stage_submitted(self.k.now)

    def _run(self, c: _Container) -> None:
        """An executor's launch or re-timing (its node's CPU rate changed); other containers run as NodePhysics does."""
        d = c.job.driver
        if d is None or c.task is None:
            super()._run(c)
            return
        e = d.executors.get(c.task)
        if e is None:  # just launched: its JVM starts (launch cost), then it registers
            d.seq += 1
            e = d.executors[c.task] = _Executor(c, d.seq)
            if e.start_v <= EPS:
                self._registered(c.job, d, e)
                return
        else:
            e.v = e.next_v - c.work  # NodePhysics has progressed it to now
        c.end = None
        self._arm(e)

    def _clock(self, e: _Executor) -> float:
        c = e.c
        if c.end is None:
            return e.v  # nothing running: its clock stands still
        return e.next_v - max(c.work - (self.k.now - c.since) * c.node.rate, 0.0)

    def _write_off(self, e: _Executor) -> None:
        """Bring an executor's clock to now and drop its next event (its state is about to change)."""
        c = e.c
        if c.end is not None:
            e.v = self._clock(e)
            self.future -= 1
            c.end = None
            c.token += 1

    def _arm(self, e: _Executor) -> None:
        """Schedule the executor's next event: its registration or its first running task's end."""
        c = e.c
        if not e.registered:
            nxt: float | None = e.start_v
        else:
            nxt = min((t.finish_v for t in e.running), default=None)
        if nxt is None:
            return
        e.next_v = nxt
        c.work = max(nxt - e.v, 0.0)
        c.since = self.k.now
        c.token += 1
        c.end = self.k.now + c.work / c.node.rate
        self.future += 1
        self.k.schedule(c.end, END, self._executor_event, c, c.token)

    def _executor_event(self, c: _Container, token: int) -> None:
        if token != c.token:
            return  # re-timed, changed or killed since
        self.future -= 1
        c.end = None
        c.token += 1
        job = c.job
        d = job.driver
        assert d is not None and c.task is not None
        e = d.executors[c.task]
        e.v = e.next_v
        if not e.registered:
            self._registered(job, d, e)
            return
        done = [t for t in e.running if t.finish_v <= e.v + EPS]
        e.running = [t for t in e.running if t.finish_v > e.v + EPS]
        d.n_running -= len(done)
        now = self.k.now
        for _ in done:  # TaskSchedulerImpl.statusUpdate -> DAGScheduler.handleTaskCompletion
            job.remaining -= 1
            job.last_finish = now
            d.left -= 1
            self.tasks_done += 1
            if self.progress is not None and self.tasks_done % 2000 == 0:
                self.progress(self.tasks_done, self.tasks_total, now)
        self.progress_at = now
        if d.left == 0:
            if d.eam is not None:
                d.eam.on_scheduler_queue_empty()  # onStageCompleted: no stage left with pending tasks
            if d.stage + 1 == len(d.stages):
                self._finish(job)  # the last stage: the application ends and its executors go
                return
            self._submit_stage(job, d, d.stage + 1)
        self._settle(job, [e], [e] if not e.running else [])

    def _registered(self, job: _Job, d: Driver, e: _Executor) -> None:
        """CoarseGrainedSchedulerBackend's RegisterExecutor: the executor takes tasks (onExecutorAdded)."""
        e.registered = True
        d.registered.append(e)
        idle = [x for x in d.registered if not x.running]
        self._settle(job, [e], idle)

    def _offer(self, d: Driver, touched: list[_Executor]) -> None:
        """TaskSchedulerImpl.resourceOffers: pending tasks to free slots, one per executor per round."""
        per = d.config.tasks_per_executor
        while d.pending:
            free = [e for e in d.registered if len(e.running) < per]
            if not free:
                return
            for e in free:
                if not d.pending:
                    break
                if e not in touched:
                    self._write_off(e)
                    touched.append(e)
                t = d.pending.popleft()
                t.finish_v = e.v + t.duration
                e.running.append(t)
                d.n_running += 1
                if d.eam is not None:
                    d.eam.on_executor_busy(e.id)  # onTaskStart
                    if not d.pending:
                        d.eam.on_scheduler_queue_empty()

    def _settle(self, job: _Job, touched: list[_Executor], idle: list[_Executor]) -> None:
        """After a driver event: offer tasks, run the allocation manager, re-time executors, sync the asks."""
        d = job.driver
        assert d is not None
        self._offer(d, touched)
        if d.eam is not None:
            for e in idle:
                if not e.running:
                    d.eam.on_executor_idle(e.id, self.k.now)
            self._allocation_schedule(job, d, d.eam)
        for e in touched:
            if e.c.id in e.c.node.running:
                self._arm(e)
                self._usage(e, d.config.tasks_per_executor)
        target = d.eam.target if d.eam is not None else d.config.initial_target
        # YarnAllocator.updateResourceRequests: missing = target - pending asks - running executors
        missing = target - self._executor_asks(job) - len(d.executors)
        if missing > 0:
            self._ask_executors(job, missing)
        elif missing < 0:
            self._cancel_executor_asks(job, -missing)
        if d.eam is not None:
            self._arm_timers(job, d, d.eam)

    def _usage(self, e: _Executor, per: int) -> None:
        """An executor uses its memory share always and its vcores' share as its slots are busy."""
        c = e.c
        _, cpu, mem = c.usage.steps[0] if c.usage else (0.0, 1.0, 1.0)
        self._set_usage(c, c.resource.vcores * cpu * len(e.running) / per, c.resource.memory_mb * mem)

    def _allocation_schedule(self, job: _Job, d: Driver, eam: ExecutorAllocation) -> None:
        """ExecutorAllocationManager.schedule: update the target, then remove executors idle past the timeout."""
        now = self.k.now
        s = d.config.sustained_s
        if eam.add_time is not None and eam.add_time < now - EPS and round(eam.add_time, 6) not in d.armed \
                and not d.frozen_lowering:
            # timer expiries not simulated because they could change nothing (see _arm_timers): each
            # one set numExecutorsToAdd to 1 and moved addTime on by the sustained timeout
            eam.add_time += math.ceil((now - eam.add_time) / s - 1e-9) * s
            eam.to_add = 1
        eam.update_target(now, d.max_needed(), len(d.registered))
        for eid in eam.expired(now, len(d.registered)):
            e = next(x for x in d.registered if x.id == eid)
            # removeExecutors -> killExecutors: the AM releases the idle container at once
            d.registered.remove(e)
            assert e.c.task is not None
            del d.executors[e.c.task]
            eam.on_executor_removed(e.id)
            self._write_off(e)
            e.c.end = now
            self._release(e.c, "done")
        d.frozen_lowering = d.max_needed() < eam.target

    def _arm_timers(self, job: _Job, d: Driver, eam: ExecutorAllocation) -> None:
        """Kernel events for the backlog and idle timers; an expiry that could change nothing is not scheduled."""
        times = list(eam.remove_times.values())
        if eam.add_time is not None and eam.can_add(d.max_needed()):
            times.append(eam.add_time)
        for t in times:
            at = round(max(t, self.k.now), 6)
            if at not in d.armed:
                d.armed.add(at)
                self.k.schedule(at, AM, self._allocation_timer, job, d.attempt, at)

    def _allocation_timer(self, job: _Job, attempt: int, at: float) -> None:
        d = job.driver
        assert d is not None
        d.armed.discard(at)
        if job.state == "running" and d.running and d.attempt == attempt:
            self._settle(job, [], [])

    def _executor_lost(self, job: _Job, task: _Task) -> None:
        """An executor's container was killed: its tasks go back to the queue; it counts if it was its fault."""
        d = job.driver
        assert d is not None
        e = d.executors.pop(task, None)
        oom = task.failures > 0  # killed for its memory use: exitCausedByApp
        if e is not None:
            if e.registered:
                d.registered.remove(e)
            lost, e.running = e.running, []
            d.n_running -= len(lost)
            if d.eam is not None:
                d.eam.on_executor_removed(e.id)
            if lost and d.running:
                if d.eam is not None and not d.pending:
                    d.eam.on_scheduler_backlogged(self.k.now)  # onTaskEnd with a failure (SPARK-8366)
                d.pending.extendleft(sorted(lost, key=lambda t: t.index, reverse=True))
                for t in lost:  # TaskSetManager.handleFailedTask: an app-caused executor loss counts
                    t.failures += oom
                if any(t.failures >= d.config.task_max_failures for t in lost):
                    self._fail(job)
                    return
        if not d.running:
            return
        d.failures += oom
        if d.failures >= d.config.max_failures:
            self._fail(job)  # ApplicationMaster: numExecutorsFailed >= maxNumExecutorFailures
            return
        self._settle(job, [], [])

    def _driver_lost(self, job: _Job) -> None:
        """The AM (and the driver in it) died: the attempt's executors go; the next attempt starts over."""
        d = job.driver
        assert d is not None
        d.running = False
        for e in list(d.executors.values()):
            if e.c.id in e.c.node.running:
                self._kill(e.c, "killed")
        self._cancel_executor_asks(job, self._executor_asks(job))
        d.reset()

    def _release_executors(self, job: _Job) -> None:
        """The application has ended: its executors' containers are released with it."""
        d = job.driver
        assert d is not None
        d.running = False
        for e in list(d.executors.values()):
            if e.c.id in e.c.node.running:
                self._write_off(e)
                e.c.end = self.k.now
                self._release(e.c, "done")
        d.reset()

"""Observations in the simulator: the control loop's view (what `yarnctl serve` reads from the RM and NMs).

A part of SimCluster: the same `Observation` type the live control loop builds, from ground truth.
"""

from __future__ import annotations

from yarnctl.model import ANY, AppUsage, ContainerLoad, NodeLoad, Observation, Resources
from yarnctl.sim.kernel import PERIODIC, SAMPLE, TUNE
from yarnctl.sim.parts import SimParts


class Observations(SimParts):
    """The control loop's tick and what it observes."""

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
        state = self.state
        for app_id in state.app_ids():
            job = self.jobs[app_id]
            app = job.app
            mb = vc = n = 0  # the off-switch asks' total, in plain ints: this runs for every app at every tick
            for r in state.asks(app_id):
                if r.resource_name == ANY:
                    mb += r.capability.memory_mb * r.count
                    vc += r.capability.vcores * r.count
                    n += r.count
            mem_s, vc_s = running_s.get(app_id, (0.0, 0.0))
            apps.append(AppUsage(app_id, app.queue, app.user, state.allocated(app_id), Resources(mb, vc), n,
                                 int(job.memory_s + mem_s), int(job.vcore_s + vc_s)))
        snap = self.snapshot()
        nodes = [NodeLoad(n.id, n.capacity, n.allocated) for n in snap.nodes.values()]
        return Observation.build(now, nodes, apps, loads, usage_measured=True, snapshot=snap)

    def _tune(self) -> None:
        """The control loop's tick: on its own clock, so how often heartbeats are skipped cannot change it."""
        if self.jobs_left == 0:
            return
        # a policy tunable only to report its values reads none: building one would cost ~15% of its run
        changed = self.engine.tune(self.observe()) if self.engine.observes else False
        if changed or not self.time_dependent:
            # the policy may now accept what it refused at this state: its tuning values moved, or (one that is
            # not asked at every heartbeat) it learnt from the tick what they do not show, e.g. DRESS's categories
            # a tick that moved no tuning value is not progress: counted as one, it reset the stall count at
            # every tick, and a run no policy decision could move on never ended (ticks that move them in a run
            # with no progress for stall_s are settled by the heartbeat's stall check, as resizes are)
            quiet = self.quiet_version == self.version and not changed
            self.version += 1
            if quiet:
                self.quiet_version = self.version
            self._wake_all()
        if changed or not self.tuning:
            self.tuning.append((self.k.now, self.engine.tuning()))
        if self.k.busy(PERIODIC):  # something else will happen; alone, ticks would keep a stalled run alive
            self.k.schedule(self.k.now + self.tune_interval_s, TUNE, self._tune)

    def _sample_queues(self) -> None:
        """Each leaf queue's allocated and pending (ANY asks) memory now, then again one interval later."""
        snap = self.snapshot()
        out = {q.name: [snap.queue_allocated[q.name].memory_mb if q.name in snap.queue_allocated else 0, 0]
               for q in snap.queues.values() if q.leaf}
        for app in snap.apps.values():
            if app.queue in out:
                out[app.queue][1] += sum(r.capability.memory_mb * r.count for r in snap.any_asks(app.id))
        self.queue_samples.append((self.k.now, {q: (a, p) for q, (a, p) in out.items()}))
        if self.jobs_left and self.k.busy(PERIODIC):
            self.k.schedule(self.k.now + self.sample_queues_s, SAMPLE, self._sample_queues)

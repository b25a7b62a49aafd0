"""Node physics in the simulator: task progress, actual usage, OOM kills and CPU slow-down on each node.

Memory is not compressible: use beyond a node's physical memory kills its youngest container, as an
OOM killer would. CPU is compressible: demand beyond physical vcores slows every task on the node
proportionally. A part of SimCluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from yarnctl.model import AM_PRIORITY, Container, ContainerKind, Resources
from yarnctl.sim.kernel import END
from yarnctl.sim.parts import SimParts
from yarnctl.sim.workload import NodeSpec, Usage

if TYPE_CHECKING:  # runtime: the cluster wires the parts together
    from yarnctl.sim.appmaster import _Job, _Task


class _Node:
    __slots__ = ("id", "rack", "capacity", "physical", "running", "finished", "offset",
                 "hb_at", "hb_k", "last_k", "seen_version", "used_cpu", "used_mem", "rate", "eff_cpu", "index")

    def __init__(self, index: int, spec: NodeSpec, offset: float) -> None:
        self.index = index
        self.id, self.rack = spec.id, spec.rack
        self.capacity: Resources = spec.capacity
        self.physical: Resources = spec.physical
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


class _Container:
    __slots__ = ("id", "job", "task", "node", "resource", "start", "frozen", "work", "since",
                 "token", "waiting", "cpu", "mem", "usage", "step", "end", "done", "seq",
                 "cpu_s", "mem_s", "acc_at", "ready_at")

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
        self.seq = 0  # launch order on the cluster, set at launch
        self.cpu_s = 0.0  # vcore-seconds actually served (demand x its node's rate) until acc_at
        self.mem_s = 0.0  # MB-seconds actually used until acc_at
        self.acc_at = start
        self.ready_at = start  # when its launch (JVM start-up) is over, Startup.launch_s


class NodePhysics(SimParts):
    """How containers run on their nodes: progress, usage steps, the physical limits."""

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
        assert c.usage is not None and c.task is not None  # only tasks have usage profiles
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
        assert c.usage is not None  # scheduled by _schedule_step
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

"""What one simulation run produced, for the reports: per-container and per-job records and the run itself."""

from __future__ import annotations

import hashlib
from dataclasses import astuple, dataclass, field

from yarnctl.model import Resources
from yarnctl.model.frozen import quick_init
from yarnctl.policies.waiting import Wait
from yarnctl.sim.workload import Workload


@quick_init
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


# (t, leaf queue -> (allocated MB, pending MB)): what a real run samples from the RM (yarnctl/bench/shares.py)
QueueSample = tuple[float, dict[str, tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class WaitRecord:
    """A watched job got nothing at one node's heartbeat, and why (`simulate --explain`)."""

    t: float
    job: str
    node: str
    wait: Wait


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
    queue_samples: list[QueueSample] = field(default_factory=list)  # SimCluster(sample_queues_s=...)
    waits: list[WaitRecord] = field(default_factory=list)  # SimCluster(explain=...): why watched jobs waited

    def fingerprint(self) -> str:
        """A hash of every container's and job's record: equal runs made the same decisions, in effect."""
        h = hashlib.sha256()
        for record in self.containers:
            h.update(repr(astuple(record)).encode())
        for job in self.jobs:
            h.update(repr(astuple(job)).encode())
        return h.hexdigest()[:16]

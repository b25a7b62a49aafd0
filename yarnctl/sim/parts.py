"""What the simulator's parts share: the attributes and methods SimCluster gives its mixins (for type checking).

SimCluster is cut into parts (appmaster.py, physics.py, observe.py, and the cluster itself) that
work on one object; each part subclasses `SimParts`, which declares what the others provide.
Nothing here exists at run time: the declarations sit under TYPE_CHECKING.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from yarnctl.engine import Engine
    from yarnctl.model import ClusterSnapshot, ContainerKind, Resources
    from yarnctl.sim.appmaster import _Job, _Task
    from yarnctl.sim.jvmstart import _Pool
    from yarnctl.sim.kernel import Kernel
    from yarnctl.sim.physics import _Container, _Node
    from yarnctl.sim.records import JobRecord, QueueSample
    from yarnctl.sim.workload import Startup
    from yarnctl.state import ClusterState

ProgressFn = Callable[[int, int, float], None]


class SimParts:
    """The shared state and cross-part methods of one simulation run."""

    if TYPE_CHECKING:
        k: Kernel
        engine: Engine
        state: ClusterState
        nodes: list[_Node]
        by_id: dict[str, _Node]
        idle: set[_Node]
        jobs: dict[str, _Job]
        job_records: list[JobRecord]
        min_alloc: Resources
        interval: float
        am_midway: float
        tune_interval_s: float
        time_dependent: bool
        tuning: list[tuple[float, dict[str, float]]]
        sample_queues_s: float
        queue_samples: list[QueueSample]
        stats: dict[str, float]
        progress: ProgressFn | None
        version: int
        quiet_version: int
        pending_total: int
        future: int
        seq: int
        ticking: bool
        am_beating: int
        dozers: dict[Resources, dict[int, _Job]]
        progress_at: float
        stall_s: float
        jobs_left: int
        tasks_total: int
        tasks_done: int
        alloc_mem: int
        alloc_vc: int
        used_cpu_eff: float
        used_mem: float
        usage: list[tuple[float, float, float, float, float]]
        startup: Startup
        pools: dict[str, _Pool]

        def snapshot(self) -> ClusterSnapshot: ...

        def _wake(self, node: _Node) -> None: ...

        def _wake_all(self) -> None: ...

        def _launch(self, job: _Job, task: _Task | None, node: _Node, cap: Resources,
                    kind: ContainerKind = ..., placed: bool = ...) -> None: ...

        def _take_up(self, job: _Job) -> None: ...

        def _release(self, c: _Container, outcome: str) -> None: ...

        def _kill(self, c: _Container, outcome: str, requeue: bool = True) -> None: ...

        def _run(self, c: _Container) -> None: ...

        def _start_client(self, job_ordinal: int) -> None: ...

        def _set_usage(self, c: _Container, cpu: float, mem: float) -> None: ...

        def _request(self, job: _Job, priority: int, items: Sequence[_Task | None], front: bool = False) -> None: ...

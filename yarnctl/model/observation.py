"""What the control loop sees of a cluster at one tick: the tuning inputs policies adapt to.

Live, `yarnctl serve`'s control loop builds an Observation from the RM REST API and NodeManager
JMX (yarnctl/rm/observe.py); in the simulator SimCluster.observe() builds one from its ground
truth. Policies receive it through `tune()` (yarnctl/engine.py's Tunable) and never learn which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from yarnctl.model.cluster import ANY, AppId, ClusterSnapshot, ContainerId, NodeId
from yarnctl.model.frozen import quick_init
from yarnctl.model.resources import ZERO, Resources

TUNE_INTERVAL_S = 5.0  # the control loop's default tick, live (`yarnctl serve --tune-interval`) and simulated


@quick_init
@dataclass(frozen=True, slots=True)
class AppUsage:
    """One live app's accounting: what it holds, what it still asks for, what it has used so far."""

    app_id: AppId
    queue: str
    user: str
    allocated: Resources
    pending: Resources
    pending_containers: int
    # accumulated allocation over the app's life: MB x seconds and vcores x seconds (RM's
    # memorySeconds/vcoreSeconds), the input of long-term fairness accounting
    memory_seconds: int
    vcore_seconds: int


@quick_init
@dataclass(frozen=True, slots=True)
class ContainerLoad:
    """What one running container actually uses (not what it was allocated)."""

    container_id: ContainerId
    app_id: AppId
    node_id: NodeId
    memory_mb: float
    vcores: float  # busy cores: 1.0 = one core fully used


@quick_init
@dataclass(frozen=True, slots=True)
class NodeLoad:
    """One node's capacity as the scheduler offers it and what is allocated on it."""

    node_id: NodeId
    capacity: Resources
    allocated: Resources

    @property
    def available(self) -> Resources:
        """Capacity not allocated (negative after a capacity cut)."""
        return self.capacity - self.allocated


@dataclass(frozen=True, slots=True)
class Observation:
    """The cluster at `at_s`: nodes, live apps and, where measured, per-container usage.

    `usage_measured` is False when no container usage source was read (the NodeManagers'
    container monitor is off, or the simulator has no usage profiles): an empty `containers`
    then means "unknown", not "idle". `snapshot` is the scheduler's own view at the tick (live: the
    one the last heartbeat built, with container start times the REST API does not give), so
    estimators can learn on the control loop's clock rather than on however often they are asked.
    """

    at_s: float
    nodes: Mapping[NodeId, NodeLoad]
    apps: Mapping[AppId, AppUsage]
    containers: Mapping[ContainerId, ContainerLoad] = field(default_factory=lambda: MappingProxyType({}))
    usage_measured: bool = False
    snapshot: ClusterSnapshot | None = None

    @staticmethod
    def from_snapshot(snap: ClusterSnapshot) -> Observation:
        """What the scheduler's own state says (no usage, no accumulated seconds): the tick without an RM API."""
        nodes = [NodeLoad(n.id, n.capacity, n.allocated) for n in snap.nodes.values()]
        apps = [AppUsage(a.id, a.queue, a.user, snap.allocated(a.id), snap.pending(a.id),
                         sum(r.count for r in snap.asks.get(a.id, ()) if r.resource_name == ANY), 0, 0) for a in snap.apps.values()]
        return Observation.build(snap.now_s, nodes, apps, snapshot=snap)

    @staticmethod
    def build(at_s: float, nodes: list[NodeLoad], apps: list[AppUsage], containers: list[ContainerLoad] | None = None,
              usage_measured: bool = False, snapshot: ClusterSnapshot | None = None) -> Observation:
        """An observation from lists, keyed by id in a deterministic (sorted) order."""
        return Observation(
            at_s,
            MappingProxyType({n.node_id: n for n in sorted(nodes, key=lambda n: n.node_id)}),
            MappingProxyType({a.app_id: a for a in sorted(apps, key=lambda a: a.app_id)}),
            MappingProxyType({c.container_id: c for c in sorted(containers or (), key=lambda c: c.container_id)}),
            usage_measured,
            snapshot,
        )

    @property
    def capacity(self) -> Resources:
        """Total capacity of the observed nodes."""
        return sum((n.capacity for n in self.nodes.values()), ZERO)

    @property
    def allocated(self) -> Resources:
        """Total allocated on the observed nodes."""
        return sum((n.allocated for n in self.nodes.values()), ZERO)

    @property
    def available(self) -> Resources:
        """Total capacity not allocated."""
        return self.capacity - self.allocated

    @property
    def pending(self) -> Resources:
        """Total outstanding demand of every live app."""
        return sum((a.pending for a in self.apps.values()), ZERO)

    def available_containers(self, size: Resources) -> int:
        """How many containers of `size` fit in the free space, node by node (fragments do not add up)."""
        return sum(size.times_fit(n.available) for n in self.nodes.values())

    def used(self, node_id: NodeId | None = None) -> tuple[float, float]:
        """Measured (memory MB, busy vcores) of running containers, on one node or cluster-wide."""
        mem = cpu = 0.0
        for c in self.containers.values():
            if node_id is None or c.node_id == node_id:
                mem, cpu = mem + c.memory_mb, cpu + c.vcores
        return mem, cpu

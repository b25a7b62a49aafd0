"""What a policy returns for one heartbeat: assignments, kills, capacity changes and reasons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from yarnctl.model.cluster import AppId, ContainerId, ContainerKind, NodeId
from yarnctl.model.resources import Resources


@dataclass(frozen=True, slots=True)
class Assignment:
    """Give `count` containers of app `app_id`'s request at `priority` on node `node_id`."""

    app_id: AppId
    priority: int
    node_id: NodeId
    count: int = 1
    kind: ContainerKind = ContainerKind.NORMAL


@dataclass(frozen=True, slots=True)
class Kill:
    """Kill a running container through the scheduler's own kill path (its task is re-run)."""

    container_id: ContainerId
    reason: str = ""


@dataclass(frozen=True, slots=True)
class NodeResize:
    """Set the capacity a node offers to YARN (OPERA, usage feedback)."""

    node_id: NodeId
    capacity: Resources


_EMPTY: Mapping[AppId, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Decision:
    """A policy's answer for one heartbeat, applied as resizes, then kills, then assignments."""

    assignments: tuple[Assignment, ...] = ()
    kills: tuple[Kill, ...] = ()
    resizes: tuple[NodeResize, ...] = ()
    reasons: Mapping[AppId, str] = field(default_factory=lambda: _EMPTY)

    def is_empty(self) -> bool:
        """True when the decision changes nothing."""
        return not (self.assignments or self.kills or self.resizes)

    def containers(self) -> int:
        """Total number of containers assigned."""
        return sum(a.count for a in self.assignments)


EMPTY_DECISION = Decision()

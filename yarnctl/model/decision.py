"""What a policy returns for one heartbeat: assignments, kills, capacity changes and reasons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from yarnctl.model.cluster import AppId, ContainerId, ContainerKind, NodeId
from yarnctl.model.frozen import quick_init
from yarnctl.model.resources import Resources


@quick_init
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


class RejectCode(str, Enum):
    """Why a part of a decision was refused: one vocabulary for the validator, the shim and the wire schema.

    The values are `$defs.rejection` of schema/wire.schema.json; the shim's DecisionApplier refuses
    with the same strings, so a refusal reads the same in the decision log, the metrics and `yarnctl status`.
    """

    UNKNOWN_NODE = "unknown-node"            # a resize or assignment names no live node
    BAD_SIZE = "bad-size"                    # a resize to a negative (or, in the shim, unrepresentable) size
    UNKNOWN_CONTAINER = "unknown-container"  # a kill of no live container (or of one killed earlier in the decision)
    BAD_COUNT = "bad-count"                  # an assignment of zero or fewer containers
    UNKNOWN_APP = "unknown-app"              # an assignment for no live application
    UNKNOWN_PRIORITY = "unknown-priority"    # ... at a priority the application asks nothing at
    OVER_OUTSTANDING = "over-outstanding"    # more containers than the application asks for there
    LOCALITY = "locality"                    # a node its strict-locality request does not name
    NO_FIT = "no-fit"                        # more than the node has left, in memory or vcores
    BLACKLISTED = "blacklisted"              # a node the application blacklisted (the shim alone knows)
    WRONG_NODE = "wrong-node"                # a node other than the heartbeating one (the shim cannot express it)
    AM_LIMIT = "am-limit"                    # an AM beyond the AM-share limit; in the shim on CS, an app not yet active
    QUEUE_MAX = "queue-max"                  # a queue or an ancestor past its maximum capacity (a scheduler with queues)


_EMPTY: Mapping[AppId, str] = MappingProxyType({})


@quick_init
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

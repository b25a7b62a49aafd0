"""Frozen value types shared by every part of yarnctl (stdlib only)."""

from yarnctl.model.cluster import (
    AM_PRIORITY,
    ANY,
    MAP_PRIORITY,
    REDUCE_PRIORITY,
    App,
    AppId,
    ClusterSnapshot,
    Container,
    ContainerId,
    ContainerKind,
    Held,
    Journal,
    JournalCursor,
    Locality,
    Node,
    NodeId,
    Queue,
    Ask,
)
from yarnctl.model.decision import EMPTY_DECISION, Assignment, Decision, Kill, NodeResize, RejectCode
from yarnctl.model.observation import TUNE_INTERVAL_S, AppUsage, ContainerLoad, NodeLoad, Observation
from yarnctl.model.resources import RESOURCE_TYPES, ZERO, Resources

__all__ = [
    "AM_PRIORITY", "ANY", "MAP_PRIORITY", "REDUCE_PRIORITY", "RESOURCE_TYPES", "ZERO",
    "App", "AppId", "AppUsage", "Assignment", "ClusterSnapshot", "Container", "ContainerId", "ContainerKind",
    "ContainerLoad", "Decision", "EMPTY_DECISION", "Held", "Journal", "JournalCursor", "Kill", "Locality", "Node", "NodeId", "NodeLoad", "NodeResize",
    "Observation", "Queue", "RejectCode", "Ask", "Resources", "TUNE_INTERVAL_S",
]

"""FIFO: Hadoop 2.7 FifoScheduler's order, counting memory and vcores as the shim does.

Apps in submit order (then id); within an app, priorities ascending, stopping at the first
priority that cannot be served on this node (fifo/FifoScheduler.java:480-506).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from yarnctl.model import App, Assignment, ClusterSnapshot, Decision, NodeId
from yarnctl.policies.base import fill_in_order
from yarnctl.policies.contract import PolicyBase


@dataclass(frozen=True, slots=True)
class FifoConfig:
    """FIFO has no parameters."""


class Fifo(PolicyBase):
    """First come, first served: the oldest app takes all it can of every heartbeating node."""

    name = "fifo"
    Config = FifoConfig

    def __init__(self, config: FifoConfig = FifoConfig()) -> None:
        self.config = config

    def order(self, snap: ClusterSnapshot) -> Iterable[App]:
        """Apps with outstanding asks by submit time, then id (lazily: a full node stops early)."""
        return snap.iter_pending_apps()

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """Fill `node_id` with the oldest apps' asks."""
        node = snap.nodes[node_id]
        out: list[Assignment] = fill_in_order(snap, node, self.order(snap), snap.min_allocation)
        return Decision(tuple(out)) if out else Decision()

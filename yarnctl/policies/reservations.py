"""Node reservations as Hadoop 2.7's FairScheduler and CapacityScheduler keep them.

An app whose next request does not fit a node's free room, but would fit the empty node, reserves
it; until that request fits, the node serves the reservation and nothing else
(FSAppAttempt.reserve / FairScheduler.attemptScheduling; LeafQueue.assignContainer /
CapacityScheduler.allocateContainersToNode). The reservation lapses when the app stops asking at
that priority.
"""

from __future__ import annotations

from yarnctl.model import AppId, Assignment, ClusterSnapshot, Decision, NodeId

Reservations = dict[NodeId, tuple[AppId, int]]  # node -> the app and priority it is reserved for


def fulfil(snap: ClusterSnapshot, node_id: NodeId, reserved: Reservations) -> Decision | None:
    """The reserved node's turn: its one container, nothing, or None once the reservation is void."""
    app_id, priority = reserved[node_id]
    node = snap.nodes[node_id]
    ask = next((a for a in snap.any_asks(app_id) if a.priority == priority and a.count > 0), None)
    if ask is None or not ask.capability.fits_in(node.capacity):
        del reserved[node_id]
        return None
    if not ask.capability.fits_in(node.available):
        return Decision()
    del reserved[node_id]
    return Decision((Assignment(app_id, priority, node_id, 1),))


def held_for(reserved: Reservations, app_id: AppId, priority: int) -> int:
    """How many nodes are reserved for the app's request at `priority`."""
    return sum(1 for held in reserved.values() if held == (app_id, priority))

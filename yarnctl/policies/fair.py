"""Fair: Hadoop 2.7 FairScheduler with FairSharePolicy (max-min fair share of memory).

Queues, then apps, sorted by usage/weight (needy ones below their min share first), one
container per heartbeat unless `assign_multiple` (fair/policies/FairSharePolicy.java).
"""

from __future__ import annotations

from yarnctl.fairness.comparators import fair_share_key
from yarnctl.model import AppId, ClusterSnapshot, Decision, NodeId
from yarnctl.policies.fairshare import AppKeys, FairConfig, FairOrder, TreeWeights, serve_fairly, why_waiting
from yarnctl.policies.reservations import Reservations
from yarnctl.policies.am_limit import NO_LIMIT
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.waiting import Wait


class Fair(PolicyBase):
    """FairScheduler's default policy: the app (and queue) with the least memory goes next."""

    name = "fair"
    max_am_share = NO_LIMIT  # each queue's own limit (max_am_share) applies, as FSLeafQueue.canRunAppAM
    Config = FairConfig

    def __init__(self, config: FairConfig = FairConfig()) -> None:
        self.config = config
        # FairScheduler reserves a full node for the app first in order (FSAppAttempt.assignContainer)
        self.reserves_full_nodes = config.reservations
        self.weights = TreeWeights(config)  # under a queue tree, its leaves' capacities are the queue weights
        self.reserved: Reservations = {}  # the nodes reserved for an app's request (config.reservations)
        self.keys = AppKeys()
        self.order = FairOrder()  # each queue's apps in order, kept across heartbeats

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """One container (or more with assign_multiple) for the most under-served app."""
        config = self.weights.of(snap)
        return serve_fairly(snap, node_id, config, fair_share_key, self.reserved, self.keys, self.order)

    def why_waiting(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait:
        """A reserved node, maxAMShare, or the app served first holding less memory (fairshare.why_waiting)."""
        return why_waiting(snap, node_id, app_id, decision, self.weights.of(snap), self.reserved, self.name,
                           lambda r: r.shares(snap.capacity)[0])

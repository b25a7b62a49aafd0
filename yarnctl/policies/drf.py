"""DRF: Hadoop 2.7 FairScheduler with DominantResourceFairnessPolicy.

Apps (and queues) sorted by dominant share of the cluster, ties by the next-largest share,
then start time and name (fair/policies/DominantResourceFairnessPolicy.java); [H-MRF] Example 1
(100 CPU, 100 GB; A <1 CPU, 2 GB>, B <1 CPU, 1 GB>) gives A 25
tasks and B 50.
"""

from __future__ import annotations

from functools import partial

from yarnctl.fairness.comparators import drf_key
from yarnctl.model import AppId, ClusterSnapshot, Decision, NodeId
from yarnctl.policies.fairshare import AppKeys, FairConfig, FairOrder, TreeWeights, serve_fairly, why_waiting
from yarnctl.policies.reservations import Reservations
from yarnctl.policies.am_limit import NO_LIMIT
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.waiting import Wait


class Drf(PolicyBase):
    """Dominant Resource Fairness: equalise each app's largest share of any resource."""

    name = "drf"
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
        """One container (or more with assign_multiple) for the app with the least dominant share."""
        key = partial(drf_key, cluster=snap.capacity)
        return serve_fairly(snap, node_id, self.weights.of(snap), key, self.reserved, self.keys, self.order)

    def why_waiting(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait:
        """A reserved node, maxAMShare, or the app served first with a lower dominant share (fairshare.why_waiting)."""
        return why_waiting(snap, node_id, app_id, decision, self.weights.of(snap), self.reserved, self.name,
                           lambda r: r.dominant_share(snap.capacity))

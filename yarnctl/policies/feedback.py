"""Usage feedback ([FEEDBACK] Sec. IV, VI-A, Eq. 1-6): schedule against estimated, not reserved, room.

The estimator (yarnctl/estimation/feedback.py, Eq. 1-4) learns each node's usage at every
control-loop tick; its availability min(AR − ACU, NC − RU) (Eq. 5-6) is, as in the paper's YARN
prototype (Sec. VI-A), "only used to rescale the node total resource capacity as presented to Yarn
scheduling": on a node's heartbeat the policy returns a NodeResize of that node to

    allocated + max(available, 0)        per resource, rounded down,

bounded below by what is allocated (a capacity under the allocation would only make YARN's
free space negative) and above by `max_overcommit` × AR (default 2.0: a bad estimate can at most
double what a node offers, plus the sliver of room below), then lets an ordinary ordering policy (`ordering`, default fifo, as the
paper keeps FIFO/Fair/Capacity "as is") fill the resized node. Hadoop 2.7 has no opportunistic
containers, so rescaling through the shim is the only way to allocate past the requests.

AR (allowance) is the node's configured capacity (`allowance` when given): the size the node
registered with or an admin set, which the shim sends beside the capacity (Node.registered) and
which this policy's resizes never change, so AR cannot ratchet up on its own offers and a
restarted policy server still knows it. The RM REST API does not carry it: a control-loop
snapshot's node keeps the AR last heard from the shim. NC (the node's real capacity, Sec. VI-A)
is not reported by YARN 2.7: `node_capacity` gives it, a zero component meaning "the
allowance's" (no safety margin).

Room to be asked: the node offered is at least what it holds after the heartbeat plus one minimum
allocation per resource, while the ordering policy only fills the estimated capacity. That sliver
is never used by this policy; it keeps the node asking for work. Live, the shim calls Python only
for a node with room for a minimum allocation (`yarnctl.shim.call-when-full` false), so a node
filled to its estimate would not be asked again until a container ended on it, and neither a grown
estimate nor a shrunk one would reach it (tests/integration/test_feedback_live.py: 8 containers at
most, as fifo, when the sliver stopped at AR); the simulator likewise does not ask a node without
room. Only the shim's native fallback could fill the sliver.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from yarnctl.errors import ConfigError
from yarnctl.estimation.feedback import Usage, UsageEstimator
from yarnctl.model import ZERO, ClusterSnapshot, Decision, Node, NodeId, NodeResize, Observation, Resources
from yarnctl.policies.contract import Policy, PolicyBase, Tunable
from yarnctl.policies.bounds import bounded

MB = 1 << 20


@dataclass(frozen=True, slots=True)
class FeedbackConfig:
    """Usage-feedback parameters with the paper's defaults (Sec. V-C, VI-B: α = 0.125)."""

    alpha: float = bounded(0.125, 0, 1)  # damping factor of Eq. 1
    ordering: str = "fifo"  # the registry policy that fills the resized node
    max_overcommit: float = bounded(2.0, 1)  # a node never offers more than this times its allowance AR
    allowance: Resources = ZERO  # AR for every node; zero: each node's configured capacity
    node_capacity: Resources = ZERO  # NC for every node; zero components: the allowance's


def placed(snap: ClusterSnapshot, decision: Decision) -> Resources:
    """What `decision`'s assignments add to their node: count × the capability each app asked for at that priority."""
    total = ZERO
    for a in decision.assignments:
        ask = next((r.capability for r in snap.any_asks(a.app_id) if r.priority == a.priority), ZERO)
        total = total + ask * a.count
    return total


def resized(allocated: Resources, available: Usage, ceiling: Resources) -> Resources:
    """The capacity to offer: allocated + available (rounded down, not below 0), at most `ceiling`, at least allocated."""
    mem = allocated.memory_mb + max(0, math.floor(available.memory_mb))
    vc = allocated.vcores + max(0, math.floor(available.vcores))
    return Resources(max(allocated.memory_mb, min(mem, ceiling.memory_mb)),
                     max(allocated.vcores, min(vc, ceiling.vcores)))


class Feedback(PolicyBase):
    """Rescales each heartbeating node to its estimated room (Eq. 5-6) and lets `ordering` fill it."""

    name = "feedback"
    Config = FeedbackConfig
    # the room it offers a node moves with each tick and each resize, not only with what the node
    # holds: the simulator must ask it at every heartbeat, as the shim does live
    time_dependent = True
    resizes_nodes = True  # the engine leaves node capacities to it (see yarnctl/engine.py)

    def __init__(self, config: FeedbackConfig = FeedbackConfig()) -> None:
        from yarnctl.policies import make_policy  # the registry imports this module

        if config.ordering == self.name:
            raise ConfigError("policy feedback: ordering cannot be feedback itself")
        self.config = config
        self.inner: Policy = make_policy(config.ordering)
        self.estimator = UsageEstimator(config.alpha)
        self.allowances: dict[NodeId, Resources] = {}  # AR per node as last heard from a source that knows it
        self.available_total = Usage()

    def allowance(self, node: Node) -> Resources:
        """AR: the configured capacity of `node` (see the module docstring)."""
        if not self.config.allowance.is_zero():
            return self.config.allowance
        if node.registered is not None:
            self.allowances[node.id] = node.registered
            return node.registered
        # a REST snapshot's node: its capacity may be this policy's own resize, never take that for AR
        return self.allowances.get(node.id, node.capacity)

    def node_capacity(self, allowance: Resources) -> Resources:
        """NC: the configured real capacity, component by component falling back to the allowance."""
        nc = self.config.node_capacity
        return Resources(nc.memory_mb or allowance.memory_mb, nc.vcores or allowance.vcores)

    def capacity_for(self, snap: ClusterSnapshot, node: Node) -> Resources:
        """The capacity `node` should offer now: allocated + Eq. 5-6's room, within [allocated, max_overcommit × AR]."""
        ar = self.allowance(node)
        avail = self.estimator.available(node.id, ar, self.node_capacity(ar), snap.node_containers.get(node.id, ()))
        k = self.config.max_overcommit
        return resized(node.allocated, avail, Resources(math.floor(ar.memory_mb * k), math.floor(ar.vcores * k)))

    # ------------------------------------------------------------ control loop

    def tune(self, obs: Observation) -> None:
        """Learn the tick's usage (Eq. 1-4) and total up the estimated room; tune the ordering policy too."""
        self.estimator.observe(obs)
        total = Usage()
        if obs.snapshot is not None:
            for nid in sorted(obs.snapshot.nodes):
                node = obs.snapshot.nodes[nid]
                ar = self.allowance(node)
                a = self.estimator.available(nid, ar, self.node_capacity(ar), obs.snapshot.node_containers.get(nid, ()))
                total = total + Usage(max(a.memory_mb, 0.0), max(a.vcores, 0.0))
        self.available_total = total
        if isinstance(self.inner, Tunable):
            self.inner.tune(obs)

    def tuning(self) -> Mapping[str, float]:
        """Cluster totals of the usage estimate and of the estimated room, plus the ordering policy's values."""
        est = self.estimator.total()
        out = {
            "feedback_estimated_used_bytes": est.memory_mb * MB,
            "feedback_estimated_used_vcores": est.vcores,
            "feedback_available_bytes": self.available_total.memory_mb * MB,
            "feedback_available_vcores": self.available_total.vcores,
        }
        if isinstance(self.inner, Tunable):
            out.update(self.inner.tuning())
        return out

    # ------------------------------------------------------------ heartbeats

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """Resize `node_id` to its estimated room and fill it with the ordering policy's choice."""
        node = snap.nodes[node_id]
        cap = self.capacity_for(snap, node)
        view = snap
        if cap != node.capacity:
            nodes = dict(snap.nodes)
            nodes[node_id] = replace(node, capacity=cap)
            view = replace(snap, nodes=MappingProxyType(nodes), capacity=snap.capacity - node.capacity + cap)
        inner = self.inner.decide(view, node_id)
        # the offer keeps one minimum allocation of room above what the node holds after this heartbeat
        # (never used by this policy: the ordering policy fills `cap`), so the node keeps being asked and
        # a changed estimate reaches it at its next heartbeat (see the module docstring)
        floor = node.allocated + placed(snap, inner) + snap.min_allocation
        offer = cap.componentwise_max(floor)
        if offer == node.capacity:
            return inner
        return Decision(inner.assignments, inner.kills, (NodeResize(node_id, offer),), inner.reasons)

"""Usage-feedback estimation ([FEEDBACK], Sec. IV Eq. 1-4, Sec. VI-A Eq. 5-6).

Per node and per resource R (memory MB, busy vcores) the estimate EU_R(n) is:

    Eq. 1  EU_R(n) = (1 − α) EU_R(n−1) + α U_R(n)          each control-loop tick with measured usage
    Eq. 2  EU_R(n) <- EU_R(n) + RR_J                         when container J is allocated (its request)
    Eq. 3  EU_R(n) = U_R(n)  if EU_R(n) < U_R(n)             spike correction, after Eq. 1
    Eq. 4  EU_R(n) <- EU_R(n) − (1 − α)^n_J RR_J             when J finishes (the residue of its Eq. 2 bump)

U_R(n) is the aggregated usage of the node's containers (the paper's ACU: Observation.containers,
summed per node); n_J counts the Eq. 1 updates since J's bump, so (1 − α)^n_J RR_J is exactly what
is left of that bump. Eq. 4 is clamped at 0: after an Eq. 3 correction the residue may exceed the
estimate. The state is per node, as in the paper (Eq. 3 is a max, so per-container estimates would
not add up to it); per container only its request, n_J and last measured usage are kept, and
forgotten when it finishes, so the state is bounded by the live containers. A node with no live
container has an estimate (and ACU) of 0: nothing of YARN's runs there, while Eq. 1 alone would
take ~35 ticks at α = 0.125 to forget the usage of containers gone (and a node rescaled to offer
nothing would not be offered work meanwhile).

Availability (Sec. VI-A): available = min(AR − ACU, NC − RU) per resource, where AR is the node's
allowance (its configured capacity), ACU the measured container usage (Eq. 5), NC the node's real
capacity and RU the estimate EU (Eq. 6).

Learning happens only in `observe` (every tick). Between ticks `estimate`/`available` take the
snapshot's live containers and apply Eq. 2 and Eq. 4 to the ones allocated or finished since, without
changing the state, so an allocation counts at once ("instantly", Sec. IV) at every heartbeat.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from yarnctl.model import Container, ContainerId, NodeId, Observation, Resources
from yarnctl.model.frozen import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class Usage:
    """A real-valued amount per resource: memory MB and (busy) vcores."""

    memory_mb: float = 0.0
    vcores: float = 0.0

    @staticmethod
    def of(r: Resources) -> Usage:
        """An integer resource vector as a usage vector."""
        return Usage(float(r.memory_mb), float(r.vcores))

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.memory_mb + other.memory_mb, self.vcores + other.vcores)

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.memory_mb - other.memory_mb, self.vcores - other.vcores)

    def scaled(self, k: float) -> Usage:
        """This vector times `k`."""
        return Usage(self.memory_mb * k, self.vcores * k)


NONE = Usage()


def damp(estimate: Usage, measured: Usage, alpha: float) -> Usage:
    """Eq. 1: the damped average of the previous estimate and the new measurement."""
    return estimate.scaled(1.0 - alpha) + measured.scaled(alpha)


def bump(estimate: Usage, request: Resources) -> Usage:
    """Eq. 2: an allocation counts its whole request at once."""
    return estimate + Usage.of(request)


def correct(estimate: Usage, measured: Usage) -> Usage:
    """Eq. 3: an estimate below the measured usage is raised to it, per resource."""
    return Usage(max(estimate.memory_mb, measured.memory_mb), max(estimate.vcores, measured.vcores))


def remove(estimate: Usage, request: Resources, alpha: float, updates: int) -> Usage:
    """Eq. 4: a finished container takes away what is left of its bump after `updates` Eq. 1 steps (not below 0)."""
    left = estimate - Usage.of(request).scaled((1.0 - alpha) ** updates)
    return Usage(max(left.memory_mb, 0.0), max(left.vcores, 0.0))


def available(allowance: Resources, aggregated: Usage, capacity: Resources, estimate: Usage) -> Usage:
    """Eq. 5-6: min(AR − ACU, NC − RU) per resource (negative when the node is over its estimate)."""
    eq5 = Usage.of(allowance) - aggregated
    eq6 = Usage.of(capacity) - estimate
    return Usage(min(eq5.memory_mb, eq6.memory_mb), min(eq5.vcores, eq6.vcores))


@dataclass(slots=True)
class _Tracked:
    """What the estimator keeps of one live container: its node, request, n_J and last measured usage."""

    node_id: NodeId
    request: Resources
    updates: int = 0
    used: Usage = NONE


class UsageEstimator:
    """EU_R per node (Eq. 1-4), learned from control-loop observations; deterministic and bounded."""

    def __init__(self, alpha: float = 0.125) -> None:
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        self.alpha = alpha
        self.estimates: dict[NodeId, Usage] = {}
        self.measured: dict[NodeId, Usage] = {}  # ACU at the last tick
        self.containers: dict[ContainerId, _Tracked] = {}
        self.on_node: dict[NodeId, dict[ContainerId, _Tracked]] = {}  # the same by node: a heartbeat reads one
        # each node's last `available` and what it was read for (the store's container tuple, compared by
        # identity, AR and NC): a node is often asked again before its containers change, and the maps above
        # change only in `observe`, which clears it (keep it so)
        self._available: dict[NodeId, tuple[tuple[Container, ...], Resources, Resources, Usage]] = {}

    def observe(self, obs: Observation) -> None:
        """One tick: Eq. 4 for finished containers, Eq. 2 for new ones, then Eq. 1 and Eq. 3 with the measurement."""
        self._available.clear()
        live: dict[ContainerId, Container] = dict(obs.snapshot.containers) if obs.snapshot is not None else {}
        nodes = sorted(set(obs.nodes) | (set(obs.snapshot.nodes) if obs.snapshot is not None else set()))
        if obs.snapshot is not None:
            for cid in sorted(self.containers):
                if cid not in live:
                    self._finish(cid)
            for cid in sorted(live):
                if cid not in self.containers:
                    c = live[cid]
                    self.containers[cid] = self.on_node.setdefault(c.node_id, {})[cid] = _Tracked(c.node_id, c.resource)
                    self.estimates[c.node_id] = bump(self.estimates.get(c.node_id, NONE), c.resource)
        if obs.usage_measured:  # otherwise no measurement: an empty usage table means unknown, not idle
            per_node: dict[NodeId, Usage] = {}
            for cid in sorted(obs.containers):
                load = obs.containers[cid]
                u = Usage(load.memory_mb, load.vcores)
                per_node[load.node_id] = per_node.get(load.node_id, NONE) + u
                t = self.containers.get(cid)
                if t is not None:
                    t.used = u
            for nid in nodes:
                u = per_node.get(nid, NONE)
                self.estimates[nid] = correct(damp(self.estimates.get(nid, NONE), u, self.alpha), u)
                self.measured[nid] = u
            for t in self.containers.values():
                t.updates += 1
        if obs.snapshot is not None:
            for nid in nodes:
                if not obs.snapshot.node_containers.get(nid):
                    self.estimates[nid] = NONE  # nothing runs there: nothing to estimate
                    self.measured[nid] = NONE
        for nid in [n for n in self.estimates if n not in nodes]:
            del self.estimates[nid]  # a node that left: forget it
            self.measured.pop(nid, None)

    def _finish(self, cid: ContainerId) -> None:
        t = self.containers.pop(cid)
        on_node = self.on_node[t.node_id]
        del on_node[cid]
        if not on_node:
            del self.on_node[t.node_id]
        if t.node_id in self.estimates:
            self.estimates[t.node_id] = remove(self.estimates[t.node_id], t.request, self.alpha, t.updates)
        if t.node_id in self.measured:
            self.measured[t.node_id] = self.measured[t.node_id] - t.used

    def estimate(self, node_id: NodeId, live: Iterable[Container] | None = None) -> Usage:
        """RU: the node's estimate, with Eq. 2/4 applied (without learning) to `live` containers changed since the tick."""
        est = self.estimates.get(node_id, NONE)
        if live is None:
            return est
        ids = {c.id for c in live}
        if not ids:
            return NONE  # nothing runs there
        for cid, t in sorted(self.on_node.get(node_id, {}).items()):
            if cid not in ids:
                est = remove(est, t.request, self.alpha, t.updates)
        for c in live:
            if c.id not in self.containers:
                est = bump(est, c.resource)
        return est

    def aggregated(self, node_id: NodeId, live: Iterable[Container] | None = None) -> Usage:
        """ACU: the node's measured container usage at the tick, less that of containers finished since."""
        acu = self.measured.get(node_id, NONE)
        if live is None:
            return acu
        ids = {c.id for c in live}
        if not ids:
            return NONE
        for cid, t in sorted(self.on_node.get(node_id, {}).items()):
            if cid not in ids:
                acu = acu - t.used
        return acu

    def available(self, node_id: NodeId, allowance: Resources, capacity: Resources,
                  live: Iterable[Container] | None = None) -> Usage:
        """Eq. 5-6 for one node: min(AR − ACU, NC − RU)."""
        if isinstance(live, tuple):
            last = self._available.get(node_id)
            if last is not None and last[0] is live and last[1] == allowance and last[2] == capacity:
                return last[3]
        cs = None if live is None else tuple(live)
        out = available(allowance, self.aggregated(node_id, cs), capacity, self.estimate(node_id, cs))
        if isinstance(live, tuple):
            self._available[node_id] = (live, allowance, capacity, out)
        return out

    def total(self) -> Usage:
        """The sum of every node's estimate."""
        out = NONE
        for nid in sorted(self.estimates):
            out = out + self.estimates[nid]
        return out

    def tracked(self) -> Mapping[ContainerId, tuple[NodeId, int]]:
        """Every live container the estimator knows, with its node and n_J."""
        return {cid: (t.node_id, t.updates) for cid, t in sorted(self.containers.items())}

"""FFD-DP: First-Fit-Decreasing DotProduct packing ([HaSTE] Sec. 3.4.1, Eq. 1).

Fitness of pending task t_i on node S_j:   F_ij = sum_p R[i,p] * C[j,p] * w_p
where R is the task's request, C the node's residual capacity and w_p the resource weights
(memory in GB and vcores, as in the paper's example). The node takes the fittest request that
fits, its residual shrinks, and the scores are recomputed until nothing fits. The paper's
example: on <10 GB, 6 cores> with tasks <1 GB, 3 cores> and <3 GB, 1 core>, it picks three of
the second and one of the first.
"""

from __future__ import annotations

from dataclasses import dataclass

from yarnctl.errors import ConfigError
from yarnctl.model import Assignment, ClusterSnapshot, Decision, NodeId, Resources
from yarnctl.policies.base import OpenAsk
from yarnctl.policies.bounds import bounded
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.head_lists import AskLists


@dataclass(frozen=True, slots=True)
class FfdDpConfig:
    """Resource weights w_p of Eq. 1 (memory counted in GB)."""

    memory_weight: float = bounded(1.0, 0)
    vcores_weight: float = bounded(1.0, 0)


def check_weights(memory_weight: float, vcores_weight: float, policy: str) -> None:
    """Refuse two zero weights of Eq. 1: every request would score the same."""
    if memory_weight == vcores_weight == 0:
        raise ConfigError(f"policy {policy}: memory_weight and vcores_weight cannot both be 0")


def fitness(request: Resources, residual: Resources, config: FfdDpConfig) -> float:
    """Eq. 1: the dot product of the request and the node's residual capacity, weighted."""
    return (request.memory_mb / 1024.0) * (residual.memory_mb / 1024.0) * config.memory_weight + (
        request.vcores * residual.vcores * config.vcores_weight
    )


class FfdDp(PolicyBase):
    """Vector bin packing: the pending request best aligned with what is free on this node."""

    name = "ffd-dp"
    Config = FfdDpConfig

    def __init__(self, config: FfdDpConfig = FfdDpConfig()) -> None:
        check_weights(config.memory_weight, config.vcores_weight, self.name)
        self.config = config
        self.asks = AskLists()  # the open asks by size, kept from the store's journal

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """Pack the heartbeating node with the highest-fitness asks until nothing fits."""
        residual = snap.nodes[node_id].available
        if self.asks.sync(snap):
            return self._from_lists(node_id, residual, snap.min_allocation)
        # candidates in submit order, then priority: the earlier one wins a tie in fitness
        candidates = [ask for app in snap.iter_pending_apps() for ask in OpenAsk.of(snap, app.id)]
        granted: dict[tuple[str, int], int] = {}
        while snap.min_allocation.fits_in(residual):
            best: OpenAsk | None = None
            best_score = -1.0
            for ask in candidates:
                if ask.left > 0 and ask.capability.fits_in(residual):
                    score = fitness(ask.capability, residual, self.config)
                    if score > best_score:
                        best, best_score = ask, score
            if best is None:
                break
            best.left -= 1
            residual = residual - best.capability
            key = (best.app_id, best.priority)
            granted[key] = granted.get(key, 0) + 1
        if not granted:
            return Decision()
        return Decision(tuple(Assignment(a, p, node_id, n) for (a, p), n in granted.items()))

    def _from_lists(self, node_id: NodeId, residual: Resources, unit: Resources) -> Decision:
        """`decide` from the kept lists: the fittest size's earliest open ask, the earliest of equally fit sizes."""
        lists, count = self.asks.by_size, self.asks.count
        at: dict[Resources, int] = {}  # how far into its list each size's head has moved in this decision
        granted: dict[tuple[str, int], int] = {}
        while unit.fits_in(residual):
            best: tuple[float, tuple[float, str, int], Resources] | None = None
            for size, entries in lists.items():
                i = at.get(size, 0)
                if i == len(entries) or not size.fits_in(residual):
                    continue
                score = fitness(size, residual, self.config)
                # the walk keeps the first candidate (submit order, then priority) of the highest score
                if best is None or score > best[0] or score == best[0] and entries[i] < best[1]:
                    best = (score, entries[i], size)
            if best is None:
                break
            _, (_, app_id, priority), size = best
            key = (app_id, priority)
            n = granted[key] = granted.get(key, 0) + 1
            if n == count[key]:
                at[size] = at.get(size, 0) + 1
            residual = residual - size
        if not granted:
            return Decision()
        return Decision(tuple(Assignment(a, p, node_id, n) for (a, p), n in granted.items()))

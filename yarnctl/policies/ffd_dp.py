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

from yarnctl.model import Assignment, ClusterSnapshot, Decision, NodeId, Resources
from yarnctl.policies.base import OpenAsk
from yarnctl.policies.contract import PolicyBase


@dataclass(frozen=True, slots=True)
class FfdDpConfig:
    """Resource weights w_p of Eq. 1 (memory counted in GB)."""

    memory_weight: float = 1.0
    vcores_weight: float = 1.0


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
        self.config = config

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """Pack the heartbeating node with the highest-fitness asks until nothing fits."""
        residual = snap.nodes[node_id].available
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

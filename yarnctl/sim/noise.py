"""Model noise: how much a comparison moves when the simulator's arbitrary choices are drawn again.

The model does not know two things a real cluster settles by chance: when each NodeManager
heartbeats within the interval (the even grid, node i of N at i/N, is one choice of many; on the
real cluster the phases drift) and which of two simultaneous events comes first (the kernel's
insertion order is another). Each extra "order" re-runs every policy with both drawn from one seed:
the heartbeat phases uniform in the interval (those the workload gives too, and the same for every
policy) and the order of simultaneous events of one kind (`SeededKernel(order_seed)`: drawn as the events
come, so two policies, whose runs schedule different events, do not see the same order). A
difference between policies smaller than the spread of either is the model's, not the policies'.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from yarnctl.sim.cluster import ProgressFn
from yarnctl.sim.report import PolicyResult
from yarnctl.sim.runner import simulate
from yarnctl.sim.workload import Workload

METRICS = ("avg_completion_s", "makespan_s", "avg_wait_s")
RANKED = ("avg_completion_s", "makespan_s")  # the metrics whose ranking is counted


def redrawn(workload: Workload, seed: int) -> Workload:
    """`workload` with every node's heartbeat phase drawn uniformly from [0, 1) of the interval by `seed`."""
    rng = random.Random(seed)
    phases = tuple(rng.random() for _ in workload.cluster.nodes)
    return dataclasses.replace(workload, cluster=dataclasses.replace(workload.cluster, phases=phases))


@dataclass(frozen=True, slots=True)
class Spread:
    """One policy's metrics over the orders: the first is the unperturbed run's."""

    policy: str
    values: Mapping[str, tuple[float | None, ...]]  # metric -> its value in each order
    incomplete: int = 0  # runs that left jobs unfinished or failed: their averages cover the finished jobs only

    def range(self, metric: str) -> tuple[float, float] | None:
        """The lowest and highest value of `metric` over the orders (None when a run left it unknown)."""
        xs = self.values[metric]
        if any(x is None for x in xs):
            return None
        known = [x for x in xs if x is not None]
        return min(known), max(known)


@dataclass(frozen=True, slots=True)
class NoiseReport:
    """Every policy's spread over `orders` runs, and how often its rankings held."""

    orders: int  # runs per policy, the unperturbed one included
    spreads: tuple[Spread, ...]

    def ranking(self, k: int, metric: str = "avg_completion_s") -> tuple[str, ...]:
        """The policies by `metric` in order `k`, lowest first (ties by name; unknown last)."""
        def key(s: Spread) -> tuple[float, str]:
            v = s.values[metric][k]
            return (math.inf if v is None else v, s.policy)
        return tuple(s.policy for s in sorted(self.spreads, key=key))

    def ranking_held(self, metric: str = "avg_completion_s") -> int:
        """In how many orders the policies rank by `metric` as in the unperturbed run (that run included)."""
        first = self.ranking(0, metric)
        return sum(1 for k in range(self.orders) if self.ranking(k, metric) == first)

    def ahead(self, a: str, b: str, metric: str = "avg_completion_s") -> tuple[int, int]:
        """In how many orders `a`'s `metric` is below `b`'s, and in how many the two are equal."""
        va, vb = (next(s for s in self.spreads if s.policy == p).values[metric] for p in (a, b))
        pairs = [(x, y) for x, y in zip(va, vb) if x is not None and y is not None]
        return sum(1 for x, y in pairs if x < y), sum(1 for x, y in pairs if x == y)

    def to_json(self) -> dict[str, Any]:
        """The `--json` form: each policy's values per metric, in order, and the rankings' counts."""
        return {"orders": self.orders, "ranking_held": {m: self.ranking_held(m) for m in RANKED},
                "policies": {s.policy: {**{m: list(v) for m, v in s.values.items()}, "incomplete_runs": s.incomplete}
                             for s in self.spreads}}


def model_noise(
    workload: Workload,
    base: Sequence[PolicyResult],
    extra: int,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    max_time_s: float = math.inf,
    max_am_share: float | None = None,
    progress: Callable[[str], ProgressFn | None] | None = None,
) -> NoiseReport:
    """Re-run each policy of `base` (the unperturbed results, in order) under `extra` drawn orders, seeds 1..extra."""
    policies = [r.policy for r in base]
    values: dict[str, dict[str, list[float | None]]] = {
        r.policy: {m: [getattr(r, m)] for m in METRICS} for r in base}
    incomplete = {r.policy: int(bool(r.unfinished or r.failed)) for r in base}
    for seed in range(1, extra + 1):
        label = None if progress is None else partial(_labelled, progress, f"order {seed}/{extra}")
        pairs = simulate(redrawn(workload, seed), policies, params, max_time_s=max_time_s, progress=label,
                         max_am_share=max_am_share, order_seed=seed)
        for result, _ in pairs:
            for m in METRICS:
                values[result.policy][m].append(getattr(result, m))
            incomplete[result.policy] += bool(result.unfinished or result.failed)
    spreads = tuple(Spread(p, {m: tuple(v) for m, v in values[p].items()}, incomplete[p]) for p in policies)
    return NoiseReport(extra + 1, spreads)


def _labelled(progress: Callable[[str], ProgressFn | None], tag: str, name: str) -> ProgressFn | None:
    return progress(f"{name}, {tag}")

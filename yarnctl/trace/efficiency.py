"""Allocation efficiency ([FEEDBACK], Sec. III-B, Fig. 1): used over allocated, per container, job and user.

For a container c, per resource (memory, cpu):

    E_c = Σ_i u_i / Σ_i r_i          over its life, u_i used and r_i reserved at time i

which for a constant allocation r over [start, end] and a mean use ū is ū / r. A job's efficiency
is the total used over the total allocated by all its containers (resource-seconds, so a long
container weighs more than a short one), and a user's likewise over all the containers of all
the user's jobs. Containers that held their allocation for no time have no E_c and count for
nothing in their job's and user's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from yarnctl.trace.usage import ContainerUsage

LEVELS = ("container", "job", "user")
RESOURCES = ("cpu", "memory")
PERCENTILES = (10, 25, 50, 75, 90, 99)
THRESHOLDS = (0.5, 1.0)  # "use less than half / less than their allocation" (Sec. III-B)


@dataclass(frozen=True, slots=True)
class Efficiency:
    """The allocation efficiency of one container, job or user: resource-seconds used and allocated."""

    level: str
    name: str
    containers: int
    used_memory_mb_s: float
    allocated_memory_mb_s: float
    used_vcore_s: float
    allocated_vcore_s: float

    @property
    def memory(self) -> float:
        """E for memory: MB-seconds used / MB-seconds allocated."""
        return self.used_memory_mb_s / self.allocated_memory_mb_s

    @property
    def cpu(self) -> float:
        """E for cpu: vcore-seconds used / vcore-seconds allocated (above 1 when a container used more cores)."""
        return self.used_vcore_s / self.allocated_vcore_s

    def of(self, resource: str) -> float:
        """E for `resource` (cpu or memory)."""
        return self.cpu if resource == "cpu" else self.memory


@dataclass(frozen=True, slots=True)
class Distribution:
    """The distribution of E over one level's entities for one resource: percentiles and the shares below thresholds."""

    level: str
    resource: str
    count: int
    mean: float
    percentiles: tuple[tuple[int, float], ...]
    max: float
    below: tuple[tuple[float, float], ...]  # (threshold, share of entities with E < threshold)

    def share_below(self, threshold: float) -> float:
        """The share of entities with E < `threshold` (one of the thresholds it was computed for)."""
        return dict(self.below)[threshold]


def efficiencies(trace: Iterable[ContainerUsage], level: str) -> list[Efficiency]:
    """E of every container, job or user in `trace` (by `level`), sorted by name."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    sums: dict[str, list[float]] = {}
    for c in trace:
        if c.duration_s <= 0:
            continue  # no resource-seconds: no E_c, nothing to add
        key = c.container if level == "container" else c.job if level == "job" else c.user
        acc = sums.setdefault(key, [0, 0.0, 0.0, 0.0, 0.0])
        d = c.duration_s
        acc[0] += 1
        acc[1] += c.used_memory_mb * d
        acc[2] += c.memory_mb * d
        acc[3] += c.used_vcores * d
        acc[4] += c.vcores * d
    return [Efficiency(level, name, int(a[0]), a[1], a[2], a[3], a[4]) for name, a in sorted(sums.items())]


def distribution(effs: Sequence[Efficiency], resource: str, percentiles: Sequence[int] = PERCENTILES,
                 thresholds: Sequence[float] = THRESHOLDS) -> Distribution:
    """Percentiles (linear interpolation), mean, max and the shares below `thresholds` of E for `resource`."""
    if resource not in RESOURCES:
        raise ValueError(f"resource must be one of {', '.join(RESOURCES)}, got {resource!r}")
    level = effs[0].level if effs else ""
    if not effs:
        return Distribution(level, resource, 0, float("nan"), tuple((p, float("nan")) for p in percentiles),
                            float("nan"), tuple((t, float("nan")) for t in thresholds))
    xs = np.array([e.of(resource) for e in effs], dtype=float)
    ps = np.percentile(xs, list(percentiles))
    return Distribution(level, resource, len(xs), float(xs.mean()),
                        tuple((p, float(v)) for p, v in zip(percentiles, ps)), float(xs.max()),
                        tuple((t, float((xs < t).mean())) for t in thresholds))


def cdf(effs: Sequence[Efficiency], resource: str) -> tuple[list[float], list[float]]:
    """The empirical CDF of E for `resource`: sorted values and the fraction of entities at or below each."""
    xs = sorted(e.of(resource) for e in effs)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]

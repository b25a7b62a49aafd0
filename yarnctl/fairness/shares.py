"""Share vectors of [H-MRF]: fair shares (Eq. 1), dominant and asset shares, non-sharing allocation.

Vectors are tuples of floats in RESOURCE_TYPES order (memory MB, vcores); an accumulated vector
is in resource-seconds. Every function is pure. They take the two components by index, as
`Resources` does: the accounting calls them a few times per entity at every heartbeat, and
generator expressions over `zip` cost several times more in CPython.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from yarnctl.model import Resources

Vector = tuple[float, ...]
ZERO_VECTOR: Vector = (0.0, 0.0)


def vector(r: Resources) -> Vector:
    """`r` as a float vector."""
    return (float(r.memory_mb), float(r.vcores))


def stored_vector(values: Any, what: str) -> Vector:
    """A vector read back from saved state: two numbers, else ValueError naming `what`."""
    # the arithmetic below indexes both components: a damaged state file must fail here, once
    if not isinstance(values, (list, tuple)) or len(values) != 2:
        raise ValueError(f"{what}: expected [memory_mb, vcores], got {values!r}")
    return (float(values[0]), float(values[1]))


def add(a: Vector, b: Vector, k: float = 1.0) -> Vector:
    """a + k·b, componentwise."""
    return (a[0] + k * b[0], a[1] + k * b[1])


def total(vs: Iterable[Vector]) -> Vector:
    """The componentwise sum of `vs`."""
    out = ZERO_VECTOR
    for v in vs:
        out = add(out, v)
    return out


def aggregate(v: Vector, capacity: Resources) -> float:
    """Σ_j v_j / r_j: a vector's worth with every resource normalised to the cluster (Sec. 3.3)."""
    mem, vcores = capacity.memory_mb, capacity.vcores
    return (v[0] / mem if mem > 0 else 0.0) + (v[1] / vcores if vcores > 0 else 0.0)


def share_vector(capacity: Resources, weight: float, total_weight: float) -> Vector:
    """Eq. 1: S_i = R · w_i / Σ_k w_k (weights are the contributions K_i)."""
    frac = weight / total_weight if total_weight > 0 else 0.0
    return (float(capacity.memory_mb) * frac, float(capacity.vcores) * frac)


def dominant_share(acc: Vector, capacity: Resources, weight: float) -> float:
    """Alg. 1 line 15: the weighted dominant share max_j ü_j / (r_j · w_i)."""
    w = weight if weight > 0 else 1e-9
    mem, vcores = capacity.memory_mb, capacity.vcores
    if mem > 0 and vcores > 0:
        return max(acc[0] / mem / w, acc[1] / vcores / w)
    if mem > 0:
        return acc[0] / mem / w
    return acc[1] / vcores / w if vcores > 0 else 0.0


def asset_share(acc: Vector, capacity: Resources, weight: float) -> float:
    """Sec. 5.2's aggregate share α_i = Σ_j ü_j / r_j, over the weight (Alg. 1 line 14 with R normalised)."""
    return aggregate(acc, capacity) / (weight if weight > 0 else 1e-9)


def nonsharing_allocation(demand: Vector, share: Vector) -> Vector:
    """What a user would hold in its own partition S_i: its demand scaled down until it fits.

    Eq. 2's denominator "AllocationWithoutSharing". Taken per resource, min{d_j, s_j} would give
    Example 4's A at t2 β_{A,cpu} = 55/65 and β_A = 0.846, not Fig. 5's 1.375; tasks need every
    resource at once, so the partition runs demand·min(1, min_j s_j/d_j), which gives 1.375.
    """
    d0, d1 = demand
    if d0 > 0 and d1 > 0:
        scale = min(share[0] / d0, share[1] / d1)
    else:
        scale = share[0] / d0 if d0 > 0 else share[1] / d1 if d1 > 0 else 1.0
    k = min(1.0, scale)
    return (d0 * k, d1 * k)

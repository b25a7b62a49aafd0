"""Sort keys equivalent to Hadoop 2.7 FairScheduler's comparators (memory fair share and DRF).

Each key sorts a schedulable (a queue or an app) exactly as the Java comparator would: needy
ones (usage below min(minShare, demand)) first, by their min-share ratio; the rest by usage
over weight; ties by start time, then name, so replays are exact.
"""

from __future__ import annotations

from typing import Any

from yarnctl.model import Resources

SortKey = tuple[Any, ...]


def fair_share_key(
    usage: Resources, demand: Resources, min_share: Resources, weight: float, start_s: float, name: str
) -> SortKey:
    """FairSharePolicy.FairShareComparator (fair/policies/FairSharePolicy.java), on memory."""
    min_mb = min(min_share.memory_mb, demand.memory_mb)
    if usage.memory_mb < min_mb:
        return (0, usage.memory_mb / max(min_mb, 1), start_s, name)
    return (1, usage.memory_mb / weight if weight > 0 else float("inf"), start_s, name)


def drf_key(
    usage: Resources,
    demand: Resources,
    min_share: Resources,
    weight: float,
    start_s: float,
    name: str,
    cluster: Resources,
) -> SortKey:
    """DominantResourceFairnessComparator: dominant share first, then the next-largest share.

    Hadoop breaks a full tie by start time only (then the stable sort keeps list order); the
    name is added here so the order never depends on how the input was listed.

    With cluster <100 CPU, 100 GB>, user A holding <25 CPU, 50 GB> has shares (0.5, 0.25) and
    user B holding <50 CPU, 50 GB> has (0.5, 0.5): A sorts first ([H-MRF] Ex. 1).
    """
    del demand  # DRF's needy test uses the min share alone
    w = weight if weight > 0 else 1e-9
    cluster_shares = [s / w for s in usage.shares(cluster)]
    # resources in order of this schedulable's cluster share, largest (its dominant) first
    order = sorted(range(len(cluster_shares)), key=lambda i: -cluster_shares[i])
    used, mins = usage.as_tuple(), min_share.as_tuple()
    min_ratios = [used[i] / mins[i] if mins[i] else float("inf") for i in order]
    # "needy if its dominant resource (w.r.t. the cluster) is below its min share for that resource"
    if min_ratios[0] < 1.0:
        return (0, tuple(min_ratios), start_s, name)
    return (1, tuple(cluster_shares[i] for i in order), start_s, name)

"""Hadoop's limit on the share of the cluster ApplicationMasters may hold, applied to every policy.

CapacityScheduler (`yarn.scheduler.capacity.maximum-am-resource-percent`, default 0.1) and
FairScheduler (`maxAMShare`, default 0.5) start an application only while the AMs already running
plus its own stay within a share of the cluster's memory; a policy without such a limit can fill a
small cluster with AMs whose tasks then never fit (eight 2 GB AMs on two 8 GB nodes). The engine
hides the AM asks of the applications beyond the limit from the policy, as CapacityScheduler's
`LeafQueue.activateApplications` keeps them out of its active list: in submit order, stopping at the
first that does not fit, and always letting one AM start when none runs. Memory only, as Hadoop 2.7's
DefaultResourceCalculator compares.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from yarnctl.model import AM_PRIORITY, ANY, ZERO, AppId, ClusterSnapshot, Observation

NO_LIMIT = 1.0
_NONE: frozenset[AppId] = frozenset()


def held_back(snap: ClusterSnapshot, max_am_share: float) -> frozenset[AppId]:
    """Apps whose AM may not start now: their AM asks would take the AMs past `max_am_share` of memory."""
    limit_mb = max_am_share * snap.capacity.memory_mb
    used_mb = snap.am_allocated.memory_mb
    if max_am_share >= NO_LIMIT or used_mb + snap.am_asked.memory_mb <= limit_mb:
        return _NONE  # the common case, O(1): every AM asked for fits
    held: list[AppId] = []
    blocked = False
    for app in snap.iter_pending_apps():
        first = snap.asks[app.id][0]
        if first.priority != AM_PRIORITY or first.resource_name != ANY or app.id in snap.app_allocated:
            continue
        am_mb = first.capability.memory_mb * first.count
        if not blocked and (used_mb + am_mb <= limit_mb or used_mb == 0):
            used_mb += am_mb
        else:
            blocked = True  # FIFO among waiting apps: a small AM does not overtake a large one
            held.append(app.id)
    return frozenset(held)


def without(snap: ClusterSnapshot, apps: frozenset[AppId]) -> ClusterSnapshot:
    """`snap` as a policy should see it: the held-back apps ask for nothing yet."""
    if not apps:
        return snap
    asks = MappingProxyType({a: rows for a, rows in snap.asks.items() if a not in apps})
    return dataclasses.replace(snap, asks=asks)


def observed(obs: Observation, max_am_share: float) -> Observation:
    """`obs` as a tuning policy should see it: held-back apps want nothing yet, as in `decide`.

    Otherwise a policy that reserves for pending demand (DRESS's δ) keeps room for AMs the limit
    will not let start, and the jobs already running cannot use it.
    """
    if obs.snapshot is None:
        return obs
    held = held_back(obs.snapshot, max_am_share)
    if not held:
        return obs
    apps = MappingProxyType({a: dataclasses.replace(u, pending=ZERO, pending_containers=0) if a in held else u
                             for a, u in obs.apps.items()})
    return dataclasses.replace(obs, apps=apps, snapshot=without(obs.snapshot, held))

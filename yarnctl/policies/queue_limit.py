"""A queue's maximum capacity, applied to every policy under a scheduler with queues (the shim on CapacityScheduler).

CapacityScheduler gives a queue nothing that would take it, or any queue above it, past its maximum
capacity (`AbstractCSQueue.canAssignToThisQueue`, checked per container). The shim refuses a decision
row that would (`queue-max`), and rows are applied whole: a policy that knows nothing of queues could
ask for four containers where two fit, be refused at every heartbeat, and starve the job. So the engine
shows a policy each app's asks capped at what its queue still has room for, as `am_limit` hides the
AMs beyond the AM share, and the validator refuses what still overflows (several apps of one queue in
one decision). Memory only, as CapacityScheduler's default DefaultResourceCalculator compares; the
shim has the last word with the scheduler's own calculator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from yarnctl.model import ANY, ZERO, Ask, AppId, ClusterSnapshot, Queue, Resources


def leaf_weights(queues: Mapping[str, Queue]) -> dict[str, float]:
    """Each leaf's absolute capacity in percent: the weight a fair-share policy gives it under the tree."""
    return {q.name: 100.0 * q.abs_capacity for q in queues.values() if q.leaf}


def usage(snap: ClusterSnapshot) -> dict[str, Resources]:
    """What each queue of the tree holds, by path: a parent holds what its leaves do."""
    used = {q.path: ZERO for q in snap.queues.values()}
    for q in snap.queues.values():
        if q.leaf and (held := snap.queue_allocated.get(q.name)) is not None:
            for path in paths(snap, q.name, used):
                used[path] = used[path] + held
    return used


def paths(snap: ClusterSnapshot, queue: str, used: Mapping[str, Resources]) -> list[str]:
    """The path of leaf `queue` and its ancestors' (none for a queue not in the tree)."""
    leaf = snap.queues.get(queue)
    if leaf is None:
        return []
    parts = leaf.path.split(".")
    return [p for i in range(len(parts), 0, -1) if (p := ".".join(parts[:i])) in used]


def over(snap: ClusterSnapshot, used: Mapping[str, Resources], app_id: AppId, more: Resources) -> str | None:
    """Why `more` for `app_id` would take its queue or an ancestor past its maximum capacity, or None."""
    by_path = {q.path: q for q in snap.queues.values()}
    for path in paths(snap, snap.apps[app_id].queue, used):
        q, after = by_path[path], used[path] + more
        if after.memory_mb > q.max_resources.memory_mb:
            return (f"{more} for {app_id} would take queue {path} to {after.memory_mb} MB, past its maximum "
                    f"{q.max_resources.memory_mb} MB ({q.abs_max_capacity:.0%} of the cluster)")
    return None


def room(snap: ClusterSnapshot) -> dict[str, int]:
    """MB each leaf may still take: the least its own and every ancestor's maximum leaves, by leaf name."""
    used = usage(snap)
    by_path = {q.path: q for q in snap.queues.values()}
    return {q.name: max(0, min(by_path[p].max_resources.memory_mb - used[p].memory_mb
                               for p in paths(snap, q.name, used)))
            for q in snap.queues.values() if q.leaf}


def within(snap: ClusterSnapshot) -> ClusterSnapshot:
    """`snap` as a policy should see it: no app asks for more containers than its queue has room for."""
    if not snap.queues or not snap.asks:
        return snap
    left = room(snap)
    changed: dict[AppId, tuple[Ask, ...]] = {}
    for app_id, rows in snap.asks.items():
        app = snap.apps.get(app_id)
        mb = left.get(app.queue) if app is not None else None
        if mb is None:
            continue
        capped = _capped(rows, mb)
        if capped is not rows:
            changed[app_id] = capped
    if not changed:
        return snap
    asks = MappingProxyType({a: changed.get(a, rows) for a, rows in snap.asks.items() if changed.get(a, rows)})
    return dataclasses.replace(snap, asks=asks)


def _capped(rows: tuple[Ask, ...], room_mb: int) -> tuple[Ask, ...]:
    """An app's asks with each priority's ANY count cut to what `room_mb` holds (the priority gone at 0)."""
    out: list[Ask] = []
    dropped: int | None = None  # the priority being left out
    changed = False
    for r in rows:
        if r.resource_name == ANY:
            dropped = None
            fits = room_mb // r.capability.memory_mb if r.capability.memory_mb > 0 else r.count
            if fits < r.count:
                changed = True
                if fits == 0:
                    dropped = r.priority
                    continue
                r = dataclasses.replace(r, count=fits)
        elif dropped == r.priority:
            continue
        out.append(r)
    return tuple(out) if changed else rows

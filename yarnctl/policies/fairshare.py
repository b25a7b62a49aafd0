"""The FairScheduler assignment loop shared by `fair` and `drf`: queue, then app, one container at a time.

FSParentQueue sorts its queues, FSLeafQueue its apps (FSLeafQueue.java:303-340), and the first
app whose highest-priority request fits takes one container; with `assignmultiple` off (the
2.7 default) that ends the heartbeat. Reservations are not modelled: an app whose request
does not fit is skipped for this heartbeat.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from yarnctl.model import AM_PRIORITY, ZERO, App, Assignment, ClusterSnapshot, Decision, NodeId, Resources

KeyFn = Callable[[Resources, Resources, Resources, float, float, str], tuple]


@dataclass(frozen=True, slots=True)
class QueueConf:
    """A FairScheduler queue's weight and min share (allocation file <weight>, <minResources>)."""

    weight: float = 1.0
    min_share: Resources = ZERO


@dataclass(frozen=True, slots=True)
class FairConfig:
    """Fair/DRF parameters; defaults are Hadoop 2.7's."""

    assign_multiple: bool = False  # yarn.scheduler.fair.assignmultiple
    max_assign: int = -1  # yarn.scheduler.fair.max.assign (-1: no limit when assign_multiple)
    max_am_share: float = 0.5  # queueMaxAMShareDefault: AMs may use this much of a queue's fair share
    queues: Mapping[str, QueueConf] = field(default_factory=lambda: MappingProxyType({}))


def serve_fairly(snap: ClusterSnapshot, node_id: NodeId, config: FairConfig, key: KeyFn) -> Decision:
    """Assign containers on `node_id` one at a time to the queue and app that `key` sorts first."""
    available = snap.nodes[node_id].available
    limit = 1 if not config.assign_multiple else (config.max_assign if config.max_assign > 0 else 1 << 30)
    by_queue: dict[str, list[App]] = {}
    for app in snap.iter_pending_apps():
        by_queue.setdefault(app.queue, []).append(app)
    if not by_queue:
        return Decision()
    q_usage: dict[str, Resources] = {}
    for app_id, used in snap.app_allocated.items():
        app = snap.apps.get(app_id)
        if app is not None:
            q_usage[app.queue] = q_usage.get(app.queue, ZERO) + used
    usage: dict[str, Resources] = {}
    heads: dict[str, list] = {}  # app -> [[priority, capability, count left], ...]
    am_room = _AmRoom(snap, config, by_queue)
    granted: dict[tuple[str, int], int] = {}
    assigned = 0
    while assigned < limit and snap.min_allocation.fits_in(available):
        app = _next_app(snap, by_queue, usage, heads, q_usage, config, key, available, am_room)
        if app is None:
            break
        req = heads[app.id][0]
        if req[0] == AM_PRIORITY:
            am_room.take(app, req[1])
        req[2] -= 1
        if req[2] == 0:
            heads[app.id].pop(0)
            if not heads[app.id]:
                by_queue[app.queue].remove(app)
        available = available - req[1]
        usage[app.id] = usage[app.id] + req[1]
        q_usage[app.queue] = q_usage.get(app.queue, ZERO) + req[1]
        granted[(app.id, req[0])] = granted.get((app.id, req[0]), 0) + 1
        assigned += 1
    if not granted:
        return Decision()
    return Decision(tuple(Assignment(a, p, node_id, n) for (a, p), n in granted.items()))


def _head(snap: ClusterSnapshot, heads: dict[str, list], app_id: str) -> list:
    h = heads.get(app_id)
    if h is None:
        h = heads[app_id] = [[r.priority, r.capability, r.count] for r in snap.any_requests(app_id)]
    return h


class _AmRoom:
    """FSLeafQueue.canRunAppAM: a queue's AMs may hold at most max_am_share of its fair share."""

    def __init__(self, snap: ClusterSnapshot, config: FairConfig, by_queue: dict[str, list[App]]) -> None:
        self.snap, self.config, self.by_queue = snap, config, by_queue
        self.used: dict[str, int] | None = None  # AM memory per queue, computed on first need

    def allows(self, app: App, am: Resources) -> bool:
        if self.config.max_am_share < 0:
            return True
        if self.used is None:
            self.used = {}
            for c in self.snap.containers.values():
                owner = self.snap.apps.get(c.app_id)
                if c.is_am and owner is not None:
                    self.used[owner.queue] = self.used.get(owner.queue, 0) + c.resource.memory_mb
        # the queue's instantaneous fair share: the cluster split by weight among active queues
        active = {a.queue for a in self.snap.apps.values()}
        weights = {q: self.config.queues.get(q, QueueConf()).weight for q in active}
        share = self.snap.capacity.memory_mb * weights.get(app.queue, 1.0) / max(sum(weights.values()), 1e-9)
        return self.used.get(app.queue, 0) + am.memory_mb <= self.config.max_am_share * share

    def take(self, app: App, am: Resources) -> None:
        if self.used is not None:
            self.used[app.queue] = self.used.get(app.queue, 0) + am.memory_mb


def _fits(head: list, available: Resources, app: App, am_room: _AmRoom) -> bool:
    priority, capability = head[0], head[1]
    if not capability.fits_in(available):
        return False
    return priority != AM_PRIORITY or am_room.allows(app, capability)


def _next_app(snap, by_queue, usage, heads, q_usage, config, key, available, am_room) -> App | None:
    def q_key(q: str) -> tuple:
        conf = config.queues.get(q, QueueConf())
        demand = q_usage.get(q, ZERO)
        if conf.min_share.memory_mb or conf.min_share.vcores:  # demand only matters below a min share
            demand = demand + sum((snap.pending(a.id) for a in by_queue[q]), ZERO)
        # FSQueue.getStartTime() is 0, so queues tie-break on name alone
        return key(q_usage.get(q, ZERO), demand, conf.min_share, conf.weight, 0.0, q)

    def a_key(app: App) -> tuple:
        used = usage.get(app.id)
        if used is None:
            used = usage[app.id] = snap.allocated(app.id)
        # apps have no min share (FSAppAttempt.getMinShare() is 0), so demand never matters
        return key(used, used, ZERO, 1.0, app.submit_s, app.id)

    for q in sorted((q for q, apps in by_queue.items() if apps), key=q_key):
        apps = by_queue[q]
        # the usual case: the first app in order fits, found in one pass without a full sort
        first = min(apps, key=a_key)
        if _fits(_head(snap, heads, first.id)[0], available, first, am_room):
            return first
        for app in sorted(apps, key=a_key):
            # FSAppAttempt tries its highest priority only; if that does not fit it would reserve
            if _fits(_head(snap, heads, app.id)[0], available, app, am_room):
                return app
    return None

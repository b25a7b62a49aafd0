"""The FairScheduler assignment loop shared by `fair` and `drf`: queue, then app, one container at a time.

FSParentQueue sorts its queues, FSLeafQueue its apps (FSLeafQueue.java:303-340), and the first
app whose highest-priority request fits takes one container; with `assignmultiple` off (the
2.7 default) that ends the heartbeat. Without `reservations` an app whose request does not fit
is skipped for this heartbeat; with them, as FairScheduler does, the first app in order whose
request does not fit the node's free room (but its total) reserves the node, which then serves
nothing else until that request fits (FSAppAttempt.reserve, FairScheduler.attemptScheduling).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from yarnctl.fairness.comparators import SortKey
from yarnctl.model import (AM_PRIORITY, ANY, ZERO, App, AppId, Assignment, ClusterSnapshot, Decision, JournalCursor, NodeId,
                           Queue, Resources)
from yarnctl.policies.base import OpenAsk
from yarnctl.policies.bounds import bounded
from yarnctl.policies.head_lists import HeadLists, Kind, QueueOrder
from yarnctl.policies.queue_limit import leaf_weights
from yarnctl.policies.reservations import Reservations, fulfil
from yarnctl.policies.waiting import Wait, WaitCode, behind, head_ask, wait

KeyFn = Callable[[Resources, Resources, Resources, float, float, str], SortKey]


@dataclass(frozen=True, slots=True)
class QueueConf:
    """A FairScheduler queue's weight and min share (allocation file <weight>, <minResources>)."""

    weight: float = bounded(1.0, 0)
    min_share: Resources = ZERO


@dataclass(frozen=True, slots=True)
class FairConfig:
    """Fair/DRF parameters; defaults are Hadoop 2.7's (under a queue tree, a leaf weighs its capacity: TreeWeights)."""

    assign_multiple: bool = False  # yarn.scheduler.fair.assignmultiple
    max_assign: int = bounded(-1, -1)  # yarn.scheduler.fair.max.assign (-1: no limit when assign_multiple)
    max_am_share: float = bounded(0.5, 0, 1, also=(-1,))  # queueMaxAMShareDefault: AMs may use this much of a queue's fair share
    # FairScheduler always reserves; off by default until the paper reproductions are re-measured with it
    reservations: bool = False
    queues: Mapping[str, QueueConf] = field(default_factory=lambda: MappingProxyType({}))


class TreeWeights:
    """A FairConfig under the scheduler's queue tree: each leaf weighs its absolute capacity in percent.

    A queue named in the parameters' `queues` replaces its tree entry whole (weight 1 unless it gives one),
    so under a tree give weights on the same percent scale, e.g. `{a: {weight: 70, min_share: ...}}`.
    """

    def __init__(self, config: FairConfig) -> None:
        self.config = config
        self._tree: Mapping[str, Queue] | None = None  # the store keeps one mapping until the tree changes
        self._merged = config

    def of(self, snap: ClusterSnapshot) -> FairConfig:
        """The config to schedule `snap` with."""
        if not snap.queues:
            return self.config
        if snap.queues is not self._tree:
            merged = {q: QueueConf(weight=w) for q, w in leaf_weights(snap.queues).items()}
            merged.update(self.config.queues)
            self._tree, self._merged = snap.queues, replace(self.config, queues=MappingProxyType(merged))
        return self._merged


class AppKeys:
    """Each app's sort key with the usage it was computed from, kept across heartbeats: most apps' usage did not change."""

    def __init__(self) -> None:
        self.cluster = ZERO
        self.keys: dict[AppId, tuple[Resources, float, SortKey]] = {}

    def get(self, app: App, used: Resources, key: KeyFn, cluster: Resources) -> SortKey:
        """`key` of an app holding `used` (apps have no min share and weight 1, FSAppAttempt's)."""
        if cluster != self.cluster:
            self.cluster, self.keys = cluster, {}  # DRF's shares are of the cluster: a resize changes every key
        known = self.keys.get(app.id)
        if known is not None and known[0] == used and known[1] == app.submit_s:
            return known[2]
        if len(self.keys) > 65536:
            self.keys.clear()  # finished apps are never asked about again: bounded all the same
        k = key(used, used, ZERO, 1.0, app.submit_s, app.id)
        self.keys[app.id] = (used, app.submit_s, k)
        return k


class FairOrder(QueueOrder):
    """Every app of each queue in `key` order, kept across heartbeats from the store's journal instead of re-sorted.

    Apps without asks stay listed (a view may hide a held-back app's asks, and its return is in no
    journal): the heartbeat skips them. Sorting a superset and skipping keeps the pending apps' order.
    `heads` holds the same order for the store's own snapshots, asking apps only, by head ask size.
    """

    def __init__(self) -> None:
        super().__init__()
        self.cursor = JournalCursor()
        self.heads: HeadLists[str] = HeadLists()  # the same order, of the asking apps only, by head ask size

    def sync(self, snap: ClusterSnapshot, keys: AppKeys, key: KeyFn) -> None:
        """Bring the order up to `snap`: re-key the apps touched since the last call, or rebuild."""
        # keys are computed against the cluster's size: a resized cluster re-keys every app
        with self.cursor.read(snap, equal=snap.capacity) as touched:
            if touched is None:
                self.clear()
                touched = list(snap.apps)
            for app_id in dict.fromkeys(touched):
                self.unlist(app_id)
                app = snap.apps.get(app_id)
                if app is not None:
                    self.put(app_id, app.queue, keys.get(app, snap.allocated(app_id), key, snap.capacity))


def serve_fairly(snap: ClusterSnapshot, node_id: NodeId, config: FairConfig, key: KeyFn,
                 reserved: Reservations | None = None, keys: AppKeys | None = None,
                 order: FairOrder | None = None) -> Decision:
    """Assign containers on `node_id` one at a time to the queue and app that `key` sorts first."""
    if config.reservations and reserved is not None and node_id in reserved:
        held = fulfil(snap, node_id, reserved)
        if held is not None:
            return held  # FairScheduler.attemptScheduling: a reserved node serves its reservation only
    limit = 1 if not config.assign_multiple else (config.max_assign if config.max_assign > 0 else 1 << 30)
    if (order is not None and keys is not None and limit == 1 and not config.reservations and snap.journal is not None
            and all(q.min_share.is_zero() for q in config.queues.values())):
        return _first_fit(snap, node_id, config, key, keys, order)  # Hadoop's defaults: the kept order
    heartbeat = _FairRound(snap, config, key, snap.nodes[node_id].available, snap.nodes[node_id].capacity,
                           keys if keys is not None else AppKeys())
    granted: dict[tuple[str, int], int] = {}
    given = 0
    while given < limit:
        ask = heartbeat.take_one()
        if ask is None:
            if heartbeat.reserving is not None and reserved is not None:
                reserved[node_id] = heartbeat.reserving
            break
        granted[(ask.app_id, ask.priority)] = granted.get((ask.app_id, ask.priority), 0) + 1
        given += 1
    if not granted:
        return Decision()
    return Decision(tuple(Assignment(a, p, node_id, n) for (a, p), n in granted.items()))


def why_waiting(snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision, config: FairConfig,
                reserved: Reservations, policy: str, share: Callable[[Resources], float]) -> Wait:
    """A reserved node, the queue's maxAMShare, or the app served first holding less (`share` of the cluster)."""
    held = reserved.get(node_id) if config.reservations else None
    if held is not None and held[0] != app_id:
        return wait(WaitCode.RESERVED, f"{node_id} is reserved for {held[0]}'s priority {held[1]} request",
                    node=node_id, reserved_for=held[0])
    app, ask = snap.apps[app_id], head_ask(snap, app_id)
    if ask is not None and ask.priority == AM_PRIORITY and not _AmRoom(snap, config).allows(app, ask.capability):
        return wait(WaitCode.AM_LIMIT, f"queue {app.queue}'s AMs would pass maxAMShare ({config.max_am_share:.0%} "
                    f"of its fair share)", queue=app.queue, max_am_share=config.max_am_share)
    served = next((a.app_id for a in decision.assignments if a.app_id != app_id), None)
    if served is not None and served in snap.apps:
        mine, theirs = share(snap.allocated(app_id)), share(snap.allocated(served))
        other = snap.apps[served]
        weights = ""
        if other.queue != app.queue:
            w = {q: config.queues.get(q, QueueConf()).weight for q in (app.queue, other.queue)}
            weights = f"; queue {app.queue} weighs {w[app.queue]:g}, {other.queue} {w[other.queue]:g}"
        return wait(WaitCode.FAIR_SHARE, f"{policy} served {served} first: it holds {theirs:.1%} of the cluster, "
                    f"{app_id} {mine:.1%}{weights}", served=served, share=mine, served_share=theirs)
    return behind(snap, node_id, app_id, decision, policy)


def _queue_key(config: FairConfig, key: KeyFn, q: str, used: Resources, demand: Resources) -> SortKey:
    """A queue's place among queues, with its configured weight and min share."""
    conf = config.queues.get(q, QueueConf())
    # FSQueue.getStartTime() is 0, so queues tie-break on name alone
    return key(used, demand, conf.min_share, conf.weight, 0.0, q)


def _first_fit(snap: ClusterSnapshot, node_id: NodeId, config: FairConfig, key: KeyFn, keys: AppKeys,
               order: FairOrder) -> Decision:
    """`_FairRound.take_one` for one container from the kept order: queues by key, then the first app that fits."""
    node = snap.nodes[node_id]
    available = node.available
    if not snap.min_allocation.fits_in(available):
        return Decision()
    am_room = _AmRoom(snap, config)

    def by_usage(q: str) -> SortKey:
        used = snap.queue_allocated.get(q, ZERO)
        return _queue_key(config, key, q, used, used)  # no min share: demand does not matter

    def takes(kind: Kind, app_id: AppId) -> bool:
        # the AM share is the queue's, whatever the app: one list's AMs all may run, or none
        return kind[0].fits_in(available) and (not kind[1] or am_room.allows(snap.apps[app_id], kind[0]))

    heads = order.heads
    # keys are computed against the cluster's size: a resized cluster re-keys every app
    if heads.sync(snap, lambda app: app.queue, lambda app: keys.get(app, snap.allocated(app.id), key, snap.capacity),
                  equal=snap.capacity):
        if heads.none_fits(available):
            return Decision()  # no head ask fits: nothing to sort
        for q in sorted(heads.groups, key=by_usage):  # queues with asking apps: the others would give nothing
            found = heads.first(q, takes)
            if found is not None:
                return Decision((Assignment(found[0], found[1], node_id, 1),))
        return Decision()
    order.sync(snap, keys, key)  # a view: walk the whole kept order
    for q in sorted(order.by_queue, key=by_usage):  # a queue's list goes with its last app
        for _, app_id in order.by_queue[q]:
            asks = snap.asks.get(app_id)
            if asks is None:
                continue  # nothing asked, or held back by the AM-share limit
            head = next((r for r in asks if r.resource_name == ANY), None)
            if head is None or not head.capability.fits_in(available):
                continue
            app = snap.apps[app_id]
            if head.priority == AM_PRIORITY and not am_room.allows(app, head.capability):
                continue
            return Decision((Assignment(app_id, head.priority, node_id, 1),))
    return Decision()


class _FairRound:
    """The state of one heartbeat's assignment loop: usage so far, asks left, room left."""

    def __init__(self, snap: ClusterSnapshot, config: FairConfig, key: KeyFn, available: Resources,
                 total: Resources, keys: AppKeys) -> None:
        self.snap, self.config, self.key, self.available, self.total = snap, config, key, available, total
        self.keys = keys
        self.reserving: tuple[AppId, int] | None = None  # set when the app next in order reserves the node
        self.by_queue: dict[str, list[App]] = {}
        for app in snap.iter_pending_apps():
            self.by_queue.setdefault(app.queue, []).append(app)
        self.q_usage: dict[str, Resources] = dict(snap.queue_allocated)
        self.usage: dict[str, Resources] = {}
        self.asks: dict[str, list[OpenAsk]] = {}  # built lazily: most apps are never looked at
        self.am_room = _AmRoom(snap, config)

    def take_one(self) -> OpenAsk | None:
        """Give one container to the first app in fair order whose head ask fits; None if none does."""
        # FairScheduler goes through the apps even on a full node: the first in order reserves it
        if not self.config.reservations and not self.snap.min_allocation.fits_in(self.available):
            return None
        app = self._next_app()
        if app is None:
            return None
        asks = self.asks[app.id]
        ask = asks[0]
        if ask.priority == AM_PRIORITY:
            self.am_room.take(app, ask.capability)
        ask.left -= 1
        if ask.left == 0:
            asks.pop(0)
            if not asks:
                self.by_queue[app.queue].remove(app)
        self.available = self.available - ask.capability
        self.usage[app.id] = self.usage[app.id] + ask.capability
        self.q_usage[app.queue] = self.q_usage.get(app.queue, ZERO) + ask.capability
        return ask

    def _head(self, app: App) -> OpenAsk:
        asks = self.asks.get(app.id)
        if asks is None:
            asks = self.asks[app.id] = OpenAsk.of(self.snap, app.id)
        return asks[0]

    def _fits(self, app: App) -> bool:
        ask = self._head(app)
        if not ask.capability.fits_in(self.available):
            return False
        return ask.priority != AM_PRIORITY or self.am_room.allows(app, ask.capability)

    def _queue_key(self, q: str) -> SortKey:
        used = demand = self.q_usage.get(q, ZERO)
        if not self.config.queues.get(q, QueueConf()).min_share.is_zero():  # demand only matters below a min share
            demand = demand + sum((self.snap.pending(a.id) for a in self.by_queue[q]), ZERO)
        return _queue_key(self.config, self.key, q, used, demand)

    def _app_key(self, app: App) -> SortKey:
        used = self.usage.get(app.id)
        if used is None:
            used = self.usage[app.id] = self.snap.allocated(app.id)
        # apps have no min share (FSAppAttempt.getMinShare() is 0), so demand never matters
        return self.keys.get(app, used, self.key, self.snap.capacity)

    def _next_app(self) -> App | None:
        for q in sorted((q for q, apps in self.by_queue.items() if apps), key=self._queue_key):
            apps = self.by_queue[q]
            # the usual case: the first app in order fits, found in one pass without a full sort
            first = min(apps, key=self._app_key)
            if self._fits(first):
                return first
            for app in sorted(apps, key=self._app_key):
                # FSAppAttempt tries its highest priority only; if that does not fit it reserves the node
                if self._fits(app):
                    return app
                if self.config.reservations and self._reserves(app):
                    self.reserving = (app.id, self._head(app).priority)
                    return None
        return None

    def _reserves(self, app: App) -> bool:
        """FSAppAttempt.assignContainer: a head request that fits the node's total, not its free room, reserves it."""
        ask = self._head(app)
        if ask.priority == AM_PRIORITY and not self.am_room.allows(app, ask.capability):
            return False  # an AM the queue may not run yet is skipped, not reserved for
        return ask.capability.fits_in(self.total)


class _AmRoom:
    """FSLeafQueue.canRunAppAM: a queue's AMs may hold at most max_am_share of its fair share."""

    def __init__(self, snap: ClusterSnapshot, config: FairConfig) -> None:
        self.snap, self.config = snap, config
        self.used: dict[str, int] | None = None  # AM memory per queue, computed on first need

    def allows(self, app: App, am: Resources) -> bool:
        """True when the queue's AMs stay within their share with `am` added."""
        if self.config.max_am_share < 0:
            return True
        if self.used is None:
            self.used = {q: am.memory_mb for q, am in self.snap.queue_am.items()}
        # the queue's instantaneous fair share: the cluster split by weight among active queues
        active = {a.queue for a in self.snap.apps.values()}
        weights = {q: self.config.queues.get(q, QueueConf()).weight for q in active}
        share = self.snap.capacity.memory_mb * weights.get(app.queue, 1.0) / max(sum(weights.values()), 1e-9)
        return self.used.get(app.queue, 0) + am.memory_mb <= self.config.max_am_share * share

    def take(self, app: App, am: Resources) -> None:
        """Count an AM just assigned."""
        if self.used is not None:
            self.used[app.queue] = self.used.get(app.queue, 0) + am.memory_mb

"""Capacity: Hadoop 2.7 CapacityScheduler with leaf queues under root and FIFO inside each.

The queue with the lowest used/guaranteed capacity goes first (ParentQueue's queueComparator),
skipping queues at their maximum capacity or whose head apps' users are at their user limit;
inside a leaf queue apps are served in submit order (LeafQueue.activeApplications). Apps are
activated while AM resources stay within `max_am_resource_percent` of the queue. At the root,
an off-switch assignment ends the heartbeat (ParentQueue.assignContainers in 2.7), so ANY
asks get one container per node heartbeat unless `multiple_off_switch`. An app that names hosts (a
map's split on HDFS; on file:// every split names `localhost`, which every NM of the light local cluster
is) is served one container per call, node-local or rack-local ones not ending the heartbeat, with
CapacityScheduler's delay scheduling (`node_locality_delay`, policies/locality.py). The simulator's
workloads ask ANY only, so there it is the one-per-heartbeat path.

Departures, on purpose or not yet modelled: a container must fit in memory *and* vcores (the
shim counts both; stock 2.7 with DefaultResourceCalculator checks memory only), queue usage is
measured in memory unless `dominant`; the AM limit uses guaranteed capacity only and limits are
not rounded to the minimum allocation. Reservations (`reservations`, off by default until the paper
reproductions are re-measured with them; stock 2.7 always reserves): the first app in order whose
next request does not fit the node's free room reserves the node while it needs more containers at
that priority than it holds reservations (LeafQueue.shouldAllocOrReserveNewContainer, without the
re-reservation starvation term), and the node serves only that request until it fits, then the rest
of the node is scheduled. A reservation counts as used by its queue and user until then; an app past
a limit only by its own reservations may go on if it gives one up (reservations-continue-look-all-nodes).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from yarnctl.model import (ANY, ZERO, App, AppId, Ask, Assignment, ClusterSnapshot, Decision, JournalCursor, Locality,
                           Node, NodeId, Resources)
from yarnctl.policies.am_limit import NO_LIMIT
from yarnctl.policies.base import fill_app
from yarnctl.policies.bounds import bounded
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.locality import Place, may_assign, place
from yarnctl.policies.waiting import Wait, WaitCode, head_ask, wait
from yarnctl.policies.reservations import Reservations, fulfil, held_for


@dataclass(frozen=True, slots=True)
class CapacityQueue:
    """One leaf queue: capacity and maximum capacity in percent of the cluster."""

    capacity: float = bounded(100.0, 0, 100)
    maximum_capacity: float = bounded(100.0, 0, 100)
    user_limit_factor: float = bounded(1.0, 0, lo_open=True)
    minimum_user_limit_percent: float = bounded(100.0, 0, 100, lo_open=True)


@dataclass(frozen=True, slots=True)
class CapacityConfig:
    """CapacityScheduler parameters; unlisted queues share what listed ones leave, equally.

    Under a scheduler with queues the leaves of its tree (`ClusterSnapshot.queues`) are listed first, with
    their absolute capacities, maximum capacities and user limits; `queues` here overrides them by name.
    """

    queues: Mapping[str, CapacityQueue] = field(default_factory=lambda: MappingProxyType({}))
    max_am_resource_percent: float = bounded(0.1, 0, 1)  # yarn.scheduler.capacity.maximum-am-resource-percent
    multiple_off_switch: bool = False
    dominant: bool = False  # DominantResourceCalculator instead of the memory-only default
    reservations: bool = False
    node_locality_delay: int = bounded(-1, -1)  # yarn.scheduler.capacity.node-locality-delay: missed heartbeats before rack-local


class Capacity(PolicyBase):
    """Guaranteed queue capacities, elastic up to each queue's maximum, FIFO within a queue."""

    name = "capacity"
    max_am_share = NO_LIMIT  # each queue has its own (max_am_resource_percent), as LeafQueue.activateApplications
    Config = CapacityConfig

    def __init__(self, config: CapacityConfig = CapacityConfig()) -> None:
        self.config = config
        self.reserved: Reservations = {}  # the nodes reserved for an app's request (config.reservations)
        # (app, priority) -> node heartbeats it was offered and took nothing local at (apps that name hosts)
        self.missed: dict[tuple[AppId, int], int] = {}
        self._local_taken: dict[tuple[AppId, int], int] = {}  # node-local containers given in this heartbeat
        self._app_reserved: dict[AppId, Resources] = {}  # each reserving app's reserved total, this heartbeat
        # the queue shares of the last (apps, queue tree) read: the store replaces either mapping when it changes
        self._confs: tuple[object, object, dict[str, CapacityQueue]] | None = None
        self._active = KeptActivation()

    def _queue_confs(self, snap: ClusterSnapshot) -> dict[str, CapacityQueue]:
        # the scheduler's own tree when it has one (the shim on CapacityScheduler), its leaves' absolute
        # shares; queues named in the parameters override it
        kept = self._confs
        if kept is not None and kept[0] is snap.apps and kept[1] is snap.queues:
            return kept[2]
        confs = {q.name: CapacityQueue(100.0 * q.abs_capacity, 100.0 * q.abs_max_capacity, q.user_limit_factor,
                                       float(q.user_limit_percent))
                 for q in snap.queues.values() if q.leaf} if snap.queues else {}
        confs.update(self.config.queues)
        unlisted = sorted({a.queue for a in snap.apps.values()} - set(confs))
        if unlisted:
            left = max(0.0, 100.0 - sum(q.capacity for q in confs.values()))
            for q in unlisted:
                confs[q] = CapacityQueue(capacity=left / len(unlisted))
        self._confs = snap.apps, snap.queues, confs
        return confs

    def _amount(self, r: Resources, cluster: Resources) -> float:
        return r.dominant_share(cluster) if self.config.dominant else r.shares(cluster)[0]

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """Serve the least-used queues first, FIFO inside each, within capacity limits."""
        fulfilled: list[Assignment] = []
        if self.config.reservations and node_id in self.reserved:
            held = fulfil(snap, node_id, self.reserved)
            if held is not None and not held.assignments:
                return held  # CapacityScheduler.allocateContainersToNode: a node still reserved serves nothing else
            if held is not None:
                # fulfilled, the node has no reservation left, and CapacityScheduler schedules the rest of it
                fulfilled = list(held.assignments)
        node = snap.nodes[node_id]
        confs = self._queue_confs(snap)
        q_used = dict(snap.queue_allocated)
        user_used = dict(snap.user_allocated)
        self._app_reserved = self._charge_reservations(snap, q_used, user_used)
        active = self._active_apps(snap, confs)
        available = node.available
        out: list[Assignment] = []
        taken: dict[tuple[str, int], int] = {}
        self._local_taken = {}
        if len(self.missed) > 2 * len(snap.apps):
            self.missed = {k: v for k, v in self.missed.items() if k[0] in snap.apps}
        ended = False
        stale: set[str] = set()  # queues that served this heartbeat: their apps without asks left go
        got = fulfilled
        while got or (snap.min_allocation.fits_in(available) and not ended):
            if not got:
                # filtered only when the loop goes on: after an off-switch container (the default) it ends
                for q in stale:
                    active[q] = [x for x in active[q] if _remaining(snap, x, taken)]
                stale.clear()
                got, off_switch = self._assign_once(snap, node, confs, active, q_used, user_used, available, taken)
                if not got:
                    break
                ended = off_switch and not self.config.multiple_off_switch
            for a in got:
                taken[(a.app_id, a.priority)] = taken.get((a.app_id, a.priority), 0) + a.count
                cap = _capability(snap, a)
                app = snap.apps[a.app_id]
                available = available - cap * a.count
                q_used[app.queue] = q_used.get(app.queue, ZERO) + cap * a.count
                key = (app.queue, app.user)
                user_used[key] = user_used.get(key, ZERO) + cap * a.count
                stale.add(app.queue)
            out.extend(got)
            got = []
        return Decision(tuple(_merge(out))) if out else Decision()

    def _assign_once(
        self,
        snap: ClusterSnapshot,
        node: Node,
        confs: dict[str, CapacityQueue],
        active: dict[str, list[App]],
        q_used: dict[str, Resources],
        user_used: dict[tuple[str, str], Resources],
        available: Resources,
        taken: dict[tuple[str, int], int],
    ) -> tuple[list[Assignment], bool]:
        """The next assignment in queue order, and whether it was off-switch (which ends the heartbeat)."""
        cluster = snap.capacity

        def used_capacity(q: str) -> float:
            guaranteed = confs[q].capacity / 100.0
            used = self._amount(q_used.get(q, ZERO), cluster)
            return used / guaranteed if guaranteed > 0 else float("inf")

        for q in sorted(active, key=lambda q: (used_capacity(q), q)):
            conf = confs[q]
            users = {a.user for a in active[q]}
            for app in active[q]:
                req = next((r for r in snap.any_asks(app.id)
                            if r.count > taken.get((app.id, r.priority), 0)), None)
                if req is None:
                    continue
                new_total = q_used.get(q, ZERO) + req.capability
                limit = conf.maximum_capacity / 100.0
                held = self._app_reserved.get(app.id)
                # how much of the app's reservations must go for it to be placed here (0.0: none); with
                # reservations-continue-look-all-nodes an app may pass a limit only by what it holds reserved
                need = 0.0
                if self._amount(new_total, cluster) > limit + 1e-9:
                    # AbstractCSQueue.canAssignToThisQueue: under the queue's maximum without its reservations
                    if held is None or not self._amount(new_total - held, cluster) < limit:
                        break  # the queue would pass its maximum capacity
                    need = self._amount(new_total, cluster) - limit
                user_limit = self._user_limit(conf, q_used.get(q, ZERO), req.capability, len(users), cluster)
                # LeafQueue.canAssignToUser: "a > check, not a >= check", without the current
                # request, so a user may pass the limit by one container
                user_now = user_used.get((q, app.user), ZERO)
                if self._amount(user_now, cluster) > user_limit + 1e-9:
                    # LeafQueue.assignToUser: at most the limit without the app's reservations
                    if held is None or self._amount(user_now - held, cluster) > user_limit + 1e-9:
                        continue
                    need = self._amount(user_now, cluster) - user_limit  # amountNeededUnreserve, set last
                # most runs hold no reservation: keep the unreserve search off their per-app path
                give_up = self._to_unreserve(snap, app, req, node.id, need, taken) if self.reserved else None
                if give_up == "":
                    continue  # it would have to give up a reservation it does not hold (findNodeToUnreserve)
                # most apps ask ANY only (every simulated one): keep the locality work off their path
                located = any(r.resource_name != ANY for r in snap.asks.get(app.id, ()))
                where = self._place(snap, app.id, req.priority, node.id, taken) if located else None
                if where is not None and where.named:  # it names hosts: one container per call, delay scheduling
                    if where.skipped:
                        continue
                    key = (app.id, req.priority)
                    self.missed[key] = self.missed.get(key, 0) + 1  # LeafQueue.addSchedulingOpportunity
                    if not may_assign(where, self.missed[key], self.config.node_locality_delay, len(snap.nodes)):
                        continue  # not here yet: the next app (no out-of-order priorities within this one)
                    if not req.capability.fits_in(available):
                        # an app past a limit but for its reservations reserves no more ("needToUnreserve")
                        if self.config.reservations and not need and self._reserve(snap, node, app, available, taken):
                            return [], False
                        continue
                    if where.level is not Locality.ANY:
                        del self.missed[key]  # resetSchedulingOpportunities: not after an off-switch one
                        if where.level is Locality.NODE:
                            self._local_taken[key] = self._local_taken.get(key, 0) + 1
                    self._unreserve(snap, app, give_up, q_used, user_used)
                    return [Assignment(app.id, req.priority, node.id, 1)], where.level is Locality.ANY
                got, _ = fill_app(snap, app, node, available,
                                  limit=None if self.config.multiple_off_switch else 1, taken=taken)
                if got:
                    self._unreserve(snap, app, give_up, q_used, user_used)
                    return got, True
                if self.config.reservations and not need and self._reserve(snap, node, app, available, taken):
                    return [], False  # a reservation ends the heartbeat, as nothing to assign does
        return [], False

    def _place(self, snap: ClusterSnapshot, app_id: AppId, priority: int, node_id: NodeId,
               taken: dict[tuple[str, int], int]) -> Place:
        """`place` less what this heartbeat gave already: node-local from the host's count, all from rack and ANY."""
        p = place(snap, app_id, priority, node_id)
        given = taken.get((app_id, priority), 0)
        return dataclasses.replace(p, on_host=max(0, p.on_host - self._local_taken.get((app_id, priority), 0)),
                                   on_rack=max(0, p.on_rack - given), anywhere=max(0, p.anywhere - given))

    def _user_limit(self, conf: CapacityQueue, q_used: Resources, ask: Resources, users: int,
                    cluster: Resources) -> float:
        # LeafQueue.computeUserLimit: an equal split, at least minimum-user-limit-percent, at most capacity x
        # user-limit-factor
        q_cap = conf.capacity / 100.0
        current = max(q_cap, self._amount(q_used, cluster) + self._amount(ask, cluster))
        return min(max(current / max(users, 1), current * conf.minimum_user_limit_percent / 100.0),
                   q_cap * conf.user_limit_factor)

    def why_waiting(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait:
        """A reserved node, the queue's AM limit, its maximum capacity or the user limit, else PolicyBase's reason."""
        held = self.reserved.get(node_id) if self.config.reservations else None
        if held is not None and held[0] != app_id:
            return wait(WaitCode.RESERVED, f"{node_id} is reserved for {held[0]}'s priority {held[1]} request",
                        node=node_id, reserved_for=held[0])
        app, ask = snap.apps[app_id], head_ask(snap, app_id)
        if ask is None:
            return super().why_waiting(snap, node_id, app_id, decision)
        confs = self._queue_confs(snap)
        q, conf, cluster = app.queue, confs[app.queue], snap.capacity
        active = self._active_apps(snap, confs).get(q, [])
        if app not in active:
            return wait(WaitCode.AM_LIMIT, f"queue {q} has not activated it: its AMs would pass "
                        f"{self.config.max_am_resource_percent:.0%} of the queue (maximum-am-resource-percent)",
                        queue=q, max_am_resource_percent=self.config.max_am_resource_percent)
        used_by_queue, used_by_user = dict(snap.queue_allocated), dict(snap.user_allocated)
        reserved_by = self._charge_reservations(snap, used_by_queue, used_by_user)  # counted as used, as decide does
        q_used, q_allocated = used_by_queue.get(q, ZERO), snap.queue_allocated.get(q, ZERO)
        for x in active[:active.index(app) + 1]:  # _assign_once stops the queue at the first ask past its maximum
            head = head_ask(snap, x.id)
            after = self._amount(q_used + head.capability, cluster) if head is not None else 0.0
            limit = conf.maximum_capacity / 100.0
            if after > limit + 1e-9 and not (
                    head is not None and x.id in reserved_by
                    and self._amount(q_used + head.capability - reserved_by[x.id], cluster) < limit):
                first = "its ask" if x is app else f"the ask of {x.id}, ahead of it in the queue,"
                without = self._amount(q_allocated + head.capability, cluster) if head is not None else 0.0
                held_note = " (its reserved nodes counted as used)" if without <= limit + 1e-9 else ""
                return wait(WaitCode.QUEUE_MAX, f"queue {q} would pass its maximum capacity{held_note}: {after:.1%} of "
                            f"the cluster with {first} maximum {limit:.1%}", queue=q, after=after, maximum=limit)
        users = {a.user for a in active}
        limit = self._user_limit(conf, q_used, ask.capability, len(users), cluster)
        user_now = used_by_user.get((q, app.user), ZERO)
        mine = self._amount(user_now, cluster)
        exempt = app_id in reserved_by and self._amount(user_now - reserved_by[app_id], cluster) <= limit + 1e-9
        if mine > limit + 1e-9 and not exempt:
            return wait(WaitCode.USER_LIMIT, f"user {app.user} holds {mine:.1%} of the cluster in queue {q}, over its "
                        f"user limit {limit:.1%} ({len(users)} user{'s' if len(users) != 1 else ''} asking)",
                        user=app.user, queue=q, used=mine, limit=limit)
        where = place(snap, app_id, ask.priority, node_id)
        missed = self.missed.get((app_id, ask.priority), 0)
        # the decision at this node counted its opportunity already
        if where.named and not where.skipped and not may_assign(where, missed, self.config.node_locality_delay,
                                                                len(snap.nodes)):
            needed = (f"more than min(node-locality-delay {self.config.node_locality_delay}, {len(snap.nodes)} nodes) "
                      "for a rack-local container, or " if where.level is Locality.RACK else "")
            factor = min(where.named / len(snap.nodes), 1.0)
            return wait(WaitCode.LOCALITY, f"delay scheduling: its priority {ask.priority} ask names hosts, none of "
                        f"them {node_id}; it has passed up {missed} node heartbeat(s) and waits for {needed}more than "
                        f"{where.anywhere} x {factor:.2f} for an off-switch one", node=node_id, missed=missed,
                        delay=self.config.node_locality_delay)
        return super().why_waiting(snap, node_id, app_id, decision)

    def _charge_reservations(self, snap: ClusterSnapshot, q_used: dict[str, Resources],
                             user_used: dict[tuple[str, str], Resources]) -> dict[str, Resources]:
        """Count held reservations as used by their queue and user, as LeafQueue charges them in advance.

        Returns each reserving app's reserved total (the continue-looking exemption reads it).
        """
        mine: dict[str, Resources] = {}
        for app_id, priority in self.reserved.values():
            app = snap.apps.get(app_id)
            ask = next((r for r in snap.any_asks(app_id) if r.priority == priority), None)
            if app is None or ask is None:
                continue  # void: fulfil drops it at the node's next heartbeat
            cap = ask.capability
            q_used[app.queue] = q_used.get(app.queue, ZERO) + cap
            user_used[(app.queue, app.user)] = user_used.get((app.queue, app.user), ZERO) + cap
            mine[app_id] = mine.get(app_id, ZERO) + cap
        return mine

    def _to_unreserve(self, snap: ClusterSnapshot, app: App, req: Ask, node_id: NodeId, need: float,
                      taken: dict[tuple[str, int], int]) -> str | None:
        """The node whose reservation a container for `req` here must free: None if none must, "" if none can.

        LeafQueue.assignContainer with reservations-continue-look-all-nodes: past a limit but for its
        reservations (`need` > 0, the share it must give back), or with reservations at that priority already
        covering every container it still needs (shouldAllocOrReserveNewContainer false), the app must
        release one of them at that priority at least as large (findNodeToUnreserve), or get nothing here.
        """
        held = sorted(n for n, h in self.reserved.items() if h == (app.id, req.priority) and n != node_id)
        covered = bool(held) and req.count - taken.get((app.id, req.priority), 0) <= len(held)
        if need <= 0 and not covered:
            return None
        if not held or self._amount(req.capability, snap.capacity) < need - 1e-12:
            return ""
        return held[0]

    def _unreserve(self, snap: ClusterSnapshot, app: App, node_id: str | None,
                   q_used: dict[str, Resources], user_used: dict[tuple[str, str], Resources]) -> None:
        """Release the app's reservation of `node_id` (if any) and take its charge off the queue and user."""
        if node_id is None:
            return
        _, priority = self.reserved.pop(node_id)
        cap = next(r.capability for r in snap.any_asks(app.id) if r.priority == priority)
        q_used[app.queue] = q_used.get(app.queue, ZERO) - cap
        user_used[(app.queue, app.user)] = user_used.get((app.queue, app.user), ZERO) - cap
        self._app_reserved[app.id] = self._app_reserved.get(app.id, ZERO) - cap

    def _reserve(self, snap: ClusterSnapshot, node: Node, app: App, available: Resources,
                 taken: dict[tuple[str, int], int]) -> bool:
        """Reserve `node` for the app's next request if it fits the empty node but not the room left."""
        req = next((r for r in snap.any_asks(app.id) if r.count > taken.get((app.id, r.priority), 0)), None)
        if (req is None or req.capability.fits_in(available) or not req.capability.fits_in(node.capacity)
                or node.id in self.reserved):
            return False
        if req.count - taken.get((app.id, req.priority), 0) <= held_for(self.reserved, app.id, req.priority):
            return False  # it already holds a reservation for each container it still needs
        self.reserved[node.id] = (app.id, req.priority)
        return True

    def _active_apps(self, snap: ClusterSnapshot, confs: dict[str, CapacityQueue]) -> dict[str, list[App]]:
        """Apps each queue may serve: those whose AM runs, then pending ones within the AM limit (a fresh dict)."""
        return self._active.get(snap, confs, self._activate)

    def _activate(self, snap: ClusterSnapshot, confs: dict[str, CapacityQueue]) -> dict[str, list[App]]:
        """`_active_apps` computed afresh: every pending app in submit order."""
        am_used = dict(snap.queue_am)  # a queue with an AM running has an active app
        has_am = snap.app_am
        active: dict[str, list[App]] = {}
        for app in snap.pending_apps():
            q = app.queue
            lst = active.setdefault(q, [])
            if app.id in has_am:
                lst.append(app)
                continue
            am_req = next((r for r in snap.any_asks(app.id) if r.priority == 0), None)
            if am_req is None:  # no AM to place (unmanaged AM or already running)
                lst.append(app)
                continue
            limit = self._amount(snap.capacity, snap.capacity) * confs[q].capacity / 100.0 * self.config.max_am_resource_percent
            used = am_used.get(q, ZERO)
            # LeafQueue.activateApplications: at least one app is always active
            if q not in am_used or self._amount(used + am_req.capability, snap.capacity) <= limit + 1e-9:
                lst.append(app)
                am_used[q] = used + am_req.capability
        return active


Activation = tuple[bool, Resources | None] | None


def _activation(snap: ClusterSnapshot, app_id: AppId) -> Activation:
    """What `_activate` reads of one app: None if it asks nothing, else whether its AM runs and its AM ask."""
    asks = snap.asks.get(app_id)
    if asks is None:
        return None
    return app_id in snap.app_am, next((r.capability for r in asks if r.resource_name == ANY and r.priority == 0), None)


class KeptActivation:
    """`Capacity._active_apps` kept across heartbeats: recomputed only when one of its inputs changed.

    It reads the pending apps in submit order, whether each runs its AM, each one's AM ask, the
    queues' AM usage, the cluster's size and the queue shares. A heartbeat that starts a task changes
    none of these, so the last answer stands while the apps, AM and share maps are the very objects it
    was computed from (the store replaces each when it changes) and every app the journal names
    since kept what `_activation` reads of it.
    """

    def __init__(self) -> None:
        self.cursor = JournalCursor()
        self.seen: dict[AppId, Activation] = {}  # each pending app's `_activation` when last computed
        self.active: dict[str, list[App]] = {}

    def get(self, snap: ClusterSnapshot, confs: dict[str, CapacityQueue],
            compute: Callable[[ClusterSnapshot, dict[str, CapacityQueue]], dict[str, list[App]]]) -> dict[str, list[App]]:
        """`compute(snap, confs)`, or the last answer when nothing it reads changed since (a fresh dict either way)."""
        if snap.version < 0 or snap.journal is None:
            return compute(snap, confs)  # a policy's view of a snapshot (asks hidden): no journal covers it
        # the mappings it reads, by identity, and the cluster's size, by value
        with self.cursor.read(snap, snap.apps, snap.app_am, snap.queue_am, confs, equal=snap.capacity) as touched:
            if touched is None or any(_activation(snap, a) != self.seen.get(a) for a in touched):
                self.active = compute(snap, confs)
                self.seen = {a.id: _activation(snap, a.id) for a in snap.iter_pending_apps()}
        return dict(self.active)


def _capability(snap: ClusterSnapshot, a: Assignment) -> Resources:
    return next(r.capability for r in snap.any_asks(a.app_id) if r.priority == a.priority)


def _remaining(snap: ClusterSnapshot, app: App, taken: dict[tuple[str, int], int]) -> bool:
    return any(r.count > taken.get((app.id, r.priority), 0) for r in snap.any_asks(app.id))


def _merge(assignments: list[Assignment]) -> list[Assignment]:
    merged: dict[tuple[str, int, str], int] = {}
    for a in assignments:
        k = (a.app_id, a.priority, a.node_id)
        merged[k] = merged.get(k, 0) + a.count
    return [Assignment(a, p, n, c) for (a, p, n), c in merged.items()]

"""DRESS ([DRESS] Sec. III-IV, Alg. 1-3): reserve a share δ of the cluster for small-demand jobs, retuned by Alg. 3.

Categories (Sec. IV-C): a job is small-demand (SD) when its resource request is at most θ × A_c,
else large-demand (LD). A YARN job's request is only known once its AM has asked for tasks, so
the request is measured at the first control-loop tick whose snapshot (Observation.snapshot)
shows a task (non-AM) request or container, as
the share of the cluster held plus asked for then (AM included), and fixed from then on. A_c in
the rule is the whole cluster, so θ = 10% of the 100-container testbed is Sec. V-B1's "less
than 10 containers"; the free containers at that moment would make every job LD on a
congested cluster. Amounts are dominant shares of the cluster (`measure: memory` uses memory
only, as Capacity's default calculator), so Tot_R = 1 and a container counts its share: on
uniform containers this is the paper's container count / Tot_R.

Reserve ratio (Alg. 3, every control-loop tick in `tune`): P_1, P_2 are the pending demand of
each category (jobs not yet classified count as SD, see AMs below), A_c1 is the free share
within SD's reservation (δ − SD's use, at most the free share A_c) and A_c2 the rest of A_c,
F_1, F_2 the containers each category is expected to release by t + 1 (Eq. 1-3,
yarnctl/estimation/release.py; t + 1 is one tick, `horizon_s`). Line 14's "A_c2 + F_1" is read
as A_c2 + F_2. δ is kept in [0, 1]. A tick with nothing pending at all leaves δ alone (Alg. 3
would drop SD's free reservation with no one to give it to). Classification and the phase
tracker learn only at ticks, never in `decide`, so what DRESS knows does not depend on how
often it is asked (the simulator skips idle heartbeats; live every heartbeat asks): task finish
times are therefore known to within one tick (5 s by default).

Enforcement (`decide`): SD jobs may hold up to δ of the cluster and LD jobs up to 1 − δ; a pool
lends its unused share to the other only through δ, as Alg. 3 moves it (lines 7-11: the whole
surplus; lines 13-24: leftovers to SD jobs in ascending demand), never ad hoc in a heartbeat,
so a reservation is really kept free for a tick. SD is served before LD on each node, each
pool in `order` (fifo: submit time then id; smallest: ascending pending demand), one
container per heartbeat unless `multiple_off_switch`, as the Capacity baseline.

AMs: the paper classifies jobs at submission; in YARN an AM must run before the job reveals its
demand, so a job without task asks yet is admitted through the SD pool (its demand so far
is one small container). Once classified, its AM is charged to its own category.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from yarnctl.errors import ConfigError
from yarnctl.estimation import release
from yarnctl.estimation.phases import PhaseParams, PhaseTracker
from yarnctl.model import (
    AM_PRIORITY,
    ANY,
    App,
    AppId,
    Ask,
    Assignment,
    ClusterSnapshot,
    Decision,
    JournalCursor,
    NodeId,
    Observation,
    Resources,
)
from yarnctl.policies.base import fill_app
from yarnctl.policies.bounds import bounded
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.head_lists import HeadLists, Kind
from yarnctl.policies.waiting import Wait, WaitCode, head_ask, wait

log = logging.getLogger(__name__)

EPS = 1e-9  # shares are sums of floats: 10 containers of 1% are "at most 10%"
MB = 1 << 20


class Category(str, enum.Enum):
    """A job's demand category (Sec. IV-C)."""

    SD = "sd"  # small demand, category 1
    LD = "ld"  # large demand, category 2


@dataclass(frozen=True, slots=True)
class DressConfig:
    """DRESS parameters with the paper's defaults (Sec. V-A1)."""

    theta: float = bounded(0.10, 0, 1)  # job indicator θ
    initial_reserve: float = bounded(0.10, 0, 1)  # initial δ
    phase_window_s: float = bounded(10.0, 0, lo_open=True)  # pw
    start_threshold: int = bounded(5, 0)  # t_s (a task count, see yarnctl/estimation/phases.py)
    end_threshold: int = bounded(5, 0)  # t_e
    horizon_s: float = bounded(5.0, 0, lo_open=True)  # "t + 1": one control-loop tick (`yarnctl serve --tune-interval`)
    measure: str = "dominant"  # dominant | memory: how a request is measured against the cluster
    order: str = "fifo"  # fifo | smallest: the order inside a pool
    multiple_off_switch: bool = False  # as Capacity: one container per heartbeat by default


def amount(r: Resources, cluster: Resources, measure: str = "dominant") -> float:
    """`r` as a share of `cluster`: dominant share, or memory share with `measure="memory"`."""
    return r.shares(cluster)[0] if measure == "memory" else r.dominant_share(cluster)


def category_of(request: Resources, cluster: Resources, theta: float, measure: str = "dominant") -> Category:
    """SD when the request is at most θ of the cluster, else LD (Sec. IV-C)."""
    return Category.SD if amount(request, cluster, measure) <= theta + EPS else Category.LD


class Dress(PolicyBase):
    """Two pools, SD and LD, holding δ and 1 − δ of the cluster; δ follows pending demand and releases."""

    name = "dress"
    Config = DressConfig
    # not time-dependent: a decision is a function of the store's state, δ and the categories, and the last
    # two move only on control-loop ticks, after which the simulator asks every node again

    def __init__(self, config: DressConfig = DressConfig()) -> None:
        if config.measure not in ("dominant", "memory"):
            raise ConfigError(f"policy dress: measure must be dominant or memory, got {config.measure!r}")
        if config.order not in ("fifo", "smallest"):
            raise ConfigError(f"policy dress: order must be fifo or smallest, got {config.order!r}")
        self.config = config
        self.delta = config.initial_reserve
        self.categories: dict[AppId, Category] = {}
        self.tracker = PhaseTracker(PhaseParams(config.phase_window_s, config.start_threshold,
                                                config.end_threshold))
        self.pending_bytes = {Category.SD: 0.0, Category.LD: 0.0}
        # the rooms a node had when `_one` placed nothing, with what that answer rested on (the store, by its
        # journal, and its version; δ; the categories): a node with no more room at the same state gets no
        # more (no ask fits it, or its pool is as full). Nodes with room beside a full pool stop walking the
        # backlog at each heartbeat.
        self._refused: tuple[tuple[object, int, float, int], list[Resources]] = ((None, -1, 0.0, 0), [])
        self._learnt = 0  # bumped by `observe`, the one place the categories move
        self._classified = 0  # bumped when an app gets its category: the kept pools are rebuilt
        # each pool's asking apps in submit order, by head ask size (fifo order, one container per heartbeat)
        self._heads: HeadLists[Category] = HeadLists(head=_first_asked)
        self._use = PoolUse()

    # ------------------------------------------------------------ categories and estimation

    def observe(self, snap: ClusterSnapshot) -> None:
        """Classify apps seen asking for tasks for the first time and feed the phase tracker."""
        self.tracker.observe(snap)
        self._learnt += 1
        # an app holds a task container iff it holds more than its AMs (a container is never empty)
        with_tasks = {a for a, held in snap.app_allocated.items() if held != snap.app_am.get(a)}
        with_tasks.update(a for a, rs in snap.asks.items() if any(r.priority != AM_PRIORITY for r in rs))
        for app_id in snap.apps:
            if app_id not in self.categories and app_id in with_tasks:
                request = snap.allocated(app_id) + snap.pending(app_id)
                cat = category_of(request, snap.capacity, self.config.theta, self.config.measure)
                self.categories[app_id] = cat
                self._classified += 1
                log.info("dress: %s is %s (request %s = %.3f of the cluster, θ = %.2f)", app_id, cat.value,
                         request, amount(request, snap.capacity, self.config.measure), self.config.theta)
        for app_id in [a for a in self.categories if a not in snap.apps]:
            # finished: forget, the state stays bounded (its removal from the store is journaled, so the
            # kept pools drop it without a rebuild: `observe` is never given an older snapshot than before)
            del self.categories[app_id]

    def category(self, app_id: AppId) -> Category:
        """The app's category; apps not classified yet are admitted as SD (see the module docstring)."""
        return self.categories.get(app_id, Category.SD)

    # ------------------------------------------------------------ Alg. 3

    def tune(self, obs: Observation) -> None:
        """Learn from the tick's snapshot, then recompute δ from pending demand, free share and releases (Alg. 3)."""
        if obs.snapshot is not None:
            self.observe(obs.snapshot)
        cap = obs.capacity
        if cap.is_zero():
            return
        m = self.config.measure
        used = {Category.SD: 0.0, Category.LD: 0.0}
        demands: dict[Category, list[tuple[float, AppId]]] = {Category.SD: [], Category.LD: []}
        pending_mb = {Category.SD: 0, Category.LD: 0}
        for app_id, u in obs.apps.items():
            cat = self.category(app_id)
            used[cat] += amount(u.allocated, cap, m)
            pending_mb[cat] += u.pending.memory_mb
            if u.pending_containers > 0:
                demands[cat].append((amount(u.pending, cap, m), app_id))  # r_i
        self.pending_bytes = {c: float(pending_mb[c] * MB) for c in Category}
        if not demands[Category.SD] and not demands[Category.LD]:
            return  # nothing pending: nothing to reserve for; the next arrival finds the last δ
        free = max(0.0, 1.0 - amount(obs.allocated, cap, m))  # A_c
        ac1 = min(free, max(0.0, self.delta - used[Category.SD]))
        ac2 = free - ac1
        at = obs.at_s + self.config.horizon_s
        f = release.category_release(at, self.tracker.phases(), lambda a: self.category(a).value,
                                     lambda p: amount(p.resource, cap, m))
        f1, f2 = f.get(Category.SD.value, 0.0), f.get(Category.LD.value, 0.0)
        new = reserve_ratio(self.delta, ac1, ac2, f1, f2, [r for r, _ in sorted(demands[Category.SD])],
                            [r for r, _ in sorted(demands[Category.LD])])
        if abs(new - self.delta) > EPS:
            log.info("dress: δ %.4f -> %.4f at t=%.1f (A_c1 %.4f, A_c2 %.4f, F1 %.4f, F2 %.4f, "
                     "P1 %.4f over %d jobs, P2 %.4f over %d jobs, SD holds %.4f, LD holds %.4f)",
                     self.delta, new, obs.at_s, ac1, ac2, f1, f2, sum(r for r, _ in demands[Category.SD]),
                     len(demands[Category.SD]), sum(r for r, _ in demands[Category.LD]),
                     len(demands[Category.LD]), used[Category.SD], used[Category.LD])
            self.delta = new

    def tuning(self) -> Mapping[str, float]:
        """δ and each category's pending memory in bytes."""
        return {
            "dress_reserve_ratio": self.delta,
            'dress_pending_bytes{category="sd"}': self.pending_bytes[Category.SD],
            'dress_pending_bytes{category="ld"}': self.pending_bytes[Category.LD],
        }

    # ------------------------------------------------------------ enforcement

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """Serve SD then LD jobs on `node_id`, each pool within its share of the cluster."""
        node = snap.nodes[node_id]
        available = node.available
        if not snap.min_allocation.fits_in(available):
            return Decision()  # a full node: no pool's use needs counting
        m = self.config.measure
        if not self.config.multiple_off_switch:
            if snap.version < 0 or snap.journal is None:  # a view built outside the store: nothing to key on
                return self._one(snap, node_id, available)
            key = (snap.journal, snap.version, self.delta, self._learnt)
            state, rooms = self._refused
            if state == key and any(available.fits_in(room) for room in rooms):
                return Decision()
            decision = self._one(snap, node_id, available)
            if not decision.assignments:
                if state != key:
                    self._refused = key, (rooms := [])
                if len(rooms) < 8:
                    rooms.append(available)
            return decision
        used = self._pool_use(snap)
        limit = {Category.SD: self.delta, Category.LD: 1.0 - self.delta}
        out: list[Assignment] = []
        taken: dict[tuple[str, int], int] = {}
        for cat in Category:
            for app in self._pool(snap, cat):
                while snap.min_allocation.fits_in(available):
                    got, left = fill_app(snap, app, node, available, limit=1, taken=taken)
                    if not got:
                        break
                    a = got[0]
                    share = amount(available - left, snap.capacity, m)
                    if used[cat] + share > limit[cat] + EPS:
                        break  # the pool is full; a smaller ask later in this app waits its turn
                    used[cat] += share
                    available = left
                    taken[(a.app_id, a.priority)] = taken.get((a.app_id, a.priority), 0) + 1
                    if out and (out[-1].app_id, out[-1].priority) == (a.app_id, a.priority):
                        a = Assignment(a.app_id, a.priority, a.node_id, out.pop().count + 1)
                    out.append(a)
        return Decision(tuple(out)) if out else Decision()

    def _one(self, snap: ClusterSnapshot, node_id: NodeId, available: Resources) -> Decision:
        """The loop above when it stops at one container (the default): the first app in pool order whose head ask fits."""
        if self.config.order == "fifo" and self._heads.sync(snap, lambda app: self.category(app.id), _submitted,
                                                            equal=self._classified):
            return self._first_in_pools(snap, node_id, available)
        used: dict[Category, float] | None = None  # counted only once some ask fits the node
        room_mb, room_vcores = available.memory_mb, available.vcores
        cluster, asks, memory_only = snap.capacity, snap.asks, self.config.measure == "memory"
        for cat, app in self._in_pool_order(snap):
            # fill_app's first step: the lowest priority still asked, and nothing else if it does not fit
            for head in asks.get(app.id, ()):
                if head.resource_name == ANY and head.count > 0:
                    break
            else:
                continue
            size = head.capability
            if size.memory_mb > room_mb or size.vcores > room_vcores:
                continue
            if used is None:
                used = self._pool_use(snap)
            limit = self.delta if cat is Category.SD else 1.0 - self.delta
            # `amount` written out (the same divisions): it runs for every app waiting behind a full pool
            share = size.memory_mb / cluster.memory_mb if cluster.memory_mb else 0.0
            if not memory_only:
                share = max(share, size.vcores / cluster.vcores if cluster.vcores else 0.0)
            if used[cat] + share > limit + EPS:
                continue  # the pool is full for this ask; a smaller one further on may still fit
            return Decision((Assignment(app.id, head.priority, node_id, 1),))
        return Decision()

    def _first_in_pools(self, snap: ClusterSnapshot, node_id: NodeId, available: Resources) -> Decision:
        """`_one` from the kept lists: in each pool, the first app whose head ask fits the node and the pool."""
        heads = self._heads
        if heads.none_fits(available):
            return Decision()
        used: dict[Category, float] | None = None  # counted only once some ask fits the node
        cluster, memory_only = snap.capacity, self.config.measure == "memory"
        for cat in Category:
            limit = self.delta if cat is Category.SD else 1.0 - self.delta

            def takes(kind: Kind, _app: AppId) -> bool:
                nonlocal used
                size = kind[0]
                if not size.fits_in(available):
                    return False
                if used is None:
                    used = self._use.sync(snap, self.category, self.config.measure, self._classified)
                share = size.memory_mb / cluster.memory_mb if cluster.memory_mb else 0.0
                if not memory_only:
                    share = max(share, size.vcores / cluster.vcores if cluster.vcores else 0.0)
                if abs(used[cat] + share - (limit + EPS)) <= PoolUse.DRIFT:
                    used = self._pool_use(snap)  # too close to call on the running sums: count as `_one` does
                    self._use.rebase(used)
                return used[cat] + share <= limit + EPS  # else the pool is full for this size

            found = heads.first(cat, takes)  # `takes` is called here, in this iteration
            if found is not None:
                return Decision((Assignment(found[0], found[1], node_id, 1),))
        return Decision()

    def why_waiting(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait:
        """Its category's pool is full (δ for SD, 1 − δ for LD), else PolicyBase's reason."""
        ask = head_ask(snap, app_id)
        if ask is not None:
            cat = self.category(app_id)
            used = self._pool_use(snap)[cat]
            limit = self.delta if cat is Category.SD else 1.0 - self.delta
            need = amount(ask.capability, snap.capacity, self.config.measure)
            if used + need > limit + EPS:
                return wait(WaitCode.DRESS_RESERVE,
                            f"its category {cat.name} may hold {limit:.1%} of the cluster (δ = {self.delta:.3f}) and "
                            f"holds {used:.1%}; its ask needs {need:.1%} more", delta=self.delta,
                            category=cat.name, used=used, limit=limit, ask_share=need)
        return super().why_waiting(snap, node_id, app_id, decision)

    def _in_pool_order(self, snap: ClusterSnapshot) -> Iterator[tuple[Category, App]]:
        """Pending apps as `decide` serves them: SD's pool, then LD's, each in its order."""
        if self.config.order != "fifo":
            for cat in Category:
                yield from ((cat, app) for app in self._pool(snap, cat))
            return
        large = []  # one pass over the pending apps: SD's in order now, LD's kept for after
        for app in snap.iter_pending_apps():
            if self.categories.get(app.id, Category.SD) is Category.SD:
                yield Category.SD, app
            else:
                large.append(app)
        for app in large:
            yield Category.LD, app

    def _pool_use(self, snap: ClusterSnapshot) -> dict[Category, float]:
        """Each pool's share of the cluster held now."""
        used = {Category.SD: 0.0, Category.LD: 0.0}
        for app_id, r in snap.app_allocated.items():
            used[self.category(app_id)] += amount(r, snap.capacity, self.config.measure)
        return used

    def _pool(self, snap: ClusterSnapshot, cat: Category) -> Iterable[App]:
        apps = [a for a in snap.iter_pending_apps() if self.category(a.id) is cat]
        if self.config.order == "smallest":
            # Alg. 3 line 13's ascending demand; ties by submit time then id, as everywhere
            apps.sort(key=lambda a: (amount(snap.pending(a.id), snap.capacity, self.config.measure), a.submit_s, a.id))
        return apps


class PoolUse:
    """Each pool's share of the cluster held, as running sums kept from the store's journal (store snapshots only).

    `_pool_use` adds the apps' shares afresh; these sums add and take away as apps change, so they
    drift from it by rounding, at most DRIFT while they are rebased at least every REBASE updates:
    `_first_in_pools` counts afresh when a comparison is closer than that.
    """

    # an update rounds twice (take away, add), each within 2^-52 of sums below 2: REBASE updates drift
    # at most 2.2e-11 (the fresh sum over a few thousand apps, 1e-12 more), a quarter of DRIFT
    DRIFT = 1e-10
    REBASE = 50_000

    def __init__(self) -> None:
        self.cursor = JournalCursor()
        self.shares: dict[AppId, tuple[Category, float]] = {}
        self.used = {Category.SD: 0.0, Category.LD: 0.0}
        self.updates = 0

    def sync(self, snap: ClusterSnapshot, category: Callable[[AppId], Category], measure: str,
             classified: int) -> dict[Category, float]:
        """The sums at `snap`, rebuilt when the categories, the measure or the cluster's size change."""
        with self.cursor.read(snap, equal=(classified, measure, snap.capacity)) as touched:
            if touched is None or self.updates + len(touched) > self.REBASE:
                self.shares, self.updates = {}, 0
                self.used = {Category.SD: 0.0, Category.LD: 0.0}
                touched = list(snap.app_allocated)
            held, cap, used = snap.app_allocated, snap.capacity, self.used
            for app_id in dict.fromkeys(touched):
                old = self.shares.pop(app_id, None)
                if old is not None:
                    used[old[0]] -= old[1]
                r = held.get(app_id)
                if r is not None:
                    cat, share = category(app_id), amount(r, cap, measure)
                    self.shares[app_id] = (cat, share)
                    used[cat] += share
                self.updates += 1
        return used

    def rebase(self, used: dict[Category, float]) -> None:
        """Take `used`, counted afresh at the snapshot last synced, as the sums."""
        self.used = dict(used)
        self.updates = 0


def _first_asked(asks: tuple[Ask, ...]) -> Ask | None:
    """fill_app's first step: the lowest priority still asked off-switch."""
    return next((r for r in asks if r.resource_name == ANY and r.count > 0), None)


def _submitted(app: App) -> tuple[float, AppId]:
    """Pool order under `fifo`: submit time, then id (the order snapshots keep apps in)."""
    return app.submit_s, app.id


def reserve_ratio(
    delta: float, ac1: float, ac2: float, f1: float, f2: float, sd: list[float], ld: list[float]
) -> float:
    """Alg. 3: the new δ from the free shares, expected releases and pending demands (ascending) of SD and LD."""
    p1, p2 = sum(sd), sum(ld)  # lines 3-6
    if ac1 + f1 >= p1 - EPS:  # lines 7-8: SD is covered; its surplus goes to LD
        delta -= ac1 + f1 - p1
    elif ac2 + f2 >= p2 - EPS:  # lines 10-11: SD is short and LD has a surplus: SD takes it
        delta += ac2 + f2 - p2
    else:  # lines 12-24: both short: fit the smallest jobs of each, then move LD's leftover to SD
        a1, a2 = ac1 + f1, ac2 + f2
        rest: list[float] = []
        for r in sd:  # lines 15-17
            if a1 - r > EPS:
                a1 -= r
            else:
                rest.append(r)
        for r in ld:  # lines 18-20
            if a2 - r > EPS:
                a2 -= r
        for r in rest:  # lines 21-24: ascending, until one does not fit the combined leftovers
            if r >= a1 + a2 - EPS:
                break
            a2 -= r
            delta += r
    return min(1.0, max(0.0, delta))

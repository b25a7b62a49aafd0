"""H-MRF ([H-MRF] Sec. 5.3, 6, Alg. 1): the Resource Allocator over the Queue Tracker, and its long-term family.

Every policy here runs Alg. 1's loop (lines 8-28) on the heartbeating node: pick the queue (or
user) that ranks first, give it one container (its oldest app's highest-priority request that
fits, as FifoScheduler would), charge it (lines 20-24) and rank again, until nothing fits. They
differ only in the rank, computed on accumulated resources ü_i (yarnctl/fairness/accounting.py):

    LT-DRF (Sec. 5.1)   max_j ü_ij / (r_j w_i)                       least accumulated dominant share
    LT-AF  (Sec. 5.2)   Σ_j ü_ij / r_j / w_i, then the dominant share least aggregate share
    H-MRF  (Alg. 1)     β_i < 1 first, least β (lines 9-11); else LT-AF (lines 12-16)
    AF     (Sec. 3.3)   LT-AF over a zero window: the allocation now

Sec. 6.1's guards come first: a queue that has waited `timeout_s` since its last grant is served
before anyone, longest wait first; one that has borrowed `borrow_cap_s` seconds' worth of its
share in this window gets nothing beyond its share. Ties: the queue's oldest pending app's
submit time, then the queue name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from yarnctl.errors import ConfigError
from yarnctl.fairness.accounting import QUEUE, QueueTracker, Standing
from yarnctl.fairness.comparators import SortKey
from yarnctl.fairness.shares import add, asset_share, dominant_share, vector
from yarnctl.fairness.windows import Window
from yarnctl.model import (App, AppId, Assignment, ClusterSnapshot, Decision, JournalCursor, Node, NodeId, Observation, Queue,
                           Resources)
from yarnctl.policies.base import fill_app
from yarnctl.policies.bounds import bounded
from yarnctl.policies.queue_limit import leaf_weights
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.waiting import Wait, WaitCode, head_ask, wait


@dataclass(frozen=True, slots=True)
class LongTermConfig:
    """Parameters of the long-term policies; the defaults are the paper's pure long-term fairness."""

    entity: str = QUEUE  # who is the paper's "user": queue (YARN fairness, MRYARN Sec. 6) or user
    # K_i: 1 by default; under a queue tree each leaf's absolute capacity in percent, and a weight given here
    # replaces its leaf's (give it on the same percent scale)
    weights: Mapping[str, float] = bounded(lambda: MappingProxyType({}), 0)
    window: str = "tumbling"  # Sec. 6: tumbling or sliding
    window_s: float = bounded(math.inf, 0, infinite=True)  # L_t / L_s: inf = pure long-term, 0 = memoryless
    timeout_s: float = -1.0  # Sec. 6.1 t_timeout; negative: the window length (the paper's default)
    borrow_cap_s: float = bounded(math.inf, 0, infinite=True)  # Sec. 6.1: borrowing allowed per window, in seconds of the own share


MIB = 1 << 20


def _q(x: float) -> float:
    # shares are sums of float products: round so that the paper's exact ties stay ties
    return round(x, 6)


class LongTermPolicy(PolicyBase):
    """The Resource Allocator shared by the family; subclasses give `rank`."""

    name = "long-term"
    Config = LongTermConfig
    observes = False  # `tune` is a no-op: decide() integrates every snapshot

    def __init__(self, config: LongTermConfig = LongTermConfig()) -> None:
        try:
            window = Window(config.window, config.window_s)
            self.tracker = QueueTracker(window, config.entity, dict(config.weights))
        except ValueError as e:
            raise ConfigError(f"policy {self.name}: {e}") from None
        self.config = config
        self._tree: Mapping[str, Queue] | None = None  # the scheduler's tree the weights were last taken from
        self._pending = KeptPending()
        self.timeout_s = config.timeout_s if config.timeout_s >= 0 else config.window_s
        # accumulated resources grow with time alone, so the same state may rank differently later
        self.time_dependent = config.window_s > 0

    def rank(self, st: Standing, capacity: Resources) -> SortKey:
        """The policy's own order of entities, lowest first."""
        raise NotImplementedError

    def _key(self, st: Standing, oldest_s: float, capacity: Resources) -> SortKey:
        # a zero timeout (memoryless window) would call everyone starved: it means no guard
        starved = 0 < self.timeout_s <= st.waiting_s
        return ((0, -st.waiting_s) if starved else (1, 0.0)) + self.rank(st, capacity) + (oldest_s, st.name)

    def _pending_by_entity(self, snap: ClusterSnapshot) -> dict[str, list[App]]:
        """Each entity's apps with asks, oldest first (a fresh dict; the lists are shared, not to be changed)."""
        return self._pending.get(snap, self._group)

    def _group(self, snap: ClusterSnapshot) -> dict[str, list[App]]:
        out: dict[str, list[App]] = {}
        for app in snap.iter_pending_apps():
            out.setdefault(self.tracker.entity_of(app), []).append(app)
        return out

    def _tree_weights(self, snap: ClusterSnapshot) -> None:
        """Under a queue tree, each leaf queue's K_i is its absolute capacity in percent; `weights` override by name."""
        if snap.queues and snap.queues is not self._tree and self.tracker.entity == QUEUE:
            self._tree = snap.queues
            self.tracker.weights = {**leaf_weights(snap.queues), **self.config.weights}

    def order(self, snap: ClusterSnapshot) -> list[App]:
        """AppOrdering: apps with outstanding asks, entity by entity in rank order, oldest app first."""
        self._tree_weights(snap)
        self.tracker.advance(snap)
        by_entity = self._pending_by_entity(snap)
        ranked = sorted(by_entity, key=lambda n: self._key(self.tracker.standing(n, snap.now_s),
                                                            by_entity[n][0].submit_s, snap.capacity))
        return [app for n in ranked for app in by_entity[n]]

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """Alg. 1 on `node_id`: one container at a time to the entity ranked first, re-ranking after each."""
        self._tree_weights(snap)
        t, now = self.tracker, snap.now_s
        t.advance(snap)
        node = snap.nodes[node_id]
        available = node.available
        waiting = self._pending_by_entity(snap)
        taken: dict[tuple[str, int], int] = {}
        while waiting and snap.min_allocation.fits_in(available):
            name = min(waiting, key=lambda n: self._key(t.standing(n, now), waiting[n][0].submit_s, snap.capacity))
            got = self._one(snap, node, waiting[name], available, taken)
            if got is None or self._over_cap(t.standing(name, now), available - got[1]):
                del waiting[name]  # nothing of it fits here (or may be borrowed): the others go on
                continue
            a, left = got
            taken[(a.app_id, a.priority)] = taken.get((a.app_id, a.priority), 0) + 1
            t.grant(name, available - left, now)
            available = left
        out = tuple(Assignment(app, prio, node_id, n) for (app, prio), n in taken.items())
        return Decision(out) if out else Decision()

    def _one(self, snap: ClusterSnapshot, node: Node, apps: list[App], available: Resources,
             taken: dict[tuple[str, int], int]) -> tuple[Assignment, Resources] | None:
        for app in apps:
            got, left = fill_app(snap, app, node, available, limit=1, taken=taken)
            if got:
                return got[0], left
        return None

    def _over_cap(self, st: Standing, grant: Resources) -> bool:
        """True when the entity has used up this window's borrowing and `grant` would take it beyond its share."""
        cap = self.config.borrow_cap_s
        if math.isinf(cap) or all(b < cap * s for b, s in zip(st.borrowed, st.share)):
            return False
        return any(u > s for u, s in zip(add(st.alloc, vector(grant)), st.share))

    def why_waiting(self, snap: ClusterSnapshot, node_id: NodeId, app_id: AppId, decision: Decision) -> Wait:
        """Its entity borrowed its cap this window, or ranks behind the one served on use over the window."""
        t, now, ask = self.tracker, snap.now_s, head_ask(snap, app_id)
        mine = t.entity_of(snap.apps[app_id])
        if mine not in t.accounts:  # not decided on yet: reading a standing would open its account
            return super().why_waiting(snap, node_id, app_id, decision)
        st = t.standing(mine, now)
        window = "unbounded" if math.isinf(self.config.window_s) else f"{self.config.window_s:g} s"
        if ask is not None and self._over_cap(st, ask.capability):
            return wait(WaitCode.HMRF_WINDOW, f"{t.entity} {mine} has borrowed its cap ({self.config.borrow_cap_s:g} s "
                        f"of its share) in this {window} window and its ask would take it past its share",
                        entity=mine, window_s=self.config.window_s, borrow_cap_s=self.config.borrow_cap_s)
        served = next((a.app_id for a in decision.assignments if a.app_id != app_id and a.app_id in snap.apps), None)
        if served is not None and (theirs := t.entity_of(snap.apps[served])) != mine and theirs in t.accounts:
            other = t.standing(theirs, now)
            if 0 < self.timeout_s <= other.waiting_s:
                why = f"it had waited {other.waiting_s:.0f} s, past the {self.timeout_s:g} s timeout (Sec. 6.1)"
            else:
                ours, its = self.rank(st, snap.capacity), self.rank(other, snap.capacity)
                why = (f"use accumulated over its {window} window: rank {_rank_text(its)} against "
                       f"{_rank_text(ours)}, lowest first")
            return wait(WaitCode.HMRF_WINDOW, f"{self.name} served {t.entity} {theirs} before {mine}: {why}",
                        entity=mine, served=theirs, beta=st.beta, served_beta=other.beta, window_s=self.config.window_s)
        return super().why_waiting(snap, node_id, app_id, decision)

    def save_state(self) -> dict[str, Any]:
        """The accounting (accumulated resources, windows, β terms), so `yarnctl serve` restarts remember it."""
        return self.tracker.to_json()

    def load_state(self, doc: Mapping[str, Any]) -> None:
        """Take back what save_state returned."""
        self.tracker = QueueTracker.from_json(doc)
        self._pending = KeptPending()  # grouped by the loaded tracker's entity from now on

    def tune(self, obs: Observation) -> None:
        """No-op: decide() integrates every snapshot; the RM's memory/vcore-seconds are lifetime totals that cannot be windowed."""
        del obs

    def tuning(self) -> Mapping[str, float]:
        """β_i (Eq. 3) and accumulated vcore- and byte-seconds per queue (or user), for the metrics exporter."""
        t = self.tracker
        label = "queue" if t.entity == QUEUE else "category"
        out: dict[str, float] = {}
        for name, (beta, used) in t.measured(t.last_s or 0.0).items():
            mem, vcores = used
            out[f'hmrf_sharing_degree{{{label}="{name}"}}'] = round(beta, 6)
            out[f'hmrf_accumulated_vcore_seconds{{{label}="{name}"}}'] = round(vcores, 3)
            # base units, as every yarnctl_ metric: bytes, not MB
            out[f'hmrf_accumulated_memory_byte_seconds{{{label}="{name}"}}'] = round(mem * MIB, 3)
        return out


class KeptPending:
    """A grouping of the apps with asks, kept across heartbeats until an app gains its first ask or loses its last.

    Most heartbeats change how much apps ask, not whether: the grouping stands while the apps map is
    the very one it was made from (the store replaces it when an app comes, goes or changes) and no
    app the store's journal names since went from asking to not or back.
    """

    def __init__(self) -> None:
        self.cursor = JournalCursor()
        self.pending: set[AppId] = set()
        self.groups: dict[str, list[App]] = {}

    def get(self, snap: ClusterSnapshot, group: Callable[[ClusterSnapshot], dict[str, list[App]]]) -> dict[str, list[App]]:
        """`group(snap)`, or the grouping last made when no app's asking changed since (a fresh dict either way)."""
        if snap.version < 0 or snap.journal is None:
            return group(snap)  # a view hiding some apps' asks: no journal covers it
        asks, pending = snap.asks, self.pending
        with self.cursor.read(snap, snap.apps) as touched:
            if touched is None or any((a in asks) != (a in pending) for a in touched):
                self.groups = group(snap)
                self.pending = set(asks)
        return dict(self.groups)


def _rank_text(key: SortKey) -> str:
    """A rank key as people read it: its numbers, three decimals."""
    return "(" + ", ".join(f"{x:.3f}" if isinstance(x, float) else str(x) for x in key) + ")"


def lt_drf_rank(st: Standing, capacity: Resources) -> SortKey:
    """LT-DRF (Sec. 5.1): the least accumulated weighted dominant share."""
    return (_q(dominant_share(st.accumulated, capacity, st.weight)),)


def lt_af_rank(st: Standing, capacity: Resources) -> SortKey:
    """LT-AF (Sec. 5.2): the least aggregate accumulated share; ties by dominant share (Alg. 1 line 15)."""
    return (_q(asset_share(st.accumulated, capacity, st.weight)),) + lt_drf_rank(st, capacity)


class Hmrf(LongTermPolicy):
    """H-MRF (Alg. 1): sharing-loss users first (least β), then the least accumulated, DRF among equals."""

    name = "hmrf"

    def rank(self, st: Standing, capacity: Resources) -> SortKey:
        """Lines 9-11 when β_i < 1, else lines 13-16."""
        beta = _q(st.beta)
        if beta < 1.0:
            return (0, beta, 0.0)
        return (1,) + lt_af_rank(st, capacity)
